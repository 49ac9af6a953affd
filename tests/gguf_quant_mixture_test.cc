// The mixture rules against a table derived by hand from llama.cpp's
// src/llama-quant.cpp (no oracle needed; tests/convert_gguf_mixture_cli_
// test.cc checks the same code against libllama itself where it runs):
// use_more_bits positions, the attn_v counter in llama's tensor order, GQA,
// tied embeddings, 70B, falcon, experts, overrides and fallbacks.
#include "formats/gguf_quant_mixture.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace amn::formats {
namespace {

using T = GgmlType;

// A dense llama's 2-D weights, listed layer-major but with blk.10+ before
// blk.2 (string order), which llama's (layer, name) order must undo.
std::vector<GgufTensorShape> Llama(int layers, bool tied, uint64_t ffn = 512) {
  std::vector<GgufTensorShape> t;
  t.push_back({"token_embd.weight", {256, 256}});
  if (!tied) t.push_back({"output.weight", {256, 256}});
  t.push_back({"output_norm.weight", {256}});
  std::vector<int> order;
  for (int l = 0; l < layers; ++l) order.push_back(l);
  std::sort(order.begin(), order.end(),
            [](int a, int b) { return std::to_string(a) < std::to_string(b); });
  for (int l : order) {
    const std::string p = "blk." + std::to_string(l) + ".";
    t.push_back({p + "attn_q.weight", {256, 256}});
    t.push_back({p + "attn_k.weight", {64, 256}});
    t.push_back({p + "attn_v.weight", {64, 256}});
    t.push_back({p + "attn_output.weight", {256, 256}});
    t.push_back({p + "ffn_gate.weight", {ffn, 256}});
    t.push_back({p + "ffn_up.weight", {ffn, 256}});
    t.push_back({p + "ffn_down.weight", {256, ffn}});
    t.push_back({p + "attn_norm.weight", {256}});
  }
  return t;
}

GgufQuantRecipe Recipe(const std::string& scheme) {
  const auto preset = FindGgufQuantPreset(scheme);
  EXPECT_TRUE(preset.has_value()) << scheme;
  return GgufQuantRecipe{preset.value_or(GgufQuantPreset{}), {}};
}

// name -> chosen type (F32 for what is not quantized).
std::map<std::string, T> Choose(const std::vector<GgufTensorShape>& t, const GgufQuantRecipe& r,
                                const GgufQuantModel& m) {
  auto c = ChooseGgufTypes(t, r, m);
  EXPECT_TRUE(c.ok()) << c.status().message();
  std::map<std::string, T> out;
  if (!c.ok()) return out;
  for (size_t i = 0; i < t.size(); ++i) out[t[i].name] = (*c)[i].quantize ? (*c)[i].type : T::kF32;
  return out;
}

std::string Layer(int l, const char* what) { return "blk." + std::to_string(l) + "." + what; }

TEST(GgufQuantMixture, PresetNames) {
  EXPECT_TRUE(FindGgufQuantPreset("q4_k_m")->mixture);
  EXPECT_EQ(FindGgufQuantPreset("q4_k_m")->file_type, 15u);
  EXPECT_EQ(FindGgufQuantPreset("mostly_q4_k_m")->file_type, 15u);
  EXPECT_FALSE(FindGgufQuantPreset("q2_k")->mixture);  // the pure type
  EXPECT_TRUE(FindGgufQuantPreset("mostly_q2_k")->mixture);
  EXPECT_EQ(FindGgufQuantPreset("mostly_q2_k")->file_type, 10u);
  EXPECT_FALSE(FindGgufQuantPreset("q6_k")->mixture);
  EXPECT_EQ(FindGgufQuantPreset("mostly_q6_k")->base, T::kQ6_K);
  EXPECT_FALSE(FindGgufQuantPreset("mostly_q8_0").has_value());
  EXPECT_FALSE(FindGgufQuantPreset("q2_k_s").has_value());
  EXPECT_EQ(FindGgufQuantPreset("q3_k_l")->base, T::kQ3_K);
}

// Q4_K_M on 16 layers: use_more_bits(i, 16) is true for i in {0, 1, 4, 7,
// 10, 13, 14, 15}; attn_v and ffn_down get Q6_K there, Q4_K elsewhere;
// output Q6_K; an untied token_embd keeps Q4_K; norms stay.
TEST(GgufQuantMixture, Q4KMUsesMoreBitsOnTheRightLayers) {
  const GgufQuantModel m{"llama", 16, 8, 2, 0};
  auto c = Choose(Llama(16, false), Recipe("q4_k_m"), m);
  const std::set<int> more = {0, 1, 4, 7, 10, 13, 14, 15};
  for (int l = 0; l < 16; ++l) {
    SCOPED_TRACE(l);
    const T want = more.contains(l) ? T::kQ6_K : T::kQ4_K;
    EXPECT_EQ(c[Layer(l, "attn_v.weight")], want);
    EXPECT_EQ(c[Layer(l, "ffn_down.weight")], want);
    EXPECT_EQ(c[Layer(l, "attn_q.weight")], T::kQ4_K);
    EXPECT_EQ(c[Layer(l, "attn_output.weight")], T::kQ4_K);
    EXPECT_EQ(c[Layer(l, "attn_norm.weight")], T::kF32);
  }
  EXPECT_EQ(c["output.weight"], T::kQ6_K);
  EXPECT_EQ(c["token_embd.weight"], T::kQ4_K);
}

// Q3_K_M: attn_v Q5_K for the first two, then Q4_K; ffn_down Q5_K below
// n/16, else Q4_K; attn_output Q4_K. Q2_K: attn_v by GQA, Q3_K ffn_down
// and attn_output. Tied embeddings: token_embd gets the output's Q6_K.
TEST(GgufQuantMixture, Q3KMAndQ2K) {
  auto c = Choose(Llama(32, true), Recipe("q3_k_m"), {"llama", 32, 8, 8, 0});
  EXPECT_EQ(c[Layer(0, "attn_v.weight")], T::kQ5_K);
  EXPECT_EQ(c[Layer(1, "attn_v.weight")], T::kQ5_K);
  EXPECT_EQ(c[Layer(2, "attn_v.weight")], T::kQ4_K);
  EXPECT_EQ(c[Layer(1, "ffn_down.weight")], T::kQ5_K);
  EXPECT_EQ(c[Layer(2, "ffn_down.weight")], T::kQ4_K);
  EXPECT_EQ(c[Layer(5, "attn_output.weight")], T::kQ4_K);
  EXPECT_EQ(c[Layer(5, "ffn_up.weight")], T::kQ3_K);
  EXPECT_EQ(c["token_embd.weight"], T::kQ6_K);
  auto gqa1 = Choose(Llama(4, true), Recipe("mostly_q2_k"), {"llama", 4, 8, 8, 0});
  auto gqa4 = Choose(Llama(4, true), Recipe("mostly_q2_k"), {"llama", 4, 8, 2, 0});
  EXPECT_EQ(gqa1[Layer(0, "attn_v.weight")], T::kQ3_K);
  EXPECT_EQ(gqa4[Layer(0, "attn_v.weight")], T::kQ4_K);
  EXPECT_EQ(gqa4[Layer(0, "ffn_down.weight")], T::kQ3_K);
  EXPECT_EQ(gqa4[Layer(0, "attn_output.weight")], T::kQ3_K);
  EXPECT_EQ(gqa4[Layer(0, "attn_q.weight")], T::kQ2_K);
}

// 70B (llama, 80 layers, GQA): Q3_K/Q4_K attn_v become Q5_K. Falcon's
// output is Q8_0. Eight experts: attn_v and attn_k Q8_0, attn_output Q5_K.
TEST(GgufQuantMixture, SeventyBFalconAndExperts) {
  auto big = Choose(Llama(80, false), Recipe("q4_k_s"), {"llama", 80, 64, 8, 0});
  EXPECT_EQ(big[Layer(0, "attn_v.weight")], T::kQ5_K);
  EXPECT_EQ(big[Layer(40, "attn_v.weight")], T::kQ5_K);  // Q4_K, bumped
  EXPECT_EQ(big[Layer(40, "ffn_down.weight")], T::kQ4_K);
  auto falcon = Choose(Llama(4, false), Recipe("q5_k_m"), {"falcon", 4, 8, 8, 0});
  EXPECT_EQ(falcon["output.weight"], T::kQ8_0);
  auto moe = Choose(Llama(4, false), Recipe("q4_k_m"), {"llama", 4, 8, 2, 8});
  EXPECT_EQ(moe[Layer(1, "attn_v.weight")], T::kQ8_0);
  EXPECT_EQ(moe[Layer(1, "attn_k.weight")], T::kQ8_0);
  EXPECT_EQ(moe[Layer(1, "attn_output.weight")], T::kQ5_K);
  auto q6 = Choose(Llama(4, false), Recipe("mostly_q6_k"), {"llama", 4, 8, 2, 8});
  EXPECT_EQ(q6[Layer(1, "attn_output.weight")], T::kQ6_K);
  EXPECT_EQ(q6[Layer(1, "attn_v.weight")], T::kQ8_0);
  // An expert tensor without a layer in its name: llama-quantize fails.
  std::vector<GgufTensorShape> bad = Llama(4, false);
  bad.push_back({"ffn_down_exps.weight", {8, 256, 512}});
  EXPECT_FALSE(ChooseGgufTypes(bad, Recipe("q4_k_m"), {"llama", 4, 8, 2, 8}).ok());
  // No block_count: refused.
  EXPECT_FALSE(ChooseGgufTypes(Llama(4, false), Recipe("q4_k_m"), {"llama", 0, 8, 2, 0}).ok());
}

// Overrides: first match wins, skip the rules (and the counter), fall back.
TEST(GgufQuantMixture, OverridesAndFallbacks) {
  GgufQuantRecipe r = Recipe("q4_k_m");
  for (const char* text : {"blk\\.0\\.attn_v=q8_0", "ATTN_V=q5_k", "ffn_down=Q6_K", "ffn_up=f16"}) {
    auto o = ParseGgufTensorType(text);
    ASSERT_TRUE(o.ok()) << o.status().message();
    r.overrides.push_back(*o);
  }
  auto c = Choose(Llama(8, false, 480), r, {"llama", 8, 8, 2, 0});
  EXPECT_EQ(c[Layer(0, "attn_v.weight")], T::kQ8_0);
  EXPECT_EQ(c[Layer(1, "attn_v.weight")], T::kQ5_K);
  EXPECT_EQ(c[Layer(3, "ffn_down.weight")], T::kQ8_0);  // Q6_K's fallback for rows of 480
  EXPECT_EQ(c[Layer(3, "ffn_up.weight")], T::kF16);
  EXPECT_EQ(c[Layer(3, "ffn_gate.weight")], T::kQ4_K);
  EXPECT_FALSE(ParseGgufTensorType("attn_v").ok());
  EXPECT_FALSE(ParseGgufTensorType("=q8_0").ok());
  EXPECT_FALSE(ParseGgufTensorType("attn_v=").ok());
  EXPECT_FALSE(ParseGgufTensorType("attn_v=q8_k").ok());
  EXPECT_FALSE(ParseGgufTensorType("(attn=q8_0").ok());
  EXPECT_TRUE(ParseGgufTensorType("attn=BF16").ok());
}

}  // namespace
}  // namespace amn::formats
