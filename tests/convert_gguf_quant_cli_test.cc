// `amn convert --scheme <ggml type>` end to end: every quantized tensor of
// the GGUF it writes is ggml_quantize_chunk of the same F32 values (the
// oracle library, tests/ggml_oracle.h), read back through ggml's own
// loader; llama-quantize's tensor choice and fallbacks; any -j the same.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "amn/ggml_dequant.h"
#include "fixtures/safetensors_builder.h"
#include "tests/cli_files.h"
#include "tests/cli_runner.h"
#include "tests/fixtures.h"
#include "tests/ggml_oracle.h"
#include "tests/gguf_readback.h"
#include "tests/gguf_writer.h"
#include "tests/quant_fixture_files.h"

namespace amn::test {
namespace {

namespace fs = std::filesystem;
using fixtures::SafetensorsBuilder;
using Json = nlohmann::json;

// Each quantized tensor's bytes are ggml_quantize_chunk of the F32 GGUF
// that convert writes of the same model (same names, same permuted rows);
// every other tensor is that F32 GGUF's. Type ids, shapes and offsets are
// ggml's view; llama-quantize --pure's choice, file type and fallbacks.
TEST(ConvertCli, QuantizedGgufIsGgmlQuantizeOfTheF32Gguf) {
  const auto* ggml = AMN_GGML_ORACLE_OR_SKIP();
  GgufFixture q;
  if (!ReadGgufFixture("smollm2_q4_k.bin", q)) {
    GTEST_SKIP() << "fixture not found under " << FixturesDir() << "; set AMN_FIXTURES_DIR";
  }
  ASSERT_EQ(q.n, 65536u);
  TempDir dir;
  const fs::path model = dir.path() / "SmolLM2-Slice";
  WriteRealLlama(model, q.golden_bf16, /*odd=*/false);
  const fs::path f32 = dir.path() / "f32.gguf";
  ASSERT_EQ(RunAmn("convert -q " + Quote(model) + " -o " + Quote(f32) + " --scheme f32").exit_code,
            0);
  GgmlView ref;
  ASSERT_TRUE(LoadWithGgml(*ggml, f32, ref));
  const std::vector<uint8_t> ref_file = FileBytes(f32);
  std::map<std::string, GgmlView::Tensor> ref_tensors;
  for (const GgmlView::Tensor& t : ref.tensors) ref_tensors[t.name] = t;

  struct Case {
    std::string scheme;
    int type, ffn_down_type;  // ggml type ids
    uint32_t file_type;       // LlamaFileType
  };
  // ffn_down's rows of 96 take llama-quantize's fallback for the 256-element
  // types: Q4_K -> Q5_0, Q5_K -> Q5_1, Q6_K -> Q8_0, Q2_K/Q3_K/TQ1_0/TQ2_0
  // -> Q4_0, IQ4_XS, IQ3_S -> IQ4_NL. (IQ3_XXS needs an importance matrix
  // in llama-quantize: tests/convert_gguf_imatrix_cli_test.cc.)
  const std::vector<Case> cases = {
      {"q8_0", 8, 8, 7},     {"q4_0", 2, 2, 2},      {"q4_1", 3, 3, 3},
      {"q5_0", 6, 6, 8},     {"q5_1", 7, 7, 9},      {"iq4_nl", 20, 20, 25},
      {"mxfp4", 39, 39, 38}, {"q4_k", 12, 6, 15},    {"q5_k", 13, 7, 17},
      {"q6_k", 14, 8, 18},   {"q2_k", 10, 2, 10},    {"q3_k", 11, 2, 12},
      {"tq1_0", 34, 2, 36},  {"tq2_0", 35, 2, 37},   {"iq4_xs", 23, 20, 30},
      {"iq3_s", 21, 20, 26}};
  const std::set<std::string> quantized = {"token_embd.weight", "blk.0.attn_q.weight",
                                           "blk.0.attn_k.weight", "blk.0.ffn_down.weight",
                                           "output.weight"};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.scheme);
    const fs::path out = dir.path() / (c.scheme + ".gguf");
    const CliResult r = RunAmn("convert " + Quote(model) + " -o " + Quote(out) + " --scheme " +
                               c.scheme + " --json -j 2");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const Json summary = Json::parse(r.out);
    EXPECT_EQ(summary["scheme"], c.scheme);
    ASSERT_EQ(summary["quantized"].size(), quantized.size());
    EXPECT_EQ(summary["elements"], 64 * 256 * 2 + 256 * 256 + 128 * 256 + 256 * 96);
    EXPECT_GT(summary["lethe_distance"].get<double>(), 0.0);
    EXPECT_GE(summary["max_abs_error"].get<double>(), summary["lethe_distance"].get<double>());
    EXPECT_GT(summary["relative_rmse"].get<double>(), 0.0);
    const bool falls_back = c.ffn_down_type != c.type;
    ASSERT_EQ(summary["fallbacks"].size(), falls_back ? 1u : 0u);
    if (falls_back) {
      EXPECT_EQ(summary["fallbacks"][0]["name"], "blk.0.ffn_down.weight");
      EXPECT_NE(summary["fallbacks"][0]["reason"].get<std::string>().find("rows of 96"),
                std::string::npos);
    }

