// Dispatch for the ggml I-quant family (kernels/ggml_iquant-inl.h: IQ2_XXS IQ2_XS IQ2_S
// IQ3_XXS IQ3_S IQ1_S IQ1_M): per-target entry points, HWY_EXPORT tables,
// internal::DequantGgmlIQuant behind amn::DequantGgml, and the
// GgmlIQuantTarget() probe. No math here.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "dispatch/ggml_iquant.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/ggml_iquant-inl.h"

HWY_BEFORE_NAMESPACE();
namespace amn {
namespace HWY_NAMESPACE {

bool DequantIQuantToF32Row(uint32_t type, const uint8_t* blocks, size_t n_blocks, float* out) {
  return DequantIQuantToF32Kernel(type, blocks, n_blocks, out);
}
bool DequantIQuantToBf16Row(uint32_t type, const uint8_t* blocks, size_t n_blocks,
                            uint16_t* out) {
  return DequantIQuantToBf16Kernel(type, blocks, n_blocks, out);
}
bool DequantIQuantToF16Row(uint32_t type, const uint8_t* blocks, size_t n_blocks,
                           uint16_t* out) {
  return DequantIQuantToF16Kernel(type, blocks, n_blocks, out);
}
int64_t GgmlIQuantTargetProbe() { return HWY_TARGET; }

}  // namespace HWY_NAMESPACE
}  // namespace amn
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "amn/ggml_dequant.h"
#include "dispatch/dispatch_policy.h"
#include "dispatch/ggml_families.h"

namespace amn {

HWY_EXPORT(DequantIQuantToF32Row);
HWY_EXPORT(DequantIQuantToBf16Row);
HWY_EXPORT(DequantIQuantToF16Row);
HWY_EXPORT(GgmlIQuantTargetProbe);

namespace internal {

bool DequantGgmlIQuant(GgmlType type, const uint8_t* blocks, size_t n_blocks, ElemType out_type,
                       void* out) {
  const auto id = static_cast<uint32_t>(type);
  switch (out_type) {
    case ElemType::kF32:
      return HWY_DYNAMIC_DISPATCH(DequantIQuantToF32Row)(id, blocks, n_blocks,
                                                         static_cast<float*>(out));
    case ElemType::kBf16:
      return HWY_DYNAMIC_DISPATCH(DequantIQuantToBf16Row)(id, blocks, n_blocks,
                                                          static_cast<uint16_t*>(out));
    case ElemType::kF16:
      return HWY_DYNAMIC_DISPATCH(DequantIQuantToF16Row)(id, blocks, n_blocks,
                                                         static_cast<uint16_t*>(out));
    default:
      return false;
  }
}

}  // namespace internal

TargetId GgmlIQuantTarget() {
  (void)internal::PrepareDispatch();
  return HWY_DYNAMIC_DISPATCH(GgmlIQuantTargetProbe)();
}

}  // namespace amn
#endif  // HWY_ONCE
