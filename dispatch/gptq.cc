// Dispatch for GPTQ: the families Gptq of the kernel
// table (dispatch/kernel_table.h), compiled for every target. No math here.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "dispatch/gptq.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/gptq-inl.h"
#include "dispatch/family_dispatch.h"

AMN_FAMILY_TARGET_BEGIN
AMN_FAMILY_ENTRY(Gptq)
AMN_TU_PROBE(Gptq)
AMN_FAMILY_TARGET_END

#if HWY_ONCE
AMN_FAMILY_EXPORT(Gptq)
AMN_TU_PROBE_EXPORT(Gptq)
#endif  // HWY_ONCE
