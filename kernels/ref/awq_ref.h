// Scalar reference for AutoAWQ GEMM 4-bit dequantization (amn/awq_dequant.h),
// written from AutoAWQ awq/utils/packing_utils.py: unpack_awq (nibble p of
// each int32 at bits 4p..4p+3), reverse_awq_order (logical column j of a
// word is nibble REV[j % 8], REV = {0,4,1,5,2,6,3,7}), the `& 0xF` masks of
// dequantize_gemm, and its (iweight - izeros) * scales with no +1 on the
// zeros. The same interleave applies to qweight and qzeros. Never
// optimised: every Highway target must match it bit for bit.
//
// Layout (GEMM-native, K = in_features, N = out_features, N % 8 == 0):
//   qweight  u32 LE [K][N/8]            q(i,j) = (qweight[i][j/8] >> 4*REV[j%8]) & 0xF
//   qzeros   u32 LE [ceil(K/gs)][N/8]   z(g,j) likewise
//   scales   [ceil(K/gs)][N] of F32/F16/BF16 (widened exactly to F32)
// Formula, in F32 with one rounding (the product), never fused:
//   w(i,j) = Round((f32(q(i,j)) - f32(z(g,j))) * f32(scale[g][j])), g = i / gs
// The difference is an exact integer in [-15, 15]; Round is the F32 -> BF16
// / F16 rule of kernels/ref/float_convert_ref.h (F32 output: the product).
// NaN/Inf: IEEE multiplication; a NaN product is the quieted scale when the
// scale is NaN, else 0xFFC00000 (an infinite scale times a zero difference),
// as ref::ScaledF32Bits chooses for FP8.
#ifndef AMN_KERNELS_REF_AWQ_REF_H_
#define AMN_KERNELS_REF_AWQ_REF_H_

#include <cstddef>
#include <cstdint>

#include "amn/elem_type.h"

namespace amn::ref {

// An AWQ layer's tensors as they sit in the file (any byte alignment).
struct AwqMatrix {
  const uint8_t* qweight = nullptr;
  const uint8_t* qzeros = nullptr;
  const uint8_t* scales = nullptr;
  ElemType scale_type = ElemType::kF16;
  size_t in_features = 0;   // K
  size_t out_features = 0;  // N, a multiple of 8
  size_t group_size = 0;    // >= 1
};

// Bit position of logical column j's nibble in its word: 4 * REV[j % 8].
inline constexpr uint32_t AwqNibbleShift(size_t j) {
  return static_cast<uint32_t>(4 * (((j >> 1) & 3) | ((j & 1) << 2)));
}

// F32 bits of the dequantized w(i, j) (before the output rounding).
uint32_t AwqValueF32Bits(const AwqMatrix& m, size_t i, size_t j);

// Rows [row_begin, row_end) into `out` (out_type kF32, kF16 or kBf16; any
// byte address): out_in == false is the GEMM-native [K, N] (row i holds
// w(i, 0..N)), out_in == true the nn.Linear [N, K] (row j holds w(0..K, j)).
void DequantAwqRows(const AwqMatrix& m, bool out_in, size_t row_begin, size_t row_end,
                    ElemType out_type, void* out);

}  // namespace amn::ref

#endif  // AMN_KERNELS_REF_AWQ_REF_H_
