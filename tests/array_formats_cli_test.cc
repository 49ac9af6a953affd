// `amn parse` / `inspect` / `remember` on NPY, NPZ and PyTorch files: the
// npz_reference and pth_reference fixtures byte for byte, and, when Python
// has numpy / torch, files the tests generate compared with what numpy.load
// and torch.load(weights_only=True) read from them (big-endian, Fortran
// order, DEFLATE, JAX bfloat16, every dtype, strided and shared storages,
// --to conversions).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/cli_files.h"
#include "tests/cli_runner.h"
#include "tests/fixtures.h"
#include "tests/torch_zips.h"

namespace amn::test {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

std::string Hex(const std::vector<uint8_t>& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (uint8_t b : bytes) {
    out += digits[b >> 4];
    out += digits[b & 15];
  }
  return out;
}

// The safetensors reference writer (huggingface/safetensors `prepare`)
// orders tensors by its Dtype enum, highest first, then by name; the enum is
// declared in increasing alignment.
int ReferenceRank(const std::string& dtype) {
  static const std::vector<std::string> kEnum = {"BOOL", "U8",  "I8",  "F8_E5M2", "F8_E4M3",
                                                 "F8_E8M0", "I16", "U16", "F16", "BF16", "I32",
                                                 "U32", "F32", "F64", "I64", "U64"};
  return static_cast<int>(std::find(kEnum.begin(), kEnum.end(), dtype) - kEnum.begin());
}

// Runs `amn remember` on `input` and checks the output's tensors, in the
// reference writer's order, against expected [{name, dtype, shape, hex}]
// (null entries are skipped).
void ExpectRemembered(const fs::path& input, const Json& expected, const std::string& extra = "") {
  TempDir dir;
  const fs::path output = dir.path() / "out.safetensors";
  const CliResult r = RunAmn("remember -q " + Quote(input) + " -o " + Quote(output) + " " + extra);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const ReadBack back(output);
  // The header in file order (ReadBack's json sorts its keys).
  const auto header = nlohmann::ordered_json::parse(back.file.begin() + 8,
                                                    back.file.begin() + static_cast<long>(back.data_offset));
  std::vector<std::string> order;
  for (const auto& [key, value] : header.items()) {
    if (key != "__metadata__") order.push_back(key);
  }
  std::vector<std::pair<int, std::string>> ranked;
  for (const Json& e : expected) {
    if (!e.is_null()) ranked.emplace_back(-ReferenceRank(e.at("dtype")), e.at("name").get<std::string>());
  }
  std::sort(ranked.begin(), ranked.end());
  std::vector<std::string> want_order;
  for (const auto& [rank, name] : ranked) want_order.push_back(name);
  if (expected.size() == want_order.size()) {
    EXPECT_EQ(order, want_order) << input;
  }
  for (const Json& e : expected) {
    if (e.is_null()) continue;
    const std::string name = e.at("name").get<std::string>();
    SCOPED_TRACE(input.filename().string() + " " + extra + ": " + name);
    ASSERT_TRUE(back.header.contains(name));
    EXPECT_EQ(back.header[name]["dtype"], e.at("dtype"));
    EXPECT_EQ(back.header[name]["shape"], e.at("shape"));
    EXPECT_EQ(Hex(back.Data(name)), e.at("hex").get<std::string>());
  }
}

TEST(ArrayFormatsCli, NpzFixtureByteExact) {
  const auto files = FixtureFiles("npz_reference", ".npz");
  const auto refs = FixtureFiles("npz_reference", ".bin");
  if (files.empty() || refs.empty()) GTEST_SKIP() << "no npz_reference fixtures in " << FixturesDir();
  // gemma_scope_reference.bin: u32 count, then per array (sorted by name):
  // name, ndim + original shape (ignored: the fixture keeps 8 elements),
  // dtype id, data.
  const std::vector<uint8_t> ref = ReadBytes(refs.front());
  size_t at = 0;
  auto u32 = [&] { const uint32_t v = LoadLe32(&ref[at]); at += 4; return v; };
  Json expected = Json::array();
  for (uint32_t n = u32(), i = 0; i < n; ++i) {
    const uint32_t name_len = u32();
    const std::string name(ref.begin() + static_cast<long>(at), ref.begin() + static_cast<long>(at + name_len));
    at += name_len;
    at += 8 * size_t{u32()};
    ASSERT_EQ(u32(), 11u) << "F32";
    const uint32_t len = u32();
    expected.push_back({{"name", name}, {"dtype", "F32"}, {"shape", {len / 4}},
                        {"hex", Hex({ref.begin() + static_cast<long>(at), ref.begin() + static_cast<long>(at + len)})}});
    at += len;
  }
  ASSERT_EQ(at, ref.size());
  ASSERT_EQ(expected.size(), 5u);
  // The reference lists them by name, the archive in savez order: compare by
  // name.
  TempDir dir;
  const fs::path output = dir.path() / "out.safetensors";
  ASSERT_EQ(RunAmn("remember -q " + Quote(files.front()) + " -o " + Quote(output)).exit_code, 0);
  const ReadBack back(output);
  for (const Json& e : expected) {
    const std::string name = e["name"];
    ASSERT_TRUE(back.header.contains(name)) << name;
    EXPECT_EQ(back.header[name]["dtype"], "F32");
    EXPECT_EQ(back.header[name]["shape"], e["shape"]);
    EXPECT_EQ(Hex(back.Data(name)), e["hex"].get<std::string>()) << name;
  }
  const CliResult parse = RunAmn("parse --json " + Quote(files.front()));
  ASSERT_EQ(parse.exit_code, 0) << parse.err;
  const Json j = Json::parse(parse.out);
  EXPECT_EQ(j["format"], "npz");
  EXPECT_EQ(j["tensors"].size(), 5u);
}

TEST(ArrayFormatsCli, PthFixturesByteExact) {
  const auto files = FixtureFiles("pth_reference", ".pth");
  if (files.empty()) GTEST_SKIP() << "no pth_reference fixtures in " << FixturesDir();
  for (const fs::path& file : files) {
    const fs::path json = file.parent_path() / (file.stem().string() + "_reference.json");
    const Json ref = Json::parse(SlurpText(json));
    Json expected = Json::array();
    for (const Json& t : ref.at("tensors")) {
      expected.push_back({{"name", t["name"]}, {"dtype", t["dtype"]}, {"shape", t["shape"]},
                          {"hex", t["data_hex"]}});
    }
    ASSERT_EQ(expected.size(), ref.at("num_tensors").get<size_t>());
    ExpectRemembered(file, expected);
    const CliResult inspect = RunAmn("inspect --json " + Quote(file));
    ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
    const Json info = Json::parse(inspect.out);
    EXPECT_EQ(info["format"], "pytorch");
    EXPECT_EQ(info["to"], "kept");
    EXPECT_EQ(info["passthrough_tensors"], expected.size());
  }
}

TEST(ArrayFormatsCli, PthAsBinIsProbedByMagic) {
  const auto files = FixtureFiles("pth_reference", ".pth");
  if (files.empty()) GTEST_SKIP() << "no pth_reference fixtures in " << FixturesDir();
  TempDir dir;
  const fs::path bin = dir.path() / "pytorch_model.bin";
  fs::copy_file(files.front(), bin);
  const CliResult r = RunAmn("parse --json " + Quote(bin));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Json::parse(r.out)["format"], "pytorch");
  // Default output: the stem, .safetensors, beside the input.
  ASSERT_EQ(RunAmn("remember -q " + Quote(bin)).exit_code, 0);
  EXPECT_TRUE(fs::exists(dir.path() / "pytorch_model.safetensors"));
}

