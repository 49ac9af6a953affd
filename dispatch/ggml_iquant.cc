// Dispatch for the ggml lattice I-quants (IQ1_* IQ2_* IQ3_*): the families GgmlIQuant of the kernel
// table (dispatch/kernel_table.h), compiled for every target. No math here.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "dispatch/ggml_iquant.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/ggml_iquant-inl.h"
#include "dispatch/family_dispatch.h"

AMN_FAMILY_TARGET_BEGIN
AMN_FAMILY_ENTRY(GgmlIQuant)
AMN_TU_PROBE(GgmlIQuant)
AMN_FAMILY_TARGET_END

#if HWY_ONCE
AMN_FAMILY_EXPORT(GgmlIQuant)
AMN_TU_PROBE_EXPORT(GgmlIQuant)
#endif  // HWY_ONCE
