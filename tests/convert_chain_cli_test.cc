// Quantized inputs converted to quantized outputs in one streaming pass
// (dequantized to F32, then encoded): every output is byte for byte what
// converting (or forgetting) the model `remember --to f32` writes, and each
// quantized GGUF tensor is ggml_quantize_chunk (tests/ggml_oracle.h) of the
// dequantized F32 values, which round to the fixture's golden BF16.
#include <gtest/gtest.h>

#include <cstdint>
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "amn/ggml_dequant.h"
#include "fixtures/safetensors_builder.h"
#include "tests/bnb_fixture_model.h"
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

// F32 bits rounded to BF16 as the fixtures' README says (nearest even).
std::vector<uint8_t> RoundToBf16(const std::vector<uint8_t>& f32) {
  std::vector<uint8_t> out(f32.size() / 2);
  for (size_t i = 0; i < f32.size() / 4; ++i) {
    const uint32_t bits = LoadLe32(f32.data() + 4 * i);
    const auto half = static_cast<uint16_t>((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16);
    out[2 * i] = static_cast<uint8_t>(half);
    out[2 * i + 1] = static_cast<uint8_t>(half >> 8);
  }
  return out;
}

// A GGUF v3 of a fixture's ggml blocks as a [n / cols, cols] weight named
// blk.0.ffn_gate.weight, beside an F32 norm.
fs::path WriteBlocksGguf(const fs::path& path, const GgufFixture& q, uint64_t cols) {
  GgufWriter w;
  w.Header(2, 1).KvStr("general.architecture", "llama");
  w.Tensor("blk.0.attn_norm.weight", {32}, 0, 0);
  w.Tensor("blk.0.ffn_gate.weight", {cols, q.n / cols}, q.type, 128);
  w.PadTo(32);
  const std::vector<uint8_t> norm = F32Bytes(32, 1.5f);
  w.Raw(norm.data(), norm.size()).PadTo(32);
  w.Raw(q.blocks.data(), q.blocks.size()).PadTo(32);
  WriteBytes(path, w.bytes());
  return path;
}

// A one-layer llama of FP8 weights: q_proj (rows permuted for llama.cpp)
// and gate_proj, each the fixture's codes with its scales, and a norm.
void WriteFp8Llama(const fs::path& dir, const Fp8Fixture& f) {
  fs::create_directories(dir);
  SafetensorsBuilder m;
  for (const std::string w : {"model.layers.0.self_attn.q_proj.weight",
                              "model.layers.0.mlp.gate_proj.weight"}) {
    m.Add(w, "F8_E4M3", {f.rows, f.cols}, f.weight);
    const std::string dtype = ScaleDtypeName(f.scale_dtype);
    if (f.scheme == 0) {
      m.Add(w + "_scale_inv", dtype, {(f.rows + 127) / 128, (f.cols + 127) / 128}, f.scales);
    } else if (f.scheme == 1) {
      m.Add(w + "_scale", dtype, {1}, f.scales);
    } else {
      m.Add(w + "_scale", dtype, {f.rows, 1}, f.scales);
    }
  }
  m.Add("model.norm.weight", "F32", {f.cols}, F32Bytes(f.cols, 1.0f));
  ASSERT_TRUE(m.Write(dir / "model.safetensors"));
  WriteText(dir / "config.json",
            Json({{"architectures", {"LlamaForCausalLM"}}, {"model_type", "llama"},
                  {"hidden_size", f.cols}, {"num_attention_heads", 4},
                  {"num_key_value_heads", 4}})
                .dump());
}

// GPTQ or AWQ (qwen2 names) from a packed-linear fixture.
void WritePackedQwen(const fs::path& dir, const PackedLinearFixture& f, bool awq) {
  fs::create_directories(dir);
  const std::string p = "model.layers.0.mlp.down_proj";
  const uint32_t groups = f.in / f.group_size;
  SafetensorsBuilder m;
  Json quant;
  if (awq) {
    m.Add(p + ".qweight", "I32", {f.in, f.out / 8}, f.qweight);
    m.Add(p + ".qzeros", "I32", {groups, f.out / 8}, f.qzeros);
    quant = {{"quant_method", "awq"}, {"bits", 4}, {"group_size", f.group_size},
             {"version", "gemm"}, {"zero_point", true}};
  } else {
    m.Add(p + ".qweight", "I32", {f.in * f.bits / 32, f.out}, f.qweight);
    m.Add(p + ".qzeros", "I32", {groups, f.out * f.bits / 32}, f.qzeros);
    m.Add(p + ".g_idx", "I32", {f.in}, f.g_idx);
    quant = {{"quant_method", "gptq"}, {"bits", f.bits}, {"group_size", f.group_size},
             {"desc_act", false}, {"sym", true}};
  }
  m.Add(p + ".scales", ScaleDtypeName(f.scale_dtype), {groups, f.out}, f.scales);
  m.Add("model.norm.weight", "F32", {f.in}, F32Bytes(f.in, 1.0f));
  ASSERT_TRUE(m.Write(dir / "model.safetensors"));
  WriteText(dir / "config.json", Json({{"architectures", {"Qwen2ForCausalLM"}},
                                       {"model_type", "qwen2"},
                                       {"torch_dtype", "float16"},
                                       {"quantization_config", quant}})
                                     .dump());
}

// bitsandbytes 4-bit (qwen2 names): the fixture's codes as a [n / 256, 256]
// weight.
void WriteBnbQwen(const fs::path& dir, const BnbFixture& f) {
  fs::create_directories(dir);
  SafetensorsBuilder m;
  AddBnb4Layer(m, f, "model.layers.0.mlp.up_proj.weight", {f.elements / 256, 256});
  m.Add("model.norm.weight", "F32", {256}, F32Bytes(256, 1.0f));
  ASSERT_TRUE(m.Write(dir / "model.safetensors"));
  const Json quant = {{"quant_method", "bitsandbytes"},
                      {"load_in_4bit", true},
                      {"bnb_4bit_quant_type", Bnb4QuantType(f)}};
  WriteText(dir / "config.json", Json({{"architectures", {"Qwen2ForCausalLM"}},
                                       {"model_type", "qwen2"},
                                       {"quantization_config", quant}})
                                     .dump());
}

// `model` (a directory or file) converted to `scheme` (a ggml type) in one
// pass is the bytes of converting its `remember --to f32` copy (same name,
// another directory); each quantized tensor is ggml_quantize_chunk of the
// copy's F32 GGUF (convert --scheme f32: permuted rows included), every
// other tensor that F32 GGUF's; -j does not matter. Returns the F32 GGUF's
// tensors by name, for the caller's value checks.
std::map<std::string, std::vector<uint8_t>> ExpectChainedGguf(const GgmlOracle& ggml,
                                                              const fs::path& model,
                                                              const std::string& scheme,
                                                              const fs::path& work) {
  std::map<std::string, std::vector<uint8_t>> f32_tensors;
  const fs::path direct = work / ("direct-" + scheme + ".gguf");
  const CliResult r = RunAmn("convert -j 3 --json " + Quote(model) + " -o " + Quote(direct) +
                             " --scheme " + scheme);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  if (r.exit_code != 0) return f32_tensors;
  // The copy keeps the model's name (general.name); a GGUF's is a .safetensors.
  const bool gguf = model.extension() == ".gguf";
  const fs::path plain =
      work / "plain" / (gguf ? model.stem().string() + ".safetensors" : model.filename().string());
  fs::create_directories(plain.parent_path());
  EXPECT_EQ(RunAmn("remember -q " + Quote(model) + " -o " + Quote(plain) + " --to f32").exit_code, 0);
  const fs::path via = work / ("via-" + scheme + ".gguf"), f32 = work / "f32.gguf";
  EXPECT_EQ(RunAmn("convert -q " + Quote(plain) + " -o " + Quote(via) + " --scheme " + scheme)
                .exit_code,
            0);
  EXPECT_EQ(RunAmn("convert -q --force " + Quote(plain) + " -o " + Quote(f32) + " --scheme f32")
                .exit_code,
            0);
  const std::vector<uint8_t> file = FileBytes(direct), via_file = FileBytes(via);
  // A GGUF input's own metadata is kept, a safetensors one's made from
  // config.json: from GGUF only the tensors are the same.
  if (!gguf) {
    EXPECT_TRUE(file == via_file) << "differs from converting the remembered F32 model";
  }
  const fs::path one = work / ("j1-" + scheme + ".gguf");
  EXPECT_EQ(RunAmn("convert -q -j 1 " + Quote(model) + " -o " + Quote(one) + " --scheme " + scheme)
                .exit_code,
            0);
  EXPECT_TRUE(FileBytes(one) == file) << "-j 1 differs from -j 3";

  GgmlView view, ref, via_view;
  EXPECT_TRUE(LoadWithGgml(ggml, direct, view)) << "ggml refused " << direct;
  EXPECT_TRUE(LoadWithGgml(ggml, via, via_view));
  EXPECT_EQ(view.tensors.size(), via_view.tensors.size());
  for (size_t i = 0; i < std::min(view.tensors.size(), via_view.tensors.size()); ++i) {
    const GgmlView::Tensor &a = view.tensors[i], &b = via_view.tensors[i];
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.type, b.type) << a.name;
    EXPECT_EQ(a.ne, b.ne) << a.name;
    EXPECT_TRUE(Slice(file, view.data_offset + a.offset, a.size) ==
                Slice(via_file, via_view.data_offset + b.offset, b.size))
        << a.name << " differs from converting the remembered F32 model";
  }
  EXPECT_TRUE(LoadWithGgml(ggml, f32, ref));
  const std::vector<uint8_t> ref_file = FileBytes(f32);
  for (const GgmlView::Tensor& t : ref.tensors) {
    f32_tensors[t.name] = Slice(ref_file, ref.data_offset + t.offset, t.size);
  }
  int quantized = 0;
  for (const GgmlView::Tensor& t : view.tensors) {
    SCOPED_TRACE(t.name);
    const std::vector<uint8_t> got = Slice(file, view.data_offset + t.offset, t.size);
    const std::vector<uint8_t>& values = f32_tensors[t.name];
    if (t.type == 0) {
      EXPECT_EQ(got, values);
      continue;
    }
    const GgmlTypeInfo* type = FindGgmlType(static_cast<uint32_t>(t.type));
    EXPECT_NE(type, nullptr);
    if (type == nullptr || !type->quantized) continue;  // an F16 fallback
    EXPECT_TRUE(got == ggml.Quantize(t.type, Floats(values), static_cast<int64_t>(t.ne[0])))
        << "bytes differ from ggml_quantize_chunk of the dequantized F32";
    ++quantized;
  }
  EXPECT_GT(quantized, 0);
  return f32_tensors;
}

