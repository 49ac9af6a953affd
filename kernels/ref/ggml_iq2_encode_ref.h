// Scalar references of ggml's IQ2 encoders: byte for byte what
// ggml_quantize_chunk writes for IQ2_XXS, IQ2_XS and IQ2_S
// (ggml-quants.c quantize_row_iq2_{xxs,xs,s}_impl). No Highway.
//
// Per 256-element super-block: importance weights w_i = qw_i sqrt(sigma2 +
// x_i^2) (IQ2_S without an importance matrix: sigma2 / 4 + x_i^2), the
// signs folded into |x| per group of 8 (IQ2_XXS, IQ2_XS: with an even
// count of negatives, flipping back the element of least w x^2), then per
// sub-block (32 elements for IQ2_XXS, 16 otherwise) a scan of trial scales
// whose groups are rounded to 2-bit levels, snapped to the grid or its
// nearest listed neighbour (kernels/ref/ggml_iq2_grid_index.h), and scored
// by weighted least squares; the sub-block scales become 4-bit codes of
// max_scale / 31. docs/schemes/ggml-encode-iquants.md.
//
// Order is the contract, as in kernels/ref/ggml_quant_search.h: every sum in
// increasing element index, C's left-to-right association, no FMA.
// Preconditions: 256 finite floats; qw the super-block's 256 importance
// values (IQ2_XXS and IQ2_XS require them: ggml refuses without; given
// null they are taken as all ones, which ggml never does); out one block.
#ifndef AMN_KERNELS_REF_GGML_IQ2_ENCODE_REF_H_
#define AMN_KERNELS_REF_GGML_IQ2_ENCODE_REF_H_

#include <cstdint>

#include "kernels/ref/ggml_iq2_grid_index.h"

namespace amn::ref {

// `score` computes the neighbour distances (kernels/ref/
// ggml_iq2_grid_index.h); any scorer giving ScoreNeighboursRef's bits gives
// the same blocks.
void QuantizeIq2XxsBlock(const float* x, const float* qw, uint8_t* out,
                         iq2::NeighbourScoreFn score = iq2::ScoreNeighboursRef);  // 66 bytes
void QuantizeIq2XsBlock(const float* x, const float* qw, uint8_t* out,
                        iq2::NeighbourScoreFn score = iq2::ScoreNeighboursRef);   // 74 bytes
void QuantizeIq2SBlock(const float* x, const float* qw, uint8_t* out,
                       iq2::NeighbourScoreFn score = iq2::ScoreNeighboursRef);    // 82 bytes

}  // namespace amn::ref

#endif  // AMN_KERNELS_REF_GGML_IQ2_ENCODE_REF_H_
