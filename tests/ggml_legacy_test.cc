// ggml legacy block quants (Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 Q8_1 IQ4_NL MXFP4)
// through amn::DequantGgml on every supported target: the gguf_reference
// fixtures to BF16 exactly, random blocks against the scalar reference for
// all three outputs, every nibble/code/qh bit, special d and m values, many
// block counts and misaligned buffers with canaries, a RapidCheck property,
// the registry entries, and the checked API's errors. The reference and the
// codebooks are anchored on ggml's published values.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "amn/ggml_dequant.h"
#include "amn/kernel_registry.h"
#include "kernels/ggml_blocks.h"
#include "kernels/ref/float_convert_ref.h"
#include "kernels/ref/ggml_legacy_ref.h"
#include "tests/fixtures.h"
#include "tests/ggml_check.h"
#include "tests/kernel_check.h"
#include "tests/target_param.h"

namespace amn::test {
namespace {

using G = GgmlType;
constexpr std::array kLegacyTypes = {G::kQ4_0, G::kQ4_1, G::kQ5_0,   G::kQ5_1,
                                     G::kQ8_0, G::kQ8_1, G::kIQ4_NL, G::kMXFP4};
constexpr std::array kOutTypes = {ElemType::kF32, ElemType::kBf16, ElemType::kF16};

const GgmlTypeInfo& Info(GgmlType type) { return *FindGgmlType(static_cast<uint32_t>(type)); }


// Writes a little-endian u16/u32 into a block.
void Put16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
}
void Put32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

// Byte offset of the f16 m of Q4_1/Q5_1; 0 when the type has none.
size_t MOffset(GgmlType type) { return type == G::kQ4_1 || type == G::kQ5_1 ? 2 : 0; }

// ---- Host-only anchors -----------------------------------------------------

TEST(GgmlLegacyTables, CodebooksMatchGgml) {
  constexpr std::array<int, 16> kIq4Nl = {-127, -104, -83, -65, -49, -35, -22, -10,
                                          1,    13,   25,  38,  53,  69,  89,  113};
  constexpr std::array<int, 16> kMxfp4 = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};
  for (size_t i = 0; i < 16; ++i) {
    EXPECT_EQ(ggml::kIq4NlValues[i], kIq4Nl[i]) << i;
    EXPECT_EQ(ggml::kMxfp4Values[i], kMxfp4[i]) << i;
  }
  // E8M0 halved: 2^(e - 128), and e = 255 is a finite power of two.
  for (int e = 0; e < 255; ++e) {
    EXPECT_EQ(std::bit_cast<float>(ggml::Mxfp4HalfScaleBits(static_cast<uint8_t>(e))),
              std::ldexp(1.0f, e - 128))
        << e;
  }
  EXPECT_EQ(ggml::Mxfp4HalfScaleBits(255), 0x7F000000u);
}

TEST(GgmlLegacyTables, BlockSizesMatchTypeTable) {
  EXPECT_EQ(Info(G::kQ4_0).block_bytes, ggml::kQ4_0Bytes);
  EXPECT_EQ(Info(G::kQ4_1).block_bytes, ggml::kQ4_1Bytes);
  EXPECT_EQ(Info(G::kQ5_0).block_bytes, ggml::kQ5_0Bytes);
  EXPECT_EQ(Info(G::kQ5_1).block_bytes, ggml::kQ5_1Bytes);
  EXPECT_EQ(Info(G::kQ8_0).block_bytes, ggml::kQ8_0Bytes);
  EXPECT_EQ(Info(G::kQ8_1).block_bytes, ggml::kQ8_1Bytes);
  EXPECT_EQ(Info(G::kIQ4_NL).block_bytes, ggml::kIq4NlBytes);
  EXPECT_EQ(Info(G::kMXFP4).block_bytes, ggml::kMxfp4Bytes);
  for (GgmlType type : kLegacyTypes) EXPECT_EQ(Info(type).block_elems, ggml::kQK);
}