// GGUF Q8_0 (and Q4_K, Q6_K) -> GGUF Q4_K / Q6_K / Q8_0: requantized in
// the pass; the dequantized values are the fixture's golden BF16 rounded.
TEST(ConvertChain, GgufBlocksRequantizedInOnePass) {
  const auto* ggml = AMN_GGML_ORACLE_OR_SKIP();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"smollm2_q8_0.bin", "q4_k"}, {"smollm2_q4_k.bin", "q8_0"}, {"smollm2_q6_k.bin", "q6_k"}};
  int checked = 0;
  for (const auto& [fixture, scheme] : cases) {
    SCOPED_TRACE(fixture + " -> " + scheme);
    GgufFixture q;
    if (!ReadGgufFixture(fixture, q)) continue;
    TempDir dir;
    const fs::path in = WriteBlocksGguf(dir.path() / "m.gguf", q, 256);
    const auto f32 = ExpectChainedGguf(*ggml, in, scheme, dir.path());
    ASSERT_TRUE(f32.contains("blk.0.ffn_gate.weight"));
    EXPECT_TRUE(RoundToBf16(f32.at("blk.0.ffn_gate.weight")) == q.golden_bf16)
        << "dequantized values are not the golden BF16";
    ++checked;
  }
  if (checked == 0) GTEST_SKIP() << "gguf_reference not found under " << FixturesDir();
}

