// ToF16LowerInRange (kernels/float_convert-inl.h), the F16 store for lanes
// whose magnitude is 0 or in [2^-14, 2^16), called directly on every
// compiled target this CPU supports (Highway's own per-target dispatch, each
// instance returning the HWY_TARGET it was compiled for). On SSE4/SSSE3 it
// rounds the F32 bit pattern with integer operations
// (F32BitsToF16SignExtendedInRange); elsewhere it is the NaN-free store.
// Expected bits: ref::F32BitsToF16, the scalar reference, for every F32 in
// the range with both signs (2^28 - 2^24 patterns each, i.e. every exponent
// from 2^-14 to 2^15, so every rounding case, the carries into the next
// binade and 65520 <= |x| < 2^16 rounding to Inf), and ±0. Under emulation
// one chunk in 257.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/f16_in_range_target_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/float_convert-inl.h"

HWY_BEFORE_NAMESPACE();
namespace amn {
namespace HWY_NAMESPACE {

// n (a multiple of 2 * the widest vector's u32 lanes) F32 bit patterns to
// F16 through ToF16LowerInRange; returns the target that ran.
int64_t StoreInRange(const uint32_t* in, size_t n, uint16_t* out) {
  const hn::ScalableTag<uint32_t> du;
#if HWY_TARGET == HWY_SCALAR
  for (size_t i = 0; i < n; ++i) {
    out[i] = static_cast<uint16_t>(hn::GetLane(ToF16LowerInRange()(du, hn::Set(du, in[i]))));
  }
#else
  const size_t lanes = hn::Lanes(du);
  for (size_t i = 0; i < n; i += 2 * lanes) {
    ToF16LowerInRange::StorePair(du, hn::LoadU(du, in + i), hn::LoadU(du, in + i + lanes),
                                 out + i);
  }
#endif
  return HWY_TARGET;
}

}  // namespace HWY_NAMESPACE
}  // namespace amn
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <gtest/gtest.h>

#include <vector>

#include "hwy/targets.h"
#include "kernels/ref/float_convert_ref.h"
#include "tests/target_param.h"

namespace amn {
HWY_EXPORT(StoreInRange);
namespace {

constexpr uint32_t kLow = 0x38800000u;   // 2^-14
constexpr uint32_t kHigh = 0x47800000u;  // 2^16
constexpr uint32_t kChunk = uint32_t{1} << 16;

// Checks in[] on every target; returns false after the first target with
// a wrong element (reported).
bool CheckEveryTarget(const std::vector<uint32_t>& in, const std::vector<int64_t>& targets) {
  std::vector<uint16_t> want(in.size());
  for (size_t i = 0; i < in.size(); ++i) want[i] = ref::F32BitsToF16(in[i]);
  std::vector<uint16_t> got(in.size());
  for (const int64_t target : targets) {
    hwy::SetSupportedTargetsForTest(target);
    EXPECT_EQ(HWY_DYNAMIC_DISPATCH(StoreInRange)(in.data(), in.size(), got.data()), target);
    for (size_t i = 0; i < in.size(); ++i) {
      if (got[i] != want[i]) {
        ADD_FAILURE() << hwy::TargetName(target) << ": f32 bits 0x" << std::hex << in[i]
                      << " gave 0x" << got[i] << ", reference 0x" << want[i];
        return false;
      }
    }
  }
  return true;
}

TEST(F16InRangeTargetTest, EveryInRangeF32MatchesReferenceOnEveryTarget) {
  const std::vector<int64_t> targets = hwy::SupportedAndGeneratedTargets();
  ASSERT_FALSE(targets.empty());
  std::vector<uint32_t> in(kChunk);
  // ±0 at every position of a chunk, between in-range values.
  for (uint32_t i = 0; i < kChunk; ++i) {
    in[i] = (i % 3 == 0) ? (i & 1) << 31 : kLow + i * 977u;
  }
  bool ok = CheckEveryTarget(in, targets);
  for (uint32_t sign = 0; sign < 2 && ok; ++sign) {
    for (uint32_t c = kLow / kChunk; c < kHigh / kChunk && ok; ++c) {
      if (!test::RunCase(c, 257)) continue;
      for (uint32_t i = 0; i < kChunk; ++i) in[i] = sign << 31 | (c * kChunk + i);
      ok = CheckEveryTarget(in, targets);
    }
  }
  hwy::SetSupportedTargetsForTest(0);
}

}  // namespace
}  // namespace amn
#endif  // HWY_ONCE
