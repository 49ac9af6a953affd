// `amn convert` end to end. The GGUF it writes is read back by the real
// loaders, never only by amn: ggml's own gguf_init_from_file (the oracle
// library, tests/ggml_oracle.h) for every key, type, value, tensor name,
// type, shape and offset, and @huggingface/gguf through node
// (tests/gguf_readback.mjs). Tensor bytes are compared with `amn remember`
// of the same input and with the real-model fixtures' golden BF16;
// GGUF -> GGUF keeps the source's metadata (amn parse and ggml agree); bad
// input ends in one error line with nothing left behind.
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


// ---- safetensors -> GGUF --------------------------------------------------

TEST(ConvertCli, SafetensorsToGgufLoadsInGgmlWithRemembersBytes) {
  const auto* ggml = AMN_GGML_ORACLE_OR_SKIP();
  TempDir dir;
  const fs::path model = dir.path() / "Qwen2-Tiny";
  WriteQwen2Model(model);
  const fs::path out = dir.path() / "tiny.gguf";
  const CliResult r = RunAmn("convert " + Quote(model) + " -o " + Quote(out) +
                             " --scheme f16 --json -j 3 --gguf-kv general.author=amn-test");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json summary = Json::parse(r.out);
  EXPECT_EQ(summary["format"], "gguf");
  EXPECT_EQ(summary["scheme"], "f16");
  EXPECT_EQ(summary["architecture"], "qwen2");
  EXPECT_EQ(summary["renamed_tensors"], true);
  EXPECT_EQ(summary["types"]["F16"]["tensors"], 4);
  EXPECT_EQ(summary["types"]["F32"]["tensors"], 3);  // the 1-D tensors
  EXPECT_EQ(summary["bytes_written"], fs::file_size(out));

  GgmlView view;
  ASSERT_TRUE(LoadWithGgml(*ggml, out, view)) << "ggml's gguf_init_from_file refused " << out;
  EXPECT_EQ(view.version, 3u);
  EXPECT_EQ(view.alignment, 32u);
  EXPECT_EQ(view.data_offset % 32, 0u);
  const std::vector<std::string> keys = {
      "general.architecture", "qwen2.context_length", "qwen2.embedding_length",
      "qwen2.block_count", "qwen2.feed_forward_length", "qwen2.attention.head_count",
      "qwen2.attention.head_count_kv", "qwen2.vocab_size", "qwen2.rope.freq_base",
      "qwen2.attention.layer_norm_rms_epsilon", "general.name", "general.file_type",
      "general.author"};
  EXPECT_EQ(view.keys, keys);
  const Json& m = view.metadata;
  EXPECT_EQ(m["general.architecture"]["value"], "qwen2");
  EXPECT_EQ(m["general.name"]["value"], "Qwen2-Tiny");
  EXPECT_EQ(m["general.file_type"], Json({{"type", "u32"}, {"value", 1}}));  // MOSTLY_F16
  EXPECT_EQ(m["qwen2.context_length"], Json({{"type", "u32"}, {"value", 4096}}));
  EXPECT_EQ(m["qwen2.attention.head_count_kv"], Json({{"type", "u32"}, {"value", 2}}));
  EXPECT_EQ(m["qwen2.rope.freq_base"], Json({{"type", "f32"}, {"value", 1000000.0}}));
  EXPECT_EQ(m["qwen2.attention.layer_norm_rms_epsilon"]["value"], static_cast<double>(1e-6f));
  EXPECT_EQ(m["general.author"]["value"], "amn-test");

  // llama.cpp's names, ne0 = the innermost (row) dimension, F16 weights
  // and F32 1-D tensors, each offset the padded end of the one before.
  std::map<std::string, std::pair<int, std::vector<uint64_t>>> expected = {
      {"token_embd.weight", {1, {32, 40}}},  {"blk.0.attn_q.weight", {1, {32, 32}}},
      {"blk.0.attn_q.bias", {0, {32}}},      {"blk.0.ffn_down.weight", {1, {7, 5}}},
      {"blk.0.attn_norm.weight", {0, {32}}}, {"output_norm.weight", {0, {32}}},
      {"output.weight", {1, {32, 40}}}};
  ASSERT_EQ(view.tensors.size(), expected.size());
  uint64_t next = 0;
  for (const GgmlView::Tensor& t : view.tensors) {
    ASSERT_TRUE(expected.contains(t.name)) << t.name;
    EXPECT_EQ(t.type, expected[t.name].first) << t.name;
    EXPECT_EQ(t.ne, expected[t.name].second) << t.name;
    EXPECT_EQ(t.offset, next) << t.name;
    next = (t.offset + t.size + 31) / 32 * 32;
  }
  EXPECT_EQ(view.data_offset + next, fs::file_size(out));  // the last tensor padded too

  // The bytes: remember --to f16 (weights) and --to f32 (1-D tensors).
  const fs::path f16 = dir.path() / "f16", f32 = dir.path() / "f32";
  ASSERT_EQ(RunAmn("remember -q " + Quote(model) + " -o " + Quote(f16) + " --to f16").exit_code, 0);
  ASSERT_EQ(RunAmn("remember -q " + Quote(model) + " -o " + Quote(f32) + " --to f32").exit_code, 0);
  const ReadBack rf16(f16 / "model.safetensors"), rf32(f32 / "model.safetensors");
  const std::map<std::string, std::string> hf = {
      {"token_embd.weight", "model.embed_tokens.weight"},
      {"blk.0.attn_q.weight", "model.layers.0.self_attn.q_proj.weight"},
      {"blk.0.attn_q.bias", "model.layers.0.self_attn.q_proj.bias"},
      {"blk.0.ffn_down.weight", "model.layers.0.mlp.down_proj.weight"},
      {"blk.0.attn_norm.weight", "model.layers.0.input_layernorm.weight"},
      {"output_norm.weight", "model.norm.weight"},
      {"output.weight", "lm_head.weight"}};
  const std::vector<uint8_t> file = FileBytes(out);
  for (const GgmlView::Tensor& t : view.tensors) {
    const ReadBack& ref = t.type == 1 ? rf16 : rf32;
    EXPECT_EQ(Slice(file, view.data_offset + t.offset, t.size), ref.Data(hf.at(t.name))) << t.name;
  }
}

