// 4-bit float (E2M1) safetensors schemes (DESIGN.md §5): compressed-tensors
// NVFP4 (`nvfp4-pack-quantized`: weight_packed, weight_scale E4M3,
// weight_global_scale) and gpt-oss MXFP4 (`*_blocks` + E8M0 `*_scales`), to
// BF16/F16/F32. Bit-exact on every target with the canonical Python
// (compressed-tensors NVFP4PackedCompressor.decompress_weight, transformers
// convert_moe_packed_tensors); formulas, NaN rule and layouts in
// docs/schemes/fp4.md and kernels/ref/fp4_ref.h.
#ifndef AMN_FP4_DEQUANT_H_
#define AMN_FP4_DEQUANT_H_

#include <cstddef>
#include <cstdint>
#include <span>

#include "amn/elem_type.h"
#include "amn/export.h"
#include "amn/status.h"
#include "amn/targets.h"

namespace amn {

struct Nvfp4Tensor {
  uint64_t rows = 0, cols = 0;              // [out, in]; cols a multiple of 16
  std::span<const std::byte> packed;        // u8 [rows][cols/2]
  std::span<const std::byte> scales;        // E4M3 [rows][cols/16]
  std::span<const std::byte> global_scale;  // f32 LE, one value
};

// Output rows [row_begin, row_end) of the dense [rows, cols] weight into
// `out` (row_begin's first element at out[0]):
//   out[r][c] = Round(e2m1(code[r][c]) * (f32(scale[r][c/16]) / global))
// each step in F32. Errors (kInvalidArgument, nothing written): span sizes
// that do not match rows/cols exactly, cols not a multiple of 16, a bad row
// range, out shorter than the range, out_type not f32/f16/bf16.
AMN_API Status DequantNvfp4(const Nvfp4Tensor& t, uint64_t row_begin, uint64_t row_end,
                            ElemType out_type, std::span<std::byte> out);

struct Mxfp4Tensor {
  uint64_t experts = 1;  // product of the dims before the last three of blocks (1 for a 3-D [R, G, 16] tensor)
  uint64_t rows = 0;     // R
  uint64_t groups = 0;   // G (32 values each)
  std::span<const std::byte> blocks;  // u8 [experts][R][G][16]
  std::span<const std::byte> scales;  // u8 (E8M0) [experts][R][G]
  bool transpose = true;  // transformers' layout [experts][G*32][R]; false: [experts][R][G*32]
};

// Output rows [row_begin, row_end) of the flattened output matrix
// (experts * (transpose ? G*32 : R) rows of transpose ? R : G*32 elements):
//   value[e][r][c] = Round(e2m1(code) * 2^(scale[e][r][c/32] - 127))
// in F32 (scale 255 is 2^128 = +Inf, as transformers' ldexp gives).
// Errors as DequantNvfp4 (experts, rows, groups whose product overflows,
// span sizes that do not match exactly).
AMN_API Status DequantMxfp4(const Mxfp4Tensor& t, uint64_t row_begin, uint64_t row_end,
                            ElemType out_type, std::span<std::byte> out);

// Probe: the target the FP4 dispatch table runs right now.
AMN_API TargetId Fp4Target();

}  // namespace amn

#endif  // AMN_FP4_DEQUANT_H_
