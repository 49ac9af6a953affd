// Dispatch for the ggml legacy block quants (kernels/ggml_legacy-inl.h):
// per-target entry points, HWY_EXPORT tables, internal::DequantGgmlLegacy
// (called by amn::DequantGgml after its checks) and the GgmlLegacyTarget()
// probe. No math here.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "dispatch/ggml_legacy.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/ggml_legacy-inl.h"

HWY_BEFORE_NAMESPACE();
namespace amn {
namespace HWY_NAMESPACE {

// Dequant<Type>To{F32,Bf16,F16}Row(blocks, n_blocks, out).
#define AMN_GGML_LEGACY_ROWS(Name, Decoder)                                              \
  void Dequant##Name##ToF32Row(const uint8_t* blocks, size_t n_blocks, float* out) {     \
    DequantGgmlLegacyKernel<Decoder, GgmlStoreF32>(blocks, n_blocks, out);               \
  }                                                                                      \
  void Dequant##Name##ToBf16Row(const uint8_t* blocks, size_t n_blocks, uint16_t* out) { \
    DequantGgmlLegacyKernel<Decoder, GgmlStoreBf16>(blocks, n_blocks, out);              \
  }                                                                                      \
  void Dequant##Name##ToF16Row(const uint8_t* blocks, size_t n_blocks, uint16_t* out) {  \
    DequantGgmlLegacyKernel<Decoder, GgmlStoreF16>(blocks, n_blocks, out);               \
  }
AMN_GGML_LEGACY_ROWS(Q4_0, GgmlQ4_0)
AMN_GGML_LEGACY_ROWS(Q4_1, GgmlQ4_1)
AMN_GGML_LEGACY_ROWS(Q5_0, GgmlQ5_0)
AMN_GGML_LEGACY_ROWS(Q5_1, GgmlQ5_1)
AMN_GGML_LEGACY_ROWS(Q8_0, GgmlQ8_0)
AMN_GGML_LEGACY_ROWS(Q8_1, GgmlQ8_1)
AMN_GGML_LEGACY_ROWS(Iq4Nl, GgmlIq4Nl)
AMN_GGML_LEGACY_ROWS(Mxfp4, GgmlMxfp4)
#undef AMN_GGML_LEGACY_ROWS

int64_t GgmlLegacyTargetProbe() { return HWY_TARGET; }

}  // namespace HWY_NAMESPACE
}  // namespace amn
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "amn/ggml_dequant.h"
#include "dispatch/dispatch_policy.h"
#include "dispatch/ggml_families.h"
#include "dispatch/kernel_rows.h"

