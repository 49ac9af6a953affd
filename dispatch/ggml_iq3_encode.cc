// Dispatch for family GgmlIq3Quant of the kernel table
// (dispatch/kernel_table.h AMN_ENCODER_FAMILIES): ggml's IQ3_XXS and IQ3_S
// encoders, compiled for every target in this one TU. No math here.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "dispatch/ggml_iq3_encode.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/ggml_iq3_encode-inl.h"
#include "dispatch/encoders.h"
#include "dispatch/family_dispatch.h"

AMN_FAMILY_TARGET_BEGIN
AMN_ENCODER_ENTRY(GgmlIq3Quant)
AMN_TU_PROBE(GgmlIq3Encode)
AMN_FAMILY_TARGET_END

#if HWY_ONCE
AMN_ENCODER_EXPORT(GgmlIq3Quant)
AMN_TU_PROBE_EXPORT(GgmlIq3Encode)
#endif  // HWY_ONCE
