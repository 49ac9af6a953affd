// GGUF through the CLI and the model API: parse/inspect report the header,
// remember writes safetensors with row-major shapes, kept names, copied plain
// tensors and string metadata; ollama: names resolve through a manifest.
// Quantized tensors are checked against ggml's formula evaluated here, the
// gguf-py fixtures, and (for every type at once) the scalar reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "amn/ggml_dequant.h"
#include "kernels/ref/float_convert_ref.h"
#include "tests/cli_files.h"
#include "tests/cli_runner.h"
#include "tests/fixtures.h"
#include "tests/ggml_check.h"
#include "tests/gguf_writer.h"
#include "tests/kernel_check.h"

namespace amn::test {
namespace {

namespace fs = std::filesystem;

class GgufCli : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("amn_gguf_cli_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    // F32 [2, 3] (GGUF dims {3, 2}), F16 [4], one Q8_0 row of 32, metadata.
    GgufWriter w(3);
    w.Header(3, 3);
    w.KvStr("general.architecture", "llama").KvStr("general.name", "tiny").KvU32("llama.block_count", 1);
    w.Tensor("token_embd.weight", {3, 2}, 0, 0);
    w.Tensor("output_norm.weight", {4}, 1, 32);
    w.Tensor("blk.0.attn_q.weight", {32}, 8, 64);
    w.PadTo(32);
    const float f32[6] = {1, 2, 3, 4, 5, -6};
    w.Raw(f32, sizeof(f32)).PadTo(32);
    const uint16_t f16[4] = {0x3C00, 0xC000, 0x0001, 0x7BFF};
    w.Raw(f16, sizeof(f16)).PadTo(32);
    q8_.resize(34);
    q8_[0] = 0x00;  // d = 0x3800 = 0.5 (f16, little-endian)
    q8_[1] = 0x38;
    for (int i = 0; i < 32; ++i) q8_[2 + i] = static_cast<uint8_t>(i * 7 - 100);
    w.Raw(q8_.data(), q8_.size());
    bytes_ = w.bytes();
    std::ofstream(dir_ / "tiny.gguf", std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes_.data()), static_cast<std::streamsize>(bytes_.size()));
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_;
  std::vector<uint8_t> bytes_;
  std::vector<uint8_t> q8_;
};

TEST_F(GgufCli, InspectAndParseReportTheHeader) {
  const CliResult inspect = RunAmn("inspect --json " + Quote(dir_ / "tiny.gguf"));
  ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
  const auto info = nlohmann::json::parse(inspect.out);
  EXPECT_EQ(info["format"], "gguf");
  EXPECT_EQ(info["gguf_version"], 3);
  EXPECT_EQ(info["architecture"], "llama");
  EXPECT_EQ(info["metadata_keys"], 3);
  EXPECT_EQ(info["quantized_tensors"], 1);
  EXPECT_EQ(info["passthrough_tensors"], 2);
  const CliResult parse = RunAmn("parse --json " + Quote(dir_ / "tiny.gguf"));
  ASSERT_EQ(parse.exit_code, 0) << parse.err;
  const auto p = nlohmann::json::parse(parse.out);
  EXPECT_EQ(p["metadata"]["general.name"]["value"], "tiny");
  EXPECT_EQ(p["metadata"]["llama.block_count"]["value"], 1);
  EXPECT_EQ(p["tensors"][0]["shape"], nlohmann::json({2, 3}));  // row-major
  EXPECT_EQ(p["tensors"][2]["dtype"], "Q8_0");
}

TEST_F(GgufCli, RememberWritesRowMajorSafetensors) {
  const CliResult r = RunAmn("remember -q " + Quote(dir_ / "tiny.gguf"));
  const fs::path out = dir_ / "tiny-bf16.safetensors";
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<uint8_t> file = ReadBytes(out);
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = n << 8 | file[i];
  const auto header = nlohmann::json::parse(file.begin() + 8, file.begin() + 8 + static_cast<long>(n));
  EXPECT_EQ(header["__metadata__"]["general.architecture"], "llama");
  EXPECT_EQ(header["__metadata__"]["format"], "pt");
  EXPECT_FALSE(header["__metadata__"].contains("llama.block_count"));  // strings only
  EXPECT_EQ(header["token_embd.weight"]["shape"], nlohmann::json({2, 3}));
  // The default --to bf16 holds for every float tensor, not only quantized ones.
  EXPECT_EQ(header["token_embd.weight"]["dtype"], "BF16");
  EXPECT_EQ(header["output_norm.weight"]["dtype"], "BF16");
  EXPECT_EQ(header["blk.0.attn_q.weight"]["dtype"], "BF16");
  auto data = [&](const std::string& name) {
    const auto& o = header[name]["data_offsets"];
    return std::vector<uint8_t>(file.begin() + 8 + static_cast<long>(n + o[0].get<uint64_t>()),
                                file.begin() + 8 + static_cast<long>(n + o[1].get<uint64_t>()));
  };
  // F32 1 2 3 4 5 -6 are exact in BF16; F16 1, -2, 2^-24 are too, and 65504
  // (F32 0x477FE000) rounds to nearest even up to 65536.
  EXPECT_EQ(data("token_embd.weight"), std::vector<uint8_t>({0x80, 0x3F, 0x00, 0x40, 0x40, 0x40,
                                                             0x80, 0x40, 0xA0, 0x40, 0xC0, 0xC0}));
  EXPECT_EQ(data("output_norm.weight"),
            std::vector<uint8_t>({0x80, 0x3F, 0x00, 0xC0, 0x80, 0x33, 0x80, 0x47}));
  // Q8_0: y = d * q, d the f16 0x3800 = 0.5 (ggml-quants.c dequantize_row_q8_0).
  const std::vector<uint8_t> q = data("blk.0.attn_q.weight");
  ASSERT_EQ(q.size(), 64u);
  for (int i = 0; i < 32; ++i) {
    const float value = 0.5f * static_cast<float>(static_cast<int8_t>(q8_[2 + i]));
    uint32_t bits;
    std::memcpy(&bits, &value, 4);
    EXPECT_EQ(q[2 * i] | q[2 * i + 1] << 8, ref::F32BitsToBf16(bits)) << i;
  }
}

TEST_F(GgufCli, KeepPassthroughCopiesPlainTensors) {
  const fs::path out = dir_ / "kept.safetensors";
  const fs::path in = dir_ / "tiny.gguf";
  const CliResult r = RunAmn("remember -q --keep-passthrough " + Quote(in) + " -o " + Quote(out));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const ReadBack o(out);
  EXPECT_EQ(o.header["token_embd.weight"]["dtype"], "F32");
  EXPECT_EQ(o.header["output_norm.weight"]["dtype"], "F16");
  EXPECT_EQ(o.header["blk.0.attn_q.weight"]["dtype"], "BF16");
  const float f32[6] = {1, 2, 3, 4, 5, -6};
  std::vector<uint8_t> f32_bytes(sizeof(f32));
  std::memcpy(f32_bytes.data(), f32, sizeof(f32));
  EXPECT_EQ(o.Data("token_embd.weight"), f32_bytes) << "F32 bytes copied";
  EXPECT_EQ(o.Data("output_norm.weight"),
            std::vector<uint8_t>({0x00, 0x3C, 0x00, 0xC0, 0x01, 0x00, 0xFF, 0x7B}));
  const auto info = nlohmann::json::parse(RunAmn("inspect --json --keep-passthrough " + Quote(in)).out);
  EXPECT_EQ(info["converted_tensors"], 0);
  EXPECT_EQ(info["remembered_bytes"], 24 + 8 + 64);
  const auto converted = nlohmann::json::parse(RunAmn("inspect --json " + Quote(in)).out);
  EXPECT_EQ(converted["converted_tensors"], 2);
  EXPECT_EQ(converted["remembered_bytes"], 12 + 8 + 64);
}

// Every gguf_reference fixture wrapped in a GGUF file as one tensor, through
// `amn remember`: the output must be gguf-py's BF16 bytes exactly.
TEST_F(GgufCli, RealBlocksThroughRememberMatchGgufPy) {
  const auto files = FixtureFiles("gguf_reference", ".bin");
  AMN_SKIP_WITHOUT_FIXTURES(files, "gguf_reference");
  size_t decoded = 0;
  for (const fs::path& path : files) {
    SCOPED_TRACE(path.filename().string());
    const std::vector<uint8_t> f = ReadBytes(path);
    const uint32_t type = LoadLe32(&f[0]), n = LoadLe32(&f[4]), raw = LoadLe32(&f[8]);
    GgufWriter w(3);
    w.Header(1, 0).Tensor("t", {n}, type, 0).PadTo(32);
    w.Raw(f.data() + 16, raw);
    const fs::path in = dir_ / "fixture.gguf", out = dir_ / "fixture.safetensors";
    std::ofstream(in, std::ios::binary)
        .write(reinterpret_cast<const char*>(w.bytes().data()), static_cast<std::streamsize>(w.bytes().size()));
    const CliResult r = RunAmn("remember -q --force " + Quote(in) + " -o " + Quote(out));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::vector<uint8_t> o = ReadBytes(out);
    uint64_t header = 0;
    for (int i = 7; i >= 0; --i) header = header << 8 | o[i];
    const std::vector<uint8_t> got(o.begin() + 8 + static_cast<long>(header), o.end());
    const std::vector<uint8_t> want(f.begin() + 16 + raw, f.end());
    EXPECT_TRUE(got == want);
    ++decoded;
  }
  EXPECT_EQ(decoded, files.size());
}

// A synthetic GGUF holding one [3, 2 blocks] tensor of every ggml type (plain
// types [3, 4]) with pseudo-random bytes, through `amn remember --to` each
// output type: quantized tensors must equal the scalar reference's bytes
// (kernels/ref/, via tests/ggml_check.h), plain tensors are copied unchanged
// (--keep-passthrough), shapes are row-major, names kept.
TEST_F(GgufCli, EveryGgmlTypeThroughRemember) {
  struct Entry {
    GgmlType type;
    std::string name;
    std::vector<uint8_t> bytes;
    uint64_t row;
  };
  std::vector<Entry> entries;
  for (uint32_t id = 0; id < 64; ++id) {
    const GgmlTypeInfo* info = FindGgmlType(id);
    if (info == nullptr) continue;
    const uint64_t row = info->quantized ? 2 * info->block_elems : 4;
    const size_t bytes = 3 * row / info->block_elems * info->block_bytes;
    entries.push_back({info->type, "t." + std::string(info->name), PseudoRandomBytes(bytes, id + 1), row});
  }
  ASSERT_EQ(entries.size(), 35u);
  GgufWriter w(3);
  w.Header(entries.size(), 0);
  uint64_t offset = 0;
  for (const Entry& e : entries) {
    w.Tensor(e.name, {e.row, 3}, static_cast<uint32_t>(e.type), offset);
    offset += (e.bytes.size() + 31) / 32 * 32;
  }
  w.PadTo(32);
  for (const Entry& e : entries) w.Raw(e.bytes.data(), e.bytes.size()).PadTo(32);
  const fs::path in = dir_ / "every.gguf";
  std::ofstream(in, std::ios::binary)
      .write(reinterpret_cast<const char*>(w.bytes().data()), static_cast<std::streamsize>(w.bytes().size()));
  for (const auto& [flag, out_type, dtype] :
       {std::tuple{"bf16", ElemType::kBf16, "BF16"}, std::tuple{"f16", ElemType::kF16, "F16"},
        std::tuple{"f32", ElemType::kF32, "F32"}}) {
    SCOPED_TRACE(flag);
    const fs::path out = dir_ / "every.safetensors";
    const CliResult r =
        RunAmn(std::string("remember -q --force --keep-passthrough --to ") + flag + " " + Quote(in) +
               " -o " + Quote(out));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::vector<uint8_t> file = ReadBytes(out);
    uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = n << 8 | file[i];
    const auto header = nlohmann::json::parse(file.begin() + 8, file.begin() + 8 + static_cast<long>(n));
    for (const Entry& e : entries) {
      SCOPED_TRACE(e.name);
      const bool quantized = FindGgmlType(static_cast<uint32_t>(e.type))->quantized;
      const auto& t = header.at(e.name);
      EXPECT_EQ(t["shape"], nlohmann::json({3, e.row}));
      const auto& o = t["data_offsets"];
      const std::vector<uint8_t> got(file.begin() + 8 + static_cast<long>(n + o[0].get<uint64_t>()),
                                     file.begin() + 8 + static_cast<long>(n + o[1].get<uint64_t>()));
      if (quantized) {
        EXPECT_EQ(t["dtype"], dtype);
        EXPECT_TRUE(got == GgmlReference(e.type, e.bytes, out_type));
      } else {
        EXPECT_EQ(t["dtype"], std::string(FindGgmlType(static_cast<uint32_t>(e.type))->name));
        EXPECT_TRUE(got == e.bytes) << "plain tensors are copied";
      }
    }
  }
}

// Malformed GGUF files through the CLI: one error line naming the file, exit
// 1, no output left behind, the input unchanged. (gguf_header_test covers
// every malformation at the parser.)
TEST_F(GgufCli, MalformedFilesAreRefusedCleanly) {
  std::vector<std::pair<std::string, std::vector<uint8_t>>> bad;
  bad.push_back({"truncated data", std::vector<uint8_t>(bytes_.begin(), bytes_.end() - 10)});
  bad.push_back({"truncated header", std::vector<uint8_t>(bytes_.begin(), bytes_.begin() + 40)});
  std::vector<uint8_t> unknown_type = bytes_;
  // The third tensor's type id (Q8_0 = 8) follows its name and one dimension.
  const std::string name = "blk.0.attn_q.weight";
  const auto at = std::search(unknown_type.begin(), unknown_type.end(), name.begin(), name.end());
  ASSERT_NE(at, unknown_type.end());
  const size_t type_at = static_cast<size_t>(at - unknown_type.begin()) + name.size() + 4 + 8;
  ASSERT_EQ(unknown_type[type_at], 8);
  unknown_type[type_at] = 99;
  bad.push_back({"unknown type id", unknown_type});
  for (const auto& [what, bytes] : bad) {
    SCOPED_TRACE(what);
    const fs::path in = dir_ / "bad.gguf", out = dir_ / "bad.safetensors";
    std::ofstream(in, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    const CliResult r = RunAmn("remember -q " + Quote(in) + " -o " + Quote(out));
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find("bad.gguf"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(out));
    EXPECT_TRUE(ReadBytes(in) == bytes);
    EXPECT_EQ(RunAmn("inspect " + Quote(in)).exit_code, 1);
  }
}

TEST_F(GgufCli, OllamaNamesResolveThroughTheManifest) {
  const fs::path models = dir_ / "models";
  const fs::path manifest_dir = models / "manifests" / "registry.ollama.ai" / "library" / "tiny";
  fs::create_directories(manifest_dir);
  fs::create_directories(models / "blobs");
  fs::copy_file(dir_ / "tiny.gguf", models / "blobs" / "sha256-abc123");
  std::ofstream(manifest_dir / "1b")
      << R"({"layers":[{"mediaType":"application/vnd.ollama.image.template","digest":"sha256:x"},)"
      << R"({"mediaType":"application/vnd.ollama.image.model","digest":"sha256:abc123"}]})";
  const std::string env = "OLLAMA_MODELS=" + Quote(models);
  const CliResult ok = RunAmn("inspect --json ollama:tiny:1b", env);
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_EQ(nlohmann::json::parse(ok.out)["architecture"], "llama");
  const CliResult missing_tag = RunAmn("inspect ollama:tiny", env);  // tag defaults to latest
  EXPECT_EQ(missing_tag.exit_code, 1);
  EXPECT_NE(missing_tag.err.find("latest"), std::string::npos) << missing_tag.err;
  fs::remove(models / "blobs" / "sha256-abc123");
  const CliResult missing_blob = RunAmn("parse ollama:tiny:1b", env);
  EXPECT_EQ(missing_blob.exit_code, 1);
  EXPECT_NE(missing_blob.err.find("sha256-abc123"), std::string::npos) << missing_blob.err;
  EXPECT_EQ(RunAmn("parse ollama:../etc", env).exit_code, 2);
}

}  // namespace
}  // namespace amn::test
