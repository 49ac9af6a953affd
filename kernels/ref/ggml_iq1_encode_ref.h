// Scalar references of ggml's IQ1 encoders: byte for byte what
// ggml_quantize_chunk writes for IQ1_S and IQ1_M (ggml-quants.c
// quantize_row_iq1_{s,m}_impl). No Highway.
//
// Per sub-block (IQ1_S: 32 elements, IQ1_M: 16) the elements are sorted
// (stably: glibc's qsort is a merge sort for such sizes, and ties decide
// the running sums) and every split into three runs {-1, 0, +1} + delta
// (delta = +-1/8; IQ1_M: one delta per group of 8) is scored by weighted
// least squares; groups off the IQ1 grid take their nearest listed
// neighbour (kernels/ref/ggml_iq2_grid_index.h) and the scale is refit.
// The sub-block scales become 3-bit codes of max_scale / 15; IQ1_M refits
// the super-block scale over the whole block. docs/schemes/
// ggml-encode-iquants.md.
//
// Order is the contract: sums in ggml's order and association, no FMA.
// Preconditions: 256 finite floats; qw the 256 importance values (IQ1_S
// requires them: given null they are taken as all ones, which ggml never
// does; IQ1_M without them weights by x^2 as ggml does); out one block.
#ifndef AMN_KERNELS_REF_GGML_IQ1_ENCODE_REF_H_
#define AMN_KERNELS_REF_GGML_IQ1_ENCODE_REF_H_

#include <cstdint>

#include "kernels/ref/ggml_iq2_grid_index.h"

namespace amn::ref {

// `score`: as in ggml_iq2_encode_ref.h.
void QuantizeIq1SBlock(const float* x, const float* qw, uint8_t* out,
                       iq2::NeighbourScoreFn score = iq2::ScoreNeighboursRef);  // 50 bytes
void QuantizeIq1MBlock(const float* x, const float* qw, uint8_t* out,
                       iq2::NeighbourScoreFn score = iq2::ScoreNeighboursRef);  // 56 bytes

}  // namespace amn::ref

#endif  // AMN_KERNELS_REF_GGML_IQ1_ENCODE_REF_H_