// FP8 (every layout) -> GGUF Q6_K, llama q rows permuted after dequantizing.
TEST(ConvertChain, Fp8LlamaToQuantizedGgufPermutedAndRequantized) {
  const auto* ggml = AMN_GGML_ORACLE_OR_SKIP();
  const auto files = FixtureFiles("fp8_reference", ".bin");
  if (files.empty()) GTEST_SKIP() << "fp8_reference not found under " << FixturesDir();
  for (const fs::path& path : files) {
    SCOPED_TRACE(path.filename().string());
    const auto f = ReadFp8Fixture(path);
    ASSERT_TRUE(f);
    TempDir dir;
    const fs::path model = dir.path() / "Fp8-Llama";
    WriteFp8Llama(model, *f);
    const auto f32 = ExpectChainedGguf(*ggml, model, "q6_k", dir.path());
    ASSERT_TRUE(f32.contains("blk.0.ffn_gate.weight"));
    EXPECT_TRUE(RoundToBf16(f32.at("blk.0.ffn_gate.weight")) == f->expected)
        << "dequantized values are not the golden BF16";
    // F16 output of the permuted FP8 q rows: remember's F16, permuted.
    const fs::path f16 = dir.path() / "f16.gguf";
    EXPECT_EQ(RunAmn("convert -q " + Quote(model) + " -o " + Quote(f16)).exit_code, 0);
  }
}

