// Scalar reference for compressed-tensors "pack-quantized" integer weights
// (amn/packed_int_dequant.h), written from neuralmagic/compressed-tensors:
//   compressors/quantized_compressors/pack_quantized.py unpack_from_int32
//     (values LSB-first in each int32, 32/bits per word, stored unsigned
//     with a +2^(bits-1) offset, the last word of a row zero-padded) and
//     decompress_weight (zero points packed the same way along dim 0);
//   quantization/lifecycle/forward.py _dequantize:
//     x_q.to(scale.dtype) - zero_point.to(scale.dtype), then * scale, all in
//     the scale's dtype.
// Never optimised: every Highway target must match it bit for bit.
//
// Layout (rows = out_features, cols = in_features, pf = 32 / bits):
//   weight_packed      u32 LE [rows][ceil(cols / pf)]
//       u(r,c) = (word[r][c / pf] >> (bits * (c % pf))) & (2^bits - 1)
//   weight_scale       [rows][cols / gs] of F32/F16/BF16, or one value
//                      (strategy "tensor", tensor_scale == true)
//   weight_zero_point  u32 LE [ceil(rows / pf)][cols / gs], or absent
//       uz(r,g) = (zp[r / pf][g] >> (bits * (r % pf))) & (2^bits - 1)
//     or, zero_points_i8 (compressed-tensors < 0.10 stored them unpacked):
//                      i8 [rows][cols / gs], uz(r,g) = zp[r][g] + 2^(bits-1)
// Formula. The signed values are u - 2^(bits-1) (q in [-8, 7] or
// [-128, 127]); the zero point's offset cancels: d = u - uz, or
// u - 2^(bits-1) without zero points. d (|d| <= 255, any i8 zero point) and every scale value
// are exact in the scale dtype, and d * scale has at most 19 significant
// bits, so PyTorch's scale-dtype arithmetic is the exact product rounded
// once to the scale dtype:
//   v(r,c) = RoundToScaleType(f32(d) * f32(scale[r][c / gs]))
// (an F32 scale rounds the F32 product itself), and the output is
// Round_out(v) (F32 output: v widened exactly; same-type output: v).
// NaN/Inf: IEEE, with the product's NaN chosen as in ref::ScaledF32Bits
// (the quieted scale, or 0xFFC00000 for an infinite scale times d == 0),
// then the NaN rules of kernels/ref/float_convert_ref.h.
#ifndef AMN_KERNELS_REF_PACKED_INT_REF_H_
#define AMN_KERNELS_REF_PACKED_INT_REF_H_

#include <cstddef>
#include <cstdint>

#include "amn/elem_type.h"

namespace amn::ref {

// A pack-quantized layer's tensors as they sit in the file (any alignment).
struct PackedIntMatrix {
  const uint8_t* weight_packed = nullptr;
  const uint8_t* scales = nullptr;
  const uint8_t* zero_points = nullptr;  // nullptr: symmetric
  bool zero_points_i8 = false;           // i8 [rows][groups], not packed
  ElemType scale_type = ElemType::kBf16;
  size_t rows = 0;
  size_t cols = 0;
  size_t group_size = 0;   // divides cols (channel: cols)
  uint32_t bits = 4;       // 4 or 8
  bool tensor_scale = false;  // one scale for the whole tensor
};

// F32 bits of `product` rounded to the scale type and widened back.
uint32_t RoundToScaleType(uint32_t product_bits, ElemType scale_type);

// uz(r, g): the unsigned zero point (the offset when symmetric).
int32_t PackedIntUnsignedZero(const PackedIntMatrix& m, size_t r, size_t g);

// F32 bits of v(r, c) (the scale-dtype value, widened exactly).
uint32_t PackedIntValueF32Bits(const PackedIntMatrix& m, size_t r, size_t c);

// Rows [row_begin, row_end) of the [rows, cols] weight into `out` (out_type
// kF32, kF16 or kBf16; any byte address).
void DequantPackedIntRows(const PackedIntMatrix& m, size_t row_begin, size_t row_end,
                          ElemType out_type, void* out);

}  // namespace amn::ref

#endif  // AMN_KERNELS_REF_PACKED_INT_REF_H_
