// Dispatch for the encoders (amn/quantize.h): the families AbsMaxGrid,
// Fp8Quant, Bnb4Quant and BnbInt8Quant of the kernel table
// (dispatch/kernel_table.h AMN_ENCODER_FAMILIES), compiled for every target
// in this one TU. No math here.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "dispatch/encode.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/bnb_encode-inl.h"
#include "kernels/fp8_encode-inl.h"
#include "amn/quantize.h"
#include "dispatch/encoders.h"
#include "dispatch/family_dispatch.h"

AMN_FAMILY_TARGET_BEGIN
AMN_ENCODER_ENTRY(AbsMaxGrid)
AMN_ENCODER_ENTRY(Fp8Quant)
AMN_ENCODER_ENTRY(Bnb4Quant)
AMN_ENCODER_ENTRY(BnbInt8Quant)
AMN_TU_PROBE(Encode)
AMN_FAMILY_TARGET_END

#if HWY_ONCE
AMN_ENCODER_EXPORT(AbsMaxGrid)
AMN_ENCODER_EXPORT(Fp8Quant)
AMN_ENCODER_EXPORT(Bnb4Quant)
AMN_ENCODER_EXPORT(BnbInt8Quant)
AMN_TU_PROBE_EXPORT(Encode)
#endif  // HWY_ONCE