TEST(ConvertCli, HuggingFaceGgufReadsWhatGgmlReads) {
  const auto* ggml = AMN_GGML_ORACLE_OR_SKIP();
  TempDir dir;
  const fs::path model = dir.path() / "m";
  WriteQwen2Model(model);
  const fs::path meta = dir.path() / "meta.json";
  WriteText(meta, R"({"tokenizer.ggml.tokens": ["a", "b", "<s>"], "tokenizer.ggml.scores": [0.5, -1, 2],
                      "tokenizer.ggml.token_type": [1, 3, 6], "general.tags": [],
                      "x.u16": {"type": "u16", "value": 7}, "x.flag": true, "x.big": -5000000000})");
  const fs::path out = dir.path() / "m.gguf";
  const CliResult r = RunAmn("convert -q " + Quote(model) + " -o " + Quote(out) + " --scheme bf16 " +
                             "--gguf-metadata " + Quote(meta) + " --gguf-kv x.i8=i8:-3 " +
                             "--gguf-kv x.f64=f64:0.1 --gguf-kv x.u64=u64:7 --gguf-kv x.s=str:12");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  GgmlView view;
  ASSERT_TRUE(LoadWithGgml(*ggml, out, view));
  const Json& m = view.metadata;
  EXPECT_EQ(m["general.file_type"]["value"], 32);  // MOSTLY_BF16
  EXPECT_EQ(m["tokenizer.ggml.tokens"]["value"],
            Json({{"type", "string"}, {"count", 3}, {"first", {"a", "b", "<s>"}}}));
  EXPECT_EQ(m["tokenizer.ggml.scores"]["value"]["type"], "f32");
  EXPECT_EQ(m["tokenizer.ggml.token_type"]["value"],
            Json({{"type", "i32"}, {"count", 3}, {"first", {1, 3, 6}}}));
  EXPECT_EQ(m["x.u16"], Json({{"type", "u16"}, {"value", 7}}));
  EXPECT_EQ(m["x.flag"], Json({{"type", "bool"}, {"value", true}}));
  EXPECT_EQ(m["x.big"], Json({{"type", "i64"}, {"value", -5000000000LL}}));
  EXPECT_EQ(m["x.i8"], Json({{"type", "i8"}, {"value", -3}}));
  EXPECT_EQ(m["x.f64"], Json({{"type", "f64"}, {"value", 0.1}}));
  EXPECT_EQ(m["x.u64"], Json({{"type", "u64"}, {"value", 7}}));
  EXPECT_EQ(m["x.s"], Json({{"type", "string"}, {"value", "12"}}));
  // amn parse reads the same keys, types and values as ggml.
  EXPECT_EQ(Parse(out)["metadata"], view.metadata);

  AMN_HF_GGUF_OR_SKIP(hf, out);
  EXPECT_EQ(hf["version"], 3);
  EXPECT_EQ(hf["kv_count"], std::to_string(view.keys.size()));
  EXPECT_EQ(hf["tensor_data_offset"], std::to_string(view.data_offset));
  std::vector<std::string> hf_keys;
  for (const auto& [key, entry] : hf["metadata"].items()) hf_keys.push_back(key);
  std::vector<std::string> keys = view.keys;
  std::sort(keys.begin(), keys.end());
  std::sort(hf_keys.begin(), hf_keys.end());
  EXPECT_EQ(hf_keys, keys);
  static const std::map<std::string, int> kTypeIds = {
      {"u8", 0}, {"i8", 1}, {"u16", 2}, {"i16", 3}, {"u32", 4}, {"i32", 5}, {"f32", 6},
      {"bool", 7}, {"string", 8}, {"array", 9}, {"u64", 10}, {"i64", 11}, {"f64", 12}};
  for (const std::string& key : view.keys) {
    EXPECT_EQ(hf["metadata"][key]["type"], kTypeIds.at(m[key]["type"])) << key;
  }
  EXPECT_EQ(hf["metadata"]["x.big"]["value"], "-5000000000");
  EXPECT_EQ(hf["metadata"]["tokenizer.ggml.tokens"]["value"]["items"], Json({"a", "b", "<s>"}));
  EXPECT_EQ(hf["metadata"]["general.tags"]["value"]["count"], 0);
  ASSERT_EQ(hf["tensors"].size(), view.tensors.size());
  for (size_t i = 0; i < view.tensors.size(); ++i) {
    const Json& t = hf["tensors"][i];
    EXPECT_EQ(t["name"], view.tensors[i].name);
    EXPECT_EQ(t["dtype"], view.tensors[i].type);
    EXPECT_EQ(t["offset"], std::to_string(view.tensors[i].offset));
    std::vector<uint64_t> shape;
    for (const Json& d : t["shape"]) shape.push_back(std::stoull(d.get<std::string>()));
    while (shape.size() > 1 && shape.back() == 1) shape.pop_back();
    EXPECT_EQ(shape, view.tensors[i].ne) << view.tensors[i].name;
  }
}