    GgmlView view;
    ASSERT_TRUE(LoadWithGgml(*ggml, out, view)) << "ggml refused " << out;
    EXPECT_EQ(view.metadata["general.file_type"], Json({{"type", "u32"}, {"value", c.file_type}}));
    EXPECT_EQ(view.metadata["general.quantization_version"], Json({{"type", "u32"}, {"value", 2}}));
    const std::vector<uint8_t> file = FileBytes(out);
    ASSERT_EQ(view.tensors.size(), ref.tensors.size());
    uint64_t next = 0;
    for (const GgmlView::Tensor& t : view.tensors) {
      SCOPED_TRACE(t.name);
      ASSERT_TRUE(ref_tensors.contains(t.name));
      const GgmlView::Tensor& f = ref_tensors[t.name];
      EXPECT_EQ(t.ne, f.ne);
      EXPECT_EQ(t.offset, next);
      next = (t.offset + t.size + 31) / 32 * 32;
      const std::vector<uint8_t> values = Slice(ref_file, ref.data_offset + f.offset, f.size);
      if (!quantized.contains(t.name)) {
        EXPECT_EQ(t.type, 0);  // norms stay F32
        EXPECT_EQ(Slice(file, view.data_offset + t.offset, t.size), values);
        continue;
      }
      const int want = t.name == "blk.0.ffn_down.weight" ? c.ffn_down_type : c.type;
      EXPECT_EQ(t.type, want);
      for (const Json& e : summary["quantized"]) {
        if (e["name"] == t.name) {
          EXPECT_EQ(e["type"], FindGgmlType(want)->name);
        }
      }
      const std::vector<uint8_t> expected =
          ggml->Quantize(want, Floats(values), static_cast<int64_t>(f.ne[0]));
      EXPECT_EQ(t.size, expected.size());
      EXPECT_TRUE(Slice(file, view.data_offset + t.offset, t.size) == expected)
          << "bytes differ from ggml_quantize_chunk";
    }
    EXPECT_EQ(view.data_offset + next, fs::file_size(out));
    // -j does not change a byte.
    const fs::path out1 = dir.path() / (c.scheme + "-j1.gguf");
    ASSERT_EQ(
        RunAmn("convert -q -j 1 " + Quote(model) + " -o " + Quote(out1) + " --scheme " + c.scheme)
            .exit_code,
        0);
    EXPECT_TRUE(FileBytes(out1) == file);
  }
}