// The reference against values worked out by hand from the README formulas.
TEST(GgmlLegacyReference, HandWorkedBlocks) {
  std::vector<uint8_t> q4_0(18, 0);
  Put16(q4_0.data(), 0x3800);  // d = 0.5
  q4_0[2] = 0xF0;              // y0 = 0.5 * (0 - 8) = -4, y16 = 0.5 * (15 - 8) = 3.5
  std::vector<float> y(32);
  ref::DequantQ4_0(q4_0.data(), 1, y.data());
  EXPECT_EQ(y[0], -4.0f);
  EXPECT_EQ(y[16], 3.5f);
  EXPECT_EQ(y[1], -4.0f);

  std::vector<uint8_t> q5_1(24, 0);
  Put16(q5_1.data(), 0x3C00);           // d = 1
  Put16(q5_1.data() + 2, 0xBC00);       // m = -1
  Put32(q5_1.data() + 4, 0x00010002u);  // bit 1 and bit 16
  q5_1[8 + 1] = 0x03;                   // y1 = 3 | 16 = 19; y17 = 0
  q5_1[8 + 0] = 0x50;                   // y0 = 0, y16 = 5 | 16 = 21
  ref::DequantQ5_1(q5_1.data(), 1, y.data());
  EXPECT_EQ(y[0], -1.0f);
  EXPECT_EQ(y[1], 18.0f);
  EXPECT_EQ(y[16], 20.0f);
  EXPECT_EQ(y[17], -1.0f);

  std::vector<uint8_t> mxfp4(17, 0);
  mxfp4[0] = 129;   // s = 2
  mxfp4[1] = 0xF7;  // y0 = 12 * 2 = 24, y16 = -12 * 2 = -24
  ref::DequantMxfp4(mxfp4.data(), 1, y.data());
  EXPECT_EQ(y[0], 24.0f);
  EXPECT_EQ(y[16], -24.0f);

  std::vector<uint8_t> iq4(18, 0);
  Put16(iq4.data(), 0x4000);  // d = 2
  iq4[2] = 0x0F;              // y0 = 2 * 113, y16 = 2 * -127
  ref::DequantIq4Nl(iq4.data(), 1, y.data());
  EXPECT_EQ(y[0], 226.0f);
  EXPECT_EQ(y[16], -254.0f);
}

// Q4_1 is (d * q) + m with two roundings: a case where one fused rounding
// would differ.
TEST(GgmlLegacyReference, Q4_1IsNotFused) {
  std::vector<uint8_t> block(20, 0);
  Put16(block.data(), 0x3C01);      // d = 1 + 2^-10
  Put16(block.data() + 2, 0x8001);  // m = -2^-24
  block[4] = 0x0F;
  std::vector<float> y(32);
  ref::DequantQ4_1(block.data(), 1, y.data());
  const float d = 1.0f + 0x1p-10f, m = -0x1p-24f;
  volatile float product = 15.0f * d;
  EXPECT_EQ(y[0], product + m);
}

// ---- Per target ------------------------------------------------------------

class GgmlLegacyTest : public PerTarget {};

TEST_P(GgmlLegacyTest, ProbeReportsForcedTarget) { EXPECT_EQ(GgmlLegacyTarget(), GetParam()); }

TEST_P(GgmlLegacyTest, FixturesToBf16) {
  const size_t checked = CheckGoldenFixtures(kLegacyTypes);
  if (checked == 0) GTEST_SKIP() << "no legacy gguf_reference fixtures; set AMN_FIXTURES_DIR";
  EXPECT_GE(checked, 7u);  // every legacy type but Q8_1 has a fixture
}

TEST_P(GgmlLegacyTest, RandomBlocksMatchReference) {
  uint32_t seed = 1;
  for (GgmlType type : kLegacyTypes) {
    const size_t block_bytes = Info(type).block_bytes;
    for (size_t n_blocks : {0, 1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 33, 64, 100}) {
      const std::vector<uint8_t> blocks = PseudoRandomBytes(n_blocks * block_bytes, seed++);
      for (ElemType out_type : kOutTypes) {
        EXPECT_TRUE(MatchesGgmlReference(type, blocks, out_type));
      }
    }
  }
}

