// Anchors the scalar reference kernels on facts that do not come from them:
// the format definitions evaluated in double arithmetic (ldexp), the
// compiler's own IEEE binary16 conversions where it has one, and named
// values from the specs. The per-target tests then tie every target to this
// reference.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>

#include "kernels/ggml_blocks.h"
#include "kernels/ref/float_convert_ref.h"
#include "kernels/ref/fp8_ref.h"
#include "tests/kernel_check.h"

namespace amn::ref {
namespace {

uint32_t Bits(float f) { return std::bit_cast<uint32_t>(f); }
float FromBits(uint32_t b) { return std::bit_cast<float>(b); }
bool IsNan32(uint32_t b) { return (b & 0x7FFFFFFFu) > 0x7F800000u; }

// Decodes a binary16 from its definition: (-1)^s * 2^(e-15) * (1 + m/1024),
// subnormal 2^-14 * m/1024.
double DecodeF16(uint16_t h) {
  const int s = h >> 15, e = (h >> 10) & 0x1F, m = h & 0x3FF;
  const double mag = e == 0 ? std::ldexp(m, -24) : std::ldexp(1024 + m, e - 25);
  return s ? -mag : mag;
}

// The nearest value of a format whose finite values are sorted by bit
// pattern: picks between two neighbouring encodings, ties to the even one.
uint32_t NearestEven(double x, uint32_t lo_bits, double lo, uint32_t hi_bits, double hi) {
  const double dl = std::fabs(x - lo), dh = std::fabs(hi - x);
  if (dl < dh) return lo_bits;
  if (dh < dl) return hi_bits;
  return (lo_bits & 1u) == 0 ? lo_bits : hi_bits;
}

TEST(ReferenceF16, DecodeMatchesDefinitionForEveryNonNan) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const uint32_t got = F16ToF32Bits(static_cast<uint16_t>(h));
    if ((h & 0x7C00) == 0x7C00 && (h & 0x3FF) != 0) {  // NaN: quiet, sign, payload
      EXPECT_TRUE(IsNan32(got));
      EXPECT_EQ(got >> 31, h >> 15);
      EXPECT_EQ(got & 0x400000u, 0x400000u);
      EXPECT_EQ((got >> 13) & 0x1FFu, h & 0x1FFu);
      continue;
    }
    const double want = (h & 0x7C00) == 0x7C00 ? ((h >> 15) ? -INFINITY : INFINITY)
                                                : DecodeF16(static_cast<uint16_t>(h));
    ASSERT_EQ(FromBits(got), static_cast<float>(want)) << std::hex << h;
    ASSERT_EQ(got >> 31, h >> 15) << std::hex << h;  // sign of zero too
  }
}

// The kernels' inline per-block scale widening (kernels/ggml_blocks.h) is the
// reference decode for all 65,536 inputs.
TEST(ReferenceF16, InlineScaleWideningMatchesReference) {
  for (uint32_t h = 0; h < 65536; ++h) {
    ASSERT_EQ(ggml::F16ScaleBits(static_cast<uint16_t>(h)),
              ref::F16ToF32Bits(static_cast<uint16_t>(h)))
        << h;
  }
}