TEST(ArrayFormatsCli, LegacyTorchFileRefused) {
  TempDir dir;
  const fs::path legacy = dir.path() / "old.pth";
  // torch.save(_use_new_zipfile_serialization=False) starts with the pickled
  // magic number 0x1950a86a20f9469cfc6c: PROTO 2, LONG1 10 bytes.
  const std::vector<uint8_t> head = {0x80, 0x02, 0x8a, 0x0a, 0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20,
                                     0x6a, 0xa8, 0x50, 0x19, 0x2e};
  std::FILE* f = std::fopen(legacy.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  std::fwrite(head.data(), 1, head.size(), f);
  std::fclose(f);
  const CliResult r = RunAmn("remember " + Quote(legacy) + " -o " + Quote(dir.path() / "o.safetensors"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.rfind("amn: unsupported: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("legacy PyTorch"), std::string::npos) << r.err;
  EXPECT_EQ(dir.Entries(), std::vector<std::string>{"old.pth"});
}

// Generates files with the first Python that has the module (python3 on
// PATH, then Debian's /usr/bin/python3); null when none has it.
Json Generate(const TempDir& dir, const std::string& kind) {
  const std::string script = std::string(AMN_PROJECT_ROOT) + "/tests/array_formats_crosscheck.py";
  for (const char* python : {"python3", "/usr/bin/python3"}) {
    const int status = std::system((std::string(python) + " " + Quote(script) + " " +
                                    Quote(dir.path()) + " " + kind + " >/dev/null 2>&1")
                                       .c_str());
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
      return Json::parse(SlurpText(dir.path() / ("expected-" + kind + ".json")));
    }
  }
  return nullptr;
}

TEST(ArrayFormatsCli, MatchesNumpyLoad) {
  TempDir dir;
  const Json expected = Generate(dir, "numpy");
  if (expected.is_null()) GTEST_SKIP() << "python3 with numpy not available";
  for (const char* file : {"stored.npz", "compressed.npz", "fortran.npy"}) {
    ExpectRemembered(dir.path() / file, expected.at(file));
  }
  ExpectRemembered(dir.path() / "stored.npz", expected.at("stored.npz --to f32"), "--to f32");
}

TEST(ArrayFormatsCli, MatchesTorchLoad) {
  TempDir dir;
  const Json expected = Generate(dir, "torch");
  if (expected.is_null()) GTEST_SKIP() << "python3 with torch not available";
  ExpectRemembered(dir.path() / "model.pth", expected.at("model.pth"));
  ExpectRemembered(dir.path() / "model.pth", expected.at("model.pth --to bf16"), "--to bf16");
}

// FP8 tensors of a .pth (tests/torch_zips.h: _rebuild_tensor_v3 on an
// untyped storage, and a Float8_e5m2Storage) are kept as F8_E4M3 / F8_E5M2,
// or widened by --to like other floats. Expected BF16 bits worked out by
// hand: E4M3 1, 2, -1, 448, 2^-9 and E5M2 1, -2, 57344, 2^-16.
TEST(ArrayFormatsCli, PthFp8KeptOrConverted) {
  TempDir dir;
  const fs::path input = dir.path() / "fp8.pth";
  {
    std::ofstream out(input, std::ios::binary);
    out << Fp8TorchZip();
  }
  ExpectRemembered(input, Json::parse(R"([
    {"name": "e4m3", "dtype": "F8_E4M3", "shape": [5], "hex": "3840b87e01"},
    {"name": "e5m2", "dtype": "F8_E5M2", "shape": [2, 2], "hex": "3cc07b01"}])"));
  ExpectRemembered(input, Json::parse(R"([
    {"name": "e4m3", "dtype": "BF16", "shape": [5], "hex": "803f004080bfe043003b"},
    {"name": "e5m2", "dtype": "BF16", "shape": [2, 2], "hex": "803f00c060478037"}])"), "--to bf16");
}

TEST(ArrayFormatsCli, LimitFlagsTightenAndAreCapped) {
  const auto files = FixtureFiles("pth_reference", ".pth");
  if (files.empty()) GTEST_SKIP() << "no pth_reference fixtures in " << FixturesDir();
  // 16 bytes of tensor data at most: the fixtures declare more.
  const CliResult small = RunAmn("inspect --max-bytes 16 " + Quote(files.front()));
  EXPECT_EQ(small.exit_code, 1);
  EXPECT_EQ(small.err.rfind("amn: limit exceeded: ", 0), 0u) << small.err;
  const CliResult items = RunAmn("parse --max-items 1 " + Quote(files.front()));
  EXPECT_EQ(items.exit_code, 1);
  EXPECT_EQ(items.err.rfind("amn: limit exceeded: ", 0), 0u) << items.err;
  // Above the built-in cap: a usage error, not a silent loosening.
  const CliResult loose = RunAmn("parse --max-bytes 1P " + Quote(files.front()));
  EXPECT_EQ(loose.exit_code, 2) << loose.err;
}

}  // namespace
}  // namespace amn::test