TEST_P(GgmlLegacyTest, MisalignedBuffers) {
  uint32_t seed = 77;
  for (GgmlType type : kLegacyTypes) {
    const std::vector<uint8_t> blocks = PseudoRandomBytes(9 * Info(type).block_bytes, seed++);
    for (ElemType out_type : kOutTypes) {
      for (size_t in_offset : {1, 3, 17, 63}) {
        for (size_t out_offset : {1, 2, 3, 5, 30}) {
          EXPECT_TRUE(MatchesGgmlReference(type, blocks, out_type, in_offset, out_offset));
        }
      }
    }
  }
}

// Every nibble in every position, every Q5 high bit pattern, every i8 code,
// every E8M0 exponent.
// 256 blocks of `type` in which every position holds every code byte (and
// Q5 high bits), block b with scale d(b) (and min m(b)); MXFP4's scale byte
// is b.
template <class DOf, class MOf>
std::vector<uint8_t> EveryCodeBlocks(GgmlType type, DOf d, MOf m) {
  const size_t block_bytes = Info(type).block_bytes;
  const size_t qs = block_bytes - (type == G::kQ8_0 || type == G::kQ8_1 ? 32 : 16);
  std::vector<uint8_t> blocks;
  for (size_t b = 0; b < 256; ++b) {
      std::vector<uint8_t> block(block_bytes, 0);
      Put16(block.data(), d(b));
      if (MOffset(type) != 0) Put16(block.data() + 2, m(b));
      if (type == G::kMXFP4) block[0] = static_cast<uint8_t>(b);
      if (type == G::kQ5_0 || type == G::kQ5_1) {
        const uint32_t qh_patterns[4] = {0, 0xFFFFFFFFu, 0xAAAAAAAAu,
                                         0x9E3779B9u * static_cast<uint32_t>(b + 1)};
        Put32(block.data() + qs - 4, qh_patterns[b % 4]);
      }
      for (size_t l = qs; l < block_bytes; ++l) {
        block[l] = static_cast<uint8_t>(b + (l - qs) * 17);  // all 256 bytes per position
      }
      blocks.insert(blocks.end(), block.begin(), block.end());
  }
  return blocks;
}

TEST_P(GgmlLegacyTest, EveryCode) {
  for (GgmlType type : kLegacyTypes) {
    const std::vector<uint8_t> blocks = EveryCodeBlocks(
        type, [](size_t b) { return static_cast<uint16_t>(0x3000 + b); },  // varied finite d
        [](size_t b) { return static_cast<uint16_t>(0xB400 + 3 * b); });
    for (ElemType out_type : kOutTypes) EXPECT_TRUE(MatchesGgmlReference(type, blocks, out_type));
  }
}

// Scales on both sides of GgmlF16InRange (kernels/ggml_legacy-inl.h), whose
// blocks' F16 outputs take the integer rounding on SSE4/SSSE3 (Q5_0, Q8_0,
// Q8_1), each with every code: d = ±2^-14 (in) and the largest F16
// subnormals (out: results just below 2^-14), ±0 (all results ±0, -0
// included), the largest d with max|q| * |d| < 2^16 (Q8 511.75, Q5_0 4094:
// 16 * 4094 = 65504, 15 * 4094 rounding to 61408) and the next F16 (out),
// and realistic scales (1e-4..1e-2). Q5_1 (which keeps the general store)
// gets the same blocks with mins: 31 * 2047 + 2064 = 65521 and + 2078 (sums
// rounding to Inf), m = -d (exact zeros) and the usual d > 0 > m.
TEST_P(GgmlLegacyTest, F16InRangeBoundaryScales) {
  constexpr std::array<std::pair<uint16_t, uint16_t>, 20> kScales = {{
      {0x0400, 0x0000}, {0x8400, 0x8000}, {0x03FF, 0x0000}, {0x83FF, 0x0400},
      {0x0000, 0x0000}, {0x8000, 0x8000}, {0x0000, 0x8400}, {0x8000, 0x03FF},
      {0x5FFF, 0x0000}, {0x6000, 0x0000}, {0x6BFF, 0x0000}, {0xEC00, 0x0000},
      {0x67FF, 0x6808}, {0xE7FF, 0xE808}, {0x67FF, 0x680F}, {0x67FF, 0x6810},
      {0x0400, 0x8400}, {0x2000, 0xA400}, {0x1E8D, 0x9C00}, {0x211F, 0x0400},
  }};
  for (GgmlType type : {G::kQ5_0, G::kQ5_1, G::kQ8_0, G::kQ8_1}) {
    const std::vector<uint8_t> blocks = EveryCodeBlocks(
        type, [&](size_t b) { return kScales[b % kScales.size()].first; },
        [&](size_t b) { return kScales[b % kScales.size()].second; });
    for (ElemType out_type : kOutTypes) {
      EXPECT_TRUE(MatchesGgmlReference(type, blocks, out_type)) << GgmlName(type);
    }
  }
}

