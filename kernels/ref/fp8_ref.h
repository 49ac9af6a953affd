// Scalar reference for the OCP 8-bit float formats (OFP8 spec v1.0):
// E4M3FN and E5M2 to F32, BF16 and F16. Plain casts, no scales.
//
// Every E4M3FN and E5M2 value is exactly representable in F32, BF16 and F16,
// so these conversions never round. NaN codes (E4M3FN S.1111.111, E5M2
// S.11111.mm with mm != 0) become quiet NaNs of the same sign carrying the
// code's mantissa as the top payload bits; E5M2 ±Inf stays ±Inf.
#ifndef AMN_KERNELS_REF_FP8_REF_H_
#define AMN_KERNELS_REF_FP8_REF_H_

#include <cstddef>
#include <cstdint>

namespace amn::ref {

uint32_t E4m3ToF32Bits(uint8_t e4m3);
uint32_t E5m2ToF32Bits(uint8_t e5m2);

void ConvertE4m3ToF32(const uint8_t* in, size_t n_elems, float* out);
void ConvertE4m3ToBf16(const uint8_t* in, size_t n_elems, uint16_t* out);
void ConvertE4m3ToF16(const uint8_t* in, size_t n_elems, uint16_t* out);
void ConvertE5m2ToF32(const uint8_t* in, size_t n_elems, float* out);
void ConvertE5m2ToBf16(const uint8_t* in, size_t n_elems, uint16_t* out);
void ConvertE5m2ToF16(const uint8_t* in, size_t n_elems, uint16_t* out);

}  // namespace amn::ref

#endif  // AMN_KERNELS_REF_FP8_REF_H_
