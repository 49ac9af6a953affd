// Scalar reference for the ggml encoders of the simple block types WITH an
// importance matrix: ggml-quants.c quantize_<type>(src, dst, nrow,
// n_per_row, quant_weights) as ggml_quantize_chunk runs it when given one.
// Q4_0 / Q5_0: quantize_row_q<4|5>_0_impl (make_qx_quants, rmse_type 1,
// weights qw[j] * sqrtf(sigma2 + x^2), sigma2 = sum of the ROW's x^2 / n);
// Q4_1 / Q5_1: quantize_row_q<4|5>_1_impl (make_qkx3_quants, rmin -0.9,
// rdelta 0.05, 36 steps, squared error); IQ4_NL: quantize_iq4_nl with
// weights qw[j] * sqrtf(sigma2_block + x^2), sigma2_block = 2/32 * sum of the
// BLOCK's x^2. Q8_0, MXFP4, TQ1_0, TQ2_0, NVFP4, Q1_0, Q2_0 ignore the
// weights in ggml: their rows are the reference quantizers'. F32 arithmetic in ggml's order,
// sequential sums, never fused. Every target runs this reference (the
// sums are sequential). Formulas: docs/schemes/ggml-encode.md.
#ifndef AMN_KERNELS_REF_GGML_ENCODE_IMATRIX_REF_H_
#define AMN_KERNELS_REF_GGML_ENCODE_IMATRIX_REF_H_

#include <cstddef>
#include <cstdint>

#include "amn/ggml_type.h"

namespace amn::ref {

// sum of x^2 over a row in element order, the F32 sum ggml's *_impl take
// sigma2 from (sigma2 = sum / n_per_row).
float GgmlRowSumSquares(const float* x, size_t n);

// One block (32 elements) of row-quantization with weights qw (the
// imatrix's 32 entries for these columns) and the row's sigma2, into out.
// False for a type without an imatrix path here.
bool QuantizeGgmlBlockImatrix(GgmlType type, const float* x, const float* qw, float sigma2,
                              uint8_t* out);

// One row of n (a multiple of the block) with n importance weights.
bool QuantizeGgmlRowImatrix(GgmlType type, const float* x, size_t n, const float* imatrix,
                            uint8_t* out);

}  // namespace amn::ref

#endif  // AMN_KERNELS_REF_GGML_ENCODE_IMATRIX_REF_H_
