// Scalar reference for FP8 dequantization with scales (amn/fp8_dequant.h):
// E4M3FN / E5M2 codes times F32 scales, then the F32 -> BF16/F16 rules of
// kernels/ref/float_convert_ref.h. Plain loops in PyTorch's order,
// `weight.to(float32) * scale.to(float32)` then `.to(out dtype)`; never
// optimised. Every Highway target must match it bit for bit.
//
// Layout: `codes` is a row-major [rows, cols] matrix of FP8 bytes; column c
// of every row is multiplied by col_scales[c / block_cols], so col_scales
// holds ceil(cols / block_cols) values. `out` holds rows * cols elements of
// the output type, row-major; it may sit at any byte address (stores go
// through memcpy). No buffer may overlap another.
//
// NaN: IEEE 754 leaves the payload of a NaN product open and x86 and Arm
// differ (x86 returns its first NaN operand and makes 0 * Inf 0xFFC00000,
// Arm prefers a signalling operand and makes 0 * Inf 0x7FC00000), so the
// product's NaN is chosen explicitly: what an x86 multiply returns for
// code * scale with the code as its first operand.
//   * a NaN code keeps its own (quiet) NaN, whatever the scale;
//   * else a NaN scale, quieted (sign and payload kept);
//   * else (0 * Inf, e.g. an E5M2 Inf code times a zero scale) 0xFFC00000.
// Infinities and overflow follow IEEE multiplication, then the output rule
// (F16 and BF16 overflow to ±Inf).
#ifndef AMN_KERNELS_REF_FP8_DEQUANT_REF_H_
#define AMN_KERNELS_REF_FP8_DEQUANT_REF_H_

#include <cstddef>
#include <cstdint>

namespace amn::ref {

// The default NaN x86 produces for an invalid operation (0 * Inf).
inline constexpr uint32_t kF32InvalidProductNan = 0xFFC00000u;

// F32 bits of value * scale for an exact F32 value decoded from an FP8 code
// (so a NaN value is already quiet), with the NaN rule above.
uint32_t ScaledF32Bits(uint32_t value_bits, float scale);

void DequantE4m3ToF32(const uint8_t* codes, size_t rows, size_t cols, const float* col_scales,
                      size_t block_cols, float* out);
void DequantE4m3ToBf16(const uint8_t* codes, size_t rows, size_t cols, const float* col_scales,
                       size_t block_cols, uint16_t* out);
void DequantE4m3ToF16(const uint8_t* codes, size_t rows, size_t cols, const float* col_scales,
                      size_t block_cols, uint16_t* out);
void DequantE5m2ToF32(const uint8_t* codes, size_t rows, size_t cols, const float* col_scales,
                      size_t block_cols, float* out);
void DequantE5m2ToBf16(const uint8_t* codes, size_t rows, size_t cols, const float* col_scales,
                       size_t block_cols, uint16_t* out);
void DequantE5m2ToF16(const uint8_t* codes, size_t rows, size_t cols, const float* col_scales,
                      size_t block_cols, uint16_t* out);

}  // namespace amn::ref

#endif  // AMN_KERNELS_REF_FP8_DEQUANT_REF_H_