// Nested arrays are valid GGUF (the spec and gguf-py allow them) and the
// writer writes them; ggml's loader refuses any array of arrays, so they
// are checked with amn parse and @huggingface/gguf only.
TEST(ConvertCli, NestedArraysWrittenForReadersThatTakeThem) {
  TempDir dir;
  const fs::path model = dir.path() / "m";
  WriteQwen2Model(model);
  const fs::path meta = dir.path() / "meta.json";
  WriteText(meta, R"({"x.nested": [[1, 2], [3]]})");
  const fs::path out = dir.path() / "m.gguf";
  ASSERT_EQ(RunAmn("convert -q " + Quote(model) + " -o " + Quote(out) + " --gguf-metadata " +
                   Quote(meta)).exit_code, 0);
  const Json value = Parse(out)["metadata"]["x.nested"];
  EXPECT_EQ(value["type"], "array");
  EXPECT_EQ(value["value"]["type"], "array");
  EXPECT_EQ(value["value"]["count"], 2);
  EXPECT_EQ(value["value"]["first"][0],
            Json({{"type", "i32"}, {"count", 2}, {"first", {1, 2}}}));
  if (const GgmlOracle* ggml = GgmlOracle::Get()) {
    GgmlView view;
    EXPECT_FALSE(LoadWithGgml(*ggml, out, view)) << "ggml now takes nested arrays: test them there";
  }
  AMN_HF_GGUF_OR_SKIP(hf, out);
  EXPECT_EQ(hf["metadata"]["x.nested"]["value"]["count"], 2);
  EXPECT_EQ(hf["metadata"]["x.nested"]["value"]["items"][1]["items"], Json({3}));
}