TEST(ReferenceF16, EncodeIsNearestEvenAgainstDefinition) {
  // For x in range the answer is one of the two positive F16 codes that
  // bracket x (binary search: positive codes sort like their values),
  // whichever is nearer, ties to the even code.
  std::mt19937 rng(1);
  for (int i = 0; i < 200000; ++i) {
    // Spread exponents over the F16 range and a little beyond.
    const float x = std::ldexp(static_cast<float>(rng() & 0xFFFFFF) / 16777216.0f,
                               static_cast<int>(rng() % 44) - 26);
    uint32_t lo = 0, hi = 0x7C00;  // DecodeF16(lo) <= x < DecodeF16(hi) or hi = Inf
    while (hi - lo > 1) {
      const uint32_t mid = (lo + hi) / 2;
      (DecodeF16(static_cast<uint16_t>(mid)) <= x ? lo : hi) = mid;
    }
    const uint32_t want = hi == 0x7C00 ? (x >= 65520.0 ? 0x7C00u : 0x7BFFu)
                                       : NearestEven(x, lo, DecodeF16(static_cast<uint16_t>(lo)),
                                                     hi, DecodeF16(static_cast<uint16_t>(hi)));
    ASSERT_EQ(F32BitsToF16(Bits(x)), want) << "x=" << x;
  }
  EXPECT_EQ(F32BitsToF16(Bits(1.0f)), 0x3C00);
  EXPECT_EQ(F32BitsToF16(Bits(-2.0f)), 0xC000);
  EXPECT_EQ(F32BitsToF16(Bits(65504.0f)), 0x7BFF);
  EXPECT_EQ(F32BitsToF16(Bits(65519.996f)), 0x7BFF);
  EXPECT_EQ(F32BitsToF16(Bits(65520.0f)), 0x7C00);     // tie to even: Inf
  EXPECT_EQ(F32BitsToF16(Bits(std::ldexp(1.0f, -24))), 0x0001);
  EXPECT_EQ(F32BitsToF16(Bits(std::ldexp(1.0f, -25))), 0x0000);   // tie to even
  EXPECT_EQ(F32BitsToF16(Bits(std::ldexp(3.0f, -25))), 0x0002);   // 1.5 ulp: tie to even
  EXPECT_EQ(F32BitsToF16(Bits(-std::ldexp(1.0f, -26))), 0x8000);  // keeps the sign
  EXPECT_EQ(F32BitsToF16(Bits(std::ldexp(1023.0f, -24))), 0x03FF);
  EXPECT_EQ(F32BitsToF16(Bits(std::ldexp(2047.0f, -25))), 0x0400);  // rounds up to normal
  EXPECT_EQ(F32BitsToF16(0x7F800001u), 0x7E00);  // sNaN -> quiet
  EXPECT_EQ(F32BitsToF16(0xFFC12345u), 0xFE09);  // sign and top payload bits
}

// The compiler's IEEE binary16 type, probed by tests/CMakeLists.txt (the
// __FLT16_MANT_DIG__ macro is no guide: aarch64 g++ 12 defines it, but only
// its C front end has _Float16). Arm's __fp16 (IEEE format on Linux) is the
// same conversion done by the FCVT instruction.
#if defined(AMN_HAVE_FLOAT16)
using CompilerF16 = _Float16;
#define AMN_HAVE_COMPILER_F16 1
#elif defined(AMN_HAVE_ARM_FP16)
using CompilerF16 = __fp16;
#define AMN_HAVE_COMPILER_F16 1
#endif

#if defined(AMN_HAVE_COMPILER_F16)
// The compiler's binary16 conversion (libgcc/compiler-rt soft-float, F16C or
// Arm FCVT) is an implementation independent of ours.
uint16_t CompilerF16Bits(uint32_t b) {
  return std::bit_cast<uint16_t>(static_cast<CompilerF16>(FromBits(b)));
}

TEST(ReferenceF16, EncodeMatchesCompilerFloat16) {
  for (uint32_t b : amn::test::F32EdgeBits()) {
    if (IsNan32(b)) continue;
    ASSERT_EQ(F32BitsToF16(b), CompilerF16Bits(b)) << std::hex << b;
  }
  std::mt19937 rng(2);
  for (int i = 0; i < 1000000; ++i) {
    const uint32_t b = rng();
    if (IsNan32(b)) continue;
    ASSERT_EQ(F32BitsToF16(b), CompilerF16Bits(b)) << std::hex << b;
  }
}
#endif

TEST(ReferenceBf16, EncodeIsNearestEvenAgainstDefinition) {
  // BF16 neighbours of x are the truncation t = bits >> 16 and t + 1.
  std::mt19937 rng(3);
  auto check = [](uint32_t b) {
    if (IsNan32(b)) return;
    const double x = FromBits(b);
    const uint32_t t = b >> 16;
    const double lo = FromBits(t << 16);
    // When t + 1 encodes Inf, IEEE rounds as if the exponent were unbounded:
    // the upper neighbour is then 2^128 (its sign taken from x).
    const bool hi_is_inf = ((t + 1) & 0x7FFFu) == 0x7F80u;
    const double hi = hi_is_inf ? std::copysign(std::ldexp(1.0, 128), x)
                                : static_cast<double>(FromBits((t + 1) << 16));
    const uint32_t want = lo == x ? t : NearestEven(x, t, lo, t + 1, hi);
    ASSERT_EQ(F32BitsToBf16(b), want) << std::hex << b;
  };
  for (uint32_t b : amn::test::F32EdgeBits()) check(b);
  for (int i = 0; i < 1000000; ++i) check(rng());
  EXPECT_EQ(F32BitsToBf16(Bits(1.0f)), 0x3F80);
  EXPECT_EQ(F32BitsToBf16(0x3F808000u), 0x3F80);  // tie, even stays
  EXPECT_EQ(F32BitsToBf16(0x3F818000u), 0x3F82);  // tie, odd rounds up
  EXPECT_EQ(F32BitsToBf16(0x7F7FFFFFu), 0x7F80);  // FLT_MAX rounds to Inf
  EXPECT_EQ(F32BitsToBf16(0x80000000u), 0x8000);
  EXPECT_EQ(F32BitsToBf16(0x7F800001u), 0x7FC0);  // sNaN -> quiet, not Inf
  EXPECT_EQ(F32BitsToBf16(0xFFFFFFFFu), 0xFFFF);
  EXPECT_EQ(F32BitsToBf16(0xFF812345u), 0xFFC1);
}

