// FP8 dequantization with scales (the FP8 checkpoint schemes of DESIGN.md §5):
// E4M3FN or E5M2 codes times F32 scales, rounded once to BF16/F16 (or kept
// as F32). Bit-exact on every target with the PyTorch formulation
// `weight.to(float32) * scale.to(float32)` then `.to(out dtype)`.
#ifndef AMN_FP8_DEQUANT_H_
#define AMN_FP8_DEQUANT_H_

#include <cstddef>
#include <cstdint>
#include <span>

#include "amn/elem_type.h"
#include "amn/export.h"
#include "amn/status.h"
#include "amn/targets.h"

namespace amn {

// Dequantizes whole rows of a row-major FP8 matrix with `cols` columns:
//   out[r][c] = Round(f32(code[r][c]) * col_scales[c / block_cols])
// for r in [0, codes.size() / cols): one F32 multiply (never fused), then
// the conversion rules of docs/formats.md (F32 output: the product itself).
// `code_type` is kF8E4m3 or kF8E5m2; `out_type` kF32, kF16 or kBf16.
// col_scales must hold ceil(cols / block_cols) values (block_cols >= 1).
// Scale layouts map onto this by choosing the rows and scales of a call:
//   per-tensor:   all rows, one scale, block_cols = cols;
//   per-channel:  one row at a time, scale S[r], block_cols = cols;
//   block R x C:  the rows of one row block, S[r / R][...], block_cols = C.
// Errors (kInvalidArgument, nothing written): codes.size() not a multiple of
// cols, too few scales, out smaller than rows * cols elements of out_type,
// wrong element types.
AMN_API Status DequantFp8Rows(ElemType code_type, std::span<const uint8_t> codes, size_t cols,
                              std::span<const float> col_scales, size_t block_cols,
                              ElemType out_type, std::span<std::byte> out);

// Probe: the target the FP8 dequant dispatch table runs right now.
AMN_API TargetId Fp8DequantTarget();

}  // namespace amn

#endif  // AMN_FP8_DEQUANT_H_
