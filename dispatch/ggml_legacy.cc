// Dispatch for the ggml legacy block quants (Q4_0 … Q8_1, IQ4_NL, MXFP4, NVFP4, Q1_0, Q2_0): the families GgmlLegacy of the kernel
// table (dispatch/kernel_table.h), compiled for every target. No math here.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "dispatch/ggml_legacy.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/ggml_legacy-inl.h"
#include "dispatch/family_dispatch.h"

AMN_FAMILY_TARGET_BEGIN
AMN_FAMILY_ENTRY(GgmlLegacy)
AMN_TU_PROBE(GgmlLegacy)
AMN_FAMILY_TARGET_END

#if HWY_ONCE
AMN_FAMILY_EXPORT(GgmlLegacy)
AMN_TU_PROBE_EXPORT(GgmlLegacy)
#endif  // HWY_ONCE