// A GGUF v3 input: a scalar of every type, a tokenizer-sized string array,
// an i32 array, general.alignment 64, the quantized model's file type and
// quantization version, the fixture's Q4_K blocks as a 256x256 weight and
// a 1-D F32 norm.
fs::path WriteQuantizedGguf(const fs::path& dir, const GgufFixture& q) {
  GgufWriter w;
  const uint64_t n_tokens = 5000;
  w.Header(2, 17);
  w.KvStr("general.architecture", "llama").KvStr("general.name", "fixture");
  w.KvU32("general.alignment", 64).KvU32("general.file_type", 15).KvU32("general.quantization_version", 2);
  w.Str("x.u8").U32(0).Raw("\x07", 1);
  w.Str("x.i8").U32(1).Raw("\xfe", 1);
  uint16_t u16 = 65535;
  w.Str("x.u16").U32(2).Raw(&u16, 2);
  int16_t i16 = -300;
  w.Str("x.i16").U32(3).Raw(&i16, 2);
  int32_t i32 = -70000;
  w.Str("x.i32").U32(5).Raw(&i32, 4);
  float f32 = 0.25f;
  w.Str("x.f32").U32(6).Raw(&f32, 4);
  w.Str("x.bool").U32(7).Raw("\x01", 1);
  w.Str("x.u64").U32(10).U64(uint64_t{1} << 40);
  int64_t i64 = -(int64_t{1} << 40);
  w.Str("x.i64").U32(11).Raw(&i64, 8);
  double f64 = 1.0 / 3.0;
  w.Str("x.f64").U32(12).Raw(&f64, 8);
  w.Str("tokenizer.ggml.tokens").U32(9).U32(8).U64(n_tokens);
  for (uint64_t i = 0; i < n_tokens; ++i) w.Str("tok" + std::to_string(i));
  w.Str("tokenizer.ggml.token_type").U32(9).U32(5).U64(4);
  for (int32_t v : {1, 1, 3, 6}) w.Raw(&v, 4);
  // The norm first: its 400 bytes pad to 448, where the weight starts.
  w.Tensor("blk.0.attn_norm.weight", {100}, 0, 0);
  w.Tensor("blk.0.attn_q.weight", {256, q.n / 256}, q.type, 448);
  w.PadTo(64);
  const std::vector<uint8_t> norm = F32Bytes(100, 1.5f);
  w.Raw(norm.data(), norm.size()).PadTo(64);
  w.Raw(q.blocks.data(), q.blocks.size()).PadTo(64);
  const fs::path path = dir / "fixture-Q4_K.gguf";
  WriteBytes(path, w.bytes());
  return path;
}

