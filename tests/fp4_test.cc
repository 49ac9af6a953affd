// NVFP4 (compressed-tensors) and gpt-oss MXFP4 (transformers) through
// amn::DequantNvfp4 / amn::DequantMxfp4 on every supported target. No
// fixtures exist for these schemes, so the reference is anchored on values
// the test derives itself from the canonical libraries' tables and formulas
// (FP4_VALUES / kE2M1ToFloat, low nibble first, scale / global_scale,
// ldexp(v, s - 127), transformers' transpose), and every target is compared
// with the reference bit for bit: every E2M1 code in both nibble positions,
// every E4M3 scale class, E8M0 edge exponents, global scale edges, row
// sub-ranges, multi-expert transposed and plain layouts, misaligned buffers
// with canaries, a RapidCheck property, the registry rows and the errors.
#include "amn/fp4_dequant.h"

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "amn/kernel_registry.h"
#include "kernels/ref/float_convert_ref.h"
#include "kernels/ref/fp4_ref.h"
#include "kernels/ref/fp8_ref.h"
#include "tests/kernel_check.h"
#include "tests/target_param.h"

namespace amn::test {
namespace {

constexpr std::array kOutTypes = {ElemType::kF32, ElemType::kBf16, ElemType::kF16};
constexpr float kInf = std::numeric_limits<float>::infinity();

float FromBits(uint32_t bits) { return std::bit_cast<float>(bits); }
uint32_t Bits(float f) { return std::bit_cast<uint32_t>(f); }

std::span<const std::byte> AsSpan(const std::vector<uint8_t>& v) {
  return {reinterpret_cast<const std::byte*>(v.data()), v.size()};
}
std::vector<uint8_t> F32Bytes(float f) {
  const uint32_t b = Bits(f);
  return {static_cast<uint8_t>(b), static_cast<uint8_t>(b >> 8), static_cast<uint8_t>(b >> 16),
          static_cast<uint8_t>(b >> 24)};
}

// The canonical tables, written here from the libraries' source:
// transformers integrations/mxfp4.py FP4_VALUES (compressed-tensors'
// kE2M1ToFloat times where(sign, -1.0, 1.0) is the same, -0.0 included).
constexpr std::array<float, 16> kFp4Values = {+0.0f, +0.5f, +1.0f, +1.5f, +2.0f, +3.0f,
                                              +4.0f, +6.0f, -0.0f, -0.5f, -1.0f, -1.5f,
                                              -2.0f, -3.0f, -4.0f, -6.0f};

// Output type encodings of an F32 value, from the project's (separately
// tested) conversion reference.
uint32_t Encode(ElemType type, float v) {
  switch (type) {
    case ElemType::kBf16: return ref::F32BitsToBf16(Bits(v));
    case ElemType::kF16: return ref::F32BitsToF16(Bits(v));
    default: return Bits(v);
  }
}

// Element i of `bytes` (an out_type array) as bits.
uint32_t ElementBits(const std::vector<uint8_t>& bytes, ElemType type, size_t i) {
  uint32_t bits = 0;
  std::memcpy(&bits, bytes.data() + i * ElemTypeBytes(type), ElemTypeBytes(type));
  return bits;
}

bool IsNanBits(ElemType type, uint32_t bits) {
  switch (type) {
    case ElemType::kBf16: return std::isnan(FromBits(bits << 16));
    case ElemType::kF16: return (bits & 0x7C00u) == 0x7C00u && (bits & 0x03FFu) != 0;
    default: return std::isnan(FromBits(bits));
  }
}

// ---- The reference, anchored ----------------------------------------------

TEST(Fp4Reference, E2m1CodesAreTheCanonicalTable) {
  for (uint8_t code = 0; code < 16; ++code) {
    EXPECT_EQ(ref::E2m1ToF32Bits(code), Bits(kFp4Values[code])) << int{code};
  }
  EXPECT_EQ(ref::E2m1ToF32Bits(8), 0x80000000u);  // -0.0, not +0.0
  EXPECT_EQ(ref::E2m1ToF32Bits(7), 0x40C00000u);  // 6.0
}

TEST(Fp4Reference, E8m0IsLdexpOfOne) {
  for (int e = 0; e < 255; ++e) {
    EXPECT_EQ(ref::E8m0ToF32Bits(static_cast<uint8_t>(e)), Bits(std::ldexp(1.0f, e - 127))) << e;
  }
  EXPECT_EQ(ref::E8m0ToF32Bits(0), 0x00400000u);    // 2^-127, an F32 subnormal
  EXPECT_EQ(ref::E8m0ToF32Bits(127), 0x3F800000u);  // 1
  EXPECT_EQ(ref::E8m0ToF32Bits(254), 0x7F000000u);  // 2^127
  EXPECT_EQ(ref::E8m0ToF32Bits(255), 0x7F800000u);  // pow(2.0f, 128) overflows: +Inf
}

TEST(Fp4Reference, Nvfp4GroupScaleIsF32Quotient) {
  for (const float global : {1.0f, 1234.5f, 1.0f / 3, -2.0f, 3e38f, 1e-38f}) {
    for (int code = 0; code < 256; ++code) {
      if ((code & 0x7F) == 0x7F) continue;  // NaN codes: below
      const float scale = FromBits(ref::E4m3ToF32Bits(static_cast<uint8_t>(code)));
      // float / float rounds once in F32 (the exact quotient in double
      // rounds twice, which can differ; F32 division is IEEE).
      const float want = scale / global;
      EXPECT_EQ(ref::Nvfp4GroupScaleBits(static_cast<uint8_t>(code), global), Bits(want))
          << code << " / " << global;
    }
  }
  // Hand-derived: 0x38 is 1.0, 0x7E is 448, 0x01 is 2^-9.
  EXPECT_EQ(FromBits(ref::Nvfp4GroupScaleBits(0x38, 4.0f)), 0.25f);
  EXPECT_EQ(FromBits(ref::Nvfp4GroupScaleBits(0x7E, 448.0f)), 1.0f);
  EXPECT_EQ(FromBits(ref::Nvfp4GroupScaleBits(0x01, 0x1p-9f)), 1.0f);
  EXPECT_EQ(ref::Nvfp4GroupScaleBits(0x80, 2.0f), 0x80000000u);  // -0 / 2
}

TEST(Fp4Reference, NanRule) {
  const uint32_t e4m3_nan = ref::E4m3ToF32Bits(0x7F);
  const uint32_t neg_e4m3_nan = ref::E4m3ToF32Bits(0xFF);
  ASSERT_EQ(e4m3_nan & 0x7FC00000u, 0x7FC00000u);  // quiet, positive
  ASSERT_EQ(neg_e4m3_nan >> 31, 1u);
  // A NaN scale code keeps its NaN whatever the global scale.
  EXPECT_EQ(ref::Nvfp4GroupScaleBits(0x7F, 2.0f), e4m3_nan);
  EXPECT_EQ(ref::Nvfp4GroupScaleBits(0xFF, FromBits(0x7FC00001u)), neg_e4m3_nan);
  // Else a NaN global scale, quieted, sign and payload kept.
  EXPECT_EQ(ref::Nvfp4GroupScaleBits(0x38, FromBits(0x7F800001u)), 0x7FC00001u);
  EXPECT_EQ(ref::Nvfp4GroupScaleBits(0x38, FromBits(0xFFC12345u)), 0xFFC12345u);
  // Else 0 / 0: x86's default NaN; x / 0 and x / Inf as IEEE says.
  EXPECT_EQ(ref::Nvfp4GroupScaleBits(0x00, 0.0f), 0xFFC00000u);
  EXPECT_EQ(ref::Nvfp4GroupScaleBits(0x38, 0.0f), 0x7F800000u);
  EXPECT_EQ(ref::Nvfp4GroupScaleBits(0x38, -0.0f), 0xFF800000u);
  EXPECT_EQ(ref::Nvfp4GroupScaleBits(0xB8, kInf), 0x80000000u);
}

// A hand-built NVFP4 tensor: 2 rows x 32 columns, all written out.
// Row 0 bytes 0x21 (elements 0.5 then 1.0: low nibble first), 0x98 (-0.0
// then -0.5), 0x7F (-6 then 6) ...; scale codes 0x38 (1.0) and 0x40 (2.0),
// global scale 0.5: q = 2 and 4.
TEST(Fp4Reference, Nvfp4HandVector) {
  const std::vector<uint8_t> packed = {0x21, 0x98, 0x7F, 0x00, 0x43, 0x65, 0xBA, 0xDC,  // g0
                                       0x21, 0x98, 0x7F, 0x00, 0x43, 0x65, 0xBA, 0xDC,  // g1
                                       0xF7, 0x08, 0x80, 0x11, 0x22, 0x33, 0x44, 0x55,  // row 1
                                       0x66, 0x77, 0x88, 0x99, 0xAA, 0xBB, 0xCC, 0xDD};
  const std::vector<uint8_t> scales = {0x38, 0x40, 0x40, 0x38};
  // Values of the nibbles of row 0's group 0, in element order.
  const float g0[16] = {0.5f, 1.0f, -0.0f, -0.5f, -6.0f, 6.0f, 0.0f, 0.0f,
                        1.5f, 2.0f, 3.0f,  4.0f,  -1.0f, -1.5f, -2.0f, -3.0f};
  std::vector<uint16_t> want(64);
  for (size_t i = 0; i < 16; ++i) {
    want[i] = ref::F32BitsToBf16(Bits(g0[i] * 2.0f));
    want[16 + i] = ref::F32BitsToBf16(Bits(g0[i] * 4.0f));
  }
  EXPECT_EQ(want[0], 0x3F80u);   // 0.5 * 2
  EXPECT_EQ(want[2], 0x8000u);   // -0.0 * 2
  EXPECT_EQ(want[20], 0xC1C0u);  // -6 * 4 = -24
  // Row 1: 0xF7 is (6, -6), 0x08 (-0.0, 0), 0x80 (0, -0.0), then pairs.
  const float r1[32] = {6,     -6,    -0.0f, 0,     0,     -0.0f, 0.5f,  0.5f,
                        1,     1,     1.5f,  1.5f,  2,     2,     3,     3,
                        4,     4,     6,     6,     -0.0f, -0.0f, -0.5f, -0.5f,
                        -1,    -1,    -1.5f, -1.5f, -2,    -2,    -3,    -3};
  for (size_t i = 0; i < 32; ++i) {
    want[32 + i] = ref::F32BitsToBf16(Bits(r1[i] * (i < 16 ? 4.0f : 2.0f)));
  }
  std::vector<uint16_t> got(64);
  ref::DequantNvfp4ToBf16(packed.data(), scales.data(), 0.5f, 2, 32, got.data());
  EXPECT_EQ(got, want);
}

// transformers' convert_moe_packed_tensors written out for a tiny
// [experts][rows][groups][16] tensor: untransposed [e][r][g*32 + k], and the
// returned layout [e][c][r]. ldexp in float is exact here.
std::vector<float> CanonicalMxfp4(const std::vector<uint8_t>& blocks,
                                  const std::vector<uint8_t>& scales, size_t experts, size_t rows,
                                  size_t groups, bool transpose) {
  const size_t cols = groups * 32;
  std::vector<float> out(experts * rows * cols);
  for (size_t e = 0; e < experts; ++e) {
    for (size_t r = 0; r < rows; ++r) {
      for (size_t g = 0; g < groups; ++g) {
        const size_t block = (e * rows + r) * groups + g;
        const int exp = static_cast<int>(scales[block]) - 127;
        for (size_t j = 0; j < 16; ++j) {
          const uint8_t byte = blocks[block * 16 + j];
          for (size_t half = 0; half < 2; ++half) {
            const float lut = kFp4Values[half == 0 ? byte & 0x0F : byte >> 4];
            // torch.ldexp = x * pow(2, e) in F32; pow(2, 128) is +Inf.
            const float p2 = exp == 128 ? kInf : std::ldexp(1.0f, exp);
            const float v = lut * p2;
            const size_t c = g * 32 + 2 * j + half;
            const size_t at = transpose ? (e * cols + c) * rows + r : (e * rows + r) * cols + c;
            out[at] = v;
          }
        }
      }
    }
  }
  return out;
}

// ---- Every target ----------------------------------------------------------

class Fp4Test : public PerTarget {};

TEST_P(Fp4Test, ProbeReportsForcedTarget) {
  EXPECT_EQ(TargetName(Fp4Target()), TargetName(GetParam()));
}

std::string Where(const char* what, ElemType type, size_t i, uint32_t got, uint32_t want) {
  char buf[160];
  std::snprintf(buf, sizeof(buf), "%s -> %s: element %zu gave 0x%x, want 0x%x", what,
                std::string(ElemTypeName(type)).c_str(), i, got, want);
  return buf;
}

// Runs a checked call into a placed buffer (odd offset, canary) and returns
// its bytes, or fails.
template <class Call>
testing::AssertionResult RunPlaced(size_t out_bytes, size_t offset, const Call& call,
                                   std::vector<uint8_t>* bytes) {
  PlacedBuffer buf(out_bytes, offset, 0x5A);
  const Status status = call(std::span<std::byte>(reinterpret_cast<std::byte*>(buf.data()),
                                                  out_bytes));
  if (!status.ok()) return testing::AssertionFailure() << status.ToString();
  if (!buf.CanaryIntact()) return testing::AssertionFailure() << "wrote past out";
  bytes->assign(buf.data(), buf.data() + out_bytes);
  return testing::AssertionSuccess();
}

// The reference for a checked NVFP4 call.
std::vector<uint8_t> ReferenceNvfp4(const std::vector<uint8_t>& packed,
                                    const std::vector<uint8_t>& scales, float global, size_t cols,
                                    size_t row_begin, size_t row_end, ElemType type) {
  const size_t rows = row_end - row_begin;
  std::vector<uint8_t> out(rows * cols * ElemTypeBytes(type) + 4);
  const uint8_t* p = packed.data() + row_begin * cols / 2;
  const uint8_t* s = scales.data() + row_begin * cols / 16;
  switch (type) {
    case ElemType::kF32:
      ref::DequantNvfp4ToF32(p, s, global, rows, cols, reinterpret_cast<float*>(out.data()));
      break;
    case ElemType::kBf16:
      ref::DequantNvfp4ToBf16(p, s, global, rows, cols, reinterpret_cast<uint16_t*>(out.data()));
      break;
    default:
      ref::DequantNvfp4ToF16(p, s, global, rows, cols, reinterpret_cast<uint16_t*>(out.data()));
      break;
  }
  out.resize(out.size() - 4);
  return out;
}

testing::AssertionResult Nvfp4MatchesReference(const std::vector<uint8_t>& packed,
                                               const std::vector<uint8_t>& scales, float global,
                                               size_t rows, size_t cols, size_t row_begin,
                                               size_t row_end, ElemType type, size_t offset) {
  const std::vector<uint8_t> gs = F32Bytes(global);
  const Nvfp4Tensor t{rows, cols, AsSpan(packed), AsSpan(scales), AsSpan(gs)};
  std::vector<uint8_t> got;
  const size_t out_bytes = (row_end - row_begin) * cols * ElemTypeBytes(type);
  auto ran = RunPlaced(out_bytes, offset, [&](std::span<std::byte> out) {
    return DequantNvfp4(t, row_begin, row_end, type, out);
  }, &got);
  if (!ran) return ran;
  const std::vector<uint8_t> want =
      ReferenceNvfp4(packed, scales, global, cols, row_begin, row_end, type);
  for (size_t i = 0; i < want.size() / ElemTypeBytes(type); ++i) {
    const uint32_t g = ElementBits(got, type, i), w = ElementBits(want, type, i);
    if (g != w) {
      return testing::AssertionFailure()
             << Where("nvfp4", type, i, g, w) << " (rows " << rows << " cols " << cols
             << " range " << row_begin << ".." << row_end << " global 0x" << std::hex
             << Bits(global) << ")";
    }
  }
  return testing::AssertionSuccess();
}

// The reference for a checked MXFP4 call, expert by expert.
std::vector<uint8_t> ReferenceMxfp4(const std::vector<uint8_t>& blocks,
                                    const std::vector<uint8_t>& scales, size_t rows, size_t groups, bool transpose, size_t row_begin,
                                    size_t row_end, ElemType type) {
  const size_t cols = groups * 32;
  const size_t row_elems = transpose ? rows : cols;
  const size_t eb = ElemTypeBytes(type);
  std::vector<uint8_t> out((row_end - row_begin) * row_elems * eb + 4);
  if (!transpose) {
    const uint8_t* b = blocks.data() + row_begin * groups * 16;
    const uint8_t* s = scales.data() + row_begin * groups;
    const size_t n = row_end - row_begin;
    if (type == ElemType::kF32) {
      ref::DequantMxfp4StToF32(b, s, n, groups, reinterpret_cast<float*>(out.data()));
    } else {
      (type == ElemType::kBf16 ? ref::DequantMxfp4StToBf16 : ref::DequantMxfp4StToF16)(
          b, s, n, groups, reinterpret_cast<uint16_t*>(out.data()));
    }
  } else {
    for (size_t o = row_begin; o < row_end; ++o) {  // one output row at a time
      const size_t e = o / cols, c = o % cols;
      const uint8_t* b = blocks.data() + e * rows * groups * 16;
      const uint8_t* s = scales.data() + e * rows * groups;
      uint8_t* y = out.data() + (o - row_begin) * rows * eb;
      if (type == ElemType::kF32) {
        ref::DequantMxfp4StTransposedToF32(b, s, rows, groups, c, c + 1,
                                           reinterpret_cast<float*>(y));
      } else {
        (type == ElemType::kBf16 ? ref::DequantMxfp4StTransposedToBf16
                                 : ref::DequantMxfp4StTransposedToF16)(
            b, s, rows, groups, c, c + 1, reinterpret_cast<uint16_t*>(y));
      }
    }
  }
  out.resize(out.size() - 4);
  return out;
}

testing::AssertionResult Mxfp4MatchesReference(const std::vector<uint8_t>& blocks,
                                               const std::vector<uint8_t>& scales,
                                               size_t experts, size_t rows, size_t groups,
                                               bool transpose, size_t row_begin, size_t row_end,
                                               ElemType type, size_t offset) {
  const Mxfp4Tensor t{experts, rows, groups, AsSpan(blocks), AsSpan(scales), transpose};
  const size_t row_elems = transpose ? rows : groups * 32;
  std::vector<uint8_t> got;
  auto ran = RunPlaced((row_end - row_begin) * row_elems * ElemTypeBytes(type), offset,
                       [&](std::span<std::byte> out) {
                         return DequantMxfp4(t, row_begin, row_end, type, out);
                       },
                       &got);
  if (!ran) return ran;
  const std::vector<uint8_t> want =
      ReferenceMxfp4(blocks, scales, rows, groups, transpose, row_begin, row_end, type);
  for (size_t i = 0; i < want.size() / ElemTypeBytes(type); ++i) {
    const uint32_t g = ElementBits(got, type, i), w = ElementBits(want, type, i);
    if (g != w) {
      return testing::AssertionFailure()
             << Where("mxfp4", type, i, g, w) << " (experts " << experts << " rows " << rows
             << " groups " << groups << " transpose " << transpose << " range " << row_begin
             << ".." << row_end << ")";
    }
  }
  return testing::AssertionSuccess();
}

// Every byte (so every code in both nibble positions) under every E4M3
// scale class and each edge global scale; the API's output also equals the
// test's own canonical formula (not just the reference).
TEST_P(Fp4Test, Nvfp4EveryCodeEveryScaleClass) {
  // 0 (zero), 0x01/0x07 (subnormal), 0x08 (min normal), 0x38 (1.0), 0x7E
  // (448, max), 0x7F/0xFF (NaN), 0x80 (-0), 0xB8 (-1), 0x5A (ordinary).
  const std::vector<uint8_t> classes = {0x00, 0x01, 0x07, 0x08, 0x38, 0x7E,
                                        0x7F, 0xFF, 0x80, 0xB8, 0x5A, 0x30};
  const size_t cols = 512;  // 256 bytes per row: every byte once
  const size_t rows = classes.size();
  std::vector<uint8_t> packed(rows * cols / 2), scales(rows * cols / 16);
  for (size_t r = 0; r < rows; ++r) {
    for (size_t k = 0; k < cols / 2; ++k) packed[r * cols / 2 + k] = static_cast<uint8_t>(k + r);
    for (size_t g = 0; g < cols / 16; ++g) {
      scales[r * cols / 16 + g] = classes[(r + g) % classes.size()];
    }
  }
  const std::vector<float> globals = {1.0f,  1234.5f, 1.0f / 3,  -2.0f,
                                      3e38f, 1e-38f,  0x1p-140f, 0.0f,
                                      -0.0f, kInf,    FromBits(0x7FC00000u), FromBits(0xFF800123u),
                                      // its low half rounds up unless BF16 takes the NaN rule
                                      FromBits(0x7F80FFFFu)};
  for (const float global : globals) {
    for (ElemType type : kOutTypes) {
      EXPECT_TRUE(Nvfp4MatchesReference(packed, scales, global, rows, cols, 0, rows, type, 3));
    }
    // The canonical formula, element by element, for finite results.
    const std::vector<uint8_t> gs = F32Bytes(global);
    std::vector<std::byte> out(rows * cols * 4);
    ASSERT_TRUE(DequantNvfp4({rows, cols, AsSpan(packed), AsSpan(scales), AsSpan(gs)}, 0, rows,
                             ElemType::kF32, out)
                    .ok());
    for (size_t i = 0; i < rows * cols; ++i) {
      const size_t r = i / cols, c = i % cols;
      const uint8_t byte = packed[i / 2];
      const float v = kFp4Values[c % 2 == 0 ? byte & 0x0F : byte >> 4];
      const float q = FromBits(ref::E4m3ToF32Bits(scales[r * cols / 16 + c / 16])) / global;
      const float want = v * q;
      if (std::isnan(want)) continue;
      uint32_t got = 0;
      std::memcpy(&got, out.data() + 4 * i, 4);
      ASSERT_EQ(got, Bits(want)) << "element " << i << " global " << global;
    }
  }
}

// The kernels classify each tile of 64 groups by its scales q (kernels/
// fp4-inl.h, Fp4TileRange): all finite, and (SSE4/SSSE3 F16) whether every
// product is 0 or an F16 normal below 2^16, where the integer rounding is
// exact. Global scales a few ulps either side of each edge, and 1.5x
// either side: q = 2^-13 (0.5 q the smallest F16 normal), 6 q = 2^16 and
// 6 q = 65520 (the F16 overflow to Inf), with every code; row 0's 64 groups
// all have scale 1.0, row 1's a mix whose one group 0x20 (0.125) is
// smaller.
TEST_P(Fp4Test, Nvfp4F16RangeEdges) {
  const size_t rows = 2, cols = 64 * 16;
  std::vector<uint8_t> packed(rows * cols / 2), scales(rows * cols / 16, 0x38);
  for (size_t k = 0; k < packed.size(); ++k) packed[k] = static_cast<uint8_t>(k * 7);
  for (size_t g = 0; g < 64; ++g) scales[64 + g] = static_cast<uint8_t>(0x30 + g % 16);
  scales[64 + 37] = 0x20;
  for (const float edge : {0x1p13f, 6.0f / 65536, 6.0f / 65520, 1.5f * 0x1p13f, 0x1p13f / 1.5f,
                           1.5f * 6.0f / 65536, 6.0f / 65536 / 1.5f}) {
    for (const float sign : {1.0f, -1.0f}) {
      float global = sign * edge;
      for (int step = 0; step < 4; ++step) global = std::nextafter(global, 0.0f);
      for (int step = 0; step < 9; ++step, global = std::nextafter(global, sign * kInf)) {
        for (ElemType type : kOutTypes) {
          EXPECT_TRUE(Nvfp4MatchesReference(packed, scales, global, rows, cols, 0, rows, type, 1))
              << "global " << global;
        }
      }
    }
  }
}

// x86 BF16/F16 outputs of calls of >= 256 groups go through per-call rows
// of each scale byte's 16 results (fp4-inl.h, Nvfp4ByRows). Every scale
// byte with every code: `rotations` groups per byte, the codes of group
// (rotation r) in the order r, r + 1, ... (mod 16), so with 16 rotations
// every code meets every byte in every position; byte i % 256 for group i.
std::pair<std::vector<uint8_t>, std::vector<uint8_t>> EveryScaleByteEveryCode(size_t rotations) {
  const size_t groups = 256 * rotations;
  std::vector<uint8_t> packed(groups * 8), scales(groups);
  for (size_t i = 0; i < groups; ++i) {
    const size_t r = i / 256;
    scales[i] = static_cast<uint8_t>(i + r);  // each byte meets each rotation
    for (size_t k = 0; k < 8; ++k) {
      packed[i * 8 + k] = static_cast<uint8_t>(((2 * k + r) & 15) | (((2 * k + 1 + r) & 15) << 4));
    }
  }
  return {packed, scales};
}

TEST_P(Fp4Test, Nvfp4EveryScaleByteEveryCode) {
  constexpr std::array kOut16 = {ElemType::kBf16, ElemType::kF16};
  // Global scales whose quotients make zero, BF16/F16 subnormal, F16
  // overflowing (6 q around 65520), F32-overflowing, Inf and NaN outputs.
  const std::vector<float> globals = {1.0f,  1234.5f, 1.0f / 3,  -2.0f,  3e38f,
                                      1e-38f, 0x1p-140f, 0.0f,   -0.0f,  kInf,
                                      -kInf, FromBits(0x7FC00000u), FromBits(0xFF800123u),
                                      FromBits(0x7F80FFFFu), 6.0f / 65520, 448.0f * 6 / 65520,
                                      0x1p13f, 0x1p20f, 448.0f * 0x1p15f, -0.37f};
  {
    // 16 rows x 16 groups = 256 groups, each byte once.
    const auto [packed, scales] = EveryScaleByteEveryCode(1);
    for (const float global : globals) {
      for (ElemType type : kOut16) {
        EXPECT_TRUE(Nvfp4MatchesReference(packed, scales, global, 16, 256, 0, 16, type, 1));
      }
    }
  }
  // Every byte with every code in every position; row sub-ranges (32 and 31
  // rows of 16 groups: 512 and 496 groups) and output offsets.
  const auto [packed, scales] = EveryScaleByteEveryCode(16);
  for (const float global : {1234.5f, 0.37f, 0x1p13f}) {
    for (ElemType type : kOut16) {
      EXPECT_TRUE(Nvfp4MatchesReference(packed, scales, global, 256, 256, 0, 256, type, 0));
      EXPECT_TRUE(Nvfp4MatchesReference(packed, scales, global, 256, 256, 1, 33, type, 3));
      EXPECT_TRUE(Nvfp4MatchesReference(packed, scales, global, 256, 256, 200, 231, type, 1));
    }
  }
  // Around the threshold: 255 (17-group rows) and 256 groups, and 257 and
  // 259 (odd: the last group alone), of one-group rows.
  for (const auto& [rows, cols] : std::vector<std::pair<size_t, size_t>>{
           {15, 272}, {16, 256}, {257, 16}, {259, 16}}) {
    const std::vector<uint8_t> part_packed(packed.begin(), packed.begin() + rows * cols / 2);
    const std::vector<uint8_t> part_scales(scales.begin(), scales.begin() + rows * cols / 16);
    for (ElemType type : kOut16) {
      EXPECT_TRUE(Nvfp4MatchesReference(part_packed, part_scales, 1234.5f, rows, cols, 0, rows,
                                        type, 1))
          << rows << " x " << cols;
    }
  }
}

// Every E8M0 exponent (0, 127, 254, 255 included) with every byte, both
// layouts, three experts; the transposed output equals transformers'
// formula computed by the test.
TEST_P(Fp4Test, Mxfp4EveryCodeEveryExponentBothLayouts) {
  const size_t experts = 3, rows = 20, groups = 13;  // 20 * 13 * 3 = 780 blocks
  std::vector<uint8_t> blocks(experts * rows * groups * 16), scales(experts * rows * groups);
  for (size_t i = 0; i < blocks.size(); ++i) blocks[i] = static_cast<uint8_t>(i * 7 + i / 256);
  for (size_t i = 0; i < scales.size(); ++i) scales[i] = static_cast<uint8_t>(i);
  scales[5] = 0;
  scales[6] = 127;
  scales[7] = 254;
  scales[8] = 255;
  for (const bool transpose : {true, false}) {
    const size_t total = experts * (transpose ? groups * 32 : rows);
    for (ElemType type : kOutTypes) {
      EXPECT_TRUE(Mxfp4MatchesReference(blocks, scales, experts, rows, groups, transpose, 0,
                                        total, type, 1));
    }
    const std::vector<float> canonical =
        CanonicalMxfp4(blocks, scales, experts, rows, groups, transpose);
    for (ElemType type : kOutTypes) {
      const Mxfp4Tensor t{experts, rows, groups, AsSpan(blocks), AsSpan(scales), transpose};
      std::vector<uint8_t> out(canonical.size() * ElemTypeBytes(type));
      ASSERT_TRUE(DequantMxfp4(t, 0, total, type,
                               {reinterpret_cast<std::byte*>(out.data()), out.size()})
                      .ok());
      for (size_t i = 0; i < canonical.size(); ++i) {
        if (std::isnan(canonical[i])) {  // 0 * Inf: a NaN (bits: the rule)
          ASSERT_TRUE(IsNanBits(type, ElementBits(out, type, i))) << i;
          continue;
        }
        ASSERT_EQ(ElementBits(out, type, i), Encode(type, canonical[i]))
            << "element " << i << " transpose " << transpose << " "
            << ElemTypeName(type);
      }
    }
  }
}

// Hand-derived MXFP4 values: one block, exponent 127 (x1) and 128 (x2),
// transposed and not.
TEST_P(Fp4Test, Mxfp4HandVector) {
  // Two rows of one group each: row 0 bytes 0x21 0x98 ..., row 1 0x7F ...
  std::vector<uint8_t> blocks(32, 0);
  blocks[0] = 0x21;   // elements 0.5, 1.0
  blocks[1] = 0x98;   // -0.0, -0.5
  blocks[16] = 0x7F;  // -6, 6
  const std::vector<uint8_t> scales = {127, 128};
  const Mxfp4Tensor plain{1, 2, 1, AsSpan(blocks), AsSpan(scales), false};
  std::vector<uint16_t> out(64);
  std::span<std::byte> bytes(reinterpret_cast<std::byte*>(out.data()), 128);
  ASSERT_TRUE(DequantMxfp4(plain, 0, 2, ElemType::kBf16, bytes).ok());
  EXPECT_EQ(out[0], 0x3F00u);   // 0.5
  EXPECT_EQ(out[1], 0x3F80u);   // 1.0
  EXPECT_EQ(out[2], 0x8000u);   // -0.0
  EXPECT_EQ(out[3], 0xBF00u);   // -0.5
  EXPECT_EQ(out[4], 0x0000u);
  EXPECT_EQ(out[32], 0xC140u);  // -6 * 2
  EXPECT_EQ(out[33], 0x4140u);  // 6 * 2
  const Mxfp4Tensor gpt_oss{1, 2, 1, AsSpan(blocks), AsSpan(scales), true};
  ASSERT_TRUE(DequantMxfp4(gpt_oss, 0, 32, ElemType::kBf16, bytes).ok());
  // [c][r]: column 0 is (0.5, -12), column 1 is (1.0, 12).
  EXPECT_EQ(out[0], 0x3F00u);
  EXPECT_EQ(out[1], 0xC140u);
  EXPECT_EQ(out[2], 0x3F80u);
  EXPECT_EQ(out[3], 0x4140u);
  EXPECT_EQ(out[4], 0x8000u);
  // Rows 1..3 only: output starts at column 1.
  ASSERT_TRUE(DequantMxfp4(gpt_oss, 1, 3, ElemType::kBf16, bytes).ok());
  EXPECT_EQ(out[0], 0x3F80u);
  EXPECT_EQ(out[1], 0x4140u);
  EXPECT_EQ(out[2], 0x8000u);
}

// Random tensors, many shapes (including more rows than a tile and rows not
// a multiple of any vector), sub-ranges and misaligned outputs.
TEST_P(Fp4Test, RandomShapesAndRanges) {
  uint32_t seed = 7;
  uint64_t case_number = 0;
  for (size_t rows : {1, 2, 3, 17, 70, 129}) {
    for (size_t groups : {1, 2, 3, 5, 64, 65, 90}) {
      const std::vector<uint8_t> codes = PseudoRandomBytes(rows * groups * 16, seed++);
      std::vector<uint8_t> e4m3 = PseudoRandomBytes(rows * groups * 2, seed++);
      std::vector<uint8_t> e8m0 = PseudoRandomBytes(rows * groups, seed++);
      for (ElemType type : kOutTypes) {
        // 4 is prime to the 3 output types and the 7 group counts.
        if (!RunCase(case_number++, 4)) continue;
        const size_t cols = groups * 32;  // NVFP4: 2 * groups 16-groups
        e4m3.resize(rows * cols / 16);
        EXPECT_TRUE(Nvfp4MatchesReference(codes, e4m3, 0.37f, rows, cols, 0, rows, type,
                                          seed % 64));
        EXPECT_TRUE(Nvfp4MatchesReference(codes, e4m3, 3.0f, rows, cols, rows / 2, rows, type,
                                          seed % 7));
        for (const bool transpose : {true, false}) {
          const size_t total = transpose ? cols : rows;
          EXPECT_TRUE(Mxfp4MatchesReference(codes, e8m0, 1, rows, groups, transpose, 0, total,
                                            type, seed % 64));
          EXPECT_TRUE(Mxfp4MatchesReference(codes, e8m0, 1, rows, groups, transpose, total / 3,
                                            total - total / 4, type, seed % 5));
        }
      }
    }
  }
}

// Transposed and plain layouts on a multi-expert tensor, ranges that start
// and end inside experts and inside 32-column groups.
TEST_P(Fp4Test, Mxfp4MultiExpertRanges) {
  const size_t experts = 4, rows = 45, groups = 3;
  const std::vector<uint8_t> blocks = PseudoRandomBytes(experts * rows * groups * 16, 11);
  std::vector<uint8_t> scales = PseudoRandomBytes(experts * rows * groups, 12);
  for (uint8_t& s : scales) s = static_cast<uint8_t>(100 + s % 50);
  const size_t cols = groups * 32;
  for (ElemType type : kOutTypes) {
    for (const auto& [b, e] : std::vector<std::pair<size_t, size_t>>{
             {0, experts * cols}, {5, 6}, {31, 33}, {cols - 7, 2 * cols + 40}, {3 * cols, 4 * cols},
             {17, 17}}) {
      EXPECT_TRUE(
          Mxfp4MatchesReference(blocks, scales, experts, rows, groups, true, b, e, type, 3));
    }
    for (const auto& [b, e] : std::vector<std::pair<size_t, size_t>>{
             {0, experts * rows}, {44, 46}, {90, 180}, {7, 7}}) {
      EXPECT_TRUE(
          Mxfp4MatchesReference(blocks, scales, experts, rows, groups, false, b, e, type, 5));
    }
  }
}

// Transposed MXFP4 over several row tiles (mxfp4_transposed-inl.h: 64 rows), the last
// tile partial, every E8M0 exponent, and one 255 (Inf scale) in the last
// tile only: the F16C F16 path takes the tiles with finite scales, the
// general path the other; ranges start and end inside groups.
TEST_P(Fp4Test, Mxfp4TransposedAcrossTiles) {
  const size_t experts = 2, rows = 300, groups = 3;
  const std::vector<uint8_t> blocks = PseudoRandomBytes(experts * rows * groups * 16, 21);
  std::vector<uint8_t> scales(experts * rows * groups);
  for (size_t i = 0; i < scales.size(); ++i) scales[i] = static_cast<uint8_t>(i % 255);
  scales[270 * groups + 1] = 255;
  const size_t cols = groups * 32;
  for (ElemType type : kOutTypes) {
    for (const auto& [b, e] : std::vector<std::pair<size_t, size_t>>{
             {0, experts * cols}, {33, 70}, {cols - 1, cols + 2}}) {
      EXPECT_TRUE(
          Mxfp4MatchesReference(blocks, scales, experts, rows, groups, true, b, e, type, 3));
    }
  }
}

// The exponent path of transposed MXFP4 (mxfp4_transposed-inl.h; x86, NEON) takes a band
// of up to 512 rows of one group when all its E8M0 codes lie in [2, 252]
// (F16: [114, 140]) and works in runs of 16, 32 or 64 rows in a permuted
// byte order; a band it cannot take goes through 64-row tiles, where F16
// tries the F32 bits' range per tile. Scale classes are given per span of
// `span` rows (64: classes change inside a band; 512: whole bands): inside
// the F16 range (its ends included), inside only the BF16/F32 range (its
// ends and the F16 range's neighbours), or in range but for one code at a
// pseudo-random row that is just outside (1, 253, 113, 141) or special (0,
// 254, 255). Row counts cut bands, tiles and runs anywhere; output ranges
// start and end inside groups.
TEST_P(Fp4Test, Mxfp4TransposedExponentPathTiles) {
  constexpr uint8_t kF16Range[] = {114, 115, 120, 127, 133, 139, 140};
  constexpr uint8_t kWideRange[] = {2, 3, 60, 113, 141, 200, 251, 252};
  constexpr uint8_t kOutside[] = {1, 253, 113, 141, 0, 254, 255};
  uint8_t seed = 40;
  for (const size_t span : {64, 512}) {
    for (const size_t rows : {1,   15,  16,  17,  31,  33,  63,  64,  65,  100, 130,
                              191, 255, 256, 257, 300, 511, 512, 513, 700, 1100}) {
      if (span == 512 && rows <= 64) continue;  // the same as span 64
      const size_t groups = rows % 2 == 0 ? 2 : 3;
      const std::vector<uint8_t> blocks = PseudoRandomBytes(rows * groups * 16, seed++);
      const std::vector<uint8_t> noise = PseudoRandomBytes(rows * groups, seed++);
      std::vector<uint8_t> scales(rows * groups);
      for (size_t r = 0; r < rows; ++r) {
        for (size_t g = 0; g < groups; ++g) {
          const size_t span_class = (r / span + g) % 3;
          const uint8_t n = noise[r * groups + g];
          scales[r * groups + g] = span_class == 0 ? kF16Range[n % std::size(kF16Range)]
                                                   : kWideRange[n % std::size(kWideRange)];
        }
      }
      for (size_t r0 = 0; r0 < rows; r0 += span) {  // class 2: one code outside
        const size_t g = (3 - r0 / span % 3 + 2) % 3;
        if (g >= groups) continue;
        const size_t r = r0 + noise[r0 * groups] % std::min(span, rows - r0);
        scales[r * groups + g] = kOutside[(r0 / span + rows) % std::size(kOutside)];
      }
      const size_t cols = groups * 32;
      for (ElemType type : kOutTypes) {
        for (const auto& [b, e] :
             std::vector<std::pair<size_t, size_t>>{{0, cols}, {1, cols - 1}, {33, 34}, {31, 33}}) {
          EXPECT_TRUE(Mxfp4MatchesReference(blocks, scales, 1, rows, groups, true, b, e, type, 1))
              << "span " << span;
        }
      }
    }
  }
}

TEST_P(Fp4Test, PropertyMatchesReference) {
  const bool ok = rc::check("DequantNvfp4 / DequantMxfp4 match the reference", [] {
    const auto type = *rc::gen::elementOf(kOutTypes);
    const size_t rows = *rc::gen::inRange<size_t>(1, 80);
    const size_t groups = *rc::gen::inRange<size_t>(1, 8);
    const size_t offset = *rc::gen::inRange<size_t>(0, 64);
    const auto codes = *rc::gen::container<std::vector<uint8_t>>(rows * groups * 16,
                                                                  rc::gen::arbitrary<uint8_t>());
    if (*rc::gen::arbitrary<bool>()) {
      const size_t cols = groups * 32;
      const auto scales = *rc::gen::container<std::vector<uint8_t>>(
          rows * cols / 16, rc::gen::arbitrary<uint8_t>());
      const float global = FromBits(*rc::gen::arbitrary<uint32_t>());
      const size_t b = *rc::gen::inRange<size_t>(0, rows + 1);
      const size_t e = *rc::gen::inRange<size_t>(b, rows + 1);
      RC_ASSERT(Nvfp4MatchesReference(codes, scales, global, rows, cols, b, e, type, offset));
    } else {
      const auto scales = *rc::gen::container<std::vector<uint8_t>>(
          rows * groups, rc::gen::arbitrary<uint8_t>());
      const bool transpose = *rc::gen::arbitrary<bool>();
      const size_t total = transpose ? groups * 32 : rows;
      const size_t b = *rc::gen::inRange<size_t>(0, total + 1);
      const size_t e = *rc::gen::inRange<size_t>(b, total + 1);
      RC_ASSERT(Mxfp4MatchesReference(codes, scales, 1, rows, groups, transpose, b, e, type,
                                      offset));
    }
  });
  EXPECT_TRUE(ok);
}

TEST_P(Fp4Test, RegistryEntriesMatchReference) {
  size_t entries = 0;
  for (const KernelInfo& kernel : Kernels()) {
    if (kernel.family != "fp4") continue;
    ++entries;
    EXPECT_EQ(kernel.probe(), GetParam());
    const size_t unit = kernel.block_elems;
    for (size_t units : {0, 1, 3, 89, 90, 91, 181, 2000, 23040 + 95}) {
      const std::vector<uint8_t> input =
          PseudoRandomBytes(units * kernel.in_block_bytes, static_cast<uint32_t>(units + 1));
      EXPECT_TRUE(MatchesReference(kernel, input, units % 3, units % 5))
          << kernel.name << " n=" << units * unit;
    }
  }
  EXPECT_EQ(entries, 6u);
}

// ---- The checked API -------------------------------------------------------

TEST_P(Fp4Test, CheckedApiRejectsBadCalls) {
  std::vector<std::byte> out(4096, std::byte{0x5A});
  const auto untouched = [&out] {
    for (std::byte b : out) {
      if (b != std::byte{0x5A}) return false;
    }
    return true;
  };
  const std::vector<uint8_t> packed(2 * 16, 0x11), scales(2 * 2, 0x38), gs = F32Bytes(1.0f);
  const auto nv = [&](uint64_t rows, uint64_t cols, size_t np, size_t ns, size_t ng) {
    return Nvfp4Tensor{rows, cols, AsSpan(packed).first(np), AsSpan(scales).first(ns),
                       AsSpan(gs).first(ng)};
  };
  struct BadNv {
    const char* what;
    Nvfp4Tensor t;
    uint64_t b, e;
    ElemType type;
    size_t out_bytes;
  };
  const BadNv bad_nv[] = {
      {"cols not a multiple of 16", nv(2, 24, 24, 3, 4), 0, 2, ElemType::kBf16, 4096},
      {"short packed", nv(2, 32, 31, 4, 4), 0, 2, ElemType::kBf16, 4096},
      {"long packed", nv(1, 32, 32, 2, 4), 0, 1, ElemType::kBf16, 4096},
      {"short scales", nv(2, 32, 32, 3, 4), 0, 2, ElemType::kBf16, 4096},
      {"global scale of 3 bytes", nv(2, 32, 32, 4, 3), 0, 2, ElemType::kBf16, 4096},
      {"range past the rows", nv(2, 32, 32, 4, 4), 0, 3, ElemType::kBf16, 4096},
      {"inverted range", nv(2, 32, 32, 4, 4), 2, 1, ElemType::kBf16, 4096},
      {"short out", nv(2, 32, 32, 4, 4), 0, 2, ElemType::kBf16, 127},
      {"short f32 out", nv(2, 32, 32, 4, 4), 1, 2, ElemType::kF32, 127},
      {"e4m3 out", nv(2, 32, 32, 4, 4), 0, 2, ElemType::kF8E4m3, 4096},
      {"overflowing shape", nv(uint64_t{1} << 62, 32, 32, 4, 4), 0, 1, ElemType::kBf16, 4096},
  };
  for (const BadNv& bad : bad_nv) {
    const Status status = DequantNvfp4(bad.t, bad.b, bad.e, bad.type,
                                       std::span<std::byte>(out).first(bad.out_bytes));
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << bad.what;
    EXPECT_FALSE(status.message().empty()) << bad.what;
    EXPECT_TRUE(untouched()) << bad.what;
  }
  EXPECT_TRUE(DequantNvfp4(nv(2, 32, 32, 4, 4), 0, 2, ElemType::kF32,
                           std::span<std::byte>(out).first(256))
                  .ok());
  float nv_first = 0;
  std::memcpy(&nv_first, out.data(), 4);
  EXPECT_EQ(nv_first, 0.5f);  // byte 0x11: 0.5, scale 1.0 / 1.0
  std::fill(out.begin(), out.end(), std::byte{0x5A});

  const std::vector<uint8_t> blocks(2 * 3 * 2 * 16, 0x22), e8m0(2 * 3 * 2, 127);
  const auto mx = [&](uint64_t experts, uint64_t rows, uint64_t groups, size_t nb, size_t ns,
                      bool transpose) {
    return Mxfp4Tensor{experts, rows,  groups, AsSpan(blocks).first(nb), AsSpan(e8m0).first(ns),
                       transpose};
  };
  struct BadMx {
    const char* what;
    Mxfp4Tensor t;
    uint64_t b, e;
    ElemType type;
    size_t out_bytes;
  };
  const BadMx bad_mx[] = {
      {"short blocks", mx(2, 3, 2, 191, 12, true), 0, 1, ElemType::kBf16, 4096},
      {"short scales", mx(2, 3, 2, 192, 11, true), 0, 1, ElemType::kBf16, 4096},
      {"extra scales", mx(1, 3, 2, 96, 12, true), 0, 1, ElemType::kBf16, 4096},
      {"range past transposed rows", mx(2, 3, 2, 192, 12, true), 0, 129, ElemType::kBf16, 4096},
      {"range past plain rows", mx(2, 3, 2, 192, 12, false), 0, 7, ElemType::kBf16, 4096},
      {"short out, transposed", mx(2, 3, 2, 192, 12, true), 0, 128, ElemType::kBf16, 767},
      {"short out, plain", mx(2, 3, 2, 192, 12, false), 0, 6, ElemType::kF32, 767},
      {"f8 out", mx(2, 3, 2, 192, 12, false), 0, 6, ElemType::kF8E5m2, 4096},
      {"overflowing shape", mx(uint64_t{1} << 40, uint64_t{1} << 30, 2, 192, 12, true), 0, 1,
       ElemType::kBf16, 4096},
  };
  for (const BadMx& bad : bad_mx) {
    const Status status = DequantMxfp4(bad.t, bad.b, bad.e, bad.type,
                                       std::span<std::byte>(out).first(bad.out_bytes));
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << bad.what;
    EXPECT_FALSE(status.message().empty()) << bad.what;
    EXPECT_TRUE(untouched()) << bad.what;
  }
  EXPECT_TRUE(DequantMxfp4(mx(2, 3, 2, 192, 12, true), 0, 128, ElemType::kBf16,
                           std::span<std::byte>(out).first(768))
                  .ok());
  uint16_t first = 0;
  std::memcpy(&first, out.data(), 2);
  EXPECT_EQ(first, 0x3F80u);  // byte 0x22: low nibble 2 = 1.0, scale 2^0
}

AMN_INSTANTIATE_PER_TARGET(Fp4Test);

}  // namespace
}  // namespace amn::test
