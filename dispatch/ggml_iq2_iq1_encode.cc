// Dispatch for family GgmlIq2Iq1Quant of the kernel table
// (dispatch/kernel_table.h AMN_ENCODER_FAMILIES): the IQ2/IQ1 encoders'
// neighbour scoring (kernels/ggml_iq2_neighbours-inl.h), compiled for every
// target in this one TU, and the encoder entry that uses it (the table's
// internal::EncodeGgmlIq2Iq1Quant, probe GgmlIq2Iq1EncodeTarget). No math
// here.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "dispatch/ggml_iq2_iq1_encode.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/ggml_iq2_neighbours-inl.h"
#include "dispatch/family_dispatch.h"
#include "dispatch/ggml_iq2_iq1_encode.h"
#include "kernels/ref/ggml_iq2_iq1_encode_ref.h"

AMN_FAMILY_TARGET_BEGIN
void ScoreIq2NeighboursEntry(const float* table, const uint16_t* list, size_t n, const float* x,
                             const float* w, float scale, float* d2) {
  ScoreIq2Neighbours(table, list, n, x, w, scale, d2);
}
AMN_TU_PROBE(GgmlIq2Iq1Encode)
AMN_FAMILY_TARGET_END

#if HWY_ONCE
namespace amn {
HWY_EXPORT(ScoreIq2NeighboursEntry);
namespace internal {
void ScoreIq2Neighbours(const float* table, const uint16_t* list, size_t n, const float* x,
                        const float* w, float scale, float* d2) {
  HWY_DYNAMIC_DISPATCH(ScoreIq2NeighboursEntry)(table, list, n, x, w, scale, d2);
}
uint64_t EncodeGgmlIq2Iq1Quant(const kernels::GgmlQuantArgs& args, kernels::ErrorSums* errors) {
  return ref::EncodeGgmlIq2Iq1Quant(args, errors, &ScoreIq2Neighbours);
}
}  // namespace internal
}  // namespace amn
AMN_TU_PROBE_EXPORT(GgmlIq2Iq1Encode)
#endif  // HWY_ONCE
