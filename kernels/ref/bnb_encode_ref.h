// Scalar reference for the bitsandbytes encoders of amn/quantize.h, written
// from bitsandbytes' CUDA kernels (csrc/kernels.cu: kQuantizeBlockwise with
// dQuantizeNF4 / dQuantizeFP4 / dQuantize<0>, kInt8VectorQuant) and
// functional.py (quantize_4bit, quantize_blockwise, create_dynamic_map),
// the code that wrote the checkpoints in circulation. Every target must
// match it bit for bit. Full rules and deviations: docs/schemes/forget.md.
//
// 4-bit (NF4 / FP4), flat elements in blocks of block_size:
//   absmax[b] = max |f32(x)| over the block      (unless given)
//   inv       = 1.0f / absmax[b]                 (F32 division, as the kernel)
//   xn        = f32(x) * inv                     (x == ±0: xn = x, see below)
//   code      = the CUDA decision tree on xn: strict `>` against bitsandbytes'
//               F32 pivot constants (kNf4Pivots / kFp4Pivots below), so a value
//               exactly on a pivot takes the lower code. FP4's sign is the sign
//               BIT of xn (CUDA tests xn < 0): -0.0 gives code 8, which decodes
//               to -0.0, so remember -> forget is lossless (CUDA would give 0).
//   packed[k] = code(2k) << 4 | code(2k + 1); a trailing odd element leaves
//               the low nibble 0.
// xn = x for x == ±0 keeps an all-zero block (absmax 0, inv = Inf) from
// computing 0 * Inf = NaN: its codes are the zero codes (NF4 7, FP4 0 / 8),
// where CUDA's NaN would fall to code 0 (NF4 -1.0 * 0 = -0.0).
// A given absmax of 0 sends non-zero x to ±Inf: the end codes.
//
// Double quant (quantize_4bit(compress_statistics=True)):
//   offset = f32(sum_double(absmax) / n)   (the sum in index order in double,
//            one division in double, one rounding to F32; torch.mean's F32
//            reduction order is not reproduced, see docs/schemes/forget.md)
//   v[b]   = absmax[b] - offset            (F32)
//   blocks of nested_block_size over v: nested_absmax = max |v|, then
//   code = dQuantize<0>(dynamic map, v * (1.0f / nested_absmax)), the CUDA
//   binary search with its midpoint tie rule; v == ±0 is not scaled.
//
// INT8 (LLM.int8(), int8_vectorwise_quant of the default backend):
//   SCB[r] = max |f32(x)| over row r           (unless given)
//   code   = clamp(rne(f32(x) * (127.0f / SCB[r])), -127, 127);  x == ±0: 0
// (the CUDA kernel's __fdividef(127, SCB) is an approximate division; the
// F32 division here is torch's `127.0 / row_stats`).
//
// NaN/Inf input: not encoded; the functions return the flat index of the
// first non-finite element, else kernels::kAllFinite.
#ifndef AMN_KERNELS_REF_BNB_ENCODE_REF_H_
#define AMN_KERNELS_REF_BNB_ENCODE_REF_H_

#include <array>
#include <cstddef>
#include <cstdint>

#include "amn/elem_type.h"
#include "kernels/encode_common.h"

namespace amn::ref {

// dQuantizeNF4 / dQuantizeFP4 on one normalised value.
uint8_t QuantizeNf4Value(float xn);
uint8_t QuantizeFp4Value(float xn);

// dQuantize<0> (the CUDA binary search) over a sorted 256-entry map.
uint8_t QuantizeDynamicValue(const float* map, float xn);
// The same for n values: codes[i] = QuantizeDynamicValue(map, x[i]).
void QuantizeDynamicValues(const float* map, const float* x, uint8_t* codes, size_t n);

// create_dynamic_map(signed=True, max_exponent_bits=7, total_bits=8) as
// checkpoints store it (kernels/bnb_encode_tables.h kDynamicMapBits).
std::array<float, 256> BnbDynamicMapRef();

// n flat elements of `in`; absmax has ceil(n / block_size) entries (read if
// absmax_given: finite and >= 0, checked by the caller); packed ceil(n / 2).
// errors (may be null) gets x' = cb[code] * absmax (F32; FP4 code 8 is -0.0).
uint64_t QuantizeBnb4Ref(const uint8_t* in, ElemType type, uint64_t n, uint64_t block_size,
                         bool fp4, bool absmax_given, float* absmax, uint8_t* packed,
                         kernels::ErrorSums* errors);

// Double quant's offset of nb absmax values: their mean, summed in double
// in index order and rounded once to F32 (0 for nb = 0).
float BnbNestedOffsetRef(const float* absmax, uint64_t nb);

// Double quant of nb absmax values (all finite): codes [nb], nested_absmax
// [ceil(nb / nested_block_size)], offset.
void QuantizeBnbNestedRef(const float* absmax, uint64_t nb, uint64_t nested_block_size,
                          uint8_t* codes, float* nested_absmax, float* offset);
// The blocks of that with the offset given: nb absmax values that start a
// nested block, codes [nb] (or null: only nested_absmax is made),
// nested_absmax [ceil(nb / nested_block_size)].
void QuantizeBnbNestedBlocksRef(const float* absmax, uint64_t nb, uint64_t nested_block_size,
                                float offset, uint8_t* codes, float* nested_absmax);

// rows x cols; scb [rows] (read if scb_given: finite and >= 0); codes
// rows * cols. errors gets x' = (f32(code) * SCB) * f32(1/127).
uint64_t QuantizeBnbInt8Ref(const uint8_t* in, ElemType type, uint64_t rows, uint64_t cols,
                            bool scb_given, float* scb, int8_t* codes,
                            kernels::ErrorSums* errors);

}  // namespace amn::ref

#endif  // AMN_KERNELS_REF_BNB_ENCODE_REF_H_
