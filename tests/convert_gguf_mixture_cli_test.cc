// `amn convert --scheme q4_k_m` (the llama-quantize mixtures) and
// `--tensor-type` against llama.cpp's own llama_model_quantize
// (tests/llama_quant_oracle.h) run on the F32 GGUF amn writes of the same
// model: every tensor's type and bytes, and general.file_type, must agree.
// The models are llama-shaped with several layers (the layer-position
// rules), GQA, tied and untied embeddings, rows the K block does not
// divide, and an 8-expert model for the MoE rules.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "amn/ggml_dequant.h"
#include "fixtures/safetensors_builder.h"
#include "tests/cli_files.h"
#include "tests/cli_runner.h"
#include "tests/ggml_oracle.h"
#include "tests/gguf_readback.h"
#include "tests/gguf_writer.h"
#include "tests/llama_quant_oracle.h"

namespace amn::test {
namespace {

namespace fs = std::filesystem;
using fixtures::SafetensorsBuilder;
using Json = nlohmann::json;

// Deterministic roughly Gaussian values (sum of four uniforms), scaled.
std::vector<float> Values(size_t n, uint32_t seed, float scale) {
  std::vector<float> out(n);
  uint64_t state = 0x9E3779B97F4A7C15ull ^ seed;
  for (float& v : out) {
    float sum = 0;
    for (int k = 0; k < 4; ++k) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      sum += static_cast<float>(state >> 40) / static_cast<float>(1 << 24) - 0.5f;
    }
    v = sum * scale;
  }
  return out;
}

std::vector<uint8_t> Bf16(const std::vector<float>& values) {
  std::vector<uint8_t> out(values.size() * 2);
  for (size_t i = 0; i < values.size(); ++i) {
    uint32_t bits;
    std::memcpy(&bits, &values[i], 4);
    const uint16_t half = static_cast<uint16_t>(bits >> 16);
    std::memcpy(out.data() + 2 * i, &half, 2);
  }
  return out;
}

struct LlamaShape {
  int layers, heads, kv_heads, hidden, ffn, vocab;
  bool tied;
};

// A Hugging Face llama checkpoint of that shape (BF16), as WriteRealLlama
// but with every weight of every layer.
void WriteLlama(const fs::path& dir, const LlamaShape& s) {
  fs::create_directories(dir);
  SafetensorsBuilder b;
  uint32_t seed = 1;
  auto add = [&](const std::string& name, std::vector<uint64_t> shape) {
    uint64_t n = 1;
    for (uint64_t d : shape) n *= d;
    const float scale =
        shape.size() == 1 ? 0.1f : 1.0f / std::sqrt(static_cast<float>(shape.back()));
    std::vector<float> v = Values(n, seed++, scale);
    if (shape.size() == 1) {
      for (float& x : v) x += 1.0f;  // norms near 1
    }
    b.Add(name, "BF16", shape, Bf16(v));
  };
  const uint64_t h = s.hidden, kv = static_cast<uint64_t>(s.hidden / s.heads * s.kv_heads);
  add("model.embed_tokens.weight", {static_cast<uint64_t>(s.vocab), h});
  for (int l = 0; l < s.layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    add(p + "self_attn.q_proj.weight", {h, h});
    add(p + "self_attn.k_proj.weight", {kv, h});
    add(p + "self_attn.v_proj.weight", {kv, h});
    add(p + "self_attn.o_proj.weight", {h, h});
    add(p + "mlp.gate_proj.weight", {static_cast<uint64_t>(s.ffn), h});
    add(p + "mlp.up_proj.weight", {static_cast<uint64_t>(s.ffn), h});
    add(p + "mlp.down_proj.weight", {h, static_cast<uint64_t>(s.ffn)});
    add(p + "input_layernorm.weight", {h});
    add(p + "post_attention_layernorm.weight", {h});
  }
  add("model.norm.weight", {h});
  if (!s.tied) add("lm_head.weight", {static_cast<uint64_t>(s.vocab), h});
  b.Write(dir / "model.safetensors");
  WriteText(dir / "config.json",
            "{\"architectures\": [\"LlamaForCausalLM\"], \"model_type\": \"llama\", "
            "\"hidden_size\": " +
                std::to_string(s.hidden) + ", \"num_hidden_layers\": " + std::to_string(s.layers) +
                ", \"num_attention_heads\": " + std::to_string(s.heads) +
                ", \"num_key_value_heads\": " + std::to_string(s.kv_heads) +
                ", \"intermediate_size\": " + std::to_string(s.ffn) +
                ", \"vocab_size\": " + std::to_string(s.vocab) +
                ", \"max_position_embeddings\": 2048, \"rms_norm_eps\": 1e-05, "
                "\"rope_theta\": 10000.0, \"tie_word_embeddings\": " +
                (s.tied ? "true" : "false") + "}");
}

struct Preset {
  std::string scheme;
  int ftype;
};
const std::vector<Preset>& Presets() {
  static const std::vector<Preset> presets = {
      {"mostly_q2_k", 10}, {"q3_k_s", 11}, {"q3_k_m", 12}, {"q3_k_l", 13},     {"q4_k_s", 14},
      {"q4_k_m", 15},      {"q5_k_s", 16}, {"q5_k_m", 17}, {"mostly_q6_k", 18}};
  return presets;
}

// Every tensor of `amn` has llama's name, type, shape and bytes; the file
// types agree. Returns the ggml types amn wrote, by name.
std::map<std::string, int> ExpectSameTensors(const GgmlOracle& ggml, const fs::path& amn,
                                             const fs::path& llama) {
  GgmlView a, l;
  EXPECT_TRUE(LoadWithGgml(ggml, amn, a)) << amn;
  EXPECT_TRUE(LoadWithGgml(ggml, llama, l)) << llama;
  EXPECT_EQ(a.metadata["general.file_type"], l.metadata["general.file_type"]);
  EXPECT_EQ(a.metadata["general.quantization_version"], l.metadata["general.quantization_version"]);
  const std::vector<uint8_t> a_file = FileBytes(amn), l_file = FileBytes(llama);
  std::map<std::string, const GgmlView::Tensor*> by_name;
  for (const GgmlView::Tensor& t : a.tensors) by_name[t.name] = &t;
  EXPECT_EQ(a.tensors.size(), l.tensors.size());
  std::map<std::string, int> types;
  size_t differing = 0;
  for (const GgmlView::Tensor& want : l.tensors) {
    SCOPED_TRACE(want.name);
    const auto it = by_name.find(want.name);
    if (it == by_name.end()) {
      ADD_FAILURE() << "amn lacks the tensor";
      continue;
    }
    const GgmlView::Tensor& got = *it->second;
    types[got.name] = got.type;
    EXPECT_EQ(got.type, want.type)
        << FindGgmlType(got.type)->name << " vs llama's " << FindGgmlType(want.type)->name;
    EXPECT_EQ(got.ne, want.ne);
    if (got.type != want.type || got.size != want.size) continue;
    if (Slice(a_file, a.data_offset + got.offset, got.size) !=
        Slice(l_file, l.data_offset + want.offset, want.size)) {
      ++differing;
      ADD_FAILURE() << "bytes differ from llama_model_quantize's";
    }
  }
  EXPECT_EQ(differing, 0u);
  return types;
}

size_t DistinctTypes(const std::map<std::string, int>& types) {
  std::set<int> s;
  for (const auto& [name, type] : types) s.insert(type);
  return s.size();
}

class MixtureCli : public ::testing::Test {
 protected:
  // The F32 GGUF amn writes of a llama of shape `s`, llama_model_quantize's input.
  fs::path F32Gguf(const LlamaShape& s, const std::string& name) {
    const fs::path model = dir_.path() / name;
    WriteLlama(model, s);
    const fs::path f32 = dir_.path() / (name + "-f32.gguf");
    const CliResult r =
        RunAmn("convert -q " + Quote(model) + " -o " + Quote(f32) + " --scheme f32");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return f32;
  }
  TempDir dir_;
};

// Every mixture, on a 16-layer GQA-4 model with its own output.weight and
// on an 8-layer GQA-2 model with tied embeddings whose ffn rows (480) the
// K block does not divide: the same types and bytes as llama-quantize.
TEST_F(MixtureCli, EveryMixtureIsLlamaQuantizes) {
  const auto* ggml = AMN_GGML_ORACLE_OR_SKIP();
  const auto* llama = AMN_LLAMA_QUANT_ORACLE_OR_SKIP();
  const std::vector<std::pair<std::string, LlamaShape>> models = {
      {"gqa4", {16, 8, 2, 256, 512, 256, false}}, {"tied-odd", {8, 4, 2, 256, 480, 256, true}}};
  for (const auto& [name, shape] : models) {
    SCOPED_TRACE(name);
    const fs::path f32 = F32Gguf(shape, name);
    for (const Preset& p : Presets()) {
      SCOPED_TRACE(p.scheme);
      const fs::path ours = dir_.path() / (name + "-" + p.scheme + ".gguf");
      const fs::path theirs = dir_.path() / (name + "-" + p.scheme + "-llama.gguf");
      const CliResult r =
          RunAmn("convert -q " + Quote(f32) + " -o " + Quote(ours) + " --scheme " + p.scheme);
      ASSERT_EQ(r.exit_code, 0) << r.err;
      ASSERT_TRUE(llama->Quantize(f32, theirs, p.ftype)) << "llama_model_quantize failed";
      const std::map<std::string, int> types = ExpectSameTensors(*ggml, ours, theirs);
      EXPECT_GE(DistinctTypes(types), 2u);  // F32 norms and at least one block type
      fs::remove(ours);
      fs::remove(theirs);
    }
  }
}

// The mixtures from the Hugging Face checkpoint directly (renamed, q/k
// rows permuted in the same pass) write the tensors they write from the
// F32 GGUF.
TEST_F(MixtureCli, FromSafetensorsAsFromTheF32Gguf) {
  const auto* ggml = AMN_GGML_ORACLE_OR_SKIP();
  const LlamaShape shape{8, 8, 2, 256, 512, 256, false};
  const fs::path f32 = F32Gguf(shape, "m");
  const fs::path a = dir_.path() / "a.gguf", b = dir_.path() / "b.gguf";
  ASSERT_EQ(
      RunAmn("convert -q " + Quote(dir_.path() / "m") + " -o " + Quote(a) + " --scheme q4_k_m -j 3")
          .exit_code,
      0);
  ASSERT_EQ(
      RunAmn("convert -q " + Quote(f32) + " -o " + Quote(b) + " --scheme q4_k_m -j 1").exit_code,
      0);
  const std::map<std::string, int> types = ExpectSameTensors(*ggml, a, b);
  EXPECT_EQ(types.at("blk.0.attn_v.weight"), 14);  // Q6_K: use_more_bits
  EXPECT_EQ(types.at("blk.1.attn_v.weight"), 12);  // Q4_K
  EXPECT_EQ(types.at("blk.7.ffn_down.weight"), 14);
  EXPECT_EQ(types.at("output.weight"), 14);
}

// --tensor-type as llama-quantize's: the first matching regex wins, the
// tensors it takes leave the attn_v / ffn_down counters behind (so the
// layers after them shift), f16 is a type too, and a K type on odd rows
// falls back.
TEST_F(MixtureCli, TensorTypeOverridesAreLlamaQuantizes) {
  const auto* ggml = AMN_GGML_ORACLE_OR_SKIP();
  const auto* llama = AMN_LLAMA_QUANT_ORACLE_OR_SKIP();
  const fs::path f32 = F32Gguf({16, 8, 2, 256, 480, 256, false}, "o");
  const std::vector<std::pair<std::string, int>> overrides = {
      {"blk\\.[0-2]\\.attn_v", 8},   // Q8_0
      {"BLK\\.5\\.ATTN_V", 6},       // lowercased by llama-quantize: Q5_0
      {"blk\\.1[0-5]\\.ffn_up", 1},  // F16
      {"ffn_down", 13},              // Q5_K: rows of 480 fall back to Q5_1
      {"token_embd", 14}};           // Q6_K
  std::string args;
  const char* names[] = {"q8_0", "Q5_0", "f16", "q5_K", "q6_k"};
  for (size_t i = 0; i < overrides.size(); ++i) {
    args += " --tensor-type '" + overrides[i].first + "=" + names[i] + "'";
  }
  for (const Preset& p : {Preset{"q4_k_m", 15}, Preset{"q3_k_m", 12}, Preset{"q4_k", 15}}) {
    SCOPED_TRACE(p.scheme);
    const fs::path ours = dir_.path() / (p.scheme + ".gguf");
    const fs::path theirs = dir_.path() / (p.scheme + "-llama.gguf");
    const CliResult r = RunAmn("convert " + Quote(f32) + " -o " + Quote(ours) +
                               " --json --scheme " + p.scheme + args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::vector<std::pair<std::string, int>> lowered = overrides;
    for (auto& [pattern, type] : lowered) {
      for (char& c : pattern) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    // q4_k is amn's pure Q4_K: llama-quantize --pure Q4_K_M.
    const bool pure = p.scheme == "q4_k";
    ASSERT_TRUE(llama->Quantize(f32, theirs, p.ftype, 1, lowered, pure));
    const std::map<std::string, int> types = ExpectSameTensors(*ggml, ours, theirs);
    EXPECT_EQ(types.at("blk.0.attn_v.weight"), 8);
    EXPECT_EQ(types.at("blk.5.attn_v.weight"), 6);
    EXPECT_EQ(types.at("blk.12.ffn_up.weight"), 1);
    EXPECT_EQ(types.at("blk.3.ffn_down.weight"), 7);  // Q5_1, Q5_K's fallback
    if (p.scheme == "q4_k_m") {
      // attn_v 0-2 and 5 left the counter: layers 3 and 4 are its 0 and 1
      // (use_more_bits: Q6_K; counted by layer, 3 would be Q4_K), layer 7
      // its 3 (Q4_K; by layer, Q6_K).
      EXPECT_EQ(types.at("blk.3.attn_v.weight"), 14);
      EXPECT_EQ(types.at("blk.4.attn_v.weight"), 14);
      EXPECT_EQ(types.at("blk.7.attn_v.weight"), 12);
    }
    if (pure) {
      EXPECT_EQ(types.at("blk.3.ffn_up.weight"), 12);
      EXPECT_EQ(types.at("output.weight"), 12);  // pure: no Q6_K promotion
    }
    const Json summary = Json::parse(r.out);
    bool down_fallback = false;
    for (const Json& f : summary["fallbacks"]) {
      down_fallback |= f["name"] == "blk.0.ffn_down.weight" && f["type"] == "Q5_1";
    }
    EXPECT_TRUE(down_fallback) << summary["fallbacks"].dump();
  }
}

// An 8-expert llama (3-D ffn_*_exps, GGUF written directly): the MoE rules
// (attn_v and attn_k Q8_0, attn_output Q5_K, layers read from the names).
TEST_F(MixtureCli, EightExpertRulesAreLlamaQuantizes) {
  const auto* ggml = AMN_GGML_ORACLE_OR_SKIP();
  const auto* llama = AMN_LLAMA_QUANT_ORACLE_OR_SKIP();
  const int layers = 4, hidden = 256, heads = 8, kv_heads = 2, ffn = 256, experts = 8, vocab = 256;
  struct Tensor {
    std::string name;
    std::vector<uint64_t> ne;
    std::vector<float> values;
  };
  std::vector<Tensor> tensors;
  uint32_t seed = 100;
  auto add = [&](const std::string& name, std::vector<uint64_t> ne) {
    uint64_t n = 1;
    for (uint64_t d : ne) n *= d;
    tensors.push_back({name, ne, Values(n, seed++, ne.size() == 1 ? 0.1f : 0.0625f)});
  };
  const uint64_t kv = hidden / heads * kv_heads;
  add("token_embd.weight", {hidden, vocab});
  add("output_norm.weight", {hidden});
  add("output.weight", {hidden, vocab});
  for (int l = 0; l < layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    add(p + "attn_norm.weight", {hidden});
    add(p + "attn_q.weight", {hidden, hidden});
    add(p + "attn_k.weight", {hidden, kv});
    add(p + "attn_v.weight", {hidden, kv});
    add(p + "attn_output.weight", {hidden, hidden});
    add(p + "ffn_norm.weight", {hidden});
    add(p + "ffn_gate_inp.weight", {hidden, experts});
    add(p + "ffn_gate_exps.weight", {hidden, ffn, experts});
    add(p + "ffn_up_exps.weight", {hidden, ffn, experts});
    add(p + "ffn_down_exps.weight", {ffn, hidden, experts});
  }
  GgufWriter g;
  const std::vector<std::pair<std::string, uint32_t>> u32s = {
      {"llama.context_length", 2048},
      {"llama.embedding_length", hidden},
      {"llama.block_count", layers},
      {"llama.feed_forward_length", ffn},
      {"llama.attention.head_count", heads},
      {"llama.attention.head_count_kv", kv_heads},
      {"llama.rope.dimension_count", hidden / heads},
      {"llama.expert_count", experts},
      {"llama.expert_used_count", 2},
      {"general.file_type", 0}};
  g.Header(tensors.size(), u32s.size() + 2);
  g.KvStr("general.architecture", "llama");
  for (const auto& [key, value] : u32s) g.KvU32(key, value);
  const float eps = 1e-5f;
  g.Str("llama.attention.layer_norm_rms_epsilon").U32(6).Raw(&eps, 4);
  uint64_t offset = 0;
  for (const Tensor& t : tensors) {
    g.Tensor(t.name, t.ne, 0, offset);
    offset += (t.values.size() * 4 + 31) / 32 * 32;
  }
  g.PadTo(32);
  for (const Tensor& t : tensors) g.Raw(t.values.data(), t.values.size() * 4).PadTo(32);
  const fs::path f32 = dir_.path() / "moe-f32.gguf";
  WriteBytes(f32, g.bytes());
  for (const Preset& p : Presets()) {
    SCOPED_TRACE(p.scheme);
    const fs::path ours = dir_.path() / ("moe-" + p.scheme + ".gguf");
    const fs::path theirs = dir_.path() / ("moe-" + p.scheme + "-llama.gguf");
    const CliResult r =
        RunAmn("convert -q " + Quote(f32) + " -o " + Quote(ours) + " --scheme " + p.scheme);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ASSERT_TRUE(llama->Quantize(f32, theirs, p.ftype)) << "llama_model_quantize failed";
    const std::map<std::string, int> types = ExpectSameTensors(*ggml, ours, theirs);
    EXPECT_EQ(types.at("blk.2.attn_v.weight"), 8);  // Q8_0 for 8 experts
  }
}

// Names and arguments amn refuses, and what they say.
TEST_F(MixtureCli, RefusesBadSchemesAndOverrides) {
  const fs::path model = dir_.path() / "m";
  WriteLlama(model, {2, 4, 2, 256, 256, 64, true});
  const fs::path out = dir_.path() / "o.gguf";
  struct Case {
    std::string args, message;
  };
  const std::vector<Case> cases = {
      {"--scheme q4_k_m --tensor-type attn_v", "expected REGEX=TYPE"},
      {"--scheme q4_k_m --tensor-type =q8_0", "expected REGEX=TYPE"},
      {"--scheme q4_k_m --tensor-type 'attn_v=q9_k'", "not a ggml type name"},
      {"--scheme q4_k_m --tensor-type 'attn_v=q8_k'", "amn cannot write Q8_K"},
      {"--scheme q4_k_m --tensor-type '(attn=q8_0'", "not a regular expression"},
      {"--scheme f16 --tensor-type attn_v=q8_0", "--tensor-type is for a quantized"},
      {"--scheme mostly_q4_0", "--scheme"},
      {"--scheme q2_k_s", "--scheme"}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.args);
    const CliResult r = RunAmn("convert " + Quote(model) + " -o " + Quote(out) + " " + c.args);
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(out));
  }
  // q2_k and q6_k are the pure types; the mixtures of those names are mostly_*.
  const fs::path pure = dir_.path() / "pure.gguf", mix = dir_.path() / "mix.gguf";
  ASSERT_EQ(
      RunAmn("convert -q " + Quote(model) + " -o " + Quote(pure) + " --scheme q2_k").exit_code, 0);
  ASSERT_EQ(RunAmn("convert -q " + Quote(model) + " -o " + Quote(mix) + " --scheme mostly_q2_k")
                .exit_code,
            0);
  const Json p = Parse(pure), m = Parse(mix);
  auto type_of = [](const Json& j, const std::string& name) {
    for (const Json& t : j["tensors"]) {
      if (t["name"] == name) return t["dtype"].get<std::string>();
    }
    return std::string();
  };
  EXPECT_EQ(type_of(p, "token_embd.weight"), "Q2_K");
  EXPECT_EQ(type_of(m, "token_embd.weight"), "Q6_K");  // tied: the output's promotion
  EXPECT_EQ(type_of(m, "blk.0.attn_v.weight"), "Q3_K");
  EXPECT_EQ(type_of(m, "blk.0.ffn_down.weight"), "Q3_K");
}

}  // namespace
}  // namespace amn::test
