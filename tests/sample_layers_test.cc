// The real-shaped layers that the GPTQ, AWQ and gpt-oss MXFP4 registry
// samples decode at streaming sizes (dispatch/sample_layers.h): on every
// target the dispatched kernels write the reference's bytes at those shapes,
// in remember-sized calls; and the sample's reference run is the layer the
// header describes (4096 outputs in groups of 128, whole gpt-oss experts),
// checked against the reference called directly on that layer.
#include "dispatch/sample_layers.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "amn/kernel_registry.h"
#include "kernels/gptq_layout.h"
#include "kernels/ref/awq_ref.h"
#include "kernels/ref/fp4_ref.h"
#include "kernels/ref/gptq_ref.h"
#include "tests/kernel_check.h"
#include "tests/target_param.h"

namespace amn::test {
namespace {

using internal::kGptOssExpertElems;
using internal::kGptOssExpertGroups;
using internal::kGptOssExpertRows;
using internal::kLayerGroupSize;
using internal::kLayerOutFeatures;
using internal::kLayerSlabElems;

bool StartsWith(std::string_view name, std::string_view prefix) {
  return name.substr(0, prefix.size()) == prefix;
}

// Two groups of 128 inputs: K = 256 with 4096 outputs.
constexpr size_t kTwoGroups = 2 * kLayerSlabElems;

class SampleLayers : public PerTarget {};

TEST_P(SampleLayers, RealShapedLayersMatchTheReference) {
  uint32_t seed = 7;
  size_t checked = 0;
  for (const KernelInfo& kernel : Kernels()) {
    const bool mxfp4 = StartsWith(kernel.name, "mxfp4_st");
    if (!StartsWith(kernel.name, "gptq") && !StartsWith(kernel.name, "awq") && !mxfp4) continue;
    // Under the emulator BF16 outputs only (their code paths are shared),
    // and no 16.6 M-element gpt-oss expert.
    if (Emulated() && (mxfp4 || !kernel.name.ends_with("_to_bf16"))) continue;
    SCOPED_TRACE(std::string(kernel.name));
    EXPECT_EQ(kernel.probe(), GetParam());
    // MXFP4: a whole expert and a few narrow groups after it.
    const size_t n = mxfp4 ? kGptOssExpertElems + 3 * 256 * 32 : kTwoGroups;
    const std::vector<uint8_t> input = PseudoRandomBytes(KernelInBytes(kernel, n), seed++);
    EXPECT_TRUE(MatchesReference(kernel, input, 0, 0));
    ++checked;
  }
  // GPTQ 2/3/4/8-bit, 4-bit GEMM layout and 4-bit act-order, AWQ both ways,
  // MXFP4: 25 (8).
  EXPECT_GE(checked, Emulated() ? 8u : 25u);
}

AMN_INSTANTIATE_PER_TARGET(SampleLayers);

std::vector<uint8_t> RunReference(std::string_view name, const std::vector<uint8_t>& input,
                                  size_t n) {
  const KernelInfo& kernel = KernelNamed(name);
  std::vector<uint8_t> out(KernelOutBytes(kernel, n));
  kernel.run_reference(input.data(), n, out.data());
  return out;
}

gptq::LayerView TwoGroupGptqLayer(uint32_t bits, const uint8_t* qweight) {
  gptq::LayerView layer;
  layer.bits = bits;
  layer.k = 2 * kLayerGroupSize;
  layer.n = kLayerOutFeatures;
  layer.groups = 2;
  layer.group_size = kLayerGroupSize;
  layer.qweight = qweight;
  layer.qzeros = internal::LayerZeroBytes(2, kLayerOutFeatures * bits / 8);
  layer.scales = internal::LayerF16Scales(2, kLayerOutFeatures);
  return layer;
}

TEST(SampleLayerShapes, GptqIsA4096OutputLayerInGroupsOf128) {
  if (Emulated()) GTEST_SKIP() << "the scalar reference only: checked natively";
  for (const uint32_t bits : {3u, 4u, 8u}) {
    const std::vector<uint8_t> qweight = PseudoRandomBytes(kTwoGroups * bits / 8, bits);
    const gptq::LayerView layer = TwoGroupGptqLayer(bits, qweight.data());
    std::vector<uint8_t> expected(kTwoGroups * 2);
    ref::DequantGptq(layer, WeightOrientation::kOutIn, 0, layer.n, ElemType::kBf16,
                     expected.data());
    EXPECT_EQ(RunReference("gptq" + std::to_string(bits) + "_to_bf16", qweight, kTwoGroups),
              expected)
        << bits << "-bit";
    if (bits != 4) continue;  // the table's one GEMM-layout GPTQ kernel
    std::vector<uint8_t> expected_in_out(kTwoGroups * 2);
    ref::DequantGptq(layer, WeightOrientation::kInOut, 0, layer.k, ElemType::kBf16,
                     expected_in_out.data());
    EXPECT_EQ(RunReference("gptq4_inout_to_bf16", qweight, kTwoGroups), expected_in_out);
  }
}

TEST(SampleLayerShapes, AwqIsA4096OutputLayerInGroupsOf128) {
  if (Emulated()) GTEST_SKIP() << "the scalar reference only: checked natively";
  const std::vector<uint8_t> qweight = PseudoRandomBytes(kTwoGroups / 2, 11);
  const ref::AwqMatrix m{qweight.data(),
                         internal::LayerZeroBytes(2, kLayerOutFeatures / 2),
                         internal::LayerF16Scales(2, kLayerOutFeatures),
                         ElemType::kF16,
                         2 * kLayerGroupSize,
                         kLayerOutFeatures,
                         kLayerGroupSize};
  std::vector<uint8_t> expected(kTwoGroups * 2);
  ref::DequantAwqRows(m, true, 0, m.out_features, ElemType::kF16, expected.data());
  EXPECT_EQ(RunReference("awq4_to_f16", qweight, kTwoGroups), expected);
  ref::DequantAwqRows(m, false, 0, m.in_features, ElemType::kBf16, expected.data());
  EXPECT_EQ(RunReference("awq4_inout_to_bf16", qweight, kTwoGroups), expected);
}

TEST(SampleLayerShapes, Mxfp4IsAGptOssExpert) {
  if (Emulated()) GTEST_SKIP() << "the scalar reference only: checked natively";
  const std::vector<uint8_t> blocks = PseudoRandomBytes(kGptOssExpertElems / 2, 13);
  std::vector<uint16_t> expected(kGptOssExpertElems);
  ref::DequantMxfp4StTransposedToBf16(blocks.data(), internal::GptOssExpertScales(),
                                      kGptOssExpertRows, kGptOssExpertGroups, 0,
                                      kGptOssExpertGroups * 32, expected.data());
  const std::vector<uint8_t> got = RunReference("mxfp4_st_to_bf16", blocks, kGptOssExpertElems);
  ASSERT_EQ(got.size(), expected.size() * 2);
  EXPECT_EQ(std::memcmp(got.data(), expected.data(), got.size()), 0);
}

// formats/engine_chunks.cc: 4 MiB of output rows, whole 32-row units.
TEST(SampleLayerShapes, CallsAreRememberSized) {
  EXPECT_EQ(internal::RememberCallRows(11008, ElemType::kBf16), 160u);  // 190 rows fit
  EXPECT_EQ(internal::RememberCallRows(4096, ElemType::kF32), 256u);
  EXPECT_EQ(internal::RememberCallRows(5760, ElemType::kF16), 352u);  // 364 fit
  EXPECT_EQ(internal::RememberCallRows(size_t{1} << 20, ElemType::kF32), 1u);
  EXPECT_EQ(internal::RememberCallRows(size_t{1} << 17, ElemType::kF32), 8u);  // under 32: as is
}

}  // namespace
}  // namespace amn::test
