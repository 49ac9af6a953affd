// Dispatch for the F32/F16/BF16 conversion kernels (kernels/float_convert-inl.h):
// per-target entry points, HWY_EXPORT tables, the checked public wrappers and
// the FloatConvertTarget() probe. No math here.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "dispatch/float_convert.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "kernels/float_convert-inl.h"

HWY_BEFORE_NAMESPACE();
namespace amn {
namespace HWY_NAMESPACE {

void F32ToBf16Row(const float* in, size_t n, uint16_t* out) { F32ToBf16Kernel(in, n, out); }
void F32ToF16Row(const float* in, size_t n, uint16_t* out) { F32ToF16Kernel(in, n, out); }
void Bf16ToF32Row(const uint16_t* in, size_t n, float* out) { Bf16ToF32Kernel(in, n, out); }
void F16ToF32Row(const uint16_t* in, size_t n, float* out) { F16ToF32Kernel(in, n, out); }
void F16ToBf16Row(const uint16_t* in, size_t n, uint16_t* out) { F16ToBf16Kernel(in, n, out); }
void Bf16ToF16Row(const uint16_t* in, size_t n, uint16_t* out) { Bf16ToF16Kernel(in, n, out); }
int64_t FloatConvertTargetProbe() { return HWY_TARGET; }

}  // namespace HWY_NAMESPACE
}  // namespace amn
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "amn/convert.h"
#include "dispatch/dispatch_policy.h"
#include "dispatch/kernel_rows.h"

namespace amn {

HWY_EXPORT(F32ToBf16Row);
HWY_EXPORT(F32ToF16Row);
HWY_EXPORT(Bf16ToF32Row);
HWY_EXPORT(F16ToF32Row);
HWY_EXPORT(F16ToBf16Row);
HWY_EXPORT(Bf16ToF16Row);
HWY_EXPORT(FloatConvertTargetProbe);

namespace internal {
void F32ToBf16Rows(const float* in, size_t n, uint16_t* out) { HWY_DYNAMIC_DISPATCH(F32ToBf16Row)(in, n, out); }
void F32ToF16Rows(const float* in, size_t n, uint16_t* out) { HWY_DYNAMIC_DISPATCH(F32ToF16Row)(in, n, out); }
void Bf16ToF32Rows(const uint16_t* in, size_t n, float* out) { HWY_DYNAMIC_DISPATCH(Bf16ToF32Row)(in, n, out); }
void F16ToF32Rows(const uint16_t* in, size_t n, float* out) { HWY_DYNAMIC_DISPATCH(F16ToF32Row)(in, n, out); }
void F16ToBf16Rows(const uint16_t* in, size_t n, uint16_t* out) { HWY_DYNAMIC_DISPATCH(F16ToBf16Row)(in, n, out); }
void Bf16ToF16Rows(const uint16_t* in, size_t n, uint16_t* out) { HWY_DYNAMIC_DISPATCH(Bf16ToF16Row)(in, n, out); }
}  // namespace internal

TargetId FloatConvertTarget() {
  (void)internal::PrepareDispatch();
  return HWY_DYNAMIC_DISPATCH(FloatConvertTargetProbe)();
}

using internal::CheckedRun;
Status ConvertF32ToBf16(std::span<const float> in, std::span<uint16_t> out) { return CheckedRun(internal::F32ToBf16Rows, in, out); }
Status ConvertF32ToF16(std::span<const float> in, std::span<uint16_t> out) { return CheckedRun(internal::F32ToF16Rows, in, out); }
Status ConvertBf16ToF32(std::span<const uint16_t> in, std::span<float> out) { return CheckedRun(internal::Bf16ToF32Rows, in, out); }
Status ConvertF16ToF32(std::span<const uint16_t> in, std::span<float> out) { return CheckedRun(internal::F16ToF32Rows, in, out); }
Status ConvertF16ToBf16(std::span<const uint16_t> in, std::span<uint16_t> out) { return CheckedRun(internal::F16ToBf16Rows, in, out); }
Status ConvertBf16ToF16(std::span<const uint16_t> in, std::span<uint16_t> out) { return CheckedRun(internal::Bf16ToF16Rows, in, out); }

}  // namespace amn
#endif  // HWY_ONCE
