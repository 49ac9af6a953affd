// Dispatch for the OFP8 cast kernels (kernels/fp8_convert-inl.h): per-target
// entry points, HWY_EXPORT tables, the checked public wrappers and the
// Fp8ConvertTarget() probe. No math here.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "dispatch/fp8_convert.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "kernels/fp8_convert-inl.h"

HWY_BEFORE_NAMESPACE();
namespace amn {
namespace HWY_NAMESPACE {

void E4m3ToF32Row(const uint8_t* in, size_t n, float* out) { E4m3ToF32Kernel(in, n, out); }
void E4m3ToBf16Row(const uint8_t* in, size_t n, uint16_t* out) { E4m3ToBf16Kernel(in, n, out); }
void E4m3ToF16Row(const uint8_t* in, size_t n, uint16_t* out) { E4m3ToF16Kernel(in, n, out); }
void E5m2ToF32Row(const uint8_t* in, size_t n, float* out) { E5m2ToF32Kernel(in, n, out); }
void E5m2ToBf16Row(const uint8_t* in, size_t n, uint16_t* out) { E5m2ToBf16Kernel(in, n, out); }
void E5m2ToF16Row(const uint8_t* in, size_t n, uint16_t* out) { E5m2ToF16Kernel(in, n, out); }
int64_t Fp8ConvertTargetProbe() { return HWY_TARGET; }

}  // namespace HWY_NAMESPACE
}  // namespace amn
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "amn/convert.h"
#include "dispatch/dispatch_policy.h"
#include "dispatch/kernel_rows.h"

namespace amn {

HWY_EXPORT(E4m3ToF32Row);
HWY_EXPORT(E4m3ToBf16Row);
HWY_EXPORT(E4m3ToF16Row);
HWY_EXPORT(E5m2ToF32Row);
HWY_EXPORT(E5m2ToBf16Row);
HWY_EXPORT(E5m2ToF16Row);
HWY_EXPORT(Fp8ConvertTargetProbe);

namespace internal {
void E4m3ToF32Rows(const uint8_t* in, size_t n, float* out) { HWY_DYNAMIC_DISPATCH(E4m3ToF32Row)(in, n, out); }
void E4m3ToBf16Rows(const uint8_t* in, size_t n, uint16_t* out) { HWY_DYNAMIC_DISPATCH(E4m3ToBf16Row)(in, n, out); }
void E4m3ToF16Rows(const uint8_t* in, size_t n, uint16_t* out) { HWY_DYNAMIC_DISPATCH(E4m3ToF16Row)(in, n, out); }
void E5m2ToF32Rows(const uint8_t* in, size_t n, float* out) { HWY_DYNAMIC_DISPATCH(E5m2ToF32Row)(in, n, out); }
void E5m2ToBf16Rows(const uint8_t* in, size_t n, uint16_t* out) { HWY_DYNAMIC_DISPATCH(E5m2ToBf16Row)(in, n, out); }
void E5m2ToF16Rows(const uint8_t* in, size_t n, uint16_t* out) { HWY_DYNAMIC_DISPATCH(E5m2ToF16Row)(in, n, out); }
}  // namespace internal

TargetId Fp8ConvertTarget() {
  (void)internal::PrepareDispatch();
  return HWY_DYNAMIC_DISPATCH(Fp8ConvertTargetProbe)();
}

using internal::CheckedRun;
Status ConvertE4m3ToF32(std::span<const uint8_t> in, std::span<float> out) { return CheckedRun(internal::E4m3ToF32Rows, in, out); }
Status ConvertE4m3ToBf16(std::span<const uint8_t> in, std::span<uint16_t> out) { return CheckedRun(internal::E4m3ToBf16Rows, in, out); }
Status ConvertE4m3ToF16(std::span<const uint8_t> in, std::span<uint16_t> out) { return CheckedRun(internal::E4m3ToF16Rows, in, out); }
Status ConvertE5m2ToF32(std::span<const uint8_t> in, std::span<float> out) { return CheckedRun(internal::E5m2ToF32Rows, in, out); }
Status ConvertE5m2ToBf16(std::span<const uint8_t> in, std::span<uint16_t> out) { return CheckedRun(internal::E5m2ToBf16Rows, in, out); }
Status ConvertE5m2ToF16(std::span<const uint8_t> in, std::span<uint16_t> out) { return CheckedRun(internal::E5m2ToF16Rows, in, out); }

}  // namespace amn
#endif  // HWY_ONCE
