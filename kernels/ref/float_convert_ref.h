// Scalar reference for the F32/F16/BF16 conversions, written from IEEE 754 and
// the bfloat16 definition. Never optimised: every Highway target must match it
// bit for bit (tests/float_convert_test.cc).
//
// Rules (docs/formats.md has the table):
// * Narrowing (F32->BF16, F32->F16) is IEEE round-to-nearest-even; F16
//   overflows to ±Inf and rounds its subnormals correctly; BF16 overflows to
//   ±Inf by the same rounding (as PyTorch's RNE formula does).
// * Widening is exact. BF16->F32 is the identity on the 16 bits (bits << 16),
//   as PyTorch and the fixtures define it, so even a signalling NaN is kept.
// * Every other NaN stays a NaN of the same sign, keeps the top bits of its
//   payload that fit, and comes out quiet (quiet bit set): what F16C
//   (vcvtph2ps/vcvtps2ph), AVX512-BF16 (vcvtneps2bf16) and Arm FCVT do.
#ifndef AMN_KERNELS_REF_FLOAT_CONVERT_REF_H_
#define AMN_KERNELS_REF_FLOAT_CONVERT_REF_H_

#include <cstddef>
#include <cstdint>

namespace amn::ref {

// Single values, on bit patterns.
uint16_t F32BitsToBf16(uint32_t f32_bits);
uint16_t F32BitsToF16(uint32_t f32_bits);
uint32_t Bf16ToF32Bits(uint16_t bf16);
uint32_t F16ToF32Bits(uint16_t f16);

// Rows: `n_elems` inputs to `n_elems` outputs; buffers must not overlap.
void ConvertF32ToBf16(const float* in, size_t n_elems, uint16_t* out);
void ConvertF32ToF16(const float* in, size_t n_elems, uint16_t* out);
void ConvertBf16ToF32(const uint16_t* in, size_t n_elems, float* out);
void ConvertF16ToF32(const uint16_t* in, size_t n_elems, float* out);
void ConvertF16ToBf16(const uint16_t* in, size_t n_elems, uint16_t* out);
void ConvertBf16ToF16(const uint16_t* in, size_t n_elems, uint16_t* out);

}  // namespace amn::ref

#endif  // AMN_KERNELS_REF_FLOAT_CONVERT_REF_H_