// d (and m) at ±0, F16 subnormals, the largest finite, ±Inf and NaNs, each
// paired with every code, so zero codes meet Inf (invalid) and NaN.
TEST_P(GgmlLegacyTest, SpecialScales) {
  constexpr std::array<uint16_t, 12> kSpecial = {0x0000, 0x8000, 0x0001, 0x03FF, 0x8200, 0x0400,
                                                 0x7BFF, 0xFBFF, 0x7C00, 0xFC00, 0x7E00, 0xFD01};
  for (GgmlType type : kLegacyTypes) {
    if (type == G::kMXFP4) continue;  // its scale byte is covered by EveryCode
    const size_t block_bytes = Info(type).block_bytes;
    std::vector<uint8_t> blocks;
    for (uint16_t d : kSpecial) {
      for (uint16_t m : {uint16_t{0x3C00}, uint16_t{0x8000}, uint16_t{0x7C00}, uint16_t{0xFC00},
                         uint16_t{0x7D00}, uint16_t{0x0001}}) {
        std::vector<uint8_t> block = PseudoRandomBytes(block_bytes, d * 7u + m);
        Put16(block.data(), d);
        if (MOffset(type) != 0) {
          Put16(block.data() + 2, m);
        } else if (m != 0x3C00) {
          continue;
        }
        block[block_bytes - 1] = type == G::kQ4_0 ? 0x88 : 0x00;  // zero codes
        blocks.insert(blocks.end(), block.begin(), block.end());
      }
    }
    for (ElemType out_type : kOutTypes) EXPECT_TRUE(MatchesGgmlReference(type, blocks, out_type));
  }
}

// BF16 of block results, as u16 (little-endian bytes of the reference).
std::vector<uint16_t> AsU16(const std::vector<uint8_t>& bytes) {
  std::vector<uint16_t> v(bytes.size() / 2);
  std::memcpy(v.data(), bytes.data(), v.size() * 2);
  return v;
}

