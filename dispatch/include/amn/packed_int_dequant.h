// compressed-tensors "pack-quantized" integer weights (quant_method
// "compressed-tensors", format "pack-quantized", weights type "int",
// num_bits 4 or 8, strategy "channel", "group" or "tensor") to plain
// F32/F16/BF16, bit-exact on every target with compressed-tensors'
// unpack_from_int32 + dequantize (docs/schemes/compressed-tensors-int.md):
//   v(r, c) = RoundToScaleType(f32(q - z) * f32(scale))   (PyTorch computes
//             x_q.to(scale.dtype) - zero_point.to(scale.dtype), then
//             * scale, in the scale's dtype; this is that result exactly)
//   out     = Round_out(v)   (F32 output: v widened exactly)
#ifndef AMN_PACKED_INT_DEQUANT_H_
#define AMN_PACKED_INT_DEQUANT_H_

#include <cstddef>
#include <cstdint>
#include <span>

#include "amn/elem_type.h"
#include "amn/export.h"
#include "amn/status.h"
#include "amn/targets.h"

namespace amn {

// One pack-quantized linear layer (nn.Linear orientation), as stored in the
// checkpoint: little-endian, any byte alignment. pf = 32 / num_bits.
struct PackedIntLayer {
  // `<name>.weight_shape` (I64 or I32 [2]): rows = out_features,
  // cols = in_features.
  uint64_t rows = 0;
  uint64_t cols = 0;
  uint32_t num_bits = 4;  // quantization_config weights.num_bits: 4 or 8
  // weights.group_size for strategy "group" (must divide cols, as
  // compressed-tensors requires); cols for "channel" and "tensor".
  uint64_t group_size = 0;
  // Strategy "tensor": weight_scale holds one value for every row
  // (symmetric only: compressed-tensors does not pack a per-tensor zero).
  bool tensor_scale = false;
  ElemType scale_type = ElemType::kBf16;  // weight_scale's dtype: kBf16, kF16 or kF32
  // `<name>.weight_packed`: I32 [rows][ceil(cols / pf)], values LSB-first,
  // stored as q + 2^(num_bits-1); the last word of a row zero-padded.
  std::span<const std::byte> weight_packed;
  // `<name>.weight_scale`: scale_type [rows][cols / group_size] ([rows, 1]
  // for "channel"), or one value ([1]) with tensor_scale.
  std::span<const std::byte> weight_scale;
  // `<name>.weight_zero_point` (asymmetric "group"/"channel" only): I32
  // [ceil(rows / pf)][cols / group_size], packed along dim 0 (rows) the same
  // way, stored as z + 2^(num_bits-1). Empty for symmetric layers.
  std::span<const std::byte> weight_zero_point;
  // weight_zero_point is I8 [rows][cols / group_size], signed and unpacked:
  // what compressed-tensors wrote before 0.10.0 (which also saved all-zero
  // zero points for symmetric layers; passing those gives the same result
  // as leaving the span empty).
  bool zero_point_i8 = false;
};

// Rows [row_begin, row_end) of the [rows, cols] weight as out_type (kF32,
// kF16 or kBf16), row-major into `out`, which may start at any byte.
// Errors (kInvalidArgument, nothing written, the message names the field):
// num_bits not 4 or 8, zero rows/cols/group_size, group_size not dividing
// cols, tensor sizes that do not match the shape, a zero point with
// tensor_scale, a bad scale or output type, a row range past rows, an
// output smaller than (row_end - row_begin) * cols elements.
AMN_API Status DequantPackedInt(const PackedIntLayer& layer, uint64_t row_begin, uint64_t row_end,
                                ElemType out_type, std::span<std::byte> out);

// Probe: the target the pack-quantized dispatch table runs now.
AMN_API TargetId PackedIntTarget();

}  // namespace amn

#endif  // AMN_PACKED_INT_DEQUANT_H_
