// Dispatch for the ggml K-quant family (kernels/ggml_kquant-inl.h: Q2_K …
// Q8_K, IQ4_XS, TQ1_0, TQ2_0): per-target entry points, HWY_EXPORT tables,
// internal::DequantGgmlKQuant behind amn::DequantGgml, and the
// GgmlKQuantTarget() probe. No math here.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "dispatch/ggml_kquant.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/ggml_kquant-inl.h"

HWY_BEFORE_NAMESPACE();
namespace amn {
namespace HWY_NAMESPACE {

bool DequantKQuantToF32Row(uint32_t type, const uint8_t* blocks, size_t n_blocks, float* out) {
  return DequantKQuantToF32Kernel(type, blocks, n_blocks, out);
}
bool DequantKQuantToBf16Row(uint32_t type, const uint8_t* blocks, size_t n_blocks,
                            uint16_t* out) {
  return DequantKQuantToBf16Kernel(type, blocks, n_blocks, out);
}
bool DequantKQuantToF16Row(uint32_t type, const uint8_t* blocks, size_t n_blocks,
                           uint16_t* out) {
  return DequantKQuantToF16Kernel(type, blocks, n_blocks, out);
}
int64_t GgmlKQuantTargetProbe() { return HWY_TARGET; }

}  // namespace HWY_NAMESPACE
}  // namespace amn
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "amn/ggml_dequant.h"
#include "dispatch/dispatch_policy.h"
#include "dispatch/ggml_families.h"

namespace amn {

HWY_EXPORT(DequantKQuantToF32Row);
HWY_EXPORT(DequantKQuantToBf16Row);
HWY_EXPORT(DequantKQuantToF16Row);
HWY_EXPORT(GgmlKQuantTargetProbe);

namespace internal {

bool DequantGgmlKQuant(GgmlType type, const uint8_t* blocks, size_t n_blocks, ElemType out_type,
                       void* out) {
  const auto id = static_cast<uint32_t>(type);
  switch (out_type) {
    case ElemType::kF32:
      return HWY_DYNAMIC_DISPATCH(DequantKQuantToF32Row)(id, blocks, n_blocks,
                                                         static_cast<float*>(out));
    case ElemType::kBf16:
      return HWY_DYNAMIC_DISPATCH(DequantKQuantToBf16Row)(id, blocks, n_blocks,
                                                          static_cast<uint16_t*>(out));
    case ElemType::kF16:
      return HWY_DYNAMIC_DISPATCH(DequantKQuantToF16Row)(id, blocks, n_blocks,
                                                         static_cast<uint16_t*>(out));
    default:
      return false;
  }
}

}  // namespace internal

TargetId GgmlKQuantTarget() {
  (void)internal::PrepareDispatch();
  return HWY_DYNAMIC_DISPATCH(GgmlKQuantTargetProbe)();
}

}  // namespace amn
#endif  // HWY_ONCE
