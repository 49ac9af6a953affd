// Dispatch for bitsandbytes NF4/FP4 and LLM.int8(): the families Bnb4, BnbInt8 of the kernel
// table (dispatch/kernel_table.h), compiled for every target. No math here.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "dispatch/bnb.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/bnb-inl.h"
#include "dispatch/family_dispatch.h"

AMN_FAMILY_TARGET_BEGIN
AMN_FAMILY_ENTRY(Bnb4)
AMN_FAMILY_ENTRY(BnbInt8)
AMN_TU_PROBE(Bnb)
AMN_FAMILY_TARGET_END

#if HWY_ONCE
AMN_FAMILY_EXPORT(Bnb4)
AMN_FAMILY_EXPORT(BnbInt8)
AMN_TU_PROBE_EXPORT(Bnb)
#endif  // HWY_ONCE
