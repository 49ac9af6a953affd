// `amn forget` end to end: the real-model fixtures re-encoded byte for byte
// (plain NF4/FP4 from their BF16 output alone; every bnb and FP8 fixture
// through --like), layouts checked against what bitsandbytes, transformers
// and compressed-tensors save, the Lethe distance the same for any -j,
// inspect/remember of the result, directories, and bad input refused with
// one error line and nothing left behind.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "amn/quantize.h"
#include "fixtures/safetensors_builder.h"
#include "tests/bnb_fixture_model.h"
#include "tests/cli_files.h"
#include "tests/cli_runner.h"
#include "tests/fixtures.h"
#include "tests/gguf_writer.h"
#include "tests/npy_writer.h"
#include "tests/quant_fixture_files.h"

namespace amn::test {
namespace {

namespace fs = std::filesystem;
using fixtures::SafetensorsBuilder;
using Json = nlohmann::json;

const std::string kW = "model.layers.0.mlp.gate_proj.weight";
const std::string kModule = "model.layers.0.mlp.gate_proj.";

void WriteText(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

std::vector<uint8_t> Bf16Of(const std::vector<float>& values) {
  std::vector<uint8_t> out;
  for (const float v : values) {
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16;  // RNE, finite values
    out.push_back(static_cast<uint8_t>(bits));
    out.push_back(static_cast<uint8_t>(bits >> 8));
  }
  return out;
}

// A deterministic BF16 weight [rows, cols] of small values of both signs.
std::vector<uint8_t> Weight(size_t rows, size_t cols) {
  std::vector<float> v(rows * cols);
  for (size_t i = 0; i < v.size(); ++i) {
    v[i] = static_cast<float>(static_cast<int>((i * 2654435761u) % 2001) - 1000) / 8000.0f;
  }
  return Bf16Of(v);
}

// A Llama-like plain model: one linear weight, a norm and an embedding.
SafetensorsBuilder PlainModel(size_t rows = 96, size_t cols = 160) {
  SafetensorsBuilder m;
  m.Add(kW, "BF16", {rows, cols}, Weight(rows, cols));
  m.Add("model.layers.0.input_layernorm.weight", "BF16", {cols}, Bf16Of(std::vector<float>(cols, 1.0f)));
  m.Add("model.embed_tokens.weight", "BF16", {4, cols}, Weight(4, cols));
  return m;
}

CliResult Forget(const fs::path& in, const fs::path& out, const std::string& flags) {
  return RunAmn("forget -q " + flags + " " + Quote(in) + " -o " + Quote(out));
}

// Every tensor of `expected` is in `got` with the same dtype, shape and bytes.
void ExpectSameTensors(const ReadBack& expected, const ReadBack& got, const std::string& what) {
  for (const auto& [name, entry] : expected.header.items()) {
    if (name == "__metadata__") continue;
    ASSERT_TRUE(got.header.contains(name)) << what << ": " << name << " missing";
    EXPECT_EQ(got.header[name]["dtype"], entry["dtype"]) << what << ": " << name;
    EXPECT_EQ(got.header[name]["shape"], entry["shape"]) << what << ": " << name;
    EXPECT_TRUE(got.Data(name) == expected.Data(name)) << what << ": " << name << " differs";
  }
}

// Plain NF4/FP4 keeps the exact block absmax, which BF16 output still holds
// (the block's largest |x| decodes from code ±1.0 exactly): forget of the
// fixture's expected BF16 must give bitsandbytes' packed bytes and absmax.
TEST(ForgetCli, PlainBnb4FixturesReencodeFromTheirBf16) {
  const auto files = FixtureFiles("bnb_reference", ".bin");
  AMN_SKIP_WITHOUT_FIXTURES(files, "bnb_reference");
  int checked = 0;
  for (const fs::path& path : files) {
    const auto f = ReadBnbFixture(path);
    ASSERT_TRUE(f) << path;
    if (f->format != 0) continue;
    TempDir dir;
    SafetensorsBuilder m;
    m.Add(kW, "BF16", {64, f->elements / 64}, f->expected);
    ASSERT_TRUE(m.Write(dir.path() / "plain.safetensors"));
    const std::string type = Bnb4QuantType(*f);
    const CliResult r = Forget(dir.path() / "plain.safetensors", dir.path() / "q.safetensors",
                               "--scheme " + type);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const ReadBack out(dir.path() / "q.safetensors");
    EXPECT_EQ(out.header[kW]["dtype"], "U8");
    EXPECT_EQ(out.header[kW]["shape"], Json({f->elements / 2, 1}));  // Params4bit's [(n+1)//2, 1]
    EXPECT_TRUE(out.Data(kW) == f->packed) << f->name << ": packed codes differ";
    EXPECT_TRUE(out.Data(kW + ".absmax") == f->absmax) << f->name << ": absmax differs";
    EXPECT_TRUE(out.Data(kW + ".quant_map") == f->quant_map) << f->name << ": quant_map differs";
    // QuantState.as_dict(packed=True): json.dumps of these keys in this order.
    const std::vector<uint8_t> state = out.Data(kW + ".quant_state.bitsandbytes__" + type);
    EXPECT_EQ(std::string(state.begin(), state.end()),
              "{\"quant_type\": \"" + type + "\", \"blocksize\": 64, \"dtype\": \"bfloat16\", "
              "\"shape\": [64, " + std::to_string(f->elements / 64) + "]}");
    ++checked;
  }
  EXPECT_EQ(checked, 2);
}

// forget (remember M) --like M gives M's tensors back byte for byte, for
// every bitsandbytes fixture: plain, double quant, INT8 (whose 256-column
// slice does not hold each row's maximum, so SCB must come from M).
TEST(ForgetCli, LikeRoundTripsEveryBnbFixture) {
  const auto files = FixtureFiles("bnb_reference", ".bin");
  AMN_SKIP_WITHOUT_FIXTURES(files, "bnb_reference");
  int checked = 0;
  for (const fs::path& path : files) {
    const auto f = ReadBnbFixture(path);
    ASSERT_TRUE(f) << path;
    TempDir dir;
    SafetensorsBuilder m;
    if (f->format == 1) {
      AddBnbInt8Layer(m, *f, kModule.substr(0, kModule.size() - 1));
    } else {
      AddBnb4Layer(m, *f, kW, {64, f->elements / 64});
    }
    m.Add("model.norm.weight", "F16", {4}, {0x00, 0x3C, 0x00, 0x40, 0x00, 0xC0, 0x00, 0x00});
    const fs::path quantized = dir.path() / "m.safetensors";
    ASSERT_TRUE(m.Write(quantized));
    const CliResult plain = RunAmn("remember -q --keep-passthrough " + Quote(quantized) + " -o " +
                                   Quote(dir.path() / "plain.safetensors"));
    ASSERT_EQ(plain.exit_code, 0) << plain.err;
    const CliResult r = Forget(dir.path() / "plain.safetensors", dir.path() / "again.safetensors",
                               "--like " + Quote(quantized));
    ASSERT_EQ(r.exit_code, 0) << f->name << ": " << r.err;
    ExpectSameTensors(ReadBack(quantized), ReadBack(dir.path() / "again.safetensors"), f->name);
    ++checked;
  }
  EXPECT_EQ(checked, 5);
}

// The same proof for the FP8 fixtures (per-tensor, per-channel, 128x128
// blocks; BF16 scales as the checkpoints store them).
TEST(ForgetCli, LikeRoundTripsEveryFp8Fixture) {
  const auto files = FixtureFiles("fp8_reference", ".bin");
  AMN_SKIP_WITHOUT_FIXTURES(files, "fp8_reference");
  int checked = 0;
  for (const fs::path& path : files) {
    const auto f = ReadFp8Fixture(path);
    ASSERT_TRUE(f) << path << ": malformed fixture";
    const uint32_t rows = f->rows, cols = f->cols;
    TempDir dir;
    SafetensorsBuilder m;
    m.Add(kW, "F8_E4M3", {rows, cols}, f->weight);
    const std::string dtype = ScaleDtypeName(f->scale_dtype);
    if (f->scheme == 0) {
      m.Add(kW + "_scale_inv", dtype, {(rows + 127) / 128, (cols + 127) / 128}, f->scales);
    } else if (f->scheme == 1) {
      m.Add(kW + "_scale", dtype, {1}, f->scales);
    } else {
      m.Add(kW + "_scale", dtype, {rows, 1}, f->scales);
    }
    const fs::path quantized = dir.path() / "m.safetensors";
    ASSERT_TRUE(m.Write(quantized));
    const CliResult plain = RunAmn("remember -q " + Quote(quantized) + " -o " +
                                   Quote(dir.path() / "plain.safetensors"));
    ASSERT_EQ(plain.exit_code, 0) << plain.err;
    const CliResult r = Forget(dir.path() / "plain.safetensors", dir.path() / "again.safetensors",
                               "--like " + Quote(quantized));
    ASSERT_EQ(r.exit_code, 0) << path.filename() << ": " << r.err;
    ExpectSameTensors(ReadBack(quantized), ReadBack(dir.path() / "again.safetensors"),
                      path.filename().string());
    ++checked;
  }
  EXPECT_EQ(checked, 4);
}

// The safetensors_reference files written by the real safetensors writers:
// fp8.safetensors (zeros, F32 128x128-style grid over 4x4 blocks, a BF16
// norm) round-trips; bnb_nf4.safetensors stores an all-zero quant_map (it
// is synthetic), which no encoder with bitsandbytes' codebook can match:
// refused by name rather than written differently.
TEST(ForgetCli, LikeOnTheSafetensorsReferenceFiles) {
  const fs::path dir_in = FixturesDir() / "safetensors_reference";
  const auto files = FixtureFiles("safetensors_reference", ".safetensors");
  AMN_SKIP_WITHOUT_FIXTURES(files, "safetensors_reference");
  TempDir dir;
  for (const std::string name : {"fp8.safetensors", "bnb_nf4.safetensors"}) {
    const fs::path quantized = dir_in / name;
    const fs::path plain = dir.path() / ("plain-" + name);
    const CliResult remembered =
        RunAmn("remember -q --keep-passthrough " + Quote(quantized) + " -o " + Quote(plain));
    ASSERT_EQ(remembered.exit_code, 0) << remembered.err;
    const fs::path again = dir.path() / ("again-" + name);
    const CliResult r = Forget(plain, again, "--like " + Quote(quantized));
    if (name == "fp8.safetensors") {
      ASSERT_EQ(r.exit_code, 0) << name << ": " << r.err;
      ExpectSameTensors(ReadBack(quantized), ReadBack(again), name);
    } else {
      EXPECT_EQ(r.exit_code, 2) << r.err;
      EXPECT_NE(r.err.find("model.layers.0.weight.quant_map' is not bitsandbytes' NF4 codebook"),
                std::string::npos) << r.err;
      EXPECT_FALSE(fs::exists(again));
    }
  }
}

// Each scheme's names, dtypes and shapes as the canonical savers write them;
// inspect names the scheme and counts; remember of the result works.
TEST(ForgetCli, EverySchemeWritesTheLoadersLayout) {
  struct Case {
    std::string scheme, inspect;
    std::vector<std::pair<std::string, Json>> tensors;  // name -> {dtype, shape}
    int companions;
  };
  const std::vector<Case> cases = {
      {"fp8", "Per-tensor FP8 (E4M3)",
       {{kW, {"F8_E4M3", {96, 160}}}, {kW + "_scale", {"F32", {1}}}}, 1},
      {"fp8-per-channel", "Per-channel FP8 (E4M3)",
       {{kW, {"F8_E4M3", {96, 160}}}, {kW + "_scale", {"F32", {96, 1}}}}, 1},
      {"fp8-fine-grained", "Fine-grained FP8, 128x128 blocks (E4M3)",
       {{kW, {"F8_E4M3", {96, 160}}}, {kW + "_scale_inv", {"F32", {1, 2}}}}, 1},
      {"nf4", "bitsandbytes NF4, block 64",
       {{kW, {"U8", {7680, 1}}}, {kW + ".absmax", {"F32", {240}}},
        {kW + ".quant_map", {"F32", {16}}}, {kW + ".quant_state.bitsandbytes__nf4", {"U8", nullptr}}},
       3},
      {"fp4-dq", "bitsandbytes FP4, block 64, double quant (nested block 256)",
       {{kW, {"U8", {7680, 1}}}, {kW + ".absmax", {"U8", {240}}},
        {kW + ".nested_absmax", {"F32", {1}}}, {kW + ".nested_quant_map", {"F32", {256}}},
        {kW + ".quant_map", {"F32", {16}}}, {kW + ".quant_state.bitsandbytes__fp4", {"U8", nullptr}}},
       5},
      {"int8", "bitsandbytes INT8 (LLM.int8, row-wise SCB)",
       {{kW, {"I8", {96, 160}}}, {kModule + "SCB", {"F32", {96}}},
        {kModule + "weight_format", {"U8", Json::array()}}},
       2},
  };
  TempDir dir;
  ASSERT_TRUE(PlainModel().Write(dir.path() / "m.safetensors"));
  for (const Case& c : cases) {
    const fs::path out = dir.path() / (c.scheme + ".safetensors");
    const CliResult r = Forget(dir.path() / "m.safetensors", out, "--scheme " + c.scheme);
    ASSERT_EQ(r.exit_code, 0) << c.scheme << ": " << r.err;
    const ReadBack back(out);
    for (const auto& [name, want] : c.tensors) {
      ASSERT_TRUE(back.header.contains(name)) << c.scheme << ": no " << name;
      EXPECT_EQ(back.header[name]["dtype"], want[0]) << c.scheme << ": " << name;
      if (!want[1].is_null()) {
        EXPECT_EQ(back.header[name]["shape"], want[1]) << c.scheme << ": " << name;
      }
    }
    // Norm and embedding stay as they were.
    EXPECT_EQ(back.header["model.embed_tokens.weight"]["dtype"], "BF16") << c.scheme;
    EXPECT_EQ(back.header["model.layers.0.input_layernorm.weight"]["dtype"], "BF16") << c.scheme;
    const CliResult inspect = RunAmn("inspect --json " + Quote(out));
    ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
    const Json info = Json::parse(inspect.out);
    EXPECT_EQ(info["scheme"], c.inspect) << c.scheme;
    EXPECT_EQ(info["quantized_tensors"], 1) << c.scheme;
    EXPECT_EQ(info["companion_tensors"], c.companions) << c.scheme;
    EXPECT_EQ(info["passthrough_tensors"], 2) << c.scheme;
    const CliResult back_to_bf16 =
        RunAmn("remember -q " + Quote(out) + " -o " + Quote(dir.path() / (c.scheme + "-bf16.safetensors")));
    ASSERT_EQ(back_to_bf16.exit_code, 0) << c.scheme << ": " << back_to_bf16.err;
    EXPECT_EQ(ReadBack(dir.path() / (c.scheme + "-bf16.safetensors")).header[kW]["shape"],
              Json({96, 160}));
  }
}

float Bf16ToF32(const std::vector<uint8_t>& bytes, size_t i) {
  const uint32_t bits = (uint32_t{bytes[2 * i]} | uint32_t{bytes[2 * i + 1]} << 8) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

std::vector<float> F32s(const std::vector<uint8_t>& bytes) {
  std::vector<float> out(bytes.size() / 4);
  std::memcpy(out.data(), bytes.data(), out.size() * 4);
  return out;
}

// The FP8 scales follow the documented formula, amax / 448 in F32 over the
// group (partial edge blocks included), computed here from the input alone;
// the decoded result stays close to the input for every scheme.
TEST(ForgetCli, ScalesFollowTheFormulaAndDecodeClose) {
  const size_t rows = 96, cols = 160;
  TempDir dir;
  ASSERT_TRUE(PlainModel(rows, cols).Write(dir.path() / "m.safetensors"));
  const std::vector<uint8_t> w = Weight(rows, cols);
  auto amax = [&](size_t r0, size_t r1, size_t c0, size_t c1) {
    float m = 0;
    for (size_t r = r0; r < std::min(r1, rows); ++r) {
      for (size_t c = c0; c < std::min(c1, cols); ++c) m = std::max(m, std::fabs(Bf16ToF32(w, r * cols + c)));
    }
    return m;
  };
  ASSERT_EQ(Forget(dir.path() / "m.safetensors", dir.path() / "fg.safetensors", "--scheme fp8-fine-grained").exit_code, 0);
  const std::vector<float> blocks = F32s(ReadBack(dir.path() / "fg.safetensors").Data(kW + "_scale_inv"));
  ASSERT_EQ(blocks.size(), 2u);
  EXPECT_EQ(blocks[0], amax(0, 128, 0, 128) / 448.0f);
  EXPECT_EQ(blocks[1], amax(0, 128, 128, 256) / 448.0f);
  ASSERT_EQ(Forget(dir.path() / "m.safetensors", dir.path() / "pt.safetensors", "--scheme fp8 --fp8-format e5m2").exit_code, 0);
  const ReadBack pt(dir.path() / "pt.safetensors");
  EXPECT_EQ(pt.header[kW]["dtype"], "F8_E5M2");
  EXPECT_EQ(F32s(pt.Data(kW + "_scale")), std::vector<float>{amax(0, rows, 0, cols) / 57344.0f});
  ASSERT_EQ(Forget(dir.path() / "m.safetensors", dir.path() / "pc.safetensors", "--scheme fp8-per-channel").exit_code, 0);
  const std::vector<float> channels = F32s(ReadBack(dir.path() / "pc.safetensors").Data(kW + "_scale"));
  ASSERT_EQ(channels.size(), rows);
  for (size_t r = 0; r < rows; r += 17) EXPECT_EQ(channels[r], amax(r, r + 1, 0, cols) / 448.0f) << r;
  ASSERT_EQ(Forget(dir.path() / "m.safetensors", dir.path() / "i8.safetensors", "--scheme int8").exit_code, 0);
  const std::vector<float> scb = F32s(ReadBack(dir.path() / "i8.safetensors").Data(kModule + "SCB"));
  ASSERT_EQ(scb.size(), rows);
  for (size_t r = 0; r < rows; r += 17) EXPECT_EQ(scb[r], amax(r, r + 1, 0, cols)) << r;
  // Decoded by remember (the library's dequantizers), compared here.
  for (const std::string scheme : {"fp8", "fp8-per-channel", "fp8-fine-grained", "nf4", "fp4-dq", "int8"}) {
    const fs::path q = dir.path() / (scheme + ".safetensors"), back = dir.path() / (scheme + "-back.safetensors");
    ASSERT_EQ(Forget(dir.path() / "m.safetensors", q, "--scheme " + scheme).exit_code, 0) << scheme;
    ASSERT_EQ(RunAmn("remember -q " + Quote(q) + " -o " + Quote(back)).exit_code, 0) << scheme;
    const std::vector<uint8_t> decoded = ReadBack(back).Data(kW);
    double err = 0, ref = 0;
    for (size_t i = 0; i < rows * cols; ++i) {
      const double x = Bf16ToF32(w, i), y = Bf16ToF32(decoded, i);
      err += (x - y) * (x - y);
      ref += x * x;
    }
    const double bound = scheme.starts_with("fp8") ? 0.05 : scheme == "int8" ? 0.02 : 0.15;
    EXPECT_LT(std::sqrt(err / ref), bound) << scheme;
    EXPECT_GT(err, 0.0) << scheme;
  }
}

// Double quant's quant_state carries bitsandbytes' nested keys, the offset
// written as Python's json.dumps writes a float.
TEST(ForgetCli, DoubleQuantStateHasTheNestedKeys) {
  TempDir dir;
  ASSERT_TRUE(PlainModel().Write(dir.path() / "m.safetensors"));
  const CliResult r = Forget(dir.path() / "m.safetensors", dir.path() / "q.safetensors", "--scheme nf4-dq");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<uint8_t> bytes = ReadBack(dir.path() / "q.safetensors").Data(kW + ".quant_state.bitsandbytes__nf4");
  const std::string text(bytes.begin(), bytes.end());
  EXPECT_EQ(text.rfind("{\"quant_type\": \"nf4\", \"blocksize\": 64, \"dtype\": \"bfloat16\", "
                       "\"shape\": [96, 160], \"nested_blocksize\": 256, \"nested_dtype\": "
                       "\"float32\", \"nested_offset\": ", 0), 0u) << text;
  const Json state = Json::parse(text);
  EXPECT_GT(state["nested_offset"].get<double>(), 0.0);
}

// Double quant's side tensors are those of the whole weight's nested
// quantization (QuantizeBnbNested, checked against the reference formula in
// quantize_ref_test) of its exact block absmax, measured here from the
// weight itself: the offset of the statistics pass, the `.absmax` codes
// made chunk by chunk and the `.nested_absmax` kept from that pass. The
// weight spans two 4 MiB chunks and ends inside a nested block.
TEST(ForgetCli, DoubleQuantSideTensorsAreTheWholeWeightsNestedQuantization) {
  TempDir dir;
  constexpr size_t kRows = 1030, kCols = 1088;  // 17,510 blocks of 64: 68.4 nested blocks
  // Block maxima that differ from block to block and from one nested
  // block to the next (Weight's alone repeat).
  std::vector<float> values(kRows * kCols);
  for (size_t i = 0; i < values.size(); ++i) {
    const float base = static_cast<float>(static_cast<int>((i * 2654435761u) % 2001) - 1000);
    values[i] = base / 8000.0f * static_cast<float>(1 + (i / 64) % 13 + (i / 16384) % 5);
  }
  const std::vector<uint8_t> weight = Bf16Of(values);
  SafetensorsBuilder model;
  model.Add(kW, "BF16", {kRows, kCols}, weight);
  ASSERT_TRUE(model.Write(dir.path() / "m.safetensors"));
  std::vector<float> absmax(kRows * kCols / 64, 0.0f);
  for (size_t i = 0; i < kRows * kCols; ++i) {
    const uint32_t bits = (uint32_t{weight[2 * i + 1]} << 24) | (uint32_t{weight[2 * i]} << 16);
    float v;
    std::memcpy(&v, &bits, 4);
    absmax[i / 64] = std::max(absmax[i / 64], std::fabs(v));
  }
  std::vector<uint8_t> codes(absmax.size());
  std::vector<float> nested((absmax.size() + 255) / 256);
  float offset = 0.0f;
  ASSERT_TRUE(QuantizeBnbNested(absmax, 256, codes, nested, &offset).ok());
  std::vector<uint8_t> nested_bytes(nested.size() * 4);
  std::memcpy(nested_bytes.data(), nested.data(), nested_bytes.size());
  for (const std::string threads : {"1", "2"}) {
    const fs::path out = dir.path() / ("q" + threads + ".safetensors");
    const CliResult r = Forget(dir.path() / "m.safetensors", out, "--scheme nf4-dq -j " + threads);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const ReadBack got(out);
    EXPECT_TRUE(got.Data(kW + ".absmax") == codes) << "-j " << threads;
    EXPECT_TRUE(got.Data(kW + ".nested_absmax") == nested_bytes) << "-j " << threads;
    const std::vector<uint8_t> state = got.Data(kW + ".quant_state.bitsandbytes__nf4");
    const Json json = Json::parse(std::string(state.begin(), state.end()));
    EXPECT_EQ(static_cast<float>(json["nested_offset"].get<double>()), offset);
  }
}

// The Lethe distance: printed, and the same numbers for any -j (chunk
// boundaries do not depend on the thread count; sums in chunk order).
TEST(ForgetCli, LetheDistanceIsTheSameForAnyThreadCount) {
  TempDir dir;
  ASSERT_TRUE(PlainModel(300, 512).Write(dir.path() / "m.safetensors"));
  const CliResult text = RunAmn("forget --scheme nf4 " + Quote(dir.path() / "m.safetensors") + " -o " +
                                Quote(dir.path() / "t.safetensors"));
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("\nLethe distance: "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("\nMax abs error:"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("\nRelative RMSE:"), std::string::npos) << text.out;
  for (const std::string scheme : {"nf4", "fp8", "int8"}) {
    Json first;
    for (const int j : {1, 2, 5}) {
      const fs::path out = dir.path() / (scheme + std::to_string(j) + ".safetensors");
      const CliResult r = RunAmn("forget --json -j " + std::to_string(j) + " --scheme " + scheme +
                                 " " + Quote(dir.path() / "m.safetensors") + " -o " + Quote(out));
      ASSERT_EQ(r.exit_code, 0) << r.err;
      Json got = Json::parse(r.out);
      ASSERT_EQ(got["tensors"].size(), 1u);
      EXPECT_GT(got["lethe_distance"].get<double>(), 0.0);
      EXPECT_EQ(got["tensors"][0]["elements"], 300 * 512);
      EXPECT_LE(got["lethe_distance"].get<double>(), got["max_abs_error"].get<double>());
      if (j == 1) {
        first = got;
      } else {
        EXPECT_EQ(got["tensors"], first["tensors"]) << scheme << " -j " << j;
        EXPECT_EQ(ReadBytes(out), ReadBytes(dir.path() / (scheme + "1.safetensors"))) << scheme;
      }
    }
  }
}

// A sharded directory: shards, an index naming the side tensors, config.json
// with the loader's quantization_config, side files copied.
TEST(ForgetCli, DirectoryGetsIndexConfigAndSideFiles) {
  TempDir dir;
  const fs::path model = dir.path() / "Plain-Model";
  fs::create_directories(model);
  SafetensorsBuilder a = PlainModel();
  SafetensorsBuilder b;
  b.Add("model.layers.1.self_attn.q_proj.weight", "BF16", {64, 160}, Weight(64, 160));
  b.Add("lm_head.weight", "BF16", {4, 160}, Weight(4, 160));
  ASSERT_TRUE(a.Write(model / "model-00001-of-00002.safetensors"));
  ASSERT_TRUE(b.Write(model / "model-00002-of-00002.safetensors"));
  Json index = {{"metadata", {{"total_size", 0}}}, {"weight_map", Json::object()}};
  for (const std::string& n : a.Names()) index["weight_map"][n] = "model-00001-of-00002.safetensors";
  for (const std::string& n : b.Names()) index["weight_map"][n] = "model-00002-of-00002.safetensors";
  WriteText(model / "model.safetensors.index.json", index.dump());
  WriteText(model / "config.json", Json({{"architectures", {"LlamaForCausalLM"}}, {"torch_dtype", "bfloat16"}}).dump());
  WriteText(model / "tokenizer.json", "{}");
  const CliResult r = RunAmn("forget -q --scheme fp8-fine-grained " + Quote(model));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const fs::path out = dir.path() / "Plain-Model-fp8-fine-grained";  // the default name
  ASSERT_TRUE(fs::is_directory(out));
  EXPECT_TRUE(fs::exists(out / "tokenizer.json"));
  const Json config = Json::parse(SlurpText(out / "config.json"));
  EXPECT_EQ(config["quantization_config"]["quant_method"], "fp8");
  EXPECT_EQ(config["quantization_config"]["weight_block_size"], Json({128, 128}));
  EXPECT_EQ(config["quantization_config"]["activation_scheme"], "dynamic");
  EXPECT_EQ(config["torch_dtype"], "bfloat16");
  const Json out_index = Json::parse(SlurpText(out / "model.safetensors.index.json"));
  EXPECT_EQ(out_index["weight_map"][kW + "_scale_inv"], "model-00001-of-00002.safetensors");
  EXPECT_EQ(out_index["weight_map"]["model.layers.1.self_attn.q_proj.weight_scale_inv"],
            "model-00002-of-00002.safetensors");
  const ReadBack second(out / "model-00002-of-00002.safetensors");
  EXPECT_EQ(second.header["lm_head.weight"]["dtype"], "BF16");  // the output head stays
  const CliResult inspect = RunAmn("inspect --json " + Quote(out));
  ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
  EXPECT_EQ(Json::parse(inspect.out)["quantized_tensors"], 2) << inspect.out;
  const CliResult back = RunAmn("remember -q " + Quote(out) + " -o " + Quote(dir.path() / "back"));
  ASSERT_EQ(back.exit_code, 0) << back.err;
  // bitsandbytes: transformers' BitsAndBytesConfig keys.
  const CliResult nf4 = RunAmn("forget -q --scheme nf4-dq " + Quote(model) + " -o " + Quote(dir.path() / "nf4"));
  ASSERT_EQ(nf4.exit_code, 0) << nf4.err;
  const Json bnb = Json::parse(SlurpText(dir.path() / "nf4" / "config.json"))["quantization_config"];
  EXPECT_EQ(bnb["quant_method"], "bitsandbytes");
  EXPECT_EQ(bnb["load_in_4bit"], true);
  EXPECT_EQ(bnb["bnb_4bit_quant_type"], "nf4");
  EXPECT_EQ(bnb["bnb_4bit_use_double_quant"], true);
  // Per-tensor FP8: compressed-tensors float-quantized, strategy tensor.
  const CliResult fp8 = RunAmn("forget -q --scheme fp8 " + Quote(model) + " -o " + Quote(dir.path() / "fp8"));
  ASSERT_EQ(fp8.exit_code, 0) << fp8.err;
  const Json ct = Json::parse(SlurpText(dir.path() / "fp8" / "config.json"))["quantization_config"];
  EXPECT_EQ(ct["quant_method"], "compressed-tensors");
  EXPECT_EQ(ct["format"], "float-quantized");
  EXPECT_EQ(ct["config_groups"]["group_0"]["weights"]["strategy"], "tensor");
  const CliResult ct_inspect = RunAmn("inspect --json " + Quote(dir.path() / "fp8"));
  ASSERT_EQ(ct_inspect.exit_code, 0) << ct_inspect.err;
  EXPECT_EQ(Json::parse(ct_inspect.out)["quantized_tensors"], 2) << ct_inspect.out;
}

// Other containers that hold plain floats: a .npy array (--only picks its
// one 1-D array for a flat 4-bit encode).
TEST(ForgetCli, NpyInput) {
  TempDir dir;
  ASSERT_TRUE(WriteF32Npy(dir.path() / "a.npy", 1000));
  const CliResult r = Forget(dir.path() / "a.npy", dir.path() / "a.safetensors", "--scheme nf4 --only .");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const CliResult inspect = RunAmn("inspect --json " + Quote(dir.path() / "a.safetensors"));
  ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
  EXPECT_EQ(Json::parse(inspect.out)["quantized_tensors"], 1) << inspect.out;
}

// A PyTorch checkpoint (pth_reference: rnn.weight_hh_l0 starts two floats
// into a storage it shares, so its floats are gathered): every weight
// encoded per tensor, each scale amax / 448 of the reference bytes torch.load
// gives.
TEST(ForgetCli, PthInputSharedStorage) {
  const auto files = FixtureFiles("pth_reference", ".pth");
  AMN_SKIP_WITHOUT_FIXTURES(files, "pth_reference");
  const fs::path pth = FixturesDir() / "pth_reference" / "algzoo_rnn_small.pth";
  const Json reference = Json::parse(SlurpText(FixturesDir() / "pth_reference" / "algzoo_rnn_small_reference.json"));
  TempDir dir;
  const CliResult r = Forget(pth, dir.path() / "q.safetensors", "--scheme fp8 --only weight");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const ReadBack out(dir.path() / "q.safetensors");
  int checked = 0;
  for (const Json& t : reference["tensors"]) {
    const std::string name = t["name"], hex = t["data_hex"];
    float amax = 0;
    for (size_t i = 0; i + 8 <= hex.size(); i += 8) {
      uint32_t bits = 0;
      for (int b = 0; b < 4; ++b) bits |= static_cast<uint32_t>(std::stoul(hex.substr(i + 2 * b, 2), nullptr, 16)) << (8 * b);
      float f;
      std::memcpy(&f, &bits, 4);
      amax = std::max(amax, std::fabs(f));
    }
    EXPECT_EQ(out.header[name]["dtype"], "F8_E4M3") << name;
    EXPECT_EQ(out.header[name]["shape"], t["shape"]) << name;
    EXPECT_EQ(F32s(out.Data(name + "_scale")), std::vector<float>{amax / 448.0f}) << name;
    ++checked;
  }
  EXPECT_EQ(checked, 3);
}

// GGUF holding plain floats: its linear weight is encoded (GGUF dims are
// fastest first: {64, 2} is a [2, 64] matrix), the embedding stays; a GGUF
// of ggml blocks is dequantized to F32 in the pass (tests/
// convert_chain_cli_test.cc checks those bytes).
TEST(ForgetCli, GgufInput) {
  TempDir dir;
  auto write = [&](const fs::path& path, uint32_t q_type) {
    GgufWriter w(3);
    w.Header(2, 1);
    w.KvStr("general.architecture", "llama");
    w.Tensor("token_embd.weight", {64, 2}, 0, 0);
    w.Tensor("blk.0.attn_q.weight", {64, 2}, q_type, 512);
    w.PadTo(32);
    std::vector<float> values(128);
    for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i) / 64.0f - 1.0f;
    w.Raw(values.data(), 512);
    if (q_type == 0) {
      w.Raw(values.data(), 512);
    } else {
      std::vector<uint8_t> q8(4 * 34, 0);  // Q8_0: 4 blocks of 32
      w.Raw(q8.data(), q8.size());
    }
    const std::vector<uint8_t> bytes = w.bytes();
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  };
  write(dir.path() / "plain.gguf", 0);
  write(dir.path() / "q8.gguf", 8);
  const CliResult r = Forget(dir.path() / "plain.gguf", dir.path() / "out.safetensors", "--scheme int8");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const ReadBack out(dir.path() / "out.safetensors");
  EXPECT_EQ(out.header["blk.0.attn_q.weight"]["dtype"], "I8");
  EXPECT_EQ(out.header["blk.0.attn_q.weight"]["shape"], Json({2, 64}));
  EXPECT_EQ(out.header["blk.0.attn_q.SCB"]["shape"], Json({2}));
  EXPECT_EQ(out.header["token_embd.weight"]["dtype"], "F32");
  const CliResult q8 = Forget(dir.path() / "q8.gguf", dir.path() / "q8.safetensors", "--scheme int8");
  ASSERT_EQ(q8.exit_code, 0) << q8.err;
  const ReadBack q8_out(dir.path() / "q8.safetensors");
  EXPECT_EQ(q8_out.header["blk.0.attn_q.weight"]["dtype"], "I8");
  EXPECT_EQ(q8_out.header["blk.0.attn_q.weight"]["shape"], Json({2, 64}));
}

// Refused with one error line and a usage exit code; nothing left behind.
TEST(ForgetCli, BadInputIsRefusedAndLeavesNothing) {
  TempDir dir;
  SafetensorsBuilder m = PlainModel();
  m.Add("model.layers.0.positions", "I32", {2, 2}, std::vector<uint8_t>(16, 0));
  ASSERT_TRUE(m.Write(dir.path() / "m.safetensors"));
  std::vector<float> bad(64 * 64, 0.25f);
  bad[100] = std::nanf("");
  SafetensorsBuilder nan_model;
  nan_model.Add(kW, "F32", {64, 64}, std::vector<uint8_t>(reinterpret_cast<uint8_t*>(bad.data()),
                                                          reinterpret_cast<uint8_t*>(bad.data()) + bad.size() * 4));
  ASSERT_TRUE(nan_model.Write(dir.path() / "nan.safetensors"));
  bad[100] = INFINITY;
  SafetensorsBuilder inf_model;
  inf_model.Add(kW, "F32", {64, 64}, std::vector<uint8_t>(reinterpret_cast<uint8_t*>(bad.data()),
                                                          reinterpret_cast<uint8_t*>(bad.data()) + bad.size() * 4));
  ASSERT_TRUE(inf_model.Write(dir.path() / "inf.safetensors"));
  ASSERT_EQ(Forget(dir.path() / "m.safetensors", dir.path() / "q.safetensors", "--scheme nf4").exit_code, 0);
  const std::vector<std::string> before = dir.Entries();
  struct Case {
    std::string input, flags, says;
  };
  const std::vector<Case> cases = {
      {"m.safetensors", "--scheme fp8 --only positions", "forget encodes float tensors"},
      {"m.safetensors", "--scheme fp8-fine-grained --only layernorm", "takes 2-D weights"},
      {"m.safetensors", "--scheme int8 --only layernorm", "takes 2-D weights"},
      {"m.safetensors", "--scheme nf4 --block-size 63", "not an even number"},
      {"nan.safetensors", "--scheme fp8", kW},
      {"nan.safetensors", "--scheme nf4", kW},
      {"inf.safetensors", "--scheme int8", kW},
      {"m.safetensors", "--scheme nf4 --only nothing-matches", "no tensor to quantize"},
      {"m.safetensors", "--scheme nf4 --only '('", "not a valid regular expression"},
      {"m.safetensors", "--like " + Quote(dir.path() / "m.safetensors"), "not quantized"},
  };
  for (const Case& c : cases) {
    const CliResult r = Forget(dir.path() / c.input, dir.path() / "out.safetensors", c.flags);
    EXPECT_NE(r.exit_code, 0) << c.flags;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << c.flags << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << c.flags << ": " << r.err;
    EXPECT_EQ(dir.Entries(), before) << c.flags;
  }
  // The output would overwrite the input.
  const CliResult self = RunAmn("forget -q --force --scheme nf4 " + Quote(dir.path() / "m.safetensors") +
                                " -o " + Quote(dir.path() / "m.safetensors"));
  EXPECT_EQ(self.exit_code, 2) << self.err;
  EXPECT_NE(self.err.find("would overwrite"), std::string::npos) << self.err;
  EXPECT_EQ(dir.Entries(), before);
  // --like and --scheme together, and neither, are usage errors.
  EXPECT_EQ(RunAmn("forget -q " + Quote(dir.path() / "m.safetensors")).exit_code, 2);
  EXPECT_EQ(dir.Entries(), before);
}

// Overwrites the F32 at value `index` of tensor `name` in safetensors file
// `path` (as its header places it) with `value`.
void PokeF32(const fs::path& path, const std::string& name, uint64_t index, float value) {
  const ReadBack file(path);
  ASSERT_TRUE(file.header.contains(name)) << name;
  ASSERT_EQ(file.header[name]["dtype"], "F32") << name;
  const uint64_t at = file.data_offset + file.header[name]["data_offsets"][0].get<uint64_t>() + 4 * index;
  std::fstream out(path, std::ios::binary | std::ios::in | std::ios::out);
  out.seekp(static_cast<std::streamoff>(at));
  out.write(reinterpret_cast<const char*>(&value), 4);
  ASSERT_TRUE(out.good());
}

// --like reads each chunk's side values as it encodes it (issue 15): a
// like-model whose side tensor holds a value the encoders refuse (NaN, an
// infinity, a negative value, a zero FP8 scale: a corrupt file), or that
// ends early, is refused with one line naming the file and the side
// tensor, a non-zero exit and nothing left behind, whichever chunk meets it.
TEST(ForgetCli, LikeWithACorruptSideTensorIsRefused) {
  TempDir dir;
  const fs::path plain = dir.path() / "m.safetensors";
  // 2M elements: two chunks of the default 4 MiB, read by two workers at -j 2.
  ASSERT_TRUE(PlainModel(2048, 1024).Write(plain));
  struct Case {
    std::string scheme, side;
    uint64_t index;
    float value;
    std::string says;
  };
  const std::vector<Case> cases = {
      // The last block, in the second chunk.
      {"nf4", kW + ".absmax", 32767, std::nanf(""), "value 32767 is NaN or infinite"},
      // The absmax of nested block 3 (blocks 768-1023), recovered from it.
      {"nf4-dq", kW + ".nested_absmax", 3, INFINITY, "value 768 (recovered from"},
      {"int8", kModule + "SCB", 0, -INFINITY, "value 0 is NaN or infinite"},
      {"int8", kModule + "SCB", 2047, -1.0f, "value 2047 is negative"},
      {"fp8-per-channel", kW + "_scale", 2047, std::nanf(""), "value 2047 is NaN or infinite"},
      {"fp8", kW + "_scale", 0, 0.0f, "value 0 is zero"},
  };
  for (const Case& c : cases) {
    const fs::path like = dir.path() / ("like-" + c.scheme + ".safetensors");
    fs::remove(like);
    ASSERT_EQ(Forget(plain, like, "--scheme " + c.scheme).exit_code, 0) << c.scheme;
    // Intact, it is taken, its side values read by two chunks; all but
    // double quant (whose recovered absmax is not the exact one the codes
    // were made with) give the like-model back.
    const fs::path again = dir.path() / "again.safetensors";
    const CliResult ok = Forget(plain, again, "-j 2 --like " + Quote(like));
    ASSERT_EQ(ok.exit_code, 0) << c.scheme << ": " << ok.err;
    if (c.scheme != "nf4-dq") {
      EXPECT_TRUE(ReadBytes(again) == ReadBytes(like)) << c.scheme;
    }
    fs::remove(again);
    PokeF32(like, c.side, c.index, c.value);
    const std::vector<std::string> before = dir.Entries();
    for (const std::string threads : {"1", "2"}) {
      const CliResult r = Forget(plain, dir.path() / "out.safetensors", "-j " + threads + " --like " + Quote(like));
      EXPECT_NE(r.exit_code, 0) << c.scheme;
      EXPECT_NE(r.err.find(like.string()), std::string::npos) << c.scheme << ": " << r.err;
      EXPECT_NE(r.err.find("'" + c.side + "'"), std::string::npos) << c.scheme << ": " << r.err;
      EXPECT_NE(r.err.find(c.says), std::string::npos) << c.scheme << ": " << r.err;
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << c.scheme << ": " << r.err;
      EXPECT_EQ(dir.Entries(), before) << c.scheme;
    }
  }
  // A like-model cut short inside its data: refused when it is opened,
  // naming the file.
  const fs::path like = dir.path() / "cut.safetensors";
  ASSERT_EQ(Forget(plain, like, "--scheme nf4").exit_code, 0);
  const ReadBack whole(like);
  fs::resize_file(like, whole.data_offset + whole.header[kW + ".absmax"]["data_offsets"][0].get<uint64_t>() + 10);
  const std::vector<std::string> before = dir.Entries();
  const CliResult r = Forget(plain, dir.path() / "out.safetensors", "--like " + Quote(like));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find(like.string()), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(dir.Entries(), before);
}

// A failure in the middle of the data (a NaN near the end of the last of
// eight weights, met by one worker while others write their chunks) ends
// the run with one error line naming the weight and leaves no output and
// no partial file, with either output writer (AMN_OUTPUT_WRITER), for a
// file and for a directory output; the same model without the NaN is
// written, the same bytes by both writers.
TEST(ForgetCli, ErrorMidwayLeavesNoOutput) {
  TempDir dir;
  const size_t rows = 256, cols = 1024;
  auto layer = [](int i) { return "model.layers." + std::to_string(i) + ".mlp.gate_proj.weight"; };
  for (const bool poisoned : {false, true}) {
    const fs::path model = dir.path() / (poisoned ? "bad" : "good");
    fs::create_directories(model);
    SafetensorsBuilder m;
    for (int i = 0; i < 8; ++i) {
      std::vector<uint8_t> w = Weight(rows, cols);
      if (poisoned && i == 7) {
        w[2 * (rows * cols - 5)] = 0xC0;  // BF16 0x7FC0: a quiet NaN
        w[2 * (rows * cols - 5) + 1] = 0x7F;
      }
      m.Add(layer(i), "BF16", {rows, cols}, w);
    }
    ASSERT_TRUE(m.Write(model / "model.safetensors"));
    WriteText(model / "config.json", Json({{"architectures", {"LlamaForCausalLM"}}}).dump());
  }
  const std::vector<std::string> before = dir.Entries();
  std::vector<uint8_t> good_bytes;
  for (const char* writer : {"ring", "mapped"}) {
    for (const bool as_directory : {false, true}) {
      SCOPED_TRACE(std::string(writer) + (as_directory ? " directory" : " file"));
      const std::string env = std::string("AMN_OUTPUT_WRITER=") + writer;
      auto input = [&](const char* name) {
        return as_directory ? dir.path() / name : dir.path() / name / "model.safetensors";
      };
      const fs::path out = dir.path() / (as_directory ? "out" : "out.safetensors");
      const CliResult bad =
          RunAmn("forget -q -j 3 --scheme nf4 " + Quote(input("bad")) + " -o " + Quote(out), env);
      EXPECT_NE(bad.exit_code, 0);
      EXPECT_NE(bad.err.find(layer(7)), std::string::npos) << bad.err;
      EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1) << bad.err;
      EXPECT_EQ(dir.Entries(), before);
      const CliResult good =
          RunAmn("forget -q -j 3 --scheme nf4 " + Quote(input("good")) + " -o " + Quote(out), env);
      ASSERT_EQ(good.exit_code, 0) << good.err;
      const std::vector<uint8_t> bytes = ReadBytes(as_directory ? out / "model.safetensors" : out);
      if (good_bytes.empty()) good_bytes = bytes;
      EXPECT_TRUE(bytes == good_bytes);
      fs::remove_all(out);
    }
  }
}

}  // namespace
}  // namespace amn::test