// The finite-scale path rounds BF16 without the NaN rule
// (kernels/ggml_legacy-inl.h), so it must still give ±Inf where products
// overflow: MXFP4's E8M0 scale reaches 2^127 (halved, with codes doubled to
// ±12), every nibble in both halves. Beside them Q4_1/Q8_0 blocks with the
// largest finite f16 d (and m) and blocks with Inf/NaN d or m, which must
// keep the NaN rule.
TEST_P(GgmlLegacyTest, OverflowingFiniteScalesAndSpecialBlocks) {
  std::vector<uint8_t> mxfp4;
  for (int e : {250, 253, 254, 255}) {
    for (int shift = 0; shift < 16; ++shift) {
      std::vector<uint8_t> block(ggml::kMxfp4Bytes, 0);
      block[0] = static_cast<uint8_t>(e);
      for (size_t l = 0; l < 16; ++l) {
        const size_t lo = (l + shift) & 15, hi = (15 - l + shift) & 15;
        block[1 + l] = static_cast<uint8_t>(lo | hi << 4);
      }
      mxfp4.insert(mxfp4.end(), block.begin(), block.end());
    }
  }
  // Not vacuous: the reference gives both infinities and finite values.
  const std::vector<uint16_t> bf16 = AsU16(GgmlReference(G::kMXFP4, mxfp4, ElemType::kBf16));
  EXPECT_NE(std::count(bf16.begin(), bf16.end(), uint16_t{0x7F80}), 0);
  EXPECT_NE(std::count(bf16.begin(), bf16.end(), uint16_t{0xFF80}), 0);
  EXPECT_NE(std::count(bf16.begin(), bf16.end(), uint16_t{0x7F00}), 0);  // 2^127
  for (ElemType out_type : kOutTypes) {
    EXPECT_TRUE(MatchesGgmlReference(G::kMXFP4, mxfp4, out_type, 3, 2));
  }
  // 127, 128 and 129 of these blocks: x86 16-bit outputs of calls of >= 128
  // blocks look their codes up in per-call rows per E8M0 byte
  // (ggml_legacy-inl.h, GgmlMxfp4ByRows).
  std::vector<uint8_t> many;
  while (many.size() < 129 * ggml::kMxfp4Bytes) many.insert(many.end(), mxfp4.begin(), mxfp4.end());
  for (size_t n_blocks : {127, 128, 129}) {
    const std::vector<uint8_t> part(many.begin(), many.begin() + n_blocks * ggml::kMxfp4Bytes);
    for (ElemType out_type : {ElemType::kBf16, ElemType::kF16}) {
      EXPECT_TRUE(MatchesGgmlReference(G::kMXFP4, part, out_type, 1, 1)) << n_blocks;
    }
  }
  for (GgmlType type : {G::kQ4_1, G::kQ8_0}) {
    const size_t block_bytes = Info(type).block_bytes;
    std::vector<uint8_t> blocks;
    // Finite, special, finite, ... so each path follows the other. NaNs
    // with the low f16 payload bits set (0x7FFF, 0xFE07) widen to F32 NaNs
    // whose low 16 bits are >= 0x8000: rounded without the NaN rule they
    // would carry (0x7FFF -> -0), so they catch a special block taking the
    // finite path.
    const std::array<std::pair<uint16_t, uint16_t>, 8> kScales = {
        {{0x7BFF, 0x7BFF}, {0x7C00, 0x3C00}, {0xFBFF, 0xFBFF}, {0x7FFF, 0x0000},
         {0x7BFF, 0xFBFF}, {0x3C00, 0xFC00}, {0x3C01, 0x3C00}, {0x3C00, 0xFE07}}};
    for (size_t i = 0; i < 64; ++i) {
      std::vector<uint8_t> block = PseudoRandomBytes(block_bytes, 77 + static_cast<uint32_t>(i));
      const auto [d, m] = kScales[i % kScales.size()];
      Put16(block.data(), d);
      if (MOffset(type) != 0) Put16(block.data() + 2, m);
      blocks.insert(blocks.end(), block.begin(), block.end());
    }
    const std::vector<uint16_t> ref = AsU16(GgmlReference(type, blocks, ElemType::kBf16));
    const auto is_nan = [](uint16_t b) { return (b & 0x7FFF) > 0x7F80; };
    EXPECT_NE(std::count_if(ref.begin(), ref.end(), is_nan), 0) << GgmlName(type);
    for (ElemType out_type : kOutTypes) {
      EXPECT_TRUE(MatchesGgmlReference(type, blocks, out_type, 1, 6)) << GgmlName(type);
    }
  }
}