// GPTQ, AWQ and bitsandbytes NF4/FP4 -> GGUF q4_k.
TEST(ConvertChain, PackedSchemesToQuantizedGguf) {
  const auto* ggml = AMN_GGML_ORACLE_OR_SKIP();
  int checked = 0;
  for (const fs::path& path : FixtureFiles("gptq_reference", ".bin")) {
    SCOPED_TRACE(path.filename().string());
    const auto f = ReadGptqFixture(path);
    ASSERT_TRUE(f);
    TempDir dir;
    WritePackedQwen(dir.path() / "gptq", *f, false);
    const auto f32 = ExpectChainedGguf(*ggml, dir.path() / "gptq", "q4_k", dir.path());
    EXPECT_TRUE(RoundToBf16(f32.at("blk.0.ffn_down.weight")) == TransposeU16(f->expected, f->in, f->out));
    ++checked;
  }
  for (const fs::path& path : FixtureFiles("awq_reference", ".bin")) {
    SCOPED_TRACE(path.filename().string());
    const auto f = ReadAwqFixture(path);
    ASSERT_TRUE(f);
    TempDir dir;
    WritePackedQwen(dir.path() / "awq", *f, true);
    const auto f32 = ExpectChainedGguf(*ggml, dir.path() / "awq", "q4_k", dir.path());
    EXPECT_TRUE(RoundToBf16(f32.at("blk.0.ffn_down.weight")) == TransposeU16(f->expected, f->in, f->out));
    ++checked;
  }
  for (const fs::path& path : FixtureFiles("bnb_reference", ".bin")) {
    SCOPED_TRACE(path.filename().string());
    const auto f = ReadBnbFixture(path);
    ASSERT_TRUE(f);
    if (f->format == 1 || f->elements % 256 != 0) continue;
    TempDir dir;
    WriteBnbQwen(dir.path() / "bnb", *f);
    const auto f32 = ExpectChainedGguf(*ggml, dir.path() / "bnb", "q4_k", dir.path());
    EXPECT_TRUE(RoundToBf16(f32.at("blk.0.ffn_up.weight")) == f->expected);
    ++checked;
  }
  if (checked == 0) GTEST_SKIP() << "gptq/awq/bnb fixtures not found under " << FixturesDir();
}

// GGUF and FP8 -> bitsandbytes / FP8 safetensors: `convert --scheme S`,
// `forget --scheme S` of the quantized model, and forget of its
// `remember --to f32` copy write the same file.
TEST(ConvertChain, QuantizedInputsToForgetSchemes) {
  GgufFixture q;
  const auto fp8 = FixtureFiles("fp8_reference", ".bin");
  if (!ReadGgufFixture("smollm2_q8_0.bin", q) || fp8.empty()) {
    GTEST_SKIP() << "fixtures not found under " << FixturesDir();
  }
  TempDir dir;
  const fs::path gguf = WriteBlocksGguf(dir.path() / "m.gguf", q, 256);
  const auto f = ReadFp8Fixture(fp8.front());
  ASSERT_TRUE(f);
  WriteFp8Llama(dir.path() / "fp8", *f);
  for (const std::string scheme : {"nf4", "fp4-dq", "int8", "fp8-fine-grained", "fp8"}) {
    SCOPED_TRACE(scheme);
    // GGUF: one file in, one file out.
    const fs::path plain = dir.path() / ("plain-" + scheme + ".safetensors");
    ASSERT_EQ(RunAmn("remember -q " + Quote(gguf) + " -o " + Quote(plain) + " --to f32").exit_code, 0);
    const fs::path by_plain = dir.path() / ("forget-plain-" + scheme + ".safetensors");
    const fs::path by_forget = dir.path() / ("forget-" + scheme + ".safetensors");
    const fs::path by_convert = dir.path() / ("convert-" + scheme + ".safetensors");
    CliResult r = RunAmn("forget -q " + Quote(plain) + " -o " + Quote(by_plain) + " --scheme " + scheme);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    r = RunAmn("forget -q " + Quote(gguf) + " -o " + Quote(by_forget) + " --scheme " + scheme);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    r = RunAmn("convert --json " + Quote(gguf) + " -o " + Quote(by_convert) + " --scheme " + scheme);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const Json summary = Json::parse(r.out);
    EXPECT_EQ(summary["scheme"], scheme);
    EXPECT_EQ(summary["quantized"].size(), 1u);  // blk.0.ffn_gate.weight
    EXPECT_TRUE(FileBytes(by_forget) == FileBytes(by_plain));
    EXPECT_TRUE(FileBytes(by_convert) == FileBytes(by_plain));
    // FP8 directory: the shard is the same (config.json's torch_dtype differs).
    const fs::path fp8_plain = dir.path() / ("fp8-plain-" + scheme);
    ASSERT_EQ(RunAmn("remember -q " + Quote(dir.path() / "fp8") + " -o " + Quote(fp8_plain) +
                     " --to f32").exit_code, 0);
    ASSERT_EQ(RunAmn("forget -q " + Quote(fp8_plain) + " -o " + Quote(fp8_plain.string() + "-q") +
                     " --scheme " + scheme).exit_code, 0);
    r = RunAmn("convert -q " + Quote(dir.path() / "fp8") + " -o " +
               Quote(fp8_plain.string() + "-c") + " --scheme " + scheme);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(FileBytes(fs::path(fp8_plain.string() + "-c") / "model.safetensors") ==
                FileBytes(fs::path(fp8_plain.string() + "-q") / "model.safetensors"));
  }
  // A forget scheme names a safetensors layout: refused for GGUF output.
  const CliResult refused = RunAmn("convert -q " + Quote(gguf) + " -o " +
                                   Quote(dir.path() / "x.gguf") + " --scheme nf4");
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  EXPECT_NE(refused.err.find("safetensors scheme"), std::string::npos) << refused.err;
  EXPECT_FALSE(fs::exists(dir.path() / "x.gguf"));
}

