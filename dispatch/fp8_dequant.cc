// Dispatch for scaled FP8 dequantization: the families Fp8Dequant of the kernel
// table (dispatch/kernel_table.h), compiled for every target. No math here.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "dispatch/fp8_dequant.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/fp8_dequant-inl.h"
#include "dispatch/family_dispatch.h"

AMN_FAMILY_TARGET_BEGIN
AMN_FAMILY_ENTRY(Fp8Dequant)
AMN_TU_PROBE(Fp8Dequant)
AMN_FAMILY_TARGET_END

#if HWY_ONCE
AMN_FAMILY_EXPORT(Fp8Dequant)
AMN_TU_PROBE_EXPORT(Fp8Dequant)
#endif  // HWY_ONCE