// Q4_0/Q4_1/Q5_0/Q5_1's per-block scales, which AVX3/AVX3_DL widen with
// vcvtph2ps after testing the f16 exponent fields of d and m together
// (GgmlF16BlockScales in kernels/ggml_legacy-inl.h): every pair of d, m
// from finite edges (±0, the smallest and largest f16 subnormals, the
// smallest normal, ±65504, ±1, -0.5) and Inf/NaN ones, so each half of the
// combined test meets the other half finite and special. The NaNs include
// payloads whose widened low 16 bits are >= 0x8000 (0x7FFF, 0xFFFF, 0xFE07,
// 0x7DFF), which a special block wrongly taking the finite path would round
// into another BF16 (the others round the same either way). Q5's qh is all
// 0, all 1, alternating both ways, and a mixed pattern; codes cover every
// nibble, zero codes included (Inf * 0). Whole runs and partial ones
// (1, 2, 3, 17 blocks, misaligned).
TEST_P(GgmlLegacyTest, F16ScaleWideningEdges) {
  constexpr std::array<uint16_t, 20> kScales = {
      0x0000, 0x8000, 0x0001, 0x8001, 0x03FF, 0x83FF, 0x0400, 0x7BFF, 0xFBFF, 0x3C00,
      0xB800, 0x7C00, 0xFC00, 0x7C01, 0x7DFF, 0x7E00, 0x7FFF, 0xFFFF, 0xFE07, 0x7BFE};
  constexpr std::array<uint32_t, 5> kQh = {0, 0xFFFFFFFFu, 0xAAAAAAAAu, 0x55555555u, 0x0F0F00FFu};
  for (GgmlType type : {G::kQ4_0, G::kQ4_1, G::kQ5_0, G::kQ5_1}) {
    const size_t block_bytes = Info(type).block_bytes;
    const size_t qs = block_bytes - 16;
    const bool q5 = type == G::kQ5_0 || type == G::kQ5_1;
    std::vector<uint8_t> blocks;
    uint32_t seed = 4242;
    for (uint16_t d : kScales) {
      for (uint16_t m : kScales) {
        if (MOffset(type) == 0 && m != kScales[0]) continue;
        std::vector<uint8_t> block = PseudoRandomBytes(block_bytes, seed++);
        Put16(block.data(), d);
        if (MOffset(type) != 0) Put16(block.data() + 2, m);
        if (q5) Put32(block.data() + qs - 4, kQh[seed % kQh.size()]);
        // Zero codes (Inf * 0): element 0's nibble 0 (Q5: code 0 or 16),
        // and Q4_0's element 1 code 8.
        block[qs] = static_cast<uint8_t>(block[qs] & 0xF0);
        if (type == G::kQ4_0) block[qs + 1] = static_cast<uint8_t>((block[qs + 1] & 0xF0) | 8);
        blocks.insert(blocks.end(), block.begin(), block.end());
      }
    }
    const std::vector<uint16_t> bf16 = AsU16(GgmlReference(type, blocks, ElemType::kBf16));
    const auto is_nan = [](uint16_t b) { return (b & 0x7FFF) > 0x7F80; };
    EXPECT_NE(std::count_if(bf16.begin(), bf16.end(), is_nan), 0) << GgmlName(type);
    EXPECT_NE(std::count(bf16.begin(), bf16.end(), uint16_t{0x7F80}), 0) << GgmlName(type);
    for (ElemType out_type : kOutTypes) {
      EXPECT_TRUE(MatchesGgmlReference(type, blocks, out_type)) << GgmlName(type);
      for (size_t n_blocks : {1, 2, 3, 17}) {
        for (size_t first : {size_t{0}, blocks.size() / block_bytes - n_blocks}) {
          const std::vector<uint8_t> part(blocks.begin() + first * block_bytes,
                                          blocks.begin() + (first + n_blocks) * block_bytes);
          EXPECT_TRUE(MatchesGgmlReference(type, part, out_type, 5, 3)) << GgmlName(type);
        }
      }
    }
  }
}

