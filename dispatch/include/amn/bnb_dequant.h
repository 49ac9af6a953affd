// bitsandbytes dequantization (the bitsandbytes schemes of DESIGN.md §5):
// NF4 / FP4 4-bit weights with per-block absmax, plain or double quant
// (absmax itself 8-bit quantized), and LLM.int8() row-wise INT8 with SCB.
// Bit-exact on every target with bitsandbytes' dequantize_4bit and
// int8_vectorwise_dequant (formulas and NaN rule: kernels/ref/bnb_ref.h,
// docs/schemes/bitsandbytes.md).
#ifndef AMN_BNB_DEQUANT_H_
#define AMN_BNB_DEQUANT_H_

#include <cstddef>
#include <cstdint>
#include <span>

#include "amn/elem_type.h"
#include "amn/export.h"
#include "amn/status.h"
#include "amn/targets.h"

namespace amn {

// A 4-bit tensor as it sits in a file (spans need no alignment).
struct Bnb4Tensor {
  uint64_t elements = 0;                 // N (the quant_state shape's product)
  uint64_t block_size = 64;              // elements per absmax (even, >= 2)
  std::span<const std::byte> packed;     // u8 [ceil(N/2)], element 2k in the high nibble of byte k
  std::span<const std::byte> quant_map;  // f32 LE [16] (the codebook stored with the weight)
  std::span<const std::byte>
      absmax;  // plain: f32 LE [nb]; double quant: u8 [nb]; nb = ceil(N/block_size)
  bool double_quant = false;
  std::span<const std::byte> nested_absmax;     // f32 LE [ceil(nb / nested_block_size)]
  std::span<const std::byte> nested_quant_map;  // f32 LE [256]
  uint64_t nested_block_size = 256;
  float nested_offset = 0.0f;
};

// Elements [begin, end) of the flat tensor as out_type (kF32/kF16/kBf16),
// into out[0, end - begin):
//   out[e] = Round(cb[nibble(e)] * absmax[e / block_size])
// with cb = quant_map (an entry +0.0 at an index >= 8 reads as -0.0: the FP4
// rule of bitsandbytes' CUDA kernel) and, for double quant,
//   absmax[b] = nested_quant_map[absmax_u8[b]] * nested_absmax[b / nested_block_size]
//               + nested_offset   (two f32 operations).
// Any begin <= end <= N (an odd begin starts at a low nibble).
// Errors (kInvalidArgument, nothing written, the message names the field):
// span sizes not matching N / block sizes (spans may not be shorter or
// longer than the layout says), block_size odd or 0, nested_block_size 0,
// begin > end or end > N, out shorter than (end - begin) elements, an output
// type other than the three.
AMN_API Status DequantBnb4(const Bnb4Tensor& t, uint64_t begin, uint64_t end, ElemType out_type,
                           std::span<std::byte> out);

// An LLM.int8() weight: i8 [rows][cols] row-major, SCB f32 LE [rows].
struct BnbInt8Tensor {
  uint64_t rows = 0, cols = 0;
  std::span<const std::byte> weight;  // i8 [rows][cols]
  std::span<const std::byte> scb;     // f32 LE [rows]
};

// Rows [row_begin, row_end) as out_type into out[0, (row_end - row_begin) * cols):
//   out[r][c] = Round((f32(w[r][c]) * SCB[r]) * f32(7.874015718698502e-3))
// (int8_vectorwise_dequant's `A * stats.view(-1, 1) * 7.874015718698502e-3`).
// Errors as DequantBnb4 (weight not rows * cols bytes, scb not rows * 4,
// bad row range, short out, bad output type).
AMN_API Status DequantBnbInt8(const BnbInt8Tensor& t, uint64_t row_begin, uint64_t row_end,
                              ElemType out_type, std::span<std::byte> out);

// Probe: the target the bitsandbytes dispatch table runs right now.
AMN_API TargetId BnbTarget();

}  // namespace amn

#endif  // AMN_BNB_DEQUANT_H_