namespace amn {

#define AMN_GGML_LEGACY_EXPORT(Name)                                                      \
  HWY_EXPORT(Dequant##Name##ToF32Row);                                                    \
  HWY_EXPORT(Dequant##Name##ToBf16Row);                                                   \
  HWY_EXPORT(Dequant##Name##ToF16Row);                                                    \
  namespace internal {                                                                    \
  void Dequant##Name##ToF32Rows(const uint8_t* blocks, size_t n_blocks, float* out) {     \
    HWY_DYNAMIC_DISPATCH(Dequant##Name##ToF32Row)(blocks, n_blocks, out);                 \
  }                                                                                       \
  void Dequant##Name##ToBf16Rows(const uint8_t* blocks, size_t n_blocks, uint16_t* out) { \
    HWY_DYNAMIC_DISPATCH(Dequant##Name##ToBf16Row)(blocks, n_blocks, out);                \
  }                                                                                       \
  void Dequant##Name##ToF16Rows(const uint8_t* blocks, size_t n_blocks, uint16_t* out) {  \
    HWY_DYNAMIC_DISPATCH(Dequant##Name##ToF16Row)(blocks, n_blocks, out);                 \
  }                                                                                       \
  }  // namespace internal
AMN_GGML_LEGACY_EXPORT(Q4_0)
AMN_GGML_LEGACY_EXPORT(Q4_1)
AMN_GGML_LEGACY_EXPORT(Q5_0)
AMN_GGML_LEGACY_EXPORT(Q5_1)
AMN_GGML_LEGACY_EXPORT(Q8_0)
AMN_GGML_LEGACY_EXPORT(Q8_1)
AMN_GGML_LEGACY_EXPORT(Iq4Nl)
AMN_GGML_LEGACY_EXPORT(Mxfp4)
#undef AMN_GGML_LEGACY_EXPORT
HWY_EXPORT(GgmlLegacyTargetProbe);

TargetId GgmlLegacyTarget() {
  (void)internal::PrepareDispatch();
  return HWY_DYNAMIC_DISPATCH(GgmlLegacyTargetProbe)();
}

namespace internal {
namespace {

struct LegacyRows {
  void (*to_f32)(const uint8_t*, size_t, float*);
  void (*to_bf16)(const uint8_t*, size_t, uint16_t*);
  void (*to_f16)(const uint8_t*, size_t, uint16_t*);
};

#define AMN_GGML_LEGACY_ROWS_OF(Name) \
  LegacyRows { Dequant##Name##ToF32Rows, Dequant##Name##ToBf16Rows, Dequant##Name##ToF16Rows }

const LegacyRows* FindLegacyRows(GgmlType type) {
  static constexpr LegacyRows kQ4_0 = AMN_GGML_LEGACY_ROWS_OF(Q4_0);
  static constexpr LegacyRows kQ4_1 = AMN_GGML_LEGACY_ROWS_OF(Q4_1);
  static constexpr LegacyRows kQ5_0 = AMN_GGML_LEGACY_ROWS_OF(Q5_0);
  static constexpr LegacyRows kQ5_1 = AMN_GGML_LEGACY_ROWS_OF(Q5_1);
  static constexpr LegacyRows kQ8_0 = AMN_GGML_LEGACY_ROWS_OF(Q8_0);
  static constexpr LegacyRows kQ8_1 = AMN_GGML_LEGACY_ROWS_OF(Q8_1);
  static constexpr LegacyRows kIq4Nl = AMN_GGML_LEGACY_ROWS_OF(Iq4Nl);
  static constexpr LegacyRows kMxfp4 = AMN_GGML_LEGACY_ROWS_OF(Mxfp4);
  switch (type) {
    case GgmlType::kQ4_0:
      return &kQ4_0;
    case GgmlType::kQ4_1:
      return &kQ4_1;
    case GgmlType::kQ5_0:
      return &kQ5_0;
    case GgmlType::kQ5_1:
      return &kQ5_1;
    case GgmlType::kQ8_0:
      return &kQ8_0;
    case GgmlType::kQ8_1:
      return &kQ8_1;
    case GgmlType::kIQ4_NL:
      return &kIq4Nl;
    case GgmlType::kMXFP4:
      return &kMxfp4;
    default:
      return nullptr;
  }
}
#undef AMN_GGML_LEGACY_ROWS_OF

}  // namespace

bool DequantGgmlLegacy(GgmlType type, const uint8_t* blocks, size_t n_blocks, ElemType out_type,
                       void* out) {
  const LegacyRows* rows = FindLegacyRows(type);
  if (rows == nullptr) return false;
  // `out` may start at any byte: the kernels store with StoreU only.
  switch (out_type) {
    case ElemType::kF32:
      rows->to_f32(blocks, n_blocks, static_cast<float*>(out));
      break;
    case ElemType::kBf16:
      rows->to_bf16(blocks, n_blocks, static_cast<uint16_t*>(out));
      break;
    case ElemType::kF16:
      rows->to_f16(blocks, n_blocks, static_cast<uint16_t*>(out));
      break;
    default:
      return false;
  }
  return true;
}

}  // namespace internal
}  // namespace amn
#endif  // HWY_ONCE
