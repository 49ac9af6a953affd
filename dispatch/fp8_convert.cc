// Dispatch for FP8 E4M3FN/E5M2 to F32/BF16/F16: the families Fp8Convert of the kernel
// table (dispatch/kernel_table.h), compiled for every target. No math here.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "dispatch/fp8_convert.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/fp8_convert-inl.h"
#include "dispatch/family_dispatch.h"

AMN_FAMILY_TARGET_BEGIN
AMN_FAMILY_ENTRY(Fp8Convert)
AMN_TU_PROBE(Fp8Convert)
AMN_FAMILY_TARGET_END

#if HWY_ONCE
AMN_FAMILY_EXPORT(Fp8Convert)
AMN_TU_PROBE_EXPORT(Fp8Convert)
#endif  // HWY_ONCE