// A weight of several engine chunks (4 MiB of F32 rows each): 2048 x 1024
// llama q rows (8 heads) of the real values tiled, so the permuted rows are
// gathered across chunk boundaries; bytes as ggml's, the same for -j 1 and 4.
// Also the newer types Q2_0, Q1_0, NVFP4 (rows of 1024: whole blocks), whose
// GGUF ggml's own reader loads.
TEST(ConvertCli, QuantizedGgufAcrossChunksIsGgmlsForAnyThreads) {
  const auto* ggml = AMN_GGML_ORACLE_OR_SKIP();
  GgufFixture q;
  if (!ReadGgufFixture("smollm2_q4_k.bin", q)) {
    GTEST_SKIP() << "fixture not found under " << FixturesDir() << "; set AMN_FIXTURES_DIR";
  }
  TempDir dir;
  const fs::path model = dir.path() / "big";
  fs::create_directories(model);
  const uint64_t rows = 2048, cols = 1024;
  std::vector<uint8_t> w;
  while (w.size() < rows * cols * 2) w.insert(w.end(), q.golden_bf16.begin(), q.golden_bf16.end());
  // Rows differ from their neighbours' copies: each tile shifted by its index.
  for (uint64_t i = 0; i < rows * cols; ++i) w[2 * i] ^= static_cast<uint8_t>(i / 65536);
  w.resize(rows * cols * 2);
  SafetensorsBuilder()
      .Add("model.layers.0.self_attn.q_proj.weight", "BF16", {rows, cols}, w)
      .Write(model / "model.safetensors");
  WriteText(model / "config.json",
            R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 1024,
                "num_attention_heads": 8, "num_key_value_heads": 8})");
  const fs::path f32 = dir.path() / "f32.gguf";
  ASSERT_EQ(RunAmn("convert -q " + Quote(model) + " -o " + Quote(f32) + " --scheme f32").exit_code,
            0);
  GgmlView ref;
  ASSERT_TRUE(LoadWithGgml(*ggml, f32, ref));
  ASSERT_EQ(ref.tensors.size(), 1u);
  const std::vector<float> values =
      Floats(Slice(FileBytes(f32), ref.data_offset + ref.tensors[0].offset, ref.tensors[0].size));
  for (const auto& [scheme, type] :
       std::vector<std::pair<std::string, int>>{
           {"q4_k", 12}, {"q8_0", 8}, {"q2_0", 42}, {"q1_0", 41}, {"nvfp4", 40}}) {
    SCOPED_TRACE(scheme);
    const fs::path out4 = dir.path() / (scheme + "-j4.gguf"),
                   out1 = dir.path() / (scheme + "-j1.gguf");
    ASSERT_EQ(
        RunAmn("convert -q -j 4 " + Quote(model) + " -o " + Quote(out4) + " --scheme " + scheme)
            .exit_code,
        0);
    ASSERT_EQ(
        RunAmn("convert -q -j 1 " + Quote(model) + " -o " + Quote(out1) + " --scheme " + scheme)
            .exit_code,
        0);
    GgmlView view;
    ASSERT_TRUE(LoadWithGgml(*ggml, out4, view));
    ASSERT_EQ(view.tensors.size(), 1u);
    EXPECT_EQ(view.tensors[0].type, type);
    const std::vector<uint8_t> file = FileBytes(out4);
    EXPECT_TRUE(Slice(file, view.data_offset + view.tensors[0].offset, view.tensors[0].size) ==
                ggml->Quantize(type, values, static_cast<int64_t>(cols)))
        << "bytes differ from ggml_quantize_chunk";
    EXPECT_TRUE(FileBytes(out1) == file);
  }
}

