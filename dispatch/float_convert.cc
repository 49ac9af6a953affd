// Dispatch for F32/F16/BF16 conversions: the families FloatConvert of the kernel
// table (dispatch/kernel_table.h), compiled for every target. No math here.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "dispatch/float_convert.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/float_convert-inl.h"
#include "dispatch/family_dispatch.h"

AMN_FAMILY_TARGET_BEGIN
AMN_FAMILY_ENTRY(FloatConvert)
AMN_TU_PROBE(FloatConvert)
AMN_FAMILY_TARGET_END

#if HWY_ONCE
AMN_FAMILY_EXPORT(FloatConvert)
AMN_TU_PROBE_EXPORT(FloatConvert)
#endif  // HWY_ONCE
