// `amn inspect` / `amn remember` on quantized safetensors checkpoints: GPTQ,
// AWQ and bitsandbytes models built from the real-model fixtures (the
// canonical libraries' BF16 output is the expectation, transposed to the
// nn.Linear [out, in] layout for GPTQ and AWQ), single files and sharded
// directories; inconsistent companions and configs refused with one error
// line naming the tensor and no output left behind.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fixtures/safetensors_builder.h"
#include "tests/bnb_fixture_model.h"
#include "tests/cli_files.h"
#include "tests/cli_runner.h"
#include "tests/fixtures.h"
#include "tests/quant_fixture_files.h"

namespace amn::test {
namespace {

namespace fs = std::filesystem;
using fixtures::SafetensorsBuilder;
using Json = nlohmann::json;

constexpr char kPrefix[] = "model.layers.0.mlp.gate_proj";

void WriteText(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

// config.json of a Llama-style model with this quantization_config.
std::string Config(const Json& quantization_config) {
  Json config = {{"architectures", {"LlamaForCausalLM"}},
                 {"torch_dtype", "float16"},
                 {"quantization_config", quantization_config}};
  return config.dump(2);
}

std::vector<uint8_t> Norm() { return {0x00, 0x3C, 0x00, 0x40, 0x00, 0xC0, 0x00, 0x00}; }  // F16 1 2 -2 0
// The norm in the output: every float tensor becomes BF16 (1 2 -2 0 exactly).
std::vector<uint8_t> NormBf16() { return {0x80, 0x3F, 0x00, 0x40, 0x00, 0xC0, 0x00, 0x00}; }

// Runs remember on `input` into dir/out and returns the result.
CliResult Remember(const fs::path& input, const fs::path& output, const std::string& flags = "") {
  return RunAmn("remember -q " + flags + " " + Quote(input) + " -o " + Quote(output));
}

// A GPTQ layer from a fixture, as a checkpoint stores it.
void AddGptq(SafetensorsBuilder& m, const PackedLinearFixture& f, const std::vector<uint8_t>& qzeros) {
  const uint32_t groups = f.in / f.group_size;
  const std::string p = kPrefix;
  m.Add(p + ".qweight", "I32", {f.in * f.bits / 32, f.out}, f.qweight);
  m.Add(p + ".qzeros", "I32", {groups, f.out * f.bits / 32}, qzeros);
  m.Add(p + ".scales", ScaleDtypeName(f.scale_dtype), {groups, f.out}, f.scales);
  m.Add(p + ".g_idx", "I32", {f.in}, f.g_idx);
}

Json GptqConfig(const PackedLinearFixture& f) {
  return {{"quant_method", "gptq"}, {"bits", f.bits}, {"group_size", f.group_size},
          {"desc_act", false}, {"sym", true}};
}

TEST(GptqCli, FixturesRememberToNnLinearOrientation) {
  const auto files = FixtureFiles("gptq_reference", ".bin");
  AMN_SKIP_WITHOUT_FIXTURES(files, "gptq_reference");
  for (const fs::path& path : files) {
    const auto f = ReadGptqFixture(path);
    ASSERT_TRUE(f) << path;
    TempDir dir;
    const fs::path model = dir.path() / "model";
    fs::create_directory(model);
    SafetensorsBuilder m;
    AddGptq(m, *f, f->qzeros);
    m.Add("model.norm.weight", "F16", {4}, Norm());
    ASSERT_TRUE(m.Write(model / "model.safetensors"));
    WriteText(model / "config.json", Config(GptqConfig(*f)));

    const CliResult inspect = RunAmn("inspect " + Quote(model));
    ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
    const std::string scheme = "GPTQ " + std::to_string(f->bits) + "-bit, group 128, symmetric, v1 zero points";
    EXPECT_NE(inspect.out.find(scheme), std::string::npos) << inspect.out;

    const CliResult r = Remember(model, dir.path() / "out");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const ReadBack out(dir.path() / "out" / "model.safetensors");
    const std::string name = std::string(kPrefix) + ".weight";
    EXPECT_EQ(out.header[name]["dtype"], "BF16");
    EXPECT_EQ(out.header[name]["shape"], Json({f->out, f->in}));
    EXPECT_EQ(out.Data(name), TransposeU16(f->expected, f->in, f->out)) << f->name;
    EXPECT_EQ(out.header["model.norm.weight"]["dtype"], "BF16");
    EXPECT_EQ(out.Data("model.norm.weight"), NormBf16());
    EXPECT_FALSE(out.header.contains(std::string(kPrefix) + ".qzeros"));
    const Json config = Json::parse(SlurpText(dir.path() / "out" / "config.json"));
    EXPECT_FALSE(config.contains("quantization_config"));
    EXPECT_EQ(config["torch_dtype"], "bfloat16");
  }
}

// v2 checkpoints store the zero itself: the fixture's v1 zeros plus one per
// field (every stored zero is 2^(bits-1) - 1, so no field carries), read
// with checkpoint_format gptq_v2, give the same weights.
TEST(GptqCli, V2ZeroPointsMatchV1) {
  const auto files = FixtureFiles("gptq_reference", ".bin");
  AMN_SKIP_WITHOUT_FIXTURES(files, "gptq_reference");
  const auto f = ReadGptqFixture(files.front());
  ASSERT_TRUE(f);
  std::vector<uint8_t> v2 = f->qzeros;
  for (size_t w = 0; w + 4 <= v2.size(); w += 4) {
    uint32_t word = LoadLe32(&v2[w]), plus = 0;
    for (uint32_t k = 0; k < 32 / f->bits; ++k) plus |= 1u << (f->bits * k);
    word += plus;
    std::memcpy(&v2[w], &word, 4);
  }
  TempDir dir;
  SafetensorsBuilder m;
  AddGptq(m, *f, v2);
  ASSERT_TRUE(m.Write(dir.path() / "model.safetensors"));
  Json config = GptqConfig(*f);
  config["checkpoint_format"] = "gptq_v2";
  WriteText(dir.path() / "config.json", Config(config));
  const CliResult r = Remember(dir.path() / "model.safetensors", dir.path() / "out.safetensors");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const ReadBack out(dir.path() / "out.safetensors");
  EXPECT_EQ(out.Data(std::string(kPrefix) + ".weight"), TransposeU16(f->expected, f->in, f->out));
}

// GPTQ checkpoints without a quantization_config keep their settings in
// quantize_config.json beside the weights; a single-file input reads it too.
TEST(GptqCli, QuantizeConfigJsonBesideASingleFile) {
  const auto files = FixtureFiles("gptq_reference", ".bin");
  AMN_SKIP_WITHOUT_FIXTURES(files, "gptq_reference");
  const auto f = ReadGptqFixture(files.front());
  ASSERT_TRUE(f);
  TempDir dir;
  SafetensorsBuilder m;
  AddGptq(m, *f, f->qzeros);
  ASSERT_TRUE(m.Write(dir.path() / "model.safetensors"));
  Json config = GptqConfig(*f);
  config.erase("quant_method");  // GPTQ's own file has none
  config["desc_act"] = true;
  WriteText(dir.path() / "quantize_config.json", config.dump());
  const CliResult inspect = RunAmn("inspect " + Quote(dir.path() / "model.safetensors"));
  EXPECT_NE(inspect.out.find("GPTQ " + std::to_string(f->bits) + "-bit, group 128, act-order"),
            std::string::npos) << inspect.out;
  const CliResult r = Remember(dir.path() / "model.safetensors", dir.path() / "out.safetensors");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ReadBack(dir.path() / "out.safetensors").Data(std::string(kPrefix) + ".weight"),
            TransposeU16(f->expected, f->in, f->out));
}

TEST(GptqCli, ShardedDirectoryKeepsIndexConsistent) {
  const auto files = FixtureFiles("gptq_reference", ".bin");
  AMN_SKIP_WITHOUT_FIXTURES(files, "gptq_reference");
  const auto f = ReadGptqFixture(files.front());
  ASSERT_TRUE(f);
  TempDir dir;
  const fs::path model = dir.path() / "m";
  fs::create_directory(model);
  // The codes in one shard, their companions and the norm in the other.
  const uint32_t groups = f->in / f->group_size;
  const std::string p = kPrefix;
  SafetensorsBuilder a, b;
  a.Add(p + ".qweight", "I32", {f->in * f->bits / 32, f->out}, f->qweight);
  b.Add(p + ".qzeros", "I32", {groups, f->out * f->bits / 32}, f->qzeros);
  b.Add(p + ".scales", "F16", {groups, f->out}, f->scales);
  b.Add(p + ".g_idx", "I32", {f->in}, f->g_idx);
  b.Add("model.norm.weight", "F16", {4}, Norm());
  ASSERT_TRUE(a.Write(model / "model-00001-of-00002.safetensors"));
  ASSERT_TRUE(b.Write(model / "model-00002-of-00002.safetensors"));
  Json index = {{"metadata", {{"total_size", 0}}}, {"weight_map", Json::object()}};
  for (const std::string& n : a.Names()) index["weight_map"][n] = "model-00001-of-00002.safetensors";
  for (const std::string& n : b.Names()) index["weight_map"][n] = "model-00002-of-00002.safetensors";
  WriteText(model / "model.safetensors.index.json", index.dump());
  WriteText(model / "config.json", Config(GptqConfig(*f)));
  const CliResult r = Remember(model, dir.path() / "out", "-j 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const ReadBack one(dir.path() / "out" / "model-00001-of-00002.safetensors");
  EXPECT_EQ(one.Data(p + ".weight"), TransposeU16(f->expected, f->in, f->out));
  const ReadBack two(dir.path() / "out" / "model-00002-of-00002.safetensors");
  EXPECT_EQ(two.Data("model.norm.weight"), NormBf16());
  EXPECT_FALSE(two.header.contains(p + ".scales"));
  const Json out_index = Json::parse(SlurpText(dir.path() / "out" / "model.safetensors.index.json"));
  EXPECT_EQ(out_index["weight_map"], Json({{p + ".weight", "model-00001-of-00002.safetensors"},
                                           {"model.norm.weight", "model-00002-of-00002.safetensors"}}));
}

TEST(AwqCli, FixtureRemembersToNnLinearOrientation) {
  const auto files = FixtureFiles("awq_reference", ".bin");
  AMN_SKIP_WITHOUT_FIXTURES(files, "awq_reference");
  for (const fs::path& path : files) {
    const auto f = ReadAwqFixture(path);
    ASSERT_TRUE(f) << path;
    TempDir dir;
    const uint32_t groups = f->in / f->group_size;
    const std::string p = kPrefix;
    SafetensorsBuilder m;
    m.Add(p + ".qweight", "I32", {f->in, f->out / 8}, f->qweight);
    m.Add(p + ".qzeros", "I32", {groups, f->out / 8}, f->qzeros);
    m.Add(p + ".scales", ScaleDtypeName(f->scale_dtype), {groups, f->out}, f->scales);
    ASSERT_TRUE(m.Write(dir.path() / "model.safetensors"));
    WriteText(dir.path() / "config.json",
              Config({{"quant_method", "awq"}, {"bits", 4}, {"group_size", f->group_size},
                      {"version", "gemm"}, {"zero_point", true}}));
    const CliResult inspect = RunAmn("inspect " + Quote(dir.path() / "model.safetensors"));
    EXPECT_NE(inspect.out.find("AWQ GEMM 4-bit, group 128"), std::string::npos) << inspect.out;
    const CliResult r = Remember(dir.path() / "model.safetensors", dir.path() / "out.safetensors");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const ReadBack out(dir.path() / "out.safetensors");
    EXPECT_EQ(out.header[p + ".weight"]["shape"], Json({f->out, f->in}));
    EXPECT_EQ(out.Data(p + ".weight"), TransposeU16(f->expected, f->in, f->out)) << f->name;
  }
}

TEST(BnbCli, FourBitFixturesRememberInTheirShape) {
  const auto files = FixtureFiles("bnb_reference", ".bin");
  AMN_SKIP_WITHOUT_FIXTURES(files, "bnb_reference");
  int checked = 0;
  for (const fs::path& path : files) {
    const auto f = ReadBnbFixture(path);
    ASSERT_TRUE(f) << path;
    if (f->format == 1) continue;
    const std::string type = Bnb4QuantType(*f);
    TempDir dir;
    SafetensorsBuilder m;
    AddBnb4Layer(m, *f, std::string(kPrefix) + ".weight", {64, f->elements / 64});
    ASSERT_TRUE(m.Write(dir.path() / "model.safetensors"));
    WriteText(dir.path() / "config.json",
              Config({{"quant_method", "bitsandbytes"}, {"load_in_4bit", true},
                      {"bnb_4bit_quant_type", type}, {"bnb_4bit_use_double_quant", f->format == 2}}));
    const CliResult inspect = RunAmn("inspect " + Quote(dir.path() / "model.safetensors"));
    EXPECT_NE(inspect.out.find(type == "nf4" ? "bitsandbytes NF4, block 64" : "bitsandbytes FP4, block 64"),
              std::string::npos) << inspect.out;
    const CliResult r = Remember(dir.path() / "model.safetensors", dir.path() / "out.safetensors");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const ReadBack out(dir.path() / "out.safetensors");
    const std::string w = std::string(kPrefix) + ".weight";
    EXPECT_EQ(out.header[w]["shape"], Json({64, f->elements / 64}));
    EXPECT_EQ(out.Data(w), f->expected) << f->name;
    EXPECT_EQ(out.header.size(), 2u) << out.header.dump();  // companions consumed
    EXPECT_EQ(out.header["__metadata__"], Json({{"format", "pt"}}));
    ++checked;
  }
  EXPECT_GE(checked, 4);
}

TEST(BnbCli, Int8FixtureRemembers) {
  const auto files = FixtureFiles("bnb_reference", ".bin");
  AMN_SKIP_WITHOUT_FIXTURES(files, "bnb_reference");
  int checked = 0;
  for (const fs::path& path : files) {
    const auto f = ReadBnbFixture(path);
    ASSERT_TRUE(f) << path;
    if (f->format != 1) continue;
    TempDir dir;
    const std::string w = std::string(kPrefix) + ".weight";
    SafetensorsBuilder m;
    // The names bitsandbytes' Linear8bitLt._save_to_state_dict writes: SCB
    // and weight_format belong to the module, not to MODULE.weight.
    AddBnbInt8Layer(m, *f, kPrefix);
    ASSERT_TRUE(m.Write(dir.path() / "model.safetensors"));
    WriteText(dir.path() / "config.json", Config({{"quant_method", "bitsandbytes"}, {"load_in_8bit", true}}));
    const CliResult r = Remember(dir.path() / "model.safetensors", dir.path() / "out.safetensors");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const ReadBack out(dir.path() / "out.safetensors");
    EXPECT_EQ(out.Data(w), f->expected) << f->name;
    EXPECT_EQ(out.header.size(), 2u) << out.header.dump();  // SCB, weight_format consumed
    ++checked;
  }
  EXPECT_EQ(checked, 1);
}

// bitsandbytes' Linear8bitLt saves MODULE.weight (I8), MODULE.SCB (F32 row
// absmax) and MODULE.weight_format (U8 scalar 0): no fixture needed to prove
// the names are recognised and the companions consumed.
TEST(BnbCli, Int8ModuleLevelCompanions) {
  const std::string p = kPrefix;
  TempDir dir;
  SafetensorsBuilder m;
  m.Add(p + ".weight", "I8", {2, 3}, {1, 0xFE, 3, 4, 0xFB, 127});  // 1 -2 3 / 4 -5 127
  m.Add(p + ".SCB", "F32", {2}, {0, 0, 0xFE, 0x42, 0, 0, 0x7E, 0x43});  // 127, 254
  m.Add(p + ".weight_format", "U8", {}, {0});
  m.Add("model.norm.weight", "F16", {4}, Norm());
  ASSERT_TRUE(m.Write(dir.path() / "model.safetensors"));
  WriteText(dir.path() / "config.json", Config({{"quant_method", "bitsandbytes"}, {"load_in_8bit", true}}));
  const CliResult inspect = RunAmn("inspect --json " + Quote(dir.path() / "model.safetensors"));
  ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
  const Json info = Json::parse(inspect.out);
  EXPECT_EQ(info["scheme"], "bitsandbytes INT8 (LLM.int8, row-wise SCB)") << inspect.out;
  EXPECT_EQ(info["quantized_tensors"], 1) << inspect.out;
  EXPECT_EQ(info["companion_tensors"], 2) << inspect.out;
  EXPECT_EQ(info["passthrough_tensors"], 1) << inspect.out;
  const CliResult r = Remember(dir.path() / "model.safetensors", dir.path() / "out.safetensors");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const ReadBack out(dir.path() / "out.safetensors");
  EXPECT_EQ(out.header.size(), 3u) << out.header.dump();  // weight, norm, __metadata__
  EXPECT_EQ(out.header[p + ".weight"]["shape"], Json({2, 3}));
  // w * SCB / 127: row 0 keeps w, row 1 doubles it (BF16 big halves of f32).
  EXPECT_EQ(out.Data(p + ".weight"),
            std::vector<uint8_t>({0x80, 0x3F, 0x00, 0xC0, 0x40, 0x40,
                                  0x00, 0x41, 0x20, 0xC1, 0x7E, 0x43}));
}

// --- Hand-derived tensors (no real-model fixtures exist for these) ---------

// E2M1 code -> value, as transformers' FP4_VALUES and compressed-tensors'
// FLOAT_TO_E2M1 list them (code 8 is -0.0).
constexpr float kE2m1[16] = {0.0f,  0.5f,  1.0f,  1.5f,  2.0f,  3.0f,  4.0f,  6.0f,
                             -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};

// BF16 bits of a value the test chose to be exact in BF16.
uint16_t ExactBf16(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  EXPECT_EQ(bits & 0xFFFF, 0u) << v << " is not exact in BF16";
  return static_cast<uint16_t>(bits >> 16);
}

void PushLe16(std::vector<uint8_t>& out, uint16_t v) {
  out.push_back(static_cast<uint8_t>(v));
  out.push_back(static_cast<uint8_t>(v >> 8));
}

// NVFP4: out[r][c] = e2m1(code) * (f32(e4m3 scale[r][c/16]) / global).
TEST(Nvfp4Cli, RemembersEveryCodeWithGroupScales) {
  constexpr uint64_t kRows = 2, kCols = 32;
  const std::string p = kPrefix;
  std::vector<uint8_t> packed(kRows * kCols / 2);
  for (size_t i = 0; i < packed.size(); ++i) packed[i] = static_cast<uint8_t>(i * 17 + (i >> 2));
  // E4M3 1.0, 2.0, 0.5 and 4.0: 0x38, 0x40, 0x30, 0x48.
  const std::vector<uint8_t> scales = {0x38, 0x40, 0x30, 0x48};
  const float scale_values[4] = {1.0f, 2.0f, 0.5f, 4.0f};
  const float global = 2.0f;
  std::vector<uint8_t> global_bytes(4);
  std::memcpy(global_bytes.data(), &global, 4);
  TempDir dir;
  SafetensorsBuilder m;
  m.Add(p + ".weight_packed", "U8", {kRows, kCols / 2}, packed);
  m.Add(p + ".weight_scale", "F8_E4M3", {kRows, kCols / 16}, scales);
  m.Add(p + ".weight_global_scale", "F32", {1}, global_bytes);
  m.Add(p + ".input_global_scale", "F32", {1}, global_bytes);
  ASSERT_TRUE(m.Write(dir.path() / "model.safetensors"));
  WriteText(dir.path() / "config.json",
            Config({{"quant_method", "compressed-tensors"}, {"format", "nvfp4-pack-quantized"}}));
  const CliResult r = Remember(dir.path() / "model.safetensors", dir.path() / "out.safetensors");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<uint8_t> expected;
  for (uint64_t row = 0; row < kRows; ++row) {
    for (uint64_t c = 0; c < kCols; ++c) {
      const uint8_t byte = packed[(row * kCols + c) / 2];
      const uint8_t code = c % 2 == 0 ? byte & 0xF : byte >> 4;  // low nibble first
      PushLe16(expected, ExactBf16(kE2m1[code] * (scale_values[row * 2 + c / 16] / global)));
    }
  }
  const ReadBack out(dir.path() / "out.safetensors");
  EXPECT_EQ(out.header[p + ".weight"]["shape"], Json({kRows, kCols}));
  EXPECT_EQ(out.Data(p + ".weight"), expected);
  EXPECT_EQ(out.header.size(), 2u) << out.header.dump();  // companions consumed, input scale dropped
}

// RNE on the bit pattern (../shared/fixtures/README.md), for finite values.
uint16_t Bf16Rne(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  return static_cast<uint16_t>((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16);
}

// compressed-tensors pack-quantized int4, group strategy, asymmetric:
// values stored as q + 8 LSB-first along the row, zero points packed the
// same way along the rows; (q - z) * scale computed in the scale's dtype
// (BF16 here), as compressed_tensors' _dequantize does.
TEST(CompressedTensorsCli, PackQuantizedInt4GroupAsymmetric) {
  constexpr uint64_t kRows = 8, kCols = 32, kGroup = 16, kGroups = kCols / kGroup;
  const std::string p = kPrefix;
  std::vector<uint8_t> packed(kRows * kCols / 2);
  for (size_t i = 0; i < packed.size(); ++i) packed[i] = static_cast<uint8_t>(i * 29 + 3);
  std::vector<uint8_t> zeros(4 * kGroups);  // I32 [ceil(8 / 8), 2]
  uint32_t zero_words[kGroups] = {0x76543210u, 0xFEDCBA98u};
  std::memcpy(zeros.data(), zero_words, sizeof zero_words);
  std::vector<uint8_t> scales;
  std::vector<float> scale_values;
  for (uint64_t i = 0; i < kRows * kGroups; ++i) {
    const uint16_t bf16 = static_cast<uint16_t>(0x3C00 + 0x0123 * i);  // 2^-7 up to about 2^27
    PushLe16(scales, bf16);
    const uint32_t bits = uint32_t{bf16} << 16;
    float v;
    std::memcpy(&v, &bits, 4);
    scale_values.push_back(v);
  }
  const std::vector<uint8_t> shape = {kRows, 0, 0, 0, 0, 0, 0, 0, kCols, 0, 0, 0, 0, 0, 0, 0};
  TempDir dir;
  SafetensorsBuilder m;
  m.Add(p + ".weight_packed", "I32", {kRows, kCols / 8}, packed);
  m.Add(p + ".weight_scale", "BF16", {kRows, kGroups}, scales);
  m.Add(p + ".weight_zero_point", "I32", {1, kGroups}, zeros);
  m.Add(p + ".weight_shape", "I64", {2}, shape);
  ASSERT_TRUE(m.Write(dir.path() / "model.safetensors"));
  const Json weights = {{"num_bits", 4}, {"type", "int"}, {"symmetric", false},
                        {"strategy", "group"}, {"group_size", kGroup}};
  WriteText(dir.path() / "config.json",
            Config({{"quant_method", "compressed-tensors"}, {"format", "pack-quantized"},
                    {"config_groups", {{"group_0", {{"targets", {"Linear"}}, {"weights", weights}}}}}}));
  const CliResult inspect = RunAmn("inspect " + Quote(dir.path() / "model.safetensors"));
  EXPECT_NE(inspect.out.find("pack-quantized int4, group 16, asymmetric"), std::string::npos) << inspect.out;
  const CliResult r = Remember(dir.path() / "model.safetensors", dir.path() / "out.safetensors");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<uint8_t> expected;
  for (uint64_t row = 0; row < kRows; ++row) {
    for (uint64_t c = 0; c < kCols; ++c) {
      const uint32_t word = LoadLe32(&packed[4 * (row * (kCols / 8) + c / 8)]);
      const int q = static_cast<int>((word >> (4 * (c % 8))) & 0xF);
      const int z = static_cast<int>((zero_words[c / kGroup] >> (4 * row)) & 0xF);
      const float product = static_cast<float>(q - z) * scale_values[row * kGroups + c / kGroup];
      PushLe16(expected, Bf16Rne(product));  // the BF16 multiply's one rounding
    }
  }
  const ReadBack out(dir.path() / "out.safetensors");
  EXPECT_EQ(out.header[p + ".weight"]["shape"], Json({kRows, kCols}));
  EXPECT_EQ(out.Data(p + ".weight"), expected);
  EXPECT_EQ(out.header.size(), 2u) << out.header.dump();  // the weight and __metadata__
}

// compressed-tensors float-quantized, group strategy: FP8 E4M3 codes with
// one scale per row and group ([rows, cols / group]), multiplied in F32.
TEST(CompressedTensorsCli, FloatQuantizedFp8Groups) {
  constexpr uint64_t kRows = 2, kCols = 8, kGroups = 2;
  const std::string p = kPrefix;
  // E4M3 0x38 = 1.0, 0x40 = 2.0, 0xB8 = -1.0, 0x30 = 0.5.
  const std::vector<uint8_t> codes = {0x38, 0x40, 0xB8, 0x30, 0x38, 0x40, 0xB8, 0x30,
                                      0x38, 0x40, 0xB8, 0x30, 0x38, 0x40, 0xB8, 0x30};
  const float code_values[4] = {1.0f, 2.0f, -1.0f, 0.5f};
  const float scale_values[kRows * kGroups] = {0.25f, 3.0f, -8.0f, 0.75f};
  std::vector<uint8_t> scales(sizeof scale_values);
  std::memcpy(scales.data(), scale_values, sizeof scale_values);
  TempDir dir;
  SafetensorsBuilder m;
  m.Add(p + ".weight", "F8_E4M3", {kRows, kCols}, codes);
  m.Add(p + ".weight_scale", "F32", {kRows, kGroups}, scales);
  ASSERT_TRUE(m.Write(dir.path() / "model.safetensors"));
  const Json weights = {{"num_bits", 8}, {"type", "float"}, {"strategy", "group"}, {"group_size", 4}};
  WriteText(dir.path() / "config.json",
            Config({{"quant_method", "compressed-tensors"}, {"format", "float-quantized"},
                    {"config_groups", {{"group_0", {{"weights", weights}}}}}}));
  const CliResult inspect = RunAmn("inspect " + Quote(dir.path() / "model.safetensors"));
  EXPECT_NE(inspect.out.find("float-quantized: Per-group FP8, group 4 (E4M3)"), std::string::npos)
      << inspect.out;
  const CliResult r = Remember(dir.path() / "model.safetensors", dir.path() / "out.safetensors");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<uint8_t> expected;
  for (uint64_t i = 0; i < kRows * kCols; ++i) {
    const float scale = scale_values[(i / kCols) * kGroups + (i % kCols) / 4];
    PushLe16(expected, ExactBf16(code_values[i % 4] * scale));
  }
  EXPECT_EQ(ReadBack(dir.path() / "out.safetensors").Data(p + ".weight"), expected);
}

// gpt-oss MXFP4: out[e][k][r] = FP4_VALUES[code k of blocks[e][r]] *
// 2^(scales[e][r] - 127), the last two dimensions swapped as transformers
// returns the experts.
TEST(Mxfp4Cli, RemembersExpertsInTransformersLayout) {
  constexpr uint64_t kExperts = 2, kRows = 3;
  const std::string name = "model.layers.0.mlp.experts.gate_up_proj";
  std::vector<uint8_t> blocks(kExperts * kRows * 16);
  for (size_t i = 0; i < blocks.size(); ++i) blocks[i] = static_cast<uint8_t>(i * 37 + 11);
  const std::vector<uint8_t> scales = {127, 128, 126, 125, 129, 120};
  TempDir dir;
  SafetensorsBuilder m;
  m.Add(name + "_blocks", "U8", {kExperts, kRows, 1, 16}, blocks);
  m.Add(name + "_scales", "U8", {kExperts, kRows, 1}, scales);
  m.Add(name + "_bias", "BF16", {kExperts, kRows}, std::vector<uint8_t>(kExperts * kRows * 2, 0));
  ASSERT_TRUE(m.Write(dir.path() / "model.safetensors"));
  WriteText(dir.path() / "config.json", Config({{"quant_method", "mxfp4"}}));
  const CliResult r = Remember(dir.path() / "model.safetensors", dir.path() / "out.safetensors");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<uint8_t> expected;
  for (uint64_t e = 0; e < kExperts; ++e) {
    for (uint64_t k = 0; k < 32; ++k) {
      for (uint64_t row = 0; row < kRows; ++row) {
        const uint8_t byte = blocks[(e * kRows + row) * 16 + k / 2];
        const uint8_t code = k % 2 == 0 ? byte & 0xF : byte >> 4;
        const int exponent = scales[e * kRows + row] - 127;
        PushLe16(expected, ExactBf16(std::ldexp(kE2m1[code], exponent)));
      }
    }
  }
  const ReadBack out(dir.path() / "out.safetensors");
  EXPECT_EQ(out.header[name]["shape"], Json({kExperts, 32, kRows}));
  EXPECT_EQ(out.Data(name), expected);
  EXPECT_TRUE(out.header.contains(name + "_bias"));
}

// The safetensors_reference headers carry no config.json: tensor names,
// shapes and the quant_state blob alone decide the scheme.
TEST(QuantSchemesCli, SchemesWithoutConfigFromTheReferenceHeaders) {
  const fs::path dir_in = FixturesDir() / "safetensors_reference";
  if (!fs::is_directory(dir_in)) GTEST_SKIP() << "fixtures not found at " << dir_in << "; set AMN_FIXTURES_DIR";
  struct Case {
    std::string file, scheme, weight;
    Json shape;
  };
  const std::vector<Case> cases = {
      {"gptq.safetensors", "GPTQ 4-bit, group 32, v1 zero points", "model.layers.0.weight", {32, 64}},
      {"awq.safetensors", "AWQ GEMM 4-bit, group 32, zero points", "model.layers.0.weight", {32, 64}},
      {"bnb_nf4.safetensors", "bitsandbytes NF4, block 64", "model.layers.0.weight", {8, 8}},
      {"fp8.safetensors", "Fine-grained FP8, 4x4 blocks (E4M3)", "model.layers.0.weight", {8, 8}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.file);
    const CliResult inspect = RunAmn("inspect " + Quote(dir_in / c.file));
    ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
    EXPECT_NE(inspect.out.find("Scheme:      " + c.scheme + "\n"), std::string::npos) << inspect.out;
    TempDir dir;
    const CliResult r = Remember(dir_in / c.file, dir.path() / "out.safetensors");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const ReadBack out(dir.path() / "out.safetensors");
    EXPECT_EQ(out.header[c.weight]["shape"], c.shape) << out.header.dump();
    EXPECT_TRUE(out.header.contains("model.norm.weight"));
  }
}

// --- Refusals: one error line naming the tensor, exit 1, nothing written ---

void ExpectRefused(const TempDir& dir, const fs::path& model, const std::string& expect) {
  const std::vector<std::string> before = dir.Entries();
  const CliResult r = Remember(model, dir.path() / "out.safetensors");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.err.find(expect), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(dir.Entries(), before);
}

TEST(QuantSchemesCli, InconsistentCompanionsAreRefused) {
  const std::string p = kPrefix;
  const std::vector<uint8_t> words(8 * 32 * 4, 0x77), zeros(2 * 4 * 4, 0x77), scales(2 * 32 * 2, 0x3C);
  struct Case {
    std::string name;
    std::function<void(SafetensorsBuilder&)> build;
    Json config;
    std::string expect;
  };
  const Json gptq = {{"quant_method", "gptq"}, {"bits", 4}, {"group_size", 32}};
  const std::vector<Case> cases = {
      {"missing scales", [&](SafetensorsBuilder& m) {
         m.Add(p + ".qweight", "I32", {8, 32}, words);
         m.Add(p + ".qzeros", "I32", {2, 4}, zeros);
       }, gptq, p + ".scales"},
      {"scales of another width", [&](SafetensorsBuilder& m) {
         m.Add(p + ".qweight", "I32", {8, 32}, words);
         m.Add(p + ".qzeros", "I32", {2, 4}, zeros);
         m.Add(p + ".scales", "F16", {2, 16}, std::vector<uint8_t>(64, 0x3C));
       }, gptq, p + ".qweight"},
      {"scales of another dtype", [&](SafetensorsBuilder& m) {
         m.Add(p + ".qweight", "I32", {8, 32}, words);
         m.Add(p + ".qzeros", "I32", {2, 4}, zeros);
         m.Add(p + ".scales", "I32", {2, 32}, std::vector<uint8_t>(256, 0));
       }, gptq, p + ".scales"},
      {"AWQ with 8 bits", [&](SafetensorsBuilder& m) {
         m.Add(p + ".qweight", "I32", {64, 4}, std::vector<uint8_t>(64 * 4 * 4, 0));
         m.Add(p + ".qzeros", "I32", {2, 4}, zeros);
         m.Add(p + ".scales", "F16", {2, 32}, scales);
       }, {{"quant_method", "awq"}, {"bits", 8}, {"group_size", 32}}, "holds 4"},
      {"bits the format cannot hold", [&](SafetensorsBuilder& m) {
         m.Add(p + ".qweight", "I32", {8, 32}, words);
         m.Add(p + ".qzeros", "I32", {2, 4}, zeros);
         m.Add(p + ".scales", "F16", {2, 32}, scales);
       }, {{"quant_method", "gptq"}, {"bits", 5}}, "2, 3, 4 or 8"},
      {"g_idx out of range", [&](SafetensorsBuilder& m) {
         m.Add(p + ".qweight", "I32", {8, 32}, words);
         m.Add(p + ".qzeros", "I32", {2, 4}, zeros);
         m.Add(p + ".scales", "F16", {2, 32}, scales);
         std::vector<uint8_t> g(64 * 4, 0);
         g[4 * 63] = 2;  // only groups 0 and 1 exist
         m.Add(p + ".g_idx", "I32", {64}, g);
       }, gptq, p},
      {"quant_state shape against the codes", [&](SafetensorsBuilder& m) {
         m.Add(p + ".weight", "U8", {32, 1}, std::vector<uint8_t>(32, 0x12));
         m.Add(p + ".weight.absmax", "F32", {1}, {0, 0, 128, 63});
         m.Add(p + ".weight.quant_map", "F32", {16}, std::vector<uint8_t>(64, 0));
         const std::string state = R"({"shape": [8, 16], "blocksize": 64, "quant_type": "nf4"})";
         m.Add(p + ".weight.quant_state.bitsandbytes__nf4", "U8", {state.size()},
               std::vector<uint8_t>(state.begin(), state.end()));
       }, {{"quant_method", "bitsandbytes"}, {"load_in_4bit", true}}, p + ".weight"},
      {"INT8 without a row scale per row", [&](SafetensorsBuilder& m) {
         m.Add(p + ".weight", "I8", {4, 4}, std::vector<uint8_t>(16, 1));
         m.Add(p + ".SCB", "F32", {3}, std::vector<uint8_t>(12, 0));
       }, {{"quant_method", "bitsandbytes"}, {"load_in_8bit", true}}, p + ".SCB"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    TempDir dir;
    SafetensorsBuilder m;
    c.build(m);
    ASSERT_TRUE(m.Write(dir.path() / "model.safetensors"));
    WriteText(dir.path() / "config.json", Config(c.config));
    const std::vector<uint8_t> input = ReadBytes(dir.path() / "model.safetensors");
    ExpectRefused(dir, dir.path() / "model.safetensors", c.expect);
    EXPECT_EQ(ReadBytes(dir.path() / "model.safetensors"), input);
  }
}

TEST(QuantSchemesCli, UnsupportedLayoutsAreListedButNotRemembered) {
  const std::string p = kPrefix;
  // AWQ-shaped tensors (qweight [K, N/8]) and GPTQ-shaped ones ([K/8, N]).
  const auto awq = [&](SafetensorsBuilder& m) {
    m.Add(p + ".qweight", "I32", {64, 4}, std::vector<uint8_t>(64 * 4 * 4, 0));
    m.Add(p + ".qzeros", "I32", {2, 4}, std::vector<uint8_t>(32, 0));
    m.Add(p + ".scales", "F16", {2, 32}, std::vector<uint8_t>(128, 0));
  };
  const auto gptq = [&](SafetensorsBuilder& m) {
    m.Add(p + ".qweight", "I32", {8, 32}, std::vector<uint8_t>(8 * 32 * 4, 0));
    m.Add(p + ".qzeros", "I32", {2, 4}, std::vector<uint8_t>(32, 0));
    m.Add(p + ".scales", "F16", {2, 32}, std::vector<uint8_t>(128, 0));
  };
  const auto packed = [&](SafetensorsBuilder& m) {
    m.Add(p + ".weight_packed", "I32", {4, 4}, std::vector<uint8_t>(64, 0));
    m.Add(p + ".weight_scale", "BF16", {4, 1}, std::vector<uint8_t>(8, 0));
    m.Add(p + ".weight_shape", "I64", {2}, {4, 0, 0, 0, 0, 0, 0, 0, 32, 0, 0, 0, 0, 0, 0, 0});
  };
  struct Case {
    std::string name;
    std::function<void(SafetensorsBuilder&)> build;
    Json config;
    std::string expect;
  };
  const std::vector<Case> cases = {
      {"AWQ GEMV", awq,
       {{"quant_method", "awq"}, {"bits", 4}, {"group_size", 32}, {"version", "gemv"}}, "GEMM"},
      {"AWQ without zero points", awq,
       {{"quant_method", "awq"}, {"bits", 4}, {"group_size", 32}, {"zero_point", false}},
       "zero_point"},
      {"GPTQ checkpoint format", gptq,
       {{"quant_method", "gptq"}, {"bits", 4}, {"group_size", 32}, {"checkpoint_format", "marlin"}},
       "marlin"},
      {"compressed-tensors format", packed,
       {{"quant_method", "compressed-tensors"}, {"format", "marlin-24"}}, "marlin-24"},
      {"unknown method", gptq, {{"quant_method", "hqq"}}, "hqq"},
      {"bitsandbytes INT8 in a GPU tile layout", [&](SafetensorsBuilder& m) {
         m.Add(p + ".weight", "I8", {4, 4}, std::vector<uint8_t>(16, 1));
         m.Add(p + ".SCB", "F32", {4}, std::vector<uint8_t>(16, 0));
         m.Add(p + ".weight_format", "U8", {}, {2});
       }, {{"quant_method", "bitsandbytes"}, {"load_in_8bit", true}}, "weight layout 2"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    TempDir dir;
    SafetensorsBuilder m;
    c.build(m);
    ASSERT_TRUE(m.Write(dir.path() / "model.safetensors"));
    WriteText(dir.path() / "config.json", Config(c.config));
    const CliResult inspect = RunAmn("inspect " + Quote(dir.path() / "model.safetensors"));
    EXPECT_EQ(inspect.exit_code, 0) << inspect.err;
    EXPECT_NE(inspect.out.find("not supported"), std::string::npos) << inspect.out;
    ExpectRefused(dir, dir.path() / "model.safetensors", c.expect);
  }
}

}  // namespace
}  // namespace amn::test
