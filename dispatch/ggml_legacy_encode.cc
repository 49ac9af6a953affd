// Dispatch for the ggml encoders of the simple block types: family
// GgmlLegacyQuant of the kernel table (dispatch/kernel_table.h
// AMN_ENCODER_FAMILIES), compiled for every target in this one TU. No math
// here (kernels/ggml_legacy_encode-inl.h).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "dispatch/ggml_legacy_encode.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/ggml_legacy_encode-inl.h"
#include "dispatch/encoders.h"
#include "dispatch/family_dispatch.h"

AMN_FAMILY_TARGET_BEGIN
AMN_ENCODER_ENTRY(GgmlLegacyQuant)
AMN_TU_PROBE(GgmlLegacyEncode)
AMN_FAMILY_TARGET_END

#if HWY_ONCE
AMN_ENCODER_EXPORT(GgmlLegacyQuant)
AMN_TU_PROBE_EXPORT(GgmlLegacyEncode)
#endif  // HWY_ONCE
