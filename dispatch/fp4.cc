// Dispatch for NVFP4 and gpt-oss MXFP4 safetensors: the families Nvfp4, Mxfp4St of the kernel
// table (dispatch/kernel_table.h), compiled for every target. No math here.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "dispatch/fp4.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/mxfp4_transposed-inl.h"  // and kernels/fp4-inl.h
#include "dispatch/family_dispatch.h"

AMN_FAMILY_TARGET_BEGIN
AMN_FAMILY_ENTRY(Nvfp4)
AMN_FAMILY_ENTRY(Mxfp4St)
AMN_TU_PROBE(Fp4)
AMN_FAMILY_TARGET_END

#if HWY_ONCE
AMN_FAMILY_EXPORT(Nvfp4)
AMN_FAMILY_EXPORT(Mxfp4St)
AMN_TU_PROBE_EXPORT(Fp4)
#endif  // HWY_ONCE
