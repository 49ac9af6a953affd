// Scalar reference for the ggml encoders of the simple block types (Q4_0
// Q4_1 Q5_0 Q5_1 Q8_0 IQ4_NL MXFP4 TQ1_0 TQ2_0 NVFP4 Q1_0 Q2_0), written from ggml-quants.c
// (quantize_row_<type>_ref, and quantize_iq4_nl for IQ4_NL, which is what
// ggml_quantize_chunk runs without an importance matrix). Plain loops in
// ggml's element order, F32 arithmetic with one rounding per operation in
// ggml's order, never fused (kernels/ref is built with -ffp-contract=off),
// scales stored as F16 with IEEE round-to-nearest-even (ggml's
// GGML_FP32_TO_FP16). Every Highway target must match it bit for bit.
// Formulas and where the bytes depend on evaluation order:
// docs/schemes/ggml-encode.md.
//
// Where ggml converts a float to a narrow integer with a C cast
// ((int8_t)f, (uint8_t)f) or lroundf, the result for a value outside the
// integer's range (which only happens when 1/d overflowed to Inf, i.e. a
// block whose largest magnitude is below ~1e-36) is what x86-64 gives, the
// platform ggml's pinned prebuilt runs on: the conversion instruction's
// "integer indefinite" (INT_MIN), then the low bits.
//
// Input: finite F32 (the checked API refuses NaN/Inf before any of this).
#ifndef AMN_KERNELS_REF_GGML_ENCODE_REF_H_
#define AMN_KERNELS_REF_GGML_ENCODE_REF_H_

#include <cstddef>
#include <cstdint>

#include "amn/ggml_type.h"
#include "kernels/encode_args.h"
#include "kernels/encode_common.h"

namespace amn::ref {

// One row of n F32 values (n a multiple of the type's block elements: 32,
// or 256 for TQ1_0/TQ2_0) -> n / block_elems blocks in ggml's layout.
void QuantizeRowQ4_0(const float* x, size_t n, uint8_t* out);
void QuantizeRowQ4_1(const float* x, size_t n, uint8_t* out);
void QuantizeRowQ5_0(const float* x, size_t n, uint8_t* out);
void QuantizeRowQ5_1(const float* x, size_t n, uint8_t* out);
void QuantizeRowQ8_0(const float* x, size_t n, uint8_t* out);
void QuantizeRowIq4Nl(const float* x, size_t n, uint8_t* out);
void QuantizeRowMxfp4(const float* x, size_t n, uint8_t* out);
void QuantizeRowTq1_0(const float* x, size_t n, uint8_t* out);
void QuantizeRowTq2_0(const float* x, size_t n, uint8_t* out);
// Blocks of 64 (NVFP4, Q2_0) and 128 (Q1_0).
void QuantizeRowNvfp4(const float* x, size_t n, uint8_t* out);
void QuantizeRowQ1_0(const float* x, size_t n, uint8_t* out);
void QuantizeRowQ2_0(const float* x, size_t n, uint8_t* out);

// ggml_fp32_to_ue4m3: NVFP4's sub-block scale byte for x = amax / 6 (x > 0
// finite here; <= 0 gives 0). Values above 448 saturate to 0x7E; exponents
// below E4M3's take the subnormal path (int)(x * 512 + 0.5) in F32, capped at
// 7; otherwise the 3-bit mantissa is rounded half up on the magnitude from
// bit 19 of x, carrying into the exponent (0x7E again past the top).
uint8_t F32ToUe4m3(float x);
// ggml's best_index_mxfp4: the first code c whose |M[c] * e - x| is
// smallest (strict `<`), M the doubled E2M1 codebook. MXFP4 and NVFP4.
uint8_t BestIndexFp4(float x, float e);

// One IQ4_NL block of 32 with its weights (x^2 without an imatrix; see
// kernels/ref/ggml_encode_imatrix_ref.h with one).
void QuantizeIq4NlBlockWeighted(const float* x, const float* weight, uint8_t* out);

// Block elements and bytes of a type this file encodes; 0 for any other.
size_t GgmlEncodeBlockElems(GgmlType type);
size_t GgmlEncodeBlockBytes(GgmlType type);

// The row function of `type` above; false (nothing written) for a type
// this file does not encode.
bool QuantizeGgmlRow(GgmlType type, const float* x, size_t n, uint8_t* out);

// ggml's dequantize_row_<type> of n_blocks blocks (the project's decoders'
// references): the x' of the error sums.
bool DequantGgmlEncodedBlocks(GgmlType type, const uint8_t* blocks, size_t n_blocks, float* out);

// Whether ggml's quantizer of `type` uses an importance matrix (Q4_0 Q4_1
// Q5_0 Q5_1 IQ4_NL); the others ignore it (quantize_q1_0 / quantize_q2_0
// take one but run the same reference row by row, so the bytes are equal).
bool GgmlImatrixChangesBytes(GgmlType type);

// The kernel table's reference of family GgmlLegacyQuant
// (kernels/encode_args.h): each row widened to F32, checked finite (the
// first non-finite element's flat index is returned), quantized, then
// decoded for the error sums (when errors is not null). With a.imatrix
// (cols weights) the types that use one follow
// kernels/ref/ggml_encode_imatrix_ref.h, a row at a time.
uint64_t EncodeGgmlLegacyQuant(const kernels::GgmlQuantArgs& a, kernels::ErrorSums* errors);

// x86-64's conversion of a float to int32 by truncation (cvttss2si): a value
// out of range or NaN gives INT32_MIN. The C casts ggml uses to int8_t /
// uint8_t compile to this, then keep the low byte.
int32_t TruncToInt32X86(float f);

}  // namespace amn::ref

#endif  // AMN_KERNELS_REF_GGML_ENCODE_REF_H_
