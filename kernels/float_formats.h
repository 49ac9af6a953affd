// Bit layouts of the floating-point formats the conversion kernels handle.
// IEEE 754 binary32/binary16, bfloat16, and the OCP 8-bit formats
// (OFP8: E4M3FN without infinities, E5M2 with IEEE-like Inf/NaN).
// Plain constants only: shared by kernels/, kernels/ref/ and the tests.
#ifndef AMN_KERNELS_FLOAT_FORMATS_H_
#define AMN_KERNELS_FLOAT_FORMATS_H_

#include <cstdint>

namespace amn::fmt {

// binary32: sign 31, exponent 30..23 (bias 127), mantissa 22..0.
inline constexpr uint32_t kF32SignMask = 0x80000000u;
inline constexpr uint32_t kF32AbsMask = 0x7FFFFFFFu;
inline constexpr uint32_t kF32ExpMask = 0x7F800000u;   // also +Inf
inline constexpr uint32_t kF32QuietBit = 0x00400000u;  // top mantissa bit
inline constexpr int kF32MantBits = 23;

// binary16: sign 15, exponent 14..10 (bias 15), mantissa 9..0.
inline constexpr uint16_t kF16SignMask = 0x8000u;
inline constexpr uint16_t kF16ExpMask = 0x7C00u;  // also +Inf
inline constexpr uint16_t kF16QuietBit = 0x0200u;
inline constexpr int kF16MantBits = 10;
// Smallest F32 (bits) that is a normal F16: 2^-14.
inline constexpr uint32_t kF32BitsF16MinNormal = 0x38800000u;

// bfloat16: the upper half of binary32.
inline constexpr uint16_t kBf16QuietBit = 0x0040u;

// E4M3FN: sign 7, exponent 6..3 (bias 7), mantissa 2..0; no Inf; S.1111.111
// is NaN; e == 0 is subnormal m * 2^-9. Largest finite 448.
inline constexpr uint8_t kE4m3NanAbs = 0x7Fu;
inline constexpr int kE4m3Bias = 7;
// E5M2: sign 7, exponent 6..2 (bias 15), mantissa 1..0: the upper byte of an
// F16. Exponent 31 is Inf (m == 0) or NaN; e == 0 is subnormal m * 2^-16.
inline constexpr uint8_t kE5m2InfAbs = 0x7Cu;
inline constexpr int kE5m2Bias = 15;

}  // namespace amn::fmt

#endif  // AMN_KERNELS_FLOAT_FORMATS_H_
