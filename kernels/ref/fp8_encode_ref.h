// Scalar reference for the FP8 encoders of amn/quantize.h (AbsMaxGrid,
// QuantizeFp8), written from the rule of the FP8 quantizers of
// transformers (integrations/finegrained_fp8.py) and compressed-tensors:
//   scale = amax / max_finite        (F32; amax == 0 gives scale 1)
//   code  = fp8_rne(clamp(f32(x) / scale, -max_finite, max_finite))
// one F32 division (never a reciprocal multiply), the clamp, then
// round-to-nearest-even into E4M3FN (max 448) or E5M2 (max 57344); the sign
// of zero is kept (-0 -> 0x80). An input below half the smallest subnormal
// rounds to a signed zero. Every target must match this bit for bit.
//
// Layout: `in` is rows x cols row-major elements of `type` (BF16/F16/F32,
// little-endian, any alignment); the group grid is ceil(rows / group_rows) x
// ceil(cols / group_cols) row-major, edge groups partial.
// NaN/Inf: never encoded; the functions return the flat index of the first
// non-finite input (row-major order) and write nothing useful, else
// kernels::kAllFinite.
#ifndef AMN_KERNELS_REF_FP8_ENCODE_REF_H_
#define AMN_KERNELS_REF_FP8_ENCODE_REF_H_

#include <cstddef>
#include <cstdint>

#include "amn/elem_type.h"
#include "kernels/encode_common.h"

namespace amn::ref {

// F32 -> FP8 with round-to-nearest-even. v must be finite with |v| <= the
// format's max finite (448 / 57344): the encoder clamps first.
uint8_t F32ToE4m3Rne(float v);
uint8_t F32ToE5m2Rne(float v);

// max |x| (F32) of each group into amax.
uint64_t AbsMaxGridRef(const uint8_t* in, ElemType type, uint64_t rows, uint64_t cols,
                       uint64_t group_rows, uint64_t group_cols, float* amax);

// codes[r * cols + c] from the scale of (r, c)'s group; every scale finite
// and > 0 (checked by the caller). errors (may be null) gets x' = f32(code) * scale.
uint64_t QuantizeFp8Ref(const uint8_t* in, ElemType type, uint64_t rows, uint64_t cols,
                        uint64_t group_rows, uint64_t group_cols, bool e5m2, const float* scales,
                        uint8_t* codes, kernels::ErrorSums* errors);

}  // namespace amn::ref

#endif  // AMN_KERNELS_REF_FP8_ENCODE_REF_H_