// PyTorch .pth -> GGUF F16 and .npz -> GGUF: each tensor is what remember
// writes of it (F16; 1-D stays F32, as llama.cpp's converter does), in
// ggml's dimension order.
TEST(ConvertChain, ArrayFormatsToGguf) {
  const auto* ggml = AMN_GGML_ORACLE_OR_SKIP();
  const fs::path pth = FixturesDir() / "pth_reference" / "algzoo_rnn_small.pth";
  const fs::path npz = FixturesDir() / "npz_reference" / "gemma_scope_small.npz";
  if (!fs::exists(pth) || !fs::exists(npz)) GTEST_SKIP() << "fixtures not found under " << FixturesDir();
  TempDir dir;
  for (const auto& [in, to] : std::vector<std::pair<fs::path, std::string>>{{pth, "f16"}, {npz, "f16"}}) {
    SCOPED_TRACE(in.filename().string());
    const fs::path out = dir.path() / (in.stem().string() + ".gguf");
    const fs::path plain16 = dir.path() / (in.stem().string() + "-16.safetensors");
    const fs::path plain32 = dir.path() / (in.stem().string() + "-32.safetensors");
    const CliResult r = RunAmn("convert -q " + Quote(in) + " -o " + Quote(out) + " --scheme " + to);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ASSERT_EQ(RunAmn("remember -q " + Quote(in) + " -o " + Quote(plain16) + " --to f16").exit_code, 0);
    ASSERT_EQ(RunAmn("remember -q " + Quote(in) + " -o " + Quote(plain32) + " --to f32").exit_code, 0);
    const ReadBack f16(plain16), f32(plain32);
    GgmlView view;
    ASSERT_TRUE(LoadWithGgml(*ggml, out, view));
    ASSERT_EQ(view.tensors.size(), f16.header.size() - (f16.header.contains("__metadata__") ? 1 : 0));
    const std::vector<uint8_t> file = FileBytes(out);
    for (const GgmlView::Tensor& t : view.tensors) {
      SCOPED_TRACE(t.name);
      const Json shape = f16.header[t.name]["shape"];
      std::vector<uint64_t> ne;
      for (auto d = shape.rbegin(); d != shape.rend(); ++d) ne.push_back(d->get<uint64_t>());
      if (ne.empty()) ne.push_back(1);
      EXPECT_EQ(t.ne, ne);
      const bool one_d = shape.size() <= 1;
      EXPECT_EQ(t.type, one_d ? 0 : 1);
      EXPECT_EQ(Slice(file, view.data_offset + t.offset, t.size),
                one_d ? f32.Data(t.name) : f16.Data(t.name));
    }
  }
}

}  // namespace
}  // namespace amn::test
