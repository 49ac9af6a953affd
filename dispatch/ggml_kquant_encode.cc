// Dispatch for family GgmlKQuantQuant of the kernel table
// (dispatch/kernel_table.h AMN_ENCODER_FAMILIES): ggml's K-quant encoders,
// compiled for every target in this one TU. No math here.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "dispatch/ggml_kquant_encode.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/ggml_kquant_encode-inl.h"
#include "dispatch/encoders.h"
#include "dispatch/family_dispatch.h"

AMN_FAMILY_TARGET_BEGIN
AMN_ENCODER_ENTRY(GgmlKQuantQuant)
AMN_TU_PROBE(GgmlKQuantEncode)
AMN_FAMILY_TARGET_END

#if HWY_ONCE
AMN_ENCODER_EXPORT(GgmlKQuantQuant)
AMN_TU_PROBE_EXPORT(GgmlKQuantEncode)
#endif  // HWY_ONCE