// Q5_0/Q5_1 16-bit outputs through two per-block table sets on x86
// (GgmlByteTableBlock, Int5ByteTables): the fifth bit of each output picks
// the set, spread from qh byte by byte in the order of the lookups (which
// differs between 128- and 256-bit vectors). Every single qh bit set and
// every single bit clear, each with every nibble somewhere in the block,
// so each output position takes each set once alone; d positive, negative
// and ±0 (code 16's ±0 comes from d's sign in Q5_0's mirrored tables),
// with Q5_1 mins of both signs; Inf/NaN d (special blocks: both sets
// computed). Whole runs and partial ones, misaligned.
TEST_P(GgmlLegacyTest, Q5FifthBitPositions) {
  constexpr std::array<std::pair<uint16_t, uint16_t>, 8> kScales = {{{0x3C00, 0xB800},
                                                                     {0xB555, 0x3A00},
                                                                     {0x0000, 0x8000},
                                                                     {0x8000, 0x0000},
                                                                     {0x2E66, 0xAC00},
                                                                     {0x83FF, 0x0001},
                                                                     {0x7C00, 0x3C00},
                                                                     {0x7E00, 0xBC00}}};
  for (GgmlType type : {G::kQ5_0, G::kQ5_1}) {
    const size_t block_bytes = Info(type).block_bytes;
    const size_t qh = type == G::kQ5_1 ? 4 : 2;
    std::vector<uint8_t> blocks;  // 512: bit j, set or clear, each scale pair
    for (size_t i = 0; i < 64 * kScales.size(); ++i) {
      std::vector<uint8_t> block(block_bytes, 0);
      const auto [d, m] = kScales[i % kScales.size()];
      Put16(block.data(), d);
      if (MOffset(type) != 0) Put16(block.data() + 2, m);
      const size_t j = i / kScales.size();
      const uint32_t bit = 1u << (j % 32);
      Put32(block.data() + qh, j < 32 ? bit : ~bit);
      for (size_t l = 0; l < 16; ++l) {
        block[qh + 4 + l] = static_cast<uint8_t>(((l + i) & 15) | ((15 - l + 3 * i) & 15) << 4);
      }
      blocks.insert(blocks.end(), block.begin(), block.end());
    }
    for (ElemType out_type : kOutTypes) {
      EXPECT_TRUE(MatchesGgmlReference(type, blocks, out_type, 3, 1)) << GgmlName(type);
      for (size_t n_blocks : {1, 2, 5}) {
        for (size_t first : {size_t{0}, size_t{250}, blocks.size() / block_bytes - n_blocks}) {
          const std::vector<uint8_t> part(blocks.begin() + first * block_bytes,
                                          blocks.begin() + (first + n_blocks) * block_bytes);
          EXPECT_TRUE(MatchesGgmlReference(type, part, out_type, 1, 3)) << GgmlName(type);
        }
      }
    }
  }
}

// Blocks in runs long enough for the per-group scales of the F16C targets
// (GgmlScaleGroups in kernels/ggml_legacy-inl.h: 16 blocks on AVX-512, 8
// on AVX2): every block a different finite d (and m) from the f16 edges
// (±0, subnormals, the smallest normal, ±65504) and ordinary values, so a
// block given another block's scale or a subnormal widened as 0 changes the
// output; then the same run with one block's d or m Inf or NaN, at every
// position of the first 17, so each group meets a special block everywhere
// in it. 53 blocks: whole groups and a rest on every target.
TEST_P(GgmlLegacyTest, ScaleGroupsOfBlocks) {
  constexpr std::array<uint16_t, 14> kFinite = {0x0000, 0x8000, 0x0001, 0x8001, 0x03FF,
                                                0x83FF, 0x0400, 0x7BFF, 0xFBFF, 0x3C00,
                                                0xB800, 0x2E66, 0xAC00, 0x1234};
  constexpr std::array<uint16_t, 3> kSpecial = {0x7C00, 0xFE07, 0x7DFF};
  constexpr size_t kBlocks = 53;
  for (GgmlType type : {G::kQ4_0, G::kQ4_1, G::kQ5_0, G::kQ5_1, G::kQ8_0, G::kQ8_1, G::kIQ4_NL}) {
    const size_t block_bytes = Info(type).block_bytes;
    std::vector<uint8_t> blocks = PseudoRandomBytes(kBlocks * block_bytes, 9001);
    for (size_t b = 0; b < kBlocks; ++b) {
      Put16(blocks.data() + b * block_bytes, kFinite[b % kFinite.size()]);
      if (MOffset(type) != 0) {
        Put16(blocks.data() + b * block_bytes + 2, kFinite[(5 * b + 3) % kFinite.size()]);
      }
    }
    for (ElemType out_type : kOutTypes) {
      EXPECT_TRUE(MatchesGgmlReference(type, blocks, out_type)) << GgmlName(type);
    }
    for (size_t b = 0; b < 17; ++b) {
      std::vector<uint8_t> one_special = blocks;
      const size_t at = MOffset(type) != 0 && b % 2 == 1 ? 2 : 0;  // m of odd blocks
      Put16(one_special.data() + b * block_bytes + at, kSpecial[b % kSpecial.size()]);
      for (ElemType out_type : kOutTypes) {
        EXPECT_TRUE(MatchesGgmlReference(type, one_special, out_type))
            << GgmlName(type) << " special block " << b;
      }
    }
  }
}

