// AutoAWQ GEMM 4-bit ("version": "gemm") linear-layer weights to plain
// F32/F16/BF16, bit-exact on every target with AutoAWQ's dequantize_gemm
// unpacking (docs/schemes/awq.md):
//   w(i, j) = Round((f32(q(i,j)) - f32(z(i/group_size, j))) * f32(scale[i/group_size][j]))
// for input feature i and output feature j, with AWQ's nibble interleave in
// both qweight and qzeros and no +1 on the zeros.
#ifndef AMN_AWQ_DEQUANT_H_
#define AMN_AWQ_DEQUANT_H_

#include <cstddef>
#include <cstdint>
#include <span>

#include "amn/elem_type.h"
#include "amn/export.h"
#include "amn/status.h"
#include "amn/targets.h"
#include "amn/weight_layout.h"

namespace amn {

// One AWQ layer's tensors, as stored in the checkpoint (little-endian, any
// byte alignment: spans may point into an mmapped file).
struct AwqLayer {
  uint64_t in_features = 0;   // K (the rows of qweight)
  uint64_t out_features = 0;  // N (a multiple of 8)
  uint64_t group_size = 0;    // groups = ceil(K / group_size)
  ElemType scale_type = ElemType::kF16;  // kF32, kF16 or kBf16
  std::span<const std::byte> qweight;  // int32 LE [K][N/8]
  std::span<const std::byte> qzeros;   // int32 LE [groups][N/8]
  std::span<const std::byte> scales;   // [groups][N] of scale_type
};

// Rows [row_begin, row_end) in `orientation` (kOutIn: output features, K
// elements each; kInOut: input features, N each), as out_type (kF32, kF16
// or kBf16), row-major into `out`, which may start at any byte.
// Errors (kInvalidArgument, nothing written, the message names the field):
// a zero or non-multiple-of-8 out_features, zero in_features or group_size,
// tensor sizes that do not match the shape, a bad scale or output type, a
// row range past the orientation's rows, an output smaller than
// (row_end - row_begin) rows.
AMN_API Status DequantAwq(const AwqLayer& layer, WeightOrientation orientation, uint64_t row_begin,
                          uint64_t row_end, ElemType out_type, std::span<std::byte> out);

// Probe: the target the AWQ and pack-quantized dispatch table runs now.
AMN_API TargetId AwqTarget();

}  // namespace amn

#endif  // AMN_AWQ_DEQUANT_H_
