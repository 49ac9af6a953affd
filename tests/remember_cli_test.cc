// `amn remember`, `parse` and `inspect` end to end on safetensors: real FP8
// checkpoints from ../shared/fixtures (PyTorch's bytes), the generated demo
// model (sharded directory, index and config rewrite, naming, -j1 == -j2,
// values against the scalar reference), and bad inputs (one error line,
// non-zero exit, no output left behind). Output files are read back with
// nlohmann::json here, not with the library's own parser.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fixtures/safetensors_builder.h"
#include "kernels/ref/float_convert_ref.h"
#include "kernels/ref/fp8_ref.h"
#include "tests/cli_files.h"
#include "tests/cli_runner.h"
#include "tests/fixtures.h"

namespace amn::test {
namespace {

namespace fs = std::filesystem;
using fixtures::SafetensorsBuilder;

// --- Real FP8 checkpoints -----------------------------------------------------

struct Fp8Fixture {
  uint32_t scheme, scale_dtype, rows, cols;
  std::vector<uint8_t> weight, scales, expected;
};

Fp8Fixture LoadFixture(const fs::path& path) {
  const std::vector<uint8_t> f = ReadBytes(path);
  Fp8Fixture x{LoadLe32(&f[0]), LoadLe32(&f[4]), LoadLe32(&f[8]), LoadLe32(&f[12]), {}, {}, {}};
  const uint32_t wl = LoadLe32(&f[16]), sl = LoadLe32(&f[20]), el = LoadLe32(&f[24]);
  x.weight.assign(f.begin() + 28, f.begin() + 28 + wl);
  x.scales.assign(f.begin() + 28 + wl, f.begin() + 28 + wl + sl);
  x.expected.assign(f.begin() + 28 + wl + sl, f.begin() + 28 + wl + sl + el);
  return x;
}

TEST(RememberCli, RealFp8CheckpointsMatchPyTorchBytes) {
  const auto files = FixtureFiles("fp8_reference", ".bin");
  AMN_SKIP_WITHOUT_FIXTURES(files, "fp8_reference");
  for (const fs::path& path : files) {
    SCOPED_TRACE(path.filename().string());
    const Fp8Fixture x = LoadFixture(path);
    const char* scale_dtype = x.scale_dtype == 0 ? "F32" : x.scale_dtype == 1 ? "BF16" : "F16";
    const uint64_t scale_elems = x.scales.size() / (x.scale_dtype == 0 ? 4 : 2);
    SafetensorsBuilder model;
    model.Add("model.norm.weight", "BF16", {4}, {1, 2, 3, 4, 5, 6, 7, 8});
    model.Add("layer.weight", "F8_E4M3", {x.rows, x.cols}, x.weight);
    if (x.scheme == 0) {
      model.Add("layer.weight_scale_inv", scale_dtype, {(x.rows + 127) / 128, (x.cols + 127) / 128}, x.scales);
    } else if (x.scheme == 1) {
      model.Add("layer.weight_scale", scale_dtype, {1}, x.scales);
    } else {
      model.Add("layer.weight_scale", scale_dtype, {scale_elems, 1}, x.scales);
    }
    TempDir dir;
    ASSERT_TRUE(model.Write(dir.path() / "model-FP8.safetensors"));
    // Both output writers (the ordered ring and the mapped one), each at -j 1
    // and -j 2, against PyTorch's bytes.
    for (const char* writer : {"ring", "mapped"}) {
    for (const char* threads : {"1", "2"}) {
      SCOPED_TRACE(std::string(writer) + " -j " + threads);
      const CliResult r = RunAmn("remember -q -j " + std::string(threads) + " " +
                                     Quote(dir.path() / "model-FP8.safetensors") + " -o " +
                                     Quote(dir.path() / "out.safetensors") + " --force",
                                 std::string("AMN_OUTPUT_WRITER=") + writer);
      ASSERT_EQ(r.exit_code, 0) << r.err;
      const ReadBack out(dir.path() / "out.safetensors");
      EXPECT_EQ(out.header["layer.weight"]["dtype"], "BF16");
      EXPECT_EQ(out.header["layer.weight"]["shape"], nlohmann::json({x.rows, x.cols}));
      EXPECT_FALSE(out.header.contains("layer.weight_scale"));
      EXPECT_FALSE(out.header.contains("layer.weight_scale_inv"));
      EXPECT_TRUE(out.Data("layer.weight") == x.expected);
      EXPECT_EQ(out.Data("model.norm.weight"), std::vector<uint8_t>({1, 2, 3, 4, 5, 6, 7, 8}));
    }
    }
  }
}

// safetensors_reference/fp8.safetensors: an [8, 8] E4M3 weight with a [2, 2]
// F32 weight_scale_inv and no config.json, so the blocks are 4 x 4.
TEST(RememberCli, SafetensorsReferenceFp8) {
  const auto files = FixtureFiles("safetensors_reference", ".safetensors");
  AMN_SKIP_WITHOUT_FIXTURES(files, "safetensors_reference");
  const fs::path in = FixturesDir() / "safetensors_reference" / "fp8.safetensors";
  ASSERT_TRUE(fs::exists(in));
  TempDir dir;
  const CliResult r = RunAmn("remember -q " + Quote(in) + " -o " + Quote(dir.path() / "out.safetensors"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const ReadBack src(in), out(dir.path() / "out.safetensors");
  EXPECT_EQ(out.header["model.layers.0.weight"]["dtype"], "BF16");
  EXPECT_FALSE(out.header.contains("model.layers.0.weight_scale_inv"));
  EXPECT_TRUE(out.Data("model.norm.weight") == src.Data("model.norm.weight"));
  const std::vector<uint8_t> codes = src.Data("model.layers.0.weight");
  const std::vector<uint8_t> scales = src.Data("model.layers.0.weight_scale_inv");
  const std::vector<uint8_t> got = out.Data("model.layers.0.weight");
  for (uint64_t i = 0; i < 64; ++i) {
    const uint64_t r0 = i / 8, c = i % 8;
    float w, s;
    const uint32_t w_bits = ref::E4m3ToF32Bits(codes[i]);
    const uint32_t s_bits = LoadLe32(&scales[4 * ((r0 / 4) * 2 + c / 4)]);
    std::memcpy(&w, &w_bits, 4);
    std::memcpy(&s, &s_bits, 4);
    const float p = w * s;
    uint32_t p_bits;
    std::memcpy(&p_bits, &p, 4);
    EXPECT_EQ(got[2 * i] | got[2 * i + 1] << 8, ref::F32BitsToBf16(p_bits)) << i;
  }
}

// --- The generated demo model (sharded directory) -----------------------------

class DemoModel : public testing::Test {
 protected:
  void SetUp() override {
    input_ = dir_.path() / "demo-FP8";
    const CliResult r = RunBuilt(AMN_DEMO_GENERATOR_PATH, Quote(input_) + " 2");
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  TempDir dir_;
  fs::path input_;
};

TEST_F(DemoModel, RememberWritesAPlainShardedModel) {
  const CliResult r = RunAmn("remember " + Quote(input_));  // default name and threads
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const fs::path out = dir_.path() / "demo-bf16";
  ASSERT_TRUE(fs::is_directory(out)) << r.out;
  EXPECT_EQ(dir_.Entries(), (std::vector<std::string>{"demo-FP8", "demo-bf16"}));

  const auto index = nlohmann::json::parse(SlurpText(out / "model.safetensors.index.json"));
  const auto config = nlohmann::json::parse(SlurpText(out / "config.json"));
  EXPECT_FALSE(config.contains("quantization_config"));
  EXPECT_EQ(config["torch_dtype"], "bfloat16");
  EXPECT_EQ(config["hidden_size"], 640);
  for (const char* same : {"generation_config.json", "tokenizer_config.json"}) {
    EXPECT_EQ(SlurpText(out / same), SlurpText(input_ / same)) << same;
  }
  uint64_t total = 0;
  size_t weights = 0;
  for (const char* shard : {"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"}) {
    const ReadBack in(input_ / shard), o(out / shard);
    for (const auto& [name, info] : o.header.items()) {
      if (name == "__metadata__") continue;
      EXPECT_EQ(index["weight_map"][name], shard) << name;
      total += info["data_offsets"][1].get<uint64_t>() - info["data_offsets"][0].get<uint64_t>();
      const std::string in_dtype = in.header[name]["dtype"];
      if (in_dtype != "F8_E4M3") {
        EXPECT_EQ(info["dtype"], in_dtype);
        EXPECT_TRUE(o.Data(name) == in.Data(name)) << name;
        continue;
      }
      // Quantized: recompute with the scalar reference, independently of
      // the engine's chunking and the Highway kernels.
      ++weights;
      EXPECT_EQ(info["dtype"], "BF16");
      const std::string scale_name = name + "_scale_inv";
      const auto& sinfo = in.header[scale_name];
      const std::vector<uint8_t> codes = in.Data(name), raw_scales = in.Data(scale_name);
      const uint64_t rows = info["shape"][0], cols = info["shape"][1];
      const uint64_t scale_cols = sinfo["shape"][1];
      const std::vector<uint8_t> got = o.Data(name);
      for (uint64_t r = 0; r < rows; ++r) {
        for (uint64_t c = 0; c < cols; ++c) {
          const uint64_t s = (r / 128) * scale_cols + c / 128;
          uint32_t scale_bits = sinfo["dtype"] == "F32"
                                    ? LoadLe32(&raw_scales[4 * s])
                                    : ref::Bf16ToF32Bits(static_cast<uint16_t>(
                                          raw_scales[2 * s] | raw_scales[2 * s + 1] << 8));
          float w, scale;
          const uint32_t w_bits = ref::E4m3ToF32Bits(codes[r * cols + c]);
          std::memcpy(&w, &w_bits, 4);
          std::memcpy(&scale, &scale_bits, 4);
          const float product = w * scale;
          uint32_t p_bits;
          std::memcpy(&p_bits, &product, 4);
          const uint16_t want = ref::F32BitsToBf16(p_bits);
          const uint64_t i = r * cols + c;
          const uint16_t have = static_cast<uint16_t>(got[2 * i] | got[2 * i + 1] << 8);
          ASSERT_EQ(have, want) << name << " [" << r << ", " << c << "]";
        }
      }
    }
    for (const auto& [name, info] : in.header.items()) {
      const bool consumed = name.ends_with("_scale_inv") || name.ends_with(".input_scale");
      if (name != "__metadata__") {
        EXPECT_EQ(o.header.contains(name), !consumed) << name;
      }
    }
  }
  EXPECT_EQ(weights, 8u);  // 2 layers x 4 projections
  EXPECT_EQ(index["metadata"]["total_size"], total);
}

// -j 1 and -j 2 (the ring writer) and -j 2 through the mapped writer
// (AMN_OUTPUT_WRITER=mapped) write the same shards.
TEST_F(DemoModel, OutputIsIdenticalForAnyThreadCountAndType) {
  for (const char* to : {"bf16", "f16", "f32"}) {
    const fs::path a = dir_.path() / ("j1-" + std::string(to)), b = dir_.path() / ("j2-" + std::string(to));
    const fs::path c = dir_.path() / ("j2-mapped-" + std::string(to));
    ASSERT_EQ(RunAmn("remember -q -j 1 --to " + std::string(to) + " " + Quote(input_) + " -o " + Quote(a)).exit_code, 0);
    ASSERT_EQ(RunAmn("remember -q -j 2 --to " + std::string(to) + " " + Quote(input_) + " -o " + Quote(b)).exit_code, 0);
    ASSERT_EQ(RunAmn("remember -q -j 2 --to " + std::string(to) + " " + Quote(input_) + " -o " + Quote(c),
                     "AMN_OUTPUT_WRITER=mapped")
                  .exit_code,
              0);
    for (const char* shard : {"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"}) {
      EXPECT_EQ(ReadBytes(a / shard), ReadBytes(b / shard)) << to << " " << shard;
      EXPECT_EQ(ReadBytes(a / shard), ReadBytes(c / shard)) << to << " " << shard;
      const ReadBack o(a / shard);
      const std::string want = std::string(to) == "bf16" ? "BF16" : std::string(to) == "f16" ? "F16" : "F32";
      for (const auto& [name, info] : o.header.items()) {
        if (name.find("_proj.weight") != std::string::npos) {
          EXPECT_EQ(info["dtype"], want) << name;
        }
      }
    }
  }
}

TEST_F(DemoModel, InspectAndParseDescribeTheScheme) {
  const CliResult inspect = RunAmn("inspect " + Quote(input_));
  ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
  EXPECT_NE(inspect.out.find("128x128 blocks"), std::string::npos) << inspect.out;
  EXPECT_NE(inspect.out.find("Lethe took"), std::string::npos);
  const auto json = nlohmann::json::parse(RunAmn("info --json " + Quote(input_)).out);
  EXPECT_EQ(json["quantized_tensors"], 8);
  EXPECT_EQ(json["companion_tensors"], 8);
  EXPECT_EQ(json["dropped_tensors"], 8);  // input_scale
  EXPECT_EQ(json["shards"], 2);
  const auto parsed = nlohmann::json::parse(RunAmn("parse --json " + Quote(input_)).out);
  size_t quantized = 0;
  uint64_t fp8_bytes = 0, consumed_bytes = 0;
  for (const auto& t : parsed["tensors"]) {
    if (t["role"] == "quantized") {
      ++quantized;
      fp8_bytes += t["bytes"].get<uint64_t>();
      EXPECT_EQ(t["scheme"], "FP8 E4M3, 128x128 blocks");
    }
    if (t["role"] == "companion" || t["role"] == "dropped") consumed_bytes += t["bytes"].get<uint64_t>();
  }
  EXPECT_EQ(quantized, 8u);
  EXPECT_EQ(fp8_bytes, 2u * (2 * 640 * 640 + 2 * 1700 * 640));
  // Every FP8 byte becomes two BF16 bytes; scales and input scales vanish.
  EXPECT_EQ(json["remembered_bytes"].get<uint64_t>(),
            json["current_bytes"].get<uint64_t>() - consumed_bytes + fp8_bytes);
}

TEST_F(DemoModel, ExistingOutputNeedsForce) {
  const fs::path out = dir_.path() / "out";
  ASSERT_EQ(RunAmn("remember -q " + Quote(input_) + " -o " + Quote(out)).exit_code, 0);
  const CliResult again = RunAmn("remember -q " + Quote(input_) + " -o " + Quote(out));
  EXPECT_NE(again.exit_code, 0);
  EXPECT_NE(again.err.find("--force"), std::string::npos) << again.err;
  EXPECT_EQ(RunAmn("remember -q --force " + Quote(input_) + " -o " + Quote(out)).exit_code, 0);
  EXPECT_EQ(dir_.Entries(), (std::vector<std::string>{"demo-FP8", "out"}));
}

// --- Bad input: one clear line, non-zero exit, nothing left behind -----------

struct BadCase {
  const char* what;
  std::vector<uint8_t> bytes;
  const char* message;  // a fragment the error line must contain
};

std::vector<BadCase> BadCases() {
  SafetensorsBuilder good;
  good.Add("w.weight", "F8_E4M3", {2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  good.Add("w.weight_scale", "F32", {1}, {0, 0, 128, 63});
  const std::vector<uint8_t> ok = good.Bytes();
  std::vector<BadCase> cases;
  cases.push_back({"truncated", std::vector<uint8_t>(ok.begin(), ok.end() - 3), "in.safetensors"});
  cases.push_back({"short", {1, 2, 3}, "in.safetensors"});
  std::vector<uint8_t> bad_json = ok;
  bad_json[9] = '[';
  cases.push_back({"bad json", bad_json, "in.safetensors"});
  auto with_header = [](const std::string& json, size_t data_bytes) {
    std::vector<uint8_t> out;
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(json.size() >> (8 * i)));
    for (char c : json) out.push_back(static_cast<uint8_t>(c));
    out.resize(out.size() + data_bytes, 0);
    return out;
  };
  cases.push_back({"offsets out of range",
                   with_header(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,16]}})", 8), "a"});
  cases.push_back({"overlap",
                   with_header(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                               R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})", 12), "in.safetensors"});
  SafetensorsBuilder no_scale;
  no_scale.Add("w.weight", "F8_E4M3", {2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  cases.push_back({"missing scale", no_scale.Bytes(), "w.weight"});
  SafetensorsBuilder bad_scale;
  bad_scale.Add("w.weight", "F8_E4M3", {2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  bad_scale.Add("w.weight_scale", "F32", {3}, std::vector<uint8_t>(12, 0));
  cases.push_back({"mis-shaped scale", bad_scale.Bytes(), "w.weight_scale"});
  SafetensorsBuilder int_scale;
  int_scale.Add("w.weight", "F8_E4M3", {2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  int_scale.Add("w.weight_scale", "I32", {1}, {1, 0, 0, 0});
  cases.push_back({"integer scale", int_scale.Bytes(), "w.weight_scale"});
  return cases;
}

TEST(RememberCli, BadInputsFailCleanly) {
  for (const BadCase& bad : BadCases()) {
    SCOPED_TRACE(bad.what);
    TempDir dir;
    const fs::path in = dir.path() / "in.safetensors";
    {
      std::ofstream f(in, std::ios::binary);
      f.write(reinterpret_cast<const char*>(bad.bytes.data()), static_cast<std::streamsize>(bad.bytes.size()));
    }
    const std::vector<uint8_t> before = ReadBytes(in);
    for (const std::string& command :
         {"remember -q -o " + Quote(dir.path() / "out.safetensors"), std::string("inspect"),
          std::string("parse")}) {
      const CliResult r = RunAmn(command + " " + Quote(in));
      EXPECT_NE(r.exit_code, 0) << command;
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << command << ": " << r.err;
      EXPECT_NE(r.err.find(bad.message), std::string::npos) << r.err;
    }
    EXPECT_EQ(dir.Entries(), std::vector<std::string>{"in.safetensors"});
    EXPECT_EQ(ReadBytes(in), before) << "the input was modified";
  }
}

TEST(RememberCli, RelativePathsAndDefaultFileName) {
  TempDir dir;
  SafetensorsBuilder model;
  model.Add("w.weight", "F8_E4M3", {2, 4}, {0x38, 0xB8, 1, 2, 3, 4, 5, 6});
  model.Add("w.weight_scale", "F32", {1}, {0, 0, 0, 64});  // 2.0f
  ASSERT_TRUE(model.Write(dir.path() / "tiny-FP8.safetensors"));
  const CliResult r = RunAmn("remember -q tiny-FP8.safetensors", "cd " + Quote(dir.path()) + " &&");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(dir.Entries(), (std::vector<std::string>{"tiny-FP8.safetensors", "tiny-bf16.safetensors"}));
  const ReadBack out(dir.path() / "tiny-bf16.safetensors");
  // E4M3 0x38 = 1.0 and 0xB8 = -1.0, times 2: BF16 0x4000 and 0xC000.
  const std::vector<uint8_t> w = out.Data("w.weight");
  ASSERT_EQ(w.size(), 16u);
  EXPECT_EQ(w[0] | w[1] << 8, 0x4000);
  EXPECT_EQ(w[2] | w[3] << 8, 0xC000);
}

TEST(RememberCli, PackedWeightWithoutCompanionsIsRefused) {
  TempDir dir;
  SafetensorsBuilder model;
  model.Add("l.qweight", "I32", {2, 2}, std::vector<uint8_t>(16, 7));
  model.Add("l.scales", "F16", {2}, {0, 60, 0, 60});
  ASSERT_TRUE(model.Write(dir.path() / "gptq.safetensors"));
  const CliResult inspect = RunAmn("inspect " + Quote(dir.path() / "gptq.safetensors"));
  EXPECT_EQ(inspect.exit_code, 1);
  EXPECT_NE(inspect.err.find("l.qzeros"), std::string::npos) << inspect.err;
  const CliResult r = RunAmn("remember -q " + Quote(dir.path() / "gptq.safetensors"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("l.qweight"), std::string::npos) << r.err;
  EXPECT_EQ(dir.Entries(), std::vector<std::string>{"gptq.safetensors"});
}

TEST(RememberCli, UnwritableOutputFailsCleanly) {
  TempDir dir;
  SafetensorsBuilder model;
  model.Add("w.weight", "F8_E4M3", {2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  model.Add("w.weight_scale", "F32", {1}, {0, 0, 128, 63});
  ASSERT_TRUE(model.Write(dir.path() / "in.safetensors"));
  const CliResult missing_dir = RunAmn("remember -q " + Quote(dir.path() / "in.safetensors") + " -o " +
                                       Quote(dir.path() / "no" / "such" / "out.safetensors"));
  EXPECT_EQ(missing_dir.exit_code, 1);
  EXPECT_NE(missing_dir.err.find("does not exist"), std::string::npos) << missing_dir.err;
  const CliResult onto_input = RunAmn("remember -q --force " + Quote(dir.path() / "in.safetensors") +
                                      " -o " + Quote(dir.path() / "in.safetensors"));
  EXPECT_NE(onto_input.exit_code, 0);
  EXPECT_EQ(dir.Entries(), std::vector<std::string>{"in.safetensors"});
}

}  // namespace
}  // namespace amn::test
