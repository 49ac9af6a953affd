// Internal: the IQ2/IQ1 encoders (IQ2_XXS, IQ2_XS, IQ2_S, IQ1_S, IQ1_M)
// with the neighbour scoring of the target dispatch selects
// (dispatch/ggml_iq2_iq1_encode.cc); the rest of the searches is the
// scalar reference (kernels/ref/ggml_iq2_iq1_encode_ref.h). Same contract
// and bytes as ref::EncodeGgmlIq2Iq1Quant.
#ifndef AMN_DISPATCH_GGML_IQ2_IQ1_ENCODE_H_
#define AMN_DISPATCH_GGML_IQ2_IQ1_ENCODE_H_

#include <cstddef>
#include <cstdint>

#include "amn/targets.h"
#include "kernels/encode_args.h"
#include "kernels/encode_common.h"

namespace amn {
namespace internal {
uint64_t EncodeGgmlIq2Iq1Quant(const kernels::GgmlQuantArgs& args, kernels::ErrorSums* errors);
// The dispatched scorer alone (ref::iq2::NeighbourScoreFn).
void ScoreIq2Neighbours(const float* table, const uint16_t* list, size_t n, const float* x,
                        const float* w, float scale, float* d2);
}  // namespace internal

// Probe: the target the scorer's dispatch table runs right now.
TargetId GgmlIq2Iq1EncodeTarget();

}  // namespace amn

#endif  // AMN_DISPATCH_GGML_IQ2_IQ1_ENCODE_H_