// llama-quantize's tensor_type_fallback for rows of 48: no 32-element block
// divides them either, so Q4_K becomes F16 (said in --json and the text);
// Q8_0 has no fallback at all: refused, nothing written.
TEST(ConvertCli, QuantizedGgufFallsBackAsLlamaQuantize) {
  const auto* ggml = AMN_GGML_ORACLE_OR_SKIP();
  GgufFixture q;
  if (!ReadGgufFixture("smollm2_q4_k.bin", q)) {
    GTEST_SKIP() << "fixture not found under " << FixturesDir() << "; set AMN_FIXTURES_DIR";
  }
  TempDir dir;
  const fs::path model = dir.path() / "odd";
  WriteRealLlama(model, q.golden_bf16, /*odd=*/true);
  const fs::path out = dir.path() / "q4k.gguf";
  const CliResult r =
      RunAmn("convert " + Quote(model) + " -o " + Quote(out) + " --scheme q4_k --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json summary = Json::parse(r.out);
  const Json fallbacks = {{{"name", "blk.0.ffn_down.weight"},
                           {"type", "Q5_0"},
                           {"reason", "rows of 96 are not a multiple of Q4_K's block of 256"}},
                          {{"name", "blk.0.ffn_up.weight"},
                           {"type", "F16"},
                           {"reason", "rows of 48 are not a multiple of Q4_K's block of 256"}}};
  EXPECT_EQ(summary["fallbacks"], fallbacks);
  EXPECT_EQ(summary["types"]["F16"]["tensors"], 1);
  GgmlView view;
  ASSERT_TRUE(LoadWithGgml(*ggml, out, view));
  const fs::path f16 = dir.path() / "f16.gguf";
  ASSERT_EQ(RunAmn("convert -q " + Quote(model) + " -o " + Quote(f16) + " --scheme f16").exit_code,
            0);
  GgmlView ref;
  ASSERT_TRUE(LoadWithGgml(*ggml, f16, ref));
  const std::vector<uint8_t> file = FileBytes(out), ref_file = FileBytes(f16);
  int checked = 0;
  for (const GgmlView::Tensor& t : view.tensors) {
    if (t.name != "blk.0.ffn_up.weight") continue;
    EXPECT_EQ(t.type, 1);
    for (const GgmlView::Tensor& f : ref.tensors) {
      if (f.name != t.name) continue;
      EXPECT_EQ(Slice(file, view.data_offset + t.offset, t.size),
                Slice(ref_file, ref.data_offset + f.offset, f.size));
      ++checked;
    }
  }
  EXPECT_EQ(checked, 1);

  const CliResult text =
      RunAmn("convert " + Quote(model) + " -o " + Quote(dir.path() / "t.gguf") + " --scheme q6_k");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("Fallback:    blk.0.ffn_up.weight -> F16 (rows of 48"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("Lethe distance:"), std::string::npos) << text.out;

  const std::vector<std::string> before = dir.Entries();
  const CliResult refused = RunAmn("convert -q " + Quote(model) + " -o " +
                                   Quote(dir.path() / "q8.gguf") + " --scheme q8_0");
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("'blk.0.ffn_up.weight': rows of 48"), std::string::npos)
      << refused.err;
  EXPECT_EQ(std::count(refused.err.begin(), refused.err.end(), '\n'), 1) << refused.err;
  EXPECT_EQ(dir.Entries(), before);

  // @huggingface/gguf reads the same types (Q4_K, Q5_0, F16, F32), shapes
  // and offsets as ggml (last: it may skip).
  AMN_HF_GGUF_OR_SKIP(hf, out);
  ASSERT_EQ(hf["tensors"].size(), view.tensors.size());
  EXPECT_EQ(hf["tensor_data_offset"], std::to_string(view.data_offset));
  for (size_t i = 0; i < view.tensors.size(); ++i) {
    const Json& h = hf["tensors"][i];
    EXPECT_EQ(h["name"], view.tensors[i].name);
    EXPECT_EQ(h["dtype"], view.tensors[i].type) << view.tensors[i].name;
    EXPECT_EQ(h["offset"], std::to_string(view.tensors[i].offset)) << view.tensors[i].name;
    std::vector<std::string> shape;
    for (const uint64_t d : view.tensors[i].ne) shape.push_back(std::to_string(d));
    EXPECT_EQ(h["shape"], Json(shape)) << view.tensors[i].name;
  }
}

