// The BF16 pair stores of kernels/float_convert-inl.h, called directly on
// every compiled target this CPU supports (Highway's own per-target
// dispatch, each instance returning the HWY_TARGET it was compiled for):
// ToBf16Upper::StorePair (the NaN rule) and ToBf16UpperNonNan::StorePair
// (callers that proved their lanes NaN-free). On AVX2/SSE4 both round on
// u16 lanes after a byte shuffle (StoreBf16PairOnU16Lanes); elsewhere they
// round u32 lanes and keep the odd halves; SCALAR stores lane by lane.
// Expected bits: ref::F32BitsToBf16, the scalar reference.
//
// Inputs: every high half H (2^16) with low halves L that hit every rounding
// case, 0, 1, 0x7FFF (below half), 0x8000 (a tie: the carry depends on
// H & 1), 0x8001, 0xFFFF (a carry that can run into the exponent and sign)
// and a few fixed random ones; consecutive elements have consecutive H, so a
// lane out of order or a carry wrong fails. The grid holds every NaN (H's
// exponent all ones, mantissa or L nonzero), ±Inf, ±0, subnormals and
// FLT_MAX; the NaN-free store gets the grid without its NaNs.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/bf16_narrow_target_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/float_convert-inl.h"

HWY_BEFORE_NAMESPACE();
namespace amn {
namespace HWY_NAMESPACE {

// n (a multiple of 2 * the widest vector's u32 lanes) F32 bit patterns to
// BF16 through Encode's pair store; returns the target that ran.
template <class Encode>
int64_t Narrow(const uint32_t* in, size_t n, uint16_t* out) {
  const hn::ScalableTag<uint32_t> du;
#if HWY_TARGET == HWY_SCALAR
  for (size_t i = 0; i < n; ++i) {
    out[i] = static_cast<uint16_t>(
        hn::GetLane(hn::ShiftRight<16>(Encode()(du, hn::Set(du, in[i])))));
  }
#else
  const size_t lanes = hn::Lanes(du);
  for (size_t i = 0; i < n; i += 2 * lanes) {
    Encode::StorePair(du, hn::LoadU(du, in + i), hn::LoadU(du, in + i + lanes), out + i);
  }
#endif
  return HWY_TARGET;
}

int64_t NarrowWithNanRule(const uint32_t* in, size_t n, uint16_t* out) {
  return Narrow<ToBf16Upper>(in, n, out);
}
int64_t NarrowNonNan(const uint32_t* in, size_t n, uint16_t* out) {
  return Narrow<ToBf16UpperNonNan>(in, n, out);
}

}  // namespace HWY_NAMESPACE
}  // namespace amn
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "hwy/targets.h"
#include "kernels/ref/float_convert_ref.h"

namespace amn {
HWY_EXPORT(NarrowWithNanRule);
HWY_EXPORT(NarrowNonNan);
namespace test_bf16 {
// On the chosen target (hwy::SetSupportedTargetsForTest).
int64_t CallNarrowWithNanRule(const uint32_t* in, size_t n, uint16_t* out) {
  return HWY_DYNAMIC_DISPATCH(NarrowWithNanRule)(in, n, out);
}
int64_t CallNarrowNonNan(const uint32_t* in, size_t n, uint16_t* out) {
  return HWY_DYNAMIC_DISPATCH(NarrowNonNan)(in, n, out);
}
}  // namespace test_bf16

namespace {

// A multiple of every target's pair (2 x 16 u32 lanes on AVX-512).
constexpr size_t kPad = 64;

bool IsNan(uint32_t bits) { return (bits & 0x7FFFFFFFu) > 0x7F800000u; }

std::vector<uint32_t> Grid(bool with_nans) {
  static constexpr uint16_t kLows[] = {0,      1,      0x7FFF, 0x8000, 0x8001,
                                       0xFFFF, 0x3C5A, 0x9E37, 0xC001, 0x7FFE};
  std::vector<uint32_t> bits;
  for (uint32_t low : kLows) {
    for (uint32_t high = 0; high <= 0xFFFF; ++high) {
      const uint32_t x = high << 16 | low;
      if (with_nans || !IsNan(x)) bits.push_back(x);
    }
  }
  // Named edges, each at every lane position of a pair.
  static constexpr uint32_t kEdges[] = {
      0x00000000u, 0x80000000u,  // ±0
      0x7F800000u, 0xFF800000u,  // ±Inf
      0x7F7FFFFFu, 0xFF7FFFFFu,  // ±FLT_MAX: rounds up to ±Inf
      0x7F7F7FFFu, 0x7F7F8000u,  // just below half, a tie on an odd H
      0x00000001u, 0x807FFFFFu, 0x00008000u, 0x00018000u,  // subnormals
      0x7F800001u, 0xFF800001u, 0x7FC00000u, 0xFFFFFFFFu,  // NaNs: signalling,
      0x7FBFFFFFu, 0x7F80FFFFu, 0x7FFF8000u, 0xFFC0FFFFu,  // quiet, low halves
  };
  for (size_t pos = 0; pos < kPad; ++pos) {
    for (uint32_t edge : kEdges) {
      if (with_nans || !IsNan(edge)) bits.push_back(edge);
    }
  }
  while (bits.size() % kPad != 0) bits.push_back(0x3F800000u);  // 1.0
  return bits;
}

using NarrowFn = int64_t (*)(const uint32_t*, size_t, uint16_t*);

// Runs `narrow` on every compiled target this CPU supports; expects the
// reference's bits for every element and the target it asked for.
void CheckEveryTarget(NarrowFn narrow, bool with_nans) {
  const std::vector<uint32_t> in = Grid(with_nans);
  std::vector<uint16_t> want(in.size());
  for (size_t i = 0; i < in.size(); ++i) want[i] = ref::F32BitsToBf16(in[i]);
  std::vector<int64_t> targets = hwy::SupportedAndGeneratedTargets();
  ASSERT_FALSE(targets.empty());
  for (const int64_t target : targets) {
    SCOPED_TRACE(hwy::TargetName(target));
    std::printf("checking %zu elements on %s\n", in.size(), hwy::TargetName(target));
    hwy::SetSupportedTargetsForTest(target);
    std::vector<uint16_t> got(in.size(), 0x5555);
    EXPECT_EQ(narrow(in.data(), in.size(), got.data()), target);
    size_t wrong = 0;
    for (size_t i = 0; i < in.size(); ++i) {
      if (got[i] != want[i] && ++wrong <= 8) {
        ADD_FAILURE() << "element " << i << ": f32 bits 0x" << std::hex << in[i] << " gave 0x"
                      << got[i] << ", reference 0x" << want[i];
      }
    }
    EXPECT_EQ(wrong, 0u) << "of " << in.size();
  }
  hwy::SetSupportedTargetsForTest(0);
}

TEST(Bf16NarrowTargetTest, NanRulePairMatchesReferenceOnEveryTarget) {
  CheckEveryTarget(test_bf16::CallNarrowWithNanRule, true);
}

TEST(Bf16NarrowTargetTest, NonNanPairMatchesReferenceOnEveryTarget) {
  CheckEveryTarget(test_bf16::CallNarrowNonNan, false);
}

}  // namespace
}  // namespace amn
#endif  // HWY_ONCE
