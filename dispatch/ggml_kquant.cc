// Dispatch for the ggml K-quants (Q2_K … Q8_K, IQ4_XS, TQ1_0, TQ2_0): the families GgmlKQuant of the kernel
// table (dispatch/kernel_table.h), compiled for every target. No math here.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "dispatch/ggml_kquant.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/ggml_kquant-inl.h"
#include "dispatch/family_dispatch.h"

AMN_FAMILY_TARGET_BEGIN
AMN_FAMILY_ENTRY(GgmlKQuant)
AMN_TU_PROBE(GgmlKQuant)
AMN_FAMILY_TARGET_END

#if HWY_ONCE
AMN_FAMILY_EXPORT(GgmlKQuant)
AMN_TU_PROBE_EXPORT(GgmlKQuant)
#endif  // HWY_ONCE
