// Dispatch for compressed-tensors pack-quantized: the family PackedInt of the kernel table
// (dispatch/kernel_table.h), compiled for every target (a TU
// of its own: under the sanitizers one TU per family keeps each compile short
// and lets them build in parallel). No math here.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "dispatch/packed_int.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/packed_int-inl.h"
#include "dispatch/family_dispatch.h"

AMN_FAMILY_TARGET_BEGIN
AMN_FAMILY_ENTRY(PackedInt)
AMN_TU_PROBE(PackedInt)
AMN_FAMILY_TARGET_END

#if HWY_ONCE
AMN_FAMILY_EXPORT(PackedInt)
AMN_TU_PROBE_EXPORT(PackedInt)
#endif  // HWY_ONCE
