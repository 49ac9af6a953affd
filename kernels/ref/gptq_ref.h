// Scalar reference for GPTQ dequantization (amn/gptq_dequant.h), written
// from GPTQModel gptqmodel/nn_modules/qlinear/__init__.py
// (PackableQuantLinear.dequantize_weight: scales[g_idx] * (weight -
// zeros[g_idx])) with the v1 -> v2 zero correction of
// gptqmodel/utils/model.py convert_gptq_v1_to_v2_format_module, and
// ../shared/fixtures/README.md (gptq_reference). Plain loops, never
// optimised: every Highway target must match it bit for bit.
//
// Element (i, j), i < K (in_features), j < N (out_features), g = g_idx[i]
// (or i / group_size without g_idx):
//   q = qweight field (i, j), z = qzeros field (g, j) (+ 1 for v1, per field,
//   no carry: kernels/gptq_layout.h), s = f32(scales[g][j]) (exact widening)
//   value = (f32(q) - f32(z)) * s           f32, one rounding per operation
//   out   = value (F32), or RNE to BF16/F16 (kernels/ref/float_convert_ref.h)
// f32(q) - f32(z) is an exact integer in [-256, 255] (+0 when q == z), so
// the only rounding before the output conversion is the multiply.
// GPTQModel writes s * (q - z); IEEE multiplication is commutative, and
// q - z is never NaN, so the order of the operands changes nothing but the
// NaN choice below.
// NaN/Inf: a NaN scale gives its own NaN, quieted (sign and payload kept);
// ±Inf * 0 (scale ±Inf where q == z) gives 0xFFC00000, x86's default NaN
// (what PyTorch on x86 gives; Arm would give 0x7FC00000), pinned so every
// CPU writes the same bytes (ref::ScaledF32Bits, kernels/ref/fp8_dequant_ref.h).
// ±Inf times a non-zero difference is ±Inf by the signs.
//
// Orientation: kInOut writes rows i (N elements each, the GEMM-native
// [in, out] that dequantize_weight returns); kOutIn writes rows j (K
// elements each, the nn.Linear [out, in]). Rows [row_begin, row_end) of the
// chosen orientation go to `out` from its start; `out` may start at any byte.
#ifndef AMN_KERNELS_REF_GPTQ_REF_H_
#define AMN_KERNELS_REF_GPTQ_REF_H_

#include <cstddef>
#include <cstdint>

#include "amn/elem_type.h"
#include "amn/weight_layout.h"
#include "kernels/gptq_layout.h"

namespace amn::ref {

// F32 bits of element (i, j) by the formula above.
uint32_t GptqValueBits(const gptq::LayerView& layer, size_t i, size_t j);

// out_type kF32, kBf16 or kF16 (anything else writes nothing). The layer
// must be valid (amn::DequantGptq checks it).
void DequantGptq(const gptq::LayerView& layer, WeightOrientation orientation, size_t row_begin,
                 size_t row_end, ElemType out_type, void* out);

}  // namespace amn::ref

#endif  // AMN_KERNELS_REF_GPTQ_REF_H_
