// Scalar references of ggml's K-quant encoders: byte for byte what
// ggml_quantize_chunk writes for Q2_K, Q3_K, Q4_K, Q5_K, Q6_K and IQ4_XS,
// without importance matrix (quantize_row_<type>_ref) and with one
// (quantize_row_<type>_impl / quantize_row_iq4_nl_impl given quant_weights:
// other searches, the *_KW functions below). ggml-quants.c; block layouts in
// kernels/ggml_kquant_blocks.h. No Highway.
//
// Each type runs in three stages per 256-element super-block, so a Highway
// body (kernels/ggml_kquant_encode-inl.h) can share the order-sensitive one
// and replace the order-free one:
//   1. Search<T>: the per-sub-block scale searches (kernels/ref/
//      ggml_quant_search.h, ordered sums), the super-block scales, and the
//      block's header fields (d, dmin, packed sub-block scales) written into
//      the output block; it fills `codes` with the searches' own codes and
//      `sub` with each sub-block's final (d_j, dm_j), both read back from the
//      stored F16 scales exactly as ggml does.
//   2. RequantAffine: every sub-block with d_j != 0 gets new codes
//      clamp(nearest_int((x + dm_j) / d_j), lo, hi) + off (order-free: one
//      element at a time). Sub-blocks with d_j == 0 keep stage 1's codes.
//      (Q3_K and Q6_K divide x alone; x + 0.0f differs from x only for -0,
//      whose quotient rounds to the same integer 0.)
//   3. Pack<T>: the codes into the block's bit planes.
// IQ4_XS's stage 2 picks codebook entries for every sub-block instead
// (RequantIq4Xs: best_index_int8(kvalues_iq4nl, sub.d[j] * x)).
//
// Preconditions: n_elems a multiple of 256, all inputs finite (the family
// adapter refuses non-finite rows), out holds n_elems / 256 blocks.
#ifndef AMN_KERNELS_REF_GGML_KQUANT_ENCODE_REF_H_
#define AMN_KERNELS_REF_GGML_KQUANT_ENCODE_REF_H_

#include <cstddef>
#include <cstdint>

#include "amn/ggml_type.h"
#include "kernels/encode_args.h"
#include "kernels/encode_common.h"

