// The IQ2/IQ1 encoder family (IQ2_XXS, IQ2_XS, IQ2_S, IQ1_S, IQ1_M): the
// block encoders of kernels/ref/ggml_iq2_encode_ref.h and
// ggml_iq1_encode_ref.h behind one row/tensor entry, as
// ggml_kquant_encode_ref.h does for the K-quants. Scalar.
#ifndef AMN_KERNELS_REF_GGML_IQ2_IQ1_ENCODE_REF_H_
#define AMN_KERNELS_REF_GGML_IQ2_IQ1_ENCODE_REF_H_

#include <cstddef>
#include <cstdint>

#include "amn/ggml_type.h"
#include "kernels/encode_args.h"
#include "kernels/encode_common.h"
#include "kernels/ref/ggml_iq2_grid_index.h"

namespace amn::ref {

// Block bytes of a type of this family (0 for any other type).
size_t Iq2Iq1EncodeBlockBytes(GgmlType type);

// Whether ggml refuses to encode `type` without an importance matrix
// (ggml_quantize_requires_imatrix: IQ2_XXS, IQ2_XS, IQ1_S).
bool Iq2Iq1RequiresImatrix(GgmlType type);

// One super-block (256 F32) of `type`; qw its 256 importance values or
// null; `score` the neighbour scorer (the dispatched one gives the same
// bits: dispatch/ggml_iq2_iq1_encode.cc).
void QuantizeIq2Iq1Block(GgmlType type, const float* x, const float* qw, uint8_t* out,
                         iq2::NeighbourScoreFn score = iq2::ScoreNeighboursRef);

// The family over rows x cols BF16/F16/F32 inputs, one super-block at a
// time (they are independent): a non-finite element is refused by index
// (the blocks before its super-block are written); imatrix null or cols
// values applied per column of every row. With errors, each block is
// decoded (ref::DequantIQuantBlock) and added with kernels::AddError.
// The caller refuses a missing imatrix where Iq2Iq1RequiresImatrix says so.
uint64_t EncodeGgmlIq2Iq1Quant(const kernels::GgmlQuantArgs& a, kernels::ErrorSums* errors,
                               iq2::NeighbourScoreFn score);
// The same with the scalar scorer: the kernel table's reference of family
// GgmlIq2Iq1Quant (dispatch/kernel_table.h), in the table's signature.
uint64_t EncodeGgmlIq2Iq1Quant(const kernels::GgmlQuantArgs& a, kernels::ErrorSums* errors);

}  // namespace amn::ref

#endif  // AMN_KERNELS_REF_GGML_IQ2_IQ1_ENCODE_REF_H_