// forget does not write GGUF yet: a ggml type is pointed at convert.
// forget --scheme <ggml type> and convert share one path: the same GGUF,
// byte for byte; the default output is the input's name with -TYPE.gguf;
// the bitsandbytes/FP8 options are refused with it.
TEST(ConvertCli, ForgetOfAGgmlTypeWritesConvertsGguf) {
  TempDir dir;
  const fs::path model = dir.path() / "m";
  WriteQwen2Model(model);
  for (const std::string scheme : {"q4_k", "q6_k", "q4_k_m"}) {  // odd rows fall back to F16
    const fs::path converted = dir.path() / ("convert-" + scheme + ".gguf");
    ASSERT_EQ(RunAmn("convert -q " + Quote(model) + " -o " + Quote(converted) + " --scheme " +
                     scheme).exit_code,
              0);
    const CliResult forget = RunAmn("forget -q " + Quote(model) + " --scheme " + scheme);
    ASSERT_EQ(forget.exit_code, 0) << forget.err;
    const fs::path written = dir.path() / ("m-" + scheme + ".gguf");
    ASSERT_TRUE(fs::exists(written)) << written;
    EXPECT_TRUE(FileBytes(written) == FileBytes(converted)) << scheme;
  }
  const std::vector<std::string> before = dir.Entries();
  const CliResult stray = RunAmn("forget -q " + Quote(model) + " --scheme q4_k --block-size 32");
  EXPECT_EQ(stray.exit_code, 2) << stray.err;
  EXPECT_NE(stray.err.find("--block-size does not apply to the ggml type q4_k"), std::string::npos)
      << stray.err;
  EXPECT_EQ(RunAmn("forget -q " + Quote(model) + " --scheme nf5").err.find("GGUF"),
            std::string::npos);
  EXPECT_EQ(dir.Entries(), before);
}

// A finite value whose block scale overflows F16 (Q8_0: d = amax / 127 >
// 65504 from about 8.3e6): ggml writes Inf/NaN weights; amn refuses the
// tensor and leaves no output. Just below the edge, and with the tensor
// kept as F32, it converts.
TEST(ConvertCli, ValuesTooLargeForTheTypeAreRefused) {
  TempDir dir;
  const auto model_with = [&](float big) {
    std::vector<float> w(8 * 256);
    for (size_t i = 0; i < w.size(); ++i) w[i] = 0.01f * static_cast<float>(i % 17) - 0.08f;
    w[300] = big;
    std::vector<uint8_t> bytes(w.size() * 4);
    std::memcpy(bytes.data(), w.data(), bytes.size());
    const fs::path path =
        dir.path() / ("big-" + std::to_string(static_cast<int64_t>(big)) + ".safetensors");
    EXPECT_TRUE(SafetensorsBuilder()
                    .Add("model.layers.0.mlp.down_proj.weight", "F32", {8, 256}, bytes)
                    .Write(path));
    return path;
  };
  const fs::path too_big = model_with(1e7f), fits = model_with(5e6f);
  const fs::path out = dir.path() / "out.gguf";
  const CliResult refused =
      RunAmn("convert -q " + Quote(too_big) + " -o " + Quote(out) + " --scheme q8_0");
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  EXPECT_NE(refused.err.find("values too large for Q8_0"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("--tensor-type REGEX=f32"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("model.layers.0.mlp.down_proj.weight"), std::string::npos)
      << refused.err;
  EXPECT_FALSE(fs::exists(out));
  const CliResult kept = RunAmn("convert -q " + Quote(too_big) + " -o " + Quote(out) +
                                " --scheme q8_0 --tensor-type down_proj=f32");
  EXPECT_EQ(kept.exit_code, 0) << kept.err;
  const CliResult below = RunAmn("convert -q " + Quote(fits) + " -o " +
                                 Quote(dir.path() / "fits.gguf") + " --scheme q8_0");
  EXPECT_EQ(below.exit_code, 0) << below.err;
}

}  // namespace
}  // namespace amn::test