TEST(ConvertCli, GgufToGgufKeepsMetadataAndDequantizesToGoldenBytes) {
  const auto* ggml = AMN_GGML_ORACLE_OR_SKIP();
  GgufFixture q;
  if (!ReadGgufFixture("smollm2_q4_k.bin", q)) {
    GTEST_SKIP() << "fixture not found under " << FixturesDir() << "; set AMN_FIXTURES_DIR";
  }
  ASSERT_EQ(q.type, 12u);  // Q4_K
  TempDir dir;
  const fs::path in = WriteQuantizedGguf(dir.path(), q);
  const std::vector<uint8_t> in_bytes = FileBytes(in);
  const fs::path out = dir.path() / "out-bf16.gguf";
  const CliResult r = RunAmn("convert " + Quote(in) + " -o " + Quote(out) + " --scheme bf16 --json -j 1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(FileBytes(in), in_bytes);  // the input is never modified

  GgmlView before, after;
  ASSERT_TRUE(LoadWithGgml(*ggml, in, before));
  ASSERT_TRUE(LoadWithGgml(*ggml, out, after)) << "ggml refused the output";
  EXPECT_EQ(after.alignment, 64u);  // general.alignment honoured
  EXPECT_EQ(after.data_offset % 64, 0u);
  // The source's keys in their order, quantization_version dropped,
  // file_type now MOSTLY_BF16; every other value as it was.
  std::vector<std::string> keys = before.keys;
  std::erase(keys, "general.quantization_version");
  EXPECT_EQ(after.keys, keys);
  Json expected = before.metadata;
  expected.erase("general.quantization_version");
  expected["general.file_type"]["value"] = 32;
  EXPECT_EQ(after.metadata, expected);
  EXPECT_EQ(after.metadata["tokenizer.ggml.tokens"]["value"]["count"], 5000);
  // amn parse: the same KV as ggml sees in both files.
  EXPECT_EQ(Parse(out)["metadata"], after.metadata);
  EXPECT_EQ(Parse(in)["metadata"], before.metadata);

  ASSERT_EQ(after.tensors.size(), 2u);
  EXPECT_EQ(after.tensors[0].name, "blk.0.attn_norm.weight");
  EXPECT_EQ(after.tensors[0].type, 0);  // 1-D stays F32
  EXPECT_EQ(after.tensors[0].offset, 0u);
  EXPECT_EQ(after.tensors[1].name, "blk.0.attn_q.weight");
  EXPECT_EQ(after.tensors[1].type, 30);  // BF16
  EXPECT_EQ(after.tensors[1].ne, (std::vector<uint64_t>{256, q.n / 256}));
  EXPECT_EQ(after.tensors[1].offset, 448u);  // 400 bytes padded to 64
  EXPECT_EQ(after.data_offset + 448 + after.tensors[1].size, fs::file_size(out));
  const std::vector<uint8_t> file = FileBytes(out);
  EXPECT_EQ(Slice(file, after.data_offset, 400), F32Bytes(100, 1.5f));
  EXPECT_EQ(Slice(file, after.data_offset + 400, 48), std::vector<uint8_t>(48, 0));
  EXPECT_EQ(Slice(file, after.data_offset + 448, after.tensors[1].size), q.golden_bf16)
      << "Q4_K dequantized in the convert pass differs from gguf-py's golden BF16";

  // Requantized in the pass (tests/convert_chain_cli_test.cc checks the bytes).
  const CliResult requant = RunAmn("convert -q " + Quote(in) + " -o " +
                                   Quote(dir.path() / "q8.gguf") + " --scheme q8_0");
  EXPECT_EQ(requant.exit_code, 0) << requant.err;
  GgmlView q8;
  ASSERT_TRUE(LoadWithGgml(*ggml, dir.path() / "q8.gguf", q8));
  EXPECT_EQ(q8.tensors[1].type, 8);

  // -j does not change a byte.
  const fs::path out4 = dir.path() / "out-j4.gguf";
  ASSERT_EQ(RunAmn("convert -q -j 4 " + Quote(in) + " -o " + Quote(out4) + " --scheme bf16").exit_code, 0);
  EXPECT_EQ(FileBytes(out4), file);
}

// ---- quantized safetensors, sharded, -> GGUF ------------------------------

// Every fp8_reference fixture as a two-shard Qwen2 directory (the FP8
// weight and its scales in one shard, a BF16 norm in the other, with the
// index): the GGUF's weight is the canonical library's golden BF16,
// dequantized in the convert pass.
TEST(ConvertCli, ShardedFp8FixturesToGgufGiveTheGoldenBf16) {
  const auto* ggml = AMN_GGML_ORACLE_OR_SKIP();
  const auto files = FixtureFiles("fp8_reference", ".bin");
  if (files.empty()) GTEST_SKIP() << "fp8_reference not found under " << FixturesDir();
  const std::string w = "model.layers.0.mlp.gate_proj.weight";
  int checked = 0;
  for (const fs::path& path : files) {
    const auto f = ReadFp8Fixture(path);
    ASSERT_TRUE(f) << path << ": malformed fixture";
    TempDir dir;
    const fs::path model = dir.path() / "fp8-model";
    fs::create_directories(model);
    SafetensorsBuilder a, b;
    a.Add(w, "F8_E4M3", {f->rows, f->cols}, f->weight);
    const std::string dtype = ScaleDtypeName(f->scale_dtype);
    if (f->scheme == 0) {
      a.Add(w + "_scale_inv", dtype, {(f->rows + 127) / 128, (f->cols + 127) / 128}, f->scales);
    } else if (f->scheme == 1) {
      a.Add(w + "_scale", dtype, {1}, f->scales);
    } else {
      a.Add(w + "_scale", dtype, {f->rows, 1}, f->scales);
    }
    b.Add("model.norm.weight", "F32", {f->cols}, F32Bytes(f->cols, 1.0f));
    ASSERT_TRUE(a.Write(model / "model-00001-of-00002.safetensors"));
    ASSERT_TRUE(b.Write(model / "model-00002-of-00002.safetensors"));
    Json index = {{"metadata", Json::object()}, {"weight_map", Json::object()}};
    for (const std::string& n : a.Names()) index["weight_map"][n] = "model-00001-of-00002.safetensors";
    index["weight_map"]["model.norm.weight"] = "model-00002-of-00002.safetensors";
    WriteText(model / "model.safetensors.index.json", index.dump());
    WriteText(model / "config.json", R"({"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2"})");
    const fs::path out = dir.path() / "out.gguf";
    const CliResult r = RunAmn("convert -q " + Quote(model) + " -o " + Quote(out) + " --scheme bf16");
    ASSERT_EQ(r.exit_code, 0) << path.filename() << ": " << r.err;
    GgmlView view;
    ASSERT_TRUE(LoadWithGgml(*ggml, out, view)) << path.filename();
    ASSERT_EQ(view.tensors.size(), 2u) << path.filename();  // scales consumed, not written
    const std::vector<uint8_t> file = FileBytes(out);
    bool found = false;
    for (const GgmlView::Tensor& t : view.tensors) {
      if (t.name != "blk.0.ffn_gate.weight") continue;
      found = true;
      EXPECT_EQ(t.type, 30) << path.filename();
      EXPECT_EQ(t.ne, (std::vector<uint64_t>{f->cols, f->rows})) << path.filename();
      EXPECT_EQ(Slice(file, view.data_offset + t.offset, t.size), f->expected) << path.filename();
    }
    EXPECT_TRUE(found) << path.filename();
    ++checked;
  }
  EXPECT_EQ(checked, 4);
}

// ---- llama: q/k rows permuted as llama.cpp's converter does --------------

// F32 [rows, cols] whose element (r, c) is r * 1000 + c: a row says where
// it came from.
std::vector<uint8_t> RowTagged(uint64_t rows, uint64_t cols) {
  std::vector<uint8_t> out(rows * cols * 4);
  for (uint64_t r = 0; r < rows; ++r) {
    for (uint64_t c = 0; c < cols; ++c) {
      const float v = static_cast<float>(r * 1000 + c);
      std::memcpy(out.data() + 4 * (r * cols + c), &v, 4);
    }
  }
  return out;
}

// LlamaModel.permute in convert_hf_to_gguf.py:
// w.reshape(n_head, 2, rows // n_head // 2, cols).swapaxes(1, 2).reshape(rows, cols)
// spelled out as the index map numpy applies: out[h, a, b] = in[h, b, a].
std::vector<uint8_t> LlamaPermute(const std::vector<uint8_t>& w, uint64_t rows, uint64_t cols,
                                  uint64_t heads, uint64_t elem_bytes = 4) {
  const uint64_t half = rows / heads / 2, row_bytes = cols * elem_bytes;
  std::vector<uint8_t> out(w.size());
  for (uint64_t h = 0; h < heads; ++h) {
    for (uint64_t a = 0; a < half; ++a) {
      for (uint64_t b = 0; b < 2; ++b) {
        const uint64_t out_row = (h * half + a) * 2 + b, in_row = (h * 2 + b) * half + a;
        std::memcpy(out.data() + out_row * row_bytes, w.data() + in_row * row_bytes, row_bytes);
      }
    }
  }
  return out;
}

TEST(ConvertCli, LlamaQkRowsPermutedAsLlamaCppConverts) {
  const auto* ggml = AMN_GGML_ORACLE_OR_SKIP();
  TempDir dir;
  const fs::path model = dir.path() / "Llama-Tiny";
  fs::create_directories(model);
  // 4 heads of 6 (q: 24 rows), 2 kv heads (k: 12 rows), 16 columns.
  SafetensorsBuilder()
      .Add("model.layers.0.self_attn.q_proj.weight", "F32", {24, 16}, RowTagged(24, 16))
      .Add("model.layers.0.self_attn.k_proj.weight", "F32", {12, 16}, RowTagged(12, 16))
      .Add("model.layers.0.self_attn.v_proj.weight", "F32", {12, 16}, RowTagged(12, 16))
      .Add("model.layers.0.self_attn.q_proj.bias", "F32", {24}, RowTagged(24, 1))
      .Write(model / "model.safetensors");
  WriteText(model / "config.json",
            R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 16,
                "num_attention_heads": 4, "num_key_value_heads": 2})");
  const fs::path out = dir.path() / "llama.gguf";
  const CliResult r = RunAmn("convert " + Quote(model) + " -o " + Quote(out) + " --scheme f32 --json -j 3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json summary = Json::parse(r.out);
  EXPECT_EQ(summary["tensors_written"], 4);
  EXPECT_EQ(summary["types"]["F32"]["tensors"], 4);
  GgmlView view;
  ASSERT_TRUE(LoadWithGgml(*ggml, out, view));
  EXPECT_EQ(view.metadata["general.architecture"]["value"], "llama");
  const std::vector<uint8_t> file = FileBytes(out);
  std::map<std::string, std::vector<uint8_t>> expected = {
      {"blk.0.attn_q.weight", LlamaPermute(RowTagged(24, 16), 24, 16, 4)},
      {"blk.0.attn_k.weight", LlamaPermute(RowTagged(12, 16), 12, 16, 2)},
      {"blk.0.attn_v.weight", RowTagged(12, 16)},  // v is not permuted
      {"blk.0.attn_q.bias", LlamaPermute(RowTagged(24, 1), 24, 1, 4)}};
  ASSERT_EQ(view.tensors.size(), expected.size());
  for (const GgmlView::Tensor& t : view.tensors) {
    ASSERT_TRUE(expected.contains(t.name)) << t.name;
    EXPECT_EQ(Slice(file, view.data_offset + t.offset, t.size), expected[t.name]) << t.name;
  }
  EXPECT_NE(expected["blk.0.attn_q.weight"], RowTagged(24, 16));  // the permutation moves rows
  // Rows are gathered per chunk and written in order whatever the threads.
  const fs::path out1 = dir.path() / "llama-j1.gguf";
  ASSERT_EQ(RunAmn("convert -q -j 1 " + Quote(model) + " -o " + Quote(out1) + " --scheme f32").exit_code, 0);
  EXPECT_EQ(FileBytes(out1), file);

  // Converted on the way (F32 -> F16): remember's F16 rows, permuted.
  const fs::path f16 = dir.path() / "llama-f16.gguf", plain = dir.path() / "plain";
  ASSERT_EQ(RunAmn("convert -q " + Quote(model) + " -o " + Quote(f16) + " --scheme f16").exit_code, 0);
  ASSERT_EQ(RunAmn("remember -q " + Quote(model) + " -o " + Quote(plain) + " --to f16").exit_code, 0);
  const ReadBack ref(plain / "model.safetensors");
  GgmlView v16;
  ASSERT_TRUE(LoadWithGgml(*ggml, f16, v16));
  const std::vector<uint8_t> file16 = FileBytes(f16);
  for (const GgmlView::Tensor& t : v16.tensors) {
    if (t.name != "blk.0.attn_q.weight") continue;
    EXPECT_EQ(t.type, 1);
    EXPECT_EQ(Slice(file16, v16.data_offset + t.offset, t.size),
              LlamaPermute(ref.Data("model.layers.0.self_attn.q_proj.weight"), 24, 16, 4, 2));
  }
}

// A quantized llama q weight (FP8) is dequantized, then its rows permuted
// in the pass: remember's F16 rows, permuted as llama.cpp's converter does.
TEST(ConvertCli, QuantizedLlamaQkPermutedAfterDequantizing) {
  const auto* ggml = AMN_GGML_ORACLE_OR_SKIP();
  const auto files = FixtureFiles("fp8_reference", ".bin");
  if (files.empty()) GTEST_SKIP() << "fp8_reference not found under " << FixturesDir();
  for (const fs::path& path : files) {
    SCOPED_TRACE(path.filename().string());
    const auto f = ReadFp8Fixture(path);
    ASSERT_TRUE(f);
    TempDir dir;
    const fs::path model = dir.path() / "m";
    fs::create_directories(model);
    const std::string w = "model.layers.0.self_attn.q_proj.weight";
    SafetensorsBuilder m;
    m.Add(w, "F8_E4M3", {f->rows, f->cols}, f->weight);
    const std::string dtype = ScaleDtypeName(f->scale_dtype);
    if (f->scheme == 0) {
      m.Add(w + "_scale_inv", dtype, {(f->rows + 127) / 128, (f->cols + 127) / 128}, f->scales);
    } else if (f->scheme == 1) {
      m.Add(w + "_scale", dtype, {1}, f->scales);
    } else {
      m.Add(w + "_scale", dtype, {f->rows, 1}, f->scales);
    }
    ASSERT_TRUE(m.Write(model / "model.safetensors"));
    WriteText(model / "config.json",
              R"({"architectures": ["LlamaForCausalLM"], "num_attention_heads": 2})");
    const fs::path out = dir.path() / "o.gguf", plain = dir.path() / "plain";
    const CliResult r = RunAmn("convert -q -j 3 " + Quote(model) + " -o " + Quote(out));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ASSERT_EQ(RunAmn("remember -q " + Quote(model) + " -o " + Quote(plain) + " --to f16").exit_code,
              0);
    const ReadBack ref(plain / "model.safetensors");
    GgmlView view;
    ASSERT_TRUE(LoadWithGgml(*ggml, out, view));
    ASSERT_EQ(view.tensors.size(), 1u);
    EXPECT_EQ(view.tensors[0].name, "blk.0.attn_q.weight");
    EXPECT_EQ(view.tensors[0].type, 1);
    EXPECT_EQ(Slice(FileBytes(out), view.data_offset + view.tensors[0].offset, view.tensors[0].size),
              LlamaPermute(ref.Data(w), f->rows, f->cols, 2, 2));
  }
}

// ---- safetensors output goes through remember ---------------------------

TEST(ConvertCli, SafetensorsOutputIsRemembers) {
  TempDir dir;
  const fs::path model = dir.path() / "m";
  WriteQwen2Model(model);
  ASSERT_EQ(RunAmn("convert -q " + Quote(model) + " -o " + Quote(dir.path() / "c") + " --scheme f32")
                .exit_code, 0);
  ASSERT_EQ(RunAmn("remember -q " + Quote(model) + " -o " + Quote(dir.path() / "r") + " --to f32")
                .exit_code, 0);
  EXPECT_EQ(FileBytes(dir.path() / "c" / "model.safetensors"),
            FileBytes(dir.path() / "r" / "model.safetensors"));
  EXPECT_EQ(SlurpText(dir.path() / "c" / "config.json"), SlurpText(dir.path() / "r" / "config.json"));
}

// ---- bad input ------------------------------------------------------------

// ---- quantized GGUF output ------------------------------------------------

// A Llama model of real SmolLM2 weights (the Q4_K fixture's golden BF16,
// 256 x 256): q/k are permuted on the way, ffn_down has rows of 96 (a
// multiple of 32, not of 256), and `odd` adds a weight with rows of 48 (no
// 32-element block fits).
TEST(ConvertCli, BadInputOneLineNothingLeftBehind) {
  TempDir dir;
  const fs::path model = dir.path() / "m";
  WriteQwen2Model(model);
  GgufWriter big;  // a big-endian GGUF: version 3 byte-swapped
  big.U32(0x46554747).U32(0x03000000).U64(0).U64(0);
  WriteBytes(dir.path() / "big.gguf", big.bytes());
  GgufWriter v1(1);  // GGUF v1: 32-bit lengths, which a v3 file cannot take as they are
  v1.Header(0, 1).KvStr("general.name", "old");
  WriteBytes(dir.path() / "v1.gguf", v1.bytes());
  SafetensorsBuilder()
      .Add("mask", "U8", {4}, {1, 0, 1, 0})
      .Write(dir.path() / "u8.safetensors");
  const std::vector<std::string> before = dir.Entries();
  const fs::path out = dir.path() / "o.gguf";
  struct Case {
    std::string args, message;
    int code;
  };
  const std::vector<Case> cases = {
      {Quote(model) + " -o " + Quote(out) + " --to onnx", "onnx", 2},
      {Quote(dir.path() / "big.gguf") + " -o " + Quote(out), "big-endian", 1},
      {Quote(dir.path() / "v1.gguf") + " -o " + Quote(out), "GGUF v1 input to GGUF output", 1},
      {Quote(dir.path() / "u8.safetensors") + " -o " + Quote(out),
       "tensor 'mask' is U8, which GGUF has no type for", 1},
      {Quote(model) + " -o " + Quote(out) + " --gguf-kv novalue", "expected key=value", 2},
      {Quote(model) + " -o " + Quote(out) + " --gguf-kv x=u8:300", "not a u8", 2},
      {Quote(model) + " -o " + Quote(out) + " --gguf-kv x=q7:1", "", 0},  // "q7:1" is a string
      {Quote(model) + " -o " + Quote(out) + " --gguf-kv general.alignment=u32:48 --force",
       "general.alignment", 2},
      {Quote(model) + " -o " + Quote(model), "would overwrite or nest inside the input", 2},
      // The 5 x 7 down_proj: rows of 7 have no Q8_0 fallback in llama-quantize.
      {Quote(model) + " -o " + Quote(out) + " --scheme q8_0 --force",
       "tensor 'blk.0.ffn_down.weight': rows of 7 are not a multiple of Q8_0's block of 32 and "
       "llama-quantize has no fallback type for it",
       1},
      {Quote(model) + " -o " + Quote(out) + " --scheme iq2_xxs --force",
       "--scheme iq2_xxs needs --imatrix FILE", 2},
      {Quote(model) + " -o " + Quote(out) + " --scheme q2_k_s --force",
       "or a llama-quantize mixture (q4_k_m, ...)", 2},
      {Quote(model) + " -o " + Quote(dir.path() / "o.safetensors") + " --scheme q4_k",
       "is a GGUF type", 2},
      {Quote(model) + " -o " + Quote(out) + " --scheme f8 --force", "is not f32, f16, bf16", 2},
      {Quote(model) + " -o " + Quote(dir.path() / "o.npz") + " --scheme bf16",
       "numpy has no bfloat16", 2},
      {Quote(model) + " -o " + Quote(dir.path() / "o.safetensors") + " --gguf-kv a=1",
       "for GGUF output", 2},
      {Quote(model) + " -o " + Quote(out), "already exists", 2},  // after the case that wrote it
  };
  for (const Case& c : cases) {
    const CliResult r = RunAmn("convert -q " + c.args);
    EXPECT_EQ(r.exit_code, c.code) << c.args << "\n" << r.err;
    if (c.code == 0) continue;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.args << "\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  std::vector<std::string> after = dir.Entries();
  std::erase(after, "o.gguf");  // the one good case
  EXPECT_EQ(after, before);
}

}  // namespace
}  // namespace amn::test