TEST_P(GgmlLegacyTest, PropertyMatchesReference) {
  const bool ok = rc::check("DequantGgml (legacy) matches the reference", [] {
    const GgmlType type = *rc::gen::elementOf(kLegacyTypes);
    const ElemType out_type = *rc::gen::elementOf(kOutTypes);
    const size_t n_blocks = *rc::gen::inRange<size_t>(0, 40);
    const auto blocks = *rc::gen::container<std::vector<uint8_t>>(n_blocks * Info(type).block_bytes,
                                                                  rc::gen::arbitrary<uint8_t>());
    const size_t in_offset = *rc::gen::inRange<size_t>(0, 64);
    const size_t out_offset = *rc::gen::inRange<size_t>(0, 64);
    RC_ASSERT(MatchesGgmlReference(type, blocks, out_type, in_offset, out_offset));
  });
  EXPECT_TRUE(ok);
}

TEST_P(GgmlLegacyTest, CheckedApiErrors) {
  const std::vector<uint8_t> blocks = PseudoRandomBytes(2 * ggml::kQ4_0Bytes, 5);
  std::vector<std::byte> out(64 * 4, std::byte{0x11});
  const std::vector<std::byte> untouched = out;
  // Partial block.
  Status status = DequantGgml(G::kQ4_0, {blocks.data(), blocks.size() - 1}, ElemType::kF32, out);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  // Short output: 64 elements need 256 F32 bytes.
  status = DequantGgml(G::kQ4_0, blocks, ElemType::kF32, std::span(out).first(255));
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  // Plain type, and an output type the family does not write.
  status = DequantGgml(G::kF16, blocks, ElemType::kF32, out);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  status = DequantGgml(G::kQ4_0, blocks, ElemType::kF8E4m3, out);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(out, untouched);
  // Exact size and zero blocks succeed.
  EXPECT_TRUE(DequantGgml(G::kQ4_0, blocks, ElemType::kBf16, std::span(out).first(128)).ok());
  EXPECT_TRUE(DequantGgml(G::kQ8_1, {}, ElemType::kF32, {}).ok());
}

// The registry entries (n elements = n / 32 blocks): bytes against the
// reference, with misaligned buffers (offsets in blocks and outputs).
TEST_P(GgmlLegacyTest, RegistryEntriesMatchReference) {
  size_t entries = 0;
  uint32_t seed = 900;
  for (const KernelInfo& kernel : Kernels()) {
    // The 64/128-element NVFP4, Q1_0, Q2_0: tests/ggml_newtypes_test.cc.
    if (kernel.family != "ggml_legacy" || kernel.block_elems != ggml::kQK) continue;
    ++entries;
    EXPECT_EQ(kernel.probe(), GetParam()) << kernel.name;
    EXPECT_EQ(kernel.block_elems, ggml::kQK);
    for (size_t n_blocks : {0, 1, 2, 5, 33}) {
      const std::vector<uint8_t> blocks =
          PseudoRandomBytes(n_blocks * kernel.in_block_bytes, seed++);
      for (size_t offset : {0, 1, 3}) {
        EXPECT_TRUE(amn::test::MatchesReference(kernel, blocks, offset, offset * 5 + 1))
            << kernel.name << " blocks=" << n_blocks;
      }
    }
  }
  EXPECT_EQ(entries, 3 * kLegacyTypes.size());  // BF16, F16, F32 each
}

AMN_INSTANTIATE_PER_TARGET(GgmlLegacyTest);

}  // namespace
}  // namespace amn::test