namespace amn::ref {

// Stage-1 results of one super-block.
struct KQuantSub {
  int n_sub = 0;    // sub-blocks per super-block (8 or 16)
  int sub_len = 0;  // elements per sub-block (32 or 16)
  int lo = 0, hi = 0, off = 0;  // stage 2's clamp range and code offset
  float d[16] = {};   // d_j (0: keep stage 1's codes)
  float dm[16] = {};  // dm_j added to x before the division
};

// Stage 1 per type: x is 256 elements, block the output block.
void SearchQ2_K(const float* x, uint8_t* block, uint8_t* codes, KQuantSub& sub);
void SearchQ3_K(const float* x, uint8_t* block, uint8_t* codes, KQuantSub& sub);
void SearchQ4_K(const float* x, uint8_t* block, uint8_t* codes, KQuantSub& sub);
void SearchQ5_K(const float* x, uint8_t* block, uint8_t* codes, KQuantSub& sub);
void SearchQ6_K(const float* x, uint8_t* block, uint8_t* codes, KQuantSub& sub);
// IQ4_XS: sub.d[j] is the inverse 1 / (d * l_j) of the float sub-block
// scale (not F16-rounded: ggml requantizes with it), or 0.
void SearchIq4Xs(const float* x, uint8_t* block, uint8_t* codes, KQuantSub& sub);

// Stage 1 with an importance matrix: qw holds the super-block's 256
// importance values (one per column, ggml's quant_weights + 256 * i).
// Weights w_l = qw_l * sqrt(sigma2 + x_l^2), sigma2 = 2 sum x^2 / 256 (Q2_K:
// sum x^2 / 256; IQ4_XS: sum x^2 * (2 / 256)); Q6_K uses qw alone. The
// sub-block scales (and mins) are then quantized by weighted searches of
// their own (make_qp_quants; Q3_K: make_qx_quants) weighted by each
// sub-block's sum of w. Stages 2 and 3 are unchanged.
void SearchQ2_KW(const float* x, const float* qw, uint8_t* block, uint8_t* codes,
                 KQuantSub& sub);
void SearchQ3_KW(const float* x, const float* qw, uint8_t* block, uint8_t* codes,
                 KQuantSub& sub);
void SearchQ4_KW(const float* x, const float* qw, uint8_t* block, uint8_t* codes,
                 KQuantSub& sub);
void SearchQ5_KW(const float* x, const float* qw, uint8_t* block, uint8_t* codes,
                 KQuantSub& sub);
void SearchQ6_KW(const float* x, const float* qw, uint8_t* block, uint8_t* codes,
                 KQuantSub& sub);
void SearchIq4XsW(const float* x, const float* qw, uint8_t* block, uint8_t* codes,
                  KQuantSub& sub);

// The imatrix weights of Q2_K, Q3_K, Q4_K, Q5_K or IQ4_XS for one
// super-block: weights[l] = qw[l] * sqrt(sigma2 + x[l]^2) (256 of them) and
// sw[j] their ordered sum over sub-block j (8 of 32 or 16 of 16; IQ4_XS
// does not use sw).
void ImatrixWeights(GgmlType type, const float* x, const float* qw, float* weights, float* sw);

// The super-block parts with an importance matrix, after the sub-block
// searches: the scales (and mins) as make_qp_quants codes weighted by sw
// (Q3_K: make_qx_quants, nmax 32), the header, and sub.
void FinishQ45KW(const float* scales, const float* mins, const float* sw, int nmax,
                 uint8_t* block, KQuantSub& sub);
void FinishQ2KW(const float* scales, const float* mins, const float* sw, uint8_t* block,
                KQuantSub& sub);
void FinishQ3KW(const float* scales, const float* sw, uint8_t* block, KQuantSub& sub);

// The super-block part of Q4_K/Q5_K's stage 1, after the eight sub-block
// searches: 6-bit scales and mins relative to the largest of each (running
// max with >, in sub-block order), d and dmin, and sub.
void FinishQ45K(const float* scales, const float* mins, int nmax, uint8_t* block,
                KQuantSub& sub);

// The same for Q2_K after its sixteen searches (4-bit scales and mins).
void FinishQ2K(const float* scales, const float* mins, uint8_t* block, KQuantSub& sub);

// Q6_K's super-block part after its sixteen searches (codes: theirs).
void FinishQ6K(const float* scales, uint8_t* block, uint8_t* codes, KQuantSub& sub);

// IQ4_XS's super-block part after its eight searches.
void FinishIq4Xs(const float* scales, uint8_t* block, KQuantSub& sub);

// Q3_K's super-block part after its sixteen searches.
void FinishQ3K(const float* scales, uint8_t* block, KQuantSub& sub);

// Stage 2.
void RequantAffine(const float* x, const KQuantSub& sub, uint8_t* codes);
void RequantIq4Xs(const float* x, const KQuantSub& sub, uint8_t* codes);

// Stage 3.
void PackQ2_K(const uint8_t* codes, uint8_t* block);
void PackQ3_K(const uint8_t* codes, uint8_t* block);
void PackQ4_K(const uint8_t* codes, uint8_t* block);
void PackQ5_K(const uint8_t* codes, uint8_t* block);
void PackQ6_K(const uint8_t* codes, uint8_t* block);
void PackIq4Xs(const uint8_t* codes, uint8_t* block);

// Whether this family encodes `type` (Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_XS),
// and its block bytes (0 otherwise).
size_t KQuantEncodeBlockBytes(GgmlType type);

// One super-block (256 F32) of `type`, all three stages; qw its 256
// importance values or null.
void QuantizeKQuantBlock(GgmlType type, const float* x, const float* qw, uint8_t* out);

// One row of n_elems F32 to n_elems / 256 blocks of `type`; imatrix: n_elems
// importance values (ggml's quant_weights for this row) or null.
void QuantizeKQuantRow(GgmlType type, const float* x, size_t n_elems, uint8_t* out,
                       const float* imatrix = nullptr);

// The error sums of one encoded super-block: elements i0 .. i0 + 255 of the
// call, x their inputs, block their encoding.
void AddKQuantErrors(GgmlType type, const uint8_t* block, const float* x, uint64_t i0,
                     kernels::ErrorSums& errors);

// The kernel table's reference of family GgmlKQuantQuant: rows x cols
// BF16/F16/F32 inputs, widened to F32 one super-block at a time and
// quantized as QuantizeKQuantRow does (super-blocks are independent). A
// non-finite element is refused: its index is returned, the blocks before
// its super-block are written, that one and the rest are not. imatrix: null
// (ggml's reference quantizers) or cols importance values (ggml's
// quant_weights, applied per column of every row: the *_KW searches). With errors, each written super-block is decoded
// (ref::DequantKQuantBlock) and its elements added with kernels::AddError
// (index = flat element index of the call), as the other encoders do.
uint64_t EncodeGgmlKQuantQuant(const kernels::GgmlQuantArgs& a, kernels::ErrorSums* errors);

}  // namespace amn::ref

#endif  // AMN_KERNELS_REF_GGML_KQUANT_ENCODE_REF_H_
