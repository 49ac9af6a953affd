// GPTQ dequantization (GPTQModel / AutoGPTQ packed int32 checkpoints, 2, 3,
// 4 or 8 bits): the packed layer back to F32/F16/BF16, bit-exact on every
// target with GPTQModel's dequantize_weight computed in f32
// (docs/schemes/gptq.md).
#ifndef AMN_GPTQ_DEQUANT_H_
#define AMN_GPTQ_DEQUANT_H_

#include <cstddef>
#include <cstdint>
#include <span>

#include "amn/elem_type.h"
#include "amn/export.h"
#include "amn/status.h"
#include "amn/targets.h"
#include "amn/weight_layout.h"

namespace amn {

// One packed linear layer. The spans may point into an mmapped file: any
// alignment. Every tensor is little-endian.
struct GptqLayer {
  uint32_t bits = 4;            // 2, 3, 4 or 8
  uint64_t in_features = 0;     // K (bits*K must be a multiple of 32)
  uint64_t out_features = 0;    // N (bits*N must be a multiple of 32)
  uint64_t groups = 0;          // rows of scales and qzeros
  uint64_t group_size = 0;      // used only when g_idx is empty: g = i / group_size
  bool zeros_plus_one = true;   // v1 checkpoints store zero - 1
  ElemType scale_type = ElemType::kF16;  // kF32, kF16 or kBf16
  std::span<const std::byte> qweight;  // int32 LE [K*bits/32][N]
  std::span<const std::byte> qzeros;   // int32 LE [groups][N*bits/32]
  std::span<const std::byte> scales;   // [groups][N] of scale_type
  std::span<const std::byte> g_idx;    // int32 LE [K], or empty
};

// Writes rows [row_begin, row_end) of the dequantized weight in `orientation`
// (kOutIn: rows are output features, each K elements; kInOut: rows are input
// features, each N elements) to `out` as out_type (kF32/kF16/kBf16):
//   out[i][j] = Round((f32(q(i,j)) - f32(z(g,j))) * f32(scale[g][j]))
// with g = g_idx[i] (or i / group_size), z = the stored zero (+ 1 when
// zeros_plus_one), one F32 multiply, Round = the output conversion (F32
// output: the product itself). `out` may start at any byte.
// Errors (kInvalidArgument, nothing written, the message names the field):
// bits not 2/3/4/8; K or N not packable; a span size that does not match the
// shape; row range out of bounds; out too small; a scale or output type
// outside the three; groups == 0 with K > 0; group_size == 0 without g_idx;
// groups < ceil(K / group_size) without g_idx; a g_idx value outside
// [0, groups) (the message names the index i).
AMN_API Status DequantGptq(const GptqLayer& layer, WeightOrientation orientation,
                           uint64_t row_begin, uint64_t row_end, ElemType out_type,
                           std::span<std::byte> out);

// Probe: the target the GPTQ dispatch table runs right now.
AMN_API TargetId GptqTarget();

}  // namespace amn

#endif  // AMN_GPTQ_DEQUANT_H_