// OFP8 from the OCP spec: E4M3FN 2^(e-7)(1+m/8), subnormal m 2^-9, S.1111.111
// NaN, max 448; E5M2 2^(e-15)(1+m/4), subnormal m 2^-16, e=31 Inf/NaN.
TEST(ReferenceFp8, E4m3MatchesDefinition) {
  for (int code = 0; code < 256; ++code) {
    const int s = code >> 7, e = (code >> 3) & 0xF, m = code & 7;
    const uint32_t got = E4m3ToF32Bits(static_cast<uint8_t>(code));
    if ((code & 0x7F) == 0x7F) {
      EXPECT_EQ(got, (s ? 0xFFF00000u : 0x7FF00000u));
      continue;
    }
    const double mag = e == 0 ? std::ldexp(m, -9) : std::ldexp(8 + m, e - 10);
    EXPECT_EQ(FromBits(got), static_cast<float>(s ? -mag : mag)) << code;
    EXPECT_EQ(got >> 31, static_cast<uint32_t>(s));
  }
  EXPECT_EQ(FromBits(E4m3ToF32Bits(0x7E)), 448.0f);
  EXPECT_EQ(FromBits(E4m3ToF32Bits(0x01)), std::ldexp(1.0f, -9));
}

TEST(ReferenceFp8, E5m2MatchesDefinition) {
  for (int code = 0; code < 256; ++code) {
    const int s = code >> 7, e = (code >> 2) & 0x1F, m = code & 3;
    const uint32_t got = E5m2ToF32Bits(static_cast<uint8_t>(code));
    if (e == 31) {
      if (m == 0) {
        EXPECT_EQ(got, s ? 0xFF800000u : 0x7F800000u);
      } else {
        EXPECT_TRUE(IsNan32(got));
        // The code's mantissa lands on F32 bits 22..21; bit 22 is then set
        // (quiet), the payload bit 21 is kept.
        EXPECT_EQ((got >> 21) & 3u, static_cast<uint32_t>(m) | 2u);
        EXPECT_EQ(got & 0x1FFFFFu, 0u);
        EXPECT_EQ(got >> 31, static_cast<uint32_t>(s));
      }
      continue;
    }
    const double mag = e == 0 ? std::ldexp(m, -16) : std::ldexp(4 + m, e - 17);
    EXPECT_EQ(FromBits(got), static_cast<float>(s ? -mag : mag)) << code;
    EXPECT_EQ(got >> 31, static_cast<uint32_t>(s));
  }
  EXPECT_EQ(FromBits(E5m2ToF32Bits(0x7B)), 57344.0f);
}

// FP8 values are exact in BF16 and F16: the 16-bit outputs decode to the
// same value as the F32 output.
TEST(ReferenceFp8, SixteenBitOutputsAreExact) {
  for (int code = 0; code < 256; ++code) {
    const uint8_t c = static_cast<uint8_t>(code);
    for (uint32_t f32 : {E4m3ToF32Bits(c), E5m2ToF32Bits(c)}) {
      if (IsNan32(f32)) continue;
      EXPECT_EQ(Bf16ToF32Bits(F32BitsToBf16(f32)), f32) << code;
      EXPECT_EQ(F16ToF32Bits(F32BitsToF16(f32)), f32) << code;
    }
  }
}

}  // namespace
}  // namespace amn::ref
