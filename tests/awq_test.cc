// AWQ GEMM 4-bit dequantization (amn::DequantAwq) on every supported target:
// the real-model fixture bit for bit in both orientations and for row
// sub-ranges, hand-derived vectors for every nibble position and code,
// random layers against the scalar reference (all output and scale types,
// special scales, misaligned buffers with canaries), a RapidCheck property,
// the registry rows, and the checked API's errors. The reference itself is
// anchored on the fixture and on a loop written from AutoAWQ's
// unpack_awq / reverse_awq_order / dequantize_gemm in this file.
#include "amn/awq_dequant.h"

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "amn/kernel_registry.h"
#include "amn/packed_int_dequant.h"
#include "kernels/ref/awq_ref.h"
#include "kernels/ref/float_convert_ref.h"
#include "tests/fixtures.h"
#include "tests/kernel_check.h"
#include "tests/quant_fixture_files.h"
#include "tests/target_param.h"

namespace amn::test {
namespace {

constexpr std::array kOutTypes = {ElemType::kF32, ElemType::kBf16, ElemType::kF16};
constexpr std::array kScaleTypes = {ElemType::kF32, ElemType::kBf16, ElemType::kF16};
constexpr std::array kOrientations = {WeightOrientation::kInOut, WeightOrientation::kOutIn};

// AutoAWQ's AWQ_REVERSE_ORDER: logical column c of a word is the unpacked
// (sequential) nibble kReverse[c].
constexpr std::array<uint32_t, 8> kReverse = {0, 4, 1, 5, 2, 6, 3, 7};

struct AwqData {
  size_t k = 0;  // in_features
  size_t n = 0;  // out_features
  size_t group_size = 0;
  ElemType scale_type = ElemType::kF16;
  std::vector<uint8_t> qweight;
  std::vector<uint8_t> qzeros;
  std::vector<uint8_t> scales;
  size_t groups() const { return (k + group_size - 1) / group_size; }
};

std::span<const std::byte> AsSpan(const uint8_t* p, size_t n) {
  return {reinterpret_cast<const std::byte*>(p), n};
}

AwqLayer LayerOf(const AwqData& d, const uint8_t* qweight, const uint8_t* qzeros,
                 const uint8_t* scales) {
  AwqLayer layer;
  layer.in_features = d.k;
  layer.out_features = d.n;
  layer.group_size = d.group_size;
  layer.scale_type = d.scale_type;
  layer.qweight = AsSpan(qweight, d.qweight.size());
  layer.qzeros = AsSpan(qzeros, d.qzeros.size());
  layer.scales = AsSpan(scales, d.scales.size());
  return layer;
}

ref::AwqMatrix MatrixOf(const AwqData& d) {
  return {d.qweight.data(), d.qzeros.data(), d.scales.data(), d.scale_type, d.k, d.n,
          d.group_size};
}

// Runs DequantAwq on copies of the tensors placed `offset` bytes past a
// 64-byte boundary (output at out_offset), checks the canaries, and returns
// the output bytes.
std::vector<uint8_t> RunAwq(const AwqData& d, WeightOrientation orientation, size_t rb, size_t re,
                            ElemType out_type, size_t offset = 0, size_t out_offset = 0) {
  PlacedBuffer qweight(d.qweight.size(), offset, 0);
  PlacedBuffer qzeros(d.qzeros.size(), offset + 1, 0);
  PlacedBuffer scales(d.scales.size(), offset + 3, 0);
  std::memcpy(qweight.data(), d.qweight.data(), d.qweight.size());
  std::memcpy(qzeros.data(), d.qzeros.data(), d.qzeros.size());
  std::memcpy(scales.data(), d.scales.data(), d.scales.size());
  const size_t row_len = orientation == WeightOrientation::kOutIn ? d.k : d.n;
  const size_t out_bytes = (re - rb) * row_len * ElemTypeBytes(out_type);
  PlacedBuffer out(out_bytes, out_offset, 0x5A);
  const Status status =
      DequantAwq(LayerOf(d, qweight.data(), qzeros.data(), scales.data()), orientation, rb, re,
                 out_type, {reinterpret_cast<std::byte*>(out.data()), out_bytes});
  EXPECT_TRUE(status.ok()) << status.ToString();
  EXPECT_TRUE(out.CanaryIntact()) << "output overrun";
  return std::vector<uint8_t>(out.data(), out.data() + out_bytes);
}

std::vector<uint8_t> ReferenceAwq(const AwqData& d, WeightOrientation orientation, size_t rb,
                                  size_t re, ElemType out_type) {
  const size_t row_len = orientation == WeightOrientation::kOutIn ? d.k : d.n;
  std::vector<uint8_t> out((re - rb) * row_len * ElemTypeBytes(out_type) + 4);
  ref::DequantAwqRows(MatrixOf(d), orientation == WeightOrientation::kOutIn, rb, re, out_type,
                      out.data());
  out.resize(out.size() - 4);
  return out;
}

std::string Describe(const AwqData& d, WeightOrientation o, size_t rb, size_t re, ElemType out) {
  return "K=" + std::to_string(d.k) + " N=" + std::to_string(d.n) +
         " gs=" + std::to_string(d.group_size) + " scale=" + std::string(ElemTypeName(d.scale_type)) +
         " out=" + std::string(ElemTypeName(out)) +
         (o == WeightOrientation::kOutIn ? " out_in" : " in_out") + " rows=[" + std::to_string(rb) +
         "," + std::to_string(re) + ")";
}

// Random codes and zeros; scales from `scale_bits` cycled (F32 bits, stored
// in the scale type by truncating to its width for BF16 or by the F16 rule).
AwqData RandomLayer(size_t k, size_t n, size_t gs, ElemType scale_type, uint32_t seed,
                    const std::vector<uint32_t>& scale_bits) {
  AwqData d{k, n, gs, scale_type, {}, {}, {}};
  d.qweight = PseudoRandomBytes(k * n / 2, seed);
  d.qzeros = PseudoRandomBytes(d.groups() * n / 2, seed + 7);
  for (size_t i = 0; i < d.groups() * n; ++i) {
    const uint32_t bits = scale_bits[(i * 5 + seed) % scale_bits.size()];
    if (scale_type == ElemType::kF32) {
      for (int b = 0; b < 4; ++b) d.scales.push_back(static_cast<uint8_t>(bits >> (8 * b)));
    } else {
      const uint16_t h = scale_type == ElemType::kBf16 ? static_cast<uint16_t>(bits >> 16)
                                                       : ref::F32BitsToF16(bits);
      d.scales.push_back(static_cast<uint8_t>(h));
      d.scales.push_back(static_cast<uint8_t>(h >> 8));
    }
  }
  return d;
}

std::vector<uint32_t> RealisticScaleBits() {
  std::vector<uint32_t> bits;
  for (float s : {0.0123f, 0.002f, 0.0456f, 1.0f, 0.5f, 3.0e-3f, 0.017f, 0.031f, 7.5e-4f}) {
    bits.push_back(std::bit_cast<uint32_t>(s));
    bits.push_back(std::bit_cast<uint32_t>(-s));
  }
  return bits;
}

std::vector<uint32_t> SpecialScaleBits() {
  return {0x3F800000u, 0x00000000u, 0x80000000u, 0x7F800000u, 0xFF800000u, 0x7FC00000u,
          0xFFC12345u, 0x7F800001u, 0x477FE000u, 0x7F7FFFFFu, 0x00000001u, 0x38800000u,
          0x33800000u, 0xBD4CCCCDu, 0x3DCCCCCDu, 0x4B000000u};
}

class AwqTest : public PerTarget {};

TEST_P(AwqTest, ProbeReportsForcedTarget) {
  EXPECT_EQ(AwqTarget(), GetParam());
  EXPECT_EQ(PackedIntTarget(), GetParam());
}

// ---- The real-model fixture -----------------------------------------------

struct AwqFixture {
  AwqData data;
  std::vector<uint8_t> expected;  // BF16 [in, out]
};

std::vector<AwqFixture> LoadFixtures() {
  std::vector<AwqFixture> fixtures;
  for (const auto& path : FixtureFiles("awq_reference", ".bin")) {
    const std::optional<PackedLinearFixture> read = ReadAwqFixture(path);
    if (!read) {
      ADD_FAILURE() << path << ": header and section lengths do not match the file";
      continue;
    }
    EXPECT_EQ(read->bits, 4u) << path;
    AwqFixture f;
    f.data.group_size = read->group_size;
    f.data.k = read->in;
    f.data.n = read->out;
    f.data.scale_type = ScaleElemType(read->scale_dtype);
    f.data.qweight = read->qweight;
    f.data.scales = read->scales;
    f.data.qzeros = read->qzeros;
    f.expected = read->expected;
    fixtures.push_back(std::move(f));
  }
  return fixtures;
}

TEST_P(AwqTest, FixtureBitExactBothOrientations) {
  const auto fixtures = LoadFixtures();
  AMN_SKIP_WITHOUT_FIXTURES(fixtures, "awq_reference");
  for (const AwqFixture& f : fixtures) {
    const AwqData& d = f.data;
    const auto in_out = RunAwq(d, WeightOrientation::kInOut, 0, d.k, ElemType::kBf16, 5, 3);
    EXPECT_TRUE(SameBytes(in_out, f.expected, 2, "fixture in_out"));
    const auto transposed = TransposeU16(f.expected, d.k, d.n);
    const auto out_in = RunAwq(d, WeightOrientation::kOutIn, 0, d.n, ElemType::kBf16, 1, 7);
    EXPECT_TRUE(SameBytes(out_in, transposed, 2, "fixture out_in"));
    // Row sub-ranges, including ones that split words and groups.
    for (auto [rb, re] : {std::pair<size_t, size_t>{0, 1}, {3, 77}, {127, 129}, {200, 256},
                          {9, 10}, {13, 250}}) {
      const auto part = RunAwq(d, WeightOrientation::kInOut, rb, re, ElemType::kBf16, 2, 1);
      EXPECT_TRUE(SameBytes(part,
                            std::vector<uint8_t>(f.expected.begin() + 2 * rb * d.n,
                                                 f.expected.begin() + 2 * re * d.n),
                            2, "fixture in_out part"));
      const auto part_t = RunAwq(d, WeightOrientation::kOutIn, rb, re, ElemType::kBf16, 6, 1);
      EXPECT_TRUE(SameBytes(part_t,
                            std::vector<uint8_t>(transposed.begin() + 2 * rb * d.k,
                                                 transposed.begin() + 2 * re * d.k),
                            2, "fixture out_in part"));
    }
    // F32 and F16 outputs agree with the reference (which the fixture anchors).
    for (ElemType out : {ElemType::kF32, ElemType::kF16}) {
      for (WeightOrientation o : kOrientations) {
        const size_t rows = o == WeightOrientation::kOutIn ? d.n : d.k;
        EXPECT_TRUE(SameBytes(RunAwq(d, o, 0, rows, out), ReferenceAwq(d, o, 0, rows, out),
                              ElemTypeBytes(out), Describe(d, o, 0, rows, out)));
      }
    }
  }
}

// ---- Hand-derived vectors --------------------------------------------------

uint32_t F16Bits(float exact) { return ref::F32BitsToF16(std::bit_cast<uint32_t>(exact)); }

void PutLe(std::vector<uint8_t>& v, size_t index, uint32_t word) {
  for (int b = 0; b < 4; ++b) v[4 * index + b] = static_cast<uint8_t>(word >> (8 * b));
}

// Word 0x76543210 holds nibble p = p, so logical column c reads kReverse[c]:
// the columns read 0 4 1 5 2 6 3 7 (AutoAWQ's interleave, not 0..7).
TEST_P(AwqTest, InterleaveHandDerived) {
  AwqData d{1, 8, 1, ElemType::kF16, std::vector<uint8_t>(4), std::vector<uint8_t>(4), {}};
  PutLe(d.qweight, 0, 0x76543210u);
  for (int c = 0; c < 8; ++c) {
    const uint16_t one = static_cast<uint16_t>(F16Bits(1.0f));
    d.scales.push_back(static_cast<uint8_t>(one));
    d.scales.push_back(static_cast<uint8_t>(one >> 8));
  }
  const auto out = RunAwq(d, WeightOrientation::kInOut, 0, 1, ElemType::kF32);
  const float want[8] = {0, 4, 1, 5, 2, 6, 3, 7};
  for (int c = 0; c < 8; ++c) {
    float got;
    std::memcpy(&got, out.data() + 4 * c, 4);
    EXPECT_EQ(got, want[c]) << "column " << c;
  }
}

// Every code at every nibble position, against zeros at every position:
// K = 16 rows, N = 16, one word column per 8 outputs, scale 0.5 (exact).
// Row i's word w has nibble p = (i + p + w) % 16, its zero word nibble
// p = (3p + w) % 16, so w(i, j) = ((i + R + w) % 16 - (3R + w) % 16) * 0.5
// with R = kReverse[j % 8], w = j / 8: every value -15..15 appears.
TEST_P(AwqTest, EveryCodeAndNibbleHandDerived) {
  for (WeightOrientation o : kOrientations) {
    for (ElemType out_type : kOutTypes) {
      AwqData d{16, 16, 16, ElemType::kBf16, std::vector<uint8_t>(16 * 8),
                std::vector<uint8_t>(8), {}};
      for (size_t i = 0; i < 16; ++i) {
        for (size_t w = 0; w < 2; ++w) {
          uint32_t word = 0;
          for (uint32_t p = 0; p < 8; ++p) word |= ((i + p + w) % 16) << (4 * p);
          PutLe(d.qweight, i * 2 + w, word);
        }
      }
      for (size_t w = 0; w < 2; ++w) {
        uint32_t word = 0;
        for (uint32_t p = 0; p < 8; ++p) word |= ((3 * p + w) % 16) << (4 * p);
        PutLe(d.qzeros, w, word);
      }
      for (size_t j = 0; j < 16; ++j) {
        d.scales.push_back(0x00);  // BF16 0.5 = 0x3F00
        d.scales.push_back(0x3F);
      }
      const size_t rows = 16;
      const auto out = RunAwq(d, o, 0, rows, out_type, 1, 1);
      for (size_t i = 0; i < 16; ++i) {
        for (size_t j = 0; j < 16; ++j) {
          const uint32_t r = kReverse[j % 8];
          const uint32_t w = static_cast<uint32_t>(j / 8);
          const int q = static_cast<int>((i + r + w) % 16);
          const int z = static_cast<int>((3 * r + w) % 16);
          const float want = static_cast<float>(q - z) * 0.5f;  // exact
          const size_t index = o == WeightOrientation::kOutIn ? j * 16 + i : i * 16 + j;
          uint32_t got_bits = 0;
          std::memcpy(&got_bits, out.data() + index * ElemTypeBytes(out_type),
                      ElemTypeBytes(out_type));
          uint32_t want_bits = std::bit_cast<uint32_t>(want);
          if (out_type == ElemType::kBf16) want_bits >>= 16;  // exact: no rounding
          if (out_type == ElemType::kF16) want_bits = F16Bits(want);
          EXPECT_EQ(got_bits, want_bits) << "i=" << i << " j=" << j << " " << Describe(d, o, 0, rows, out_type);
        }
      }
    }
  }
}

// The reference against a loop written from AutoAWQ's code: unpack every
// nibble of a word in sequence (unpack_awq), pick logical column c as the
// unpacked nibble AWQ_REVERSE_ORDER[c] (reverse_awq_order), & 0xF, then
// (iweight - izeros) * scales in F32.
TEST_P(AwqTest, ReferenceMatchesAutoAwqLoop) {
  const AwqData d = RandomLayer(40, 24, 16, ElemType::kF16, 11, RealisticScaleBits());
  const ref::AwqMatrix m = MatrixOf(d);
  for (size_t i = 0; i < d.k; ++i) {
    for (size_t j = 0; j < d.n; ++j) {
      const size_t g = i / d.group_size;
      uint32_t unpacked_q[8], unpacked_z[8];
      const uint32_t qw = LoadLe32(&d.qweight[4 * (i * d.n / 8 + j / 8)]);
      const uint32_t zw = LoadLe32(&d.qzeros[4 * (g * d.n / 8 + j / 8)]);
      for (int p = 0; p < 8; ++p) {
        unpacked_q[p] = (qw >> (4 * p)) & 0xF;
        unpacked_z[p] = (zw >> (4 * p)) & 0xF;
      }
      const uint16_t h = static_cast<uint16_t>(d.scales[2 * (g * d.n + j)] |
                                               d.scales[2 * (g * d.n + j) + 1] << 8);
      const float scale = std::bit_cast<float>(ref::F16ToF32Bits(h));
      const float want = (static_cast<float>(unpacked_q[kReverse[j % 8]]) -
                          static_cast<float>(unpacked_z[kReverse[j % 8]])) *
                         scale;
      ASSERT_EQ(ref::AwqValueF32Bits(m, i, j), std::bit_cast<uint32_t>(want))
          << "i=" << i << " j=" << j;
    }
  }
}

// ---- Random layers against the reference -----------------------------------

// Widths include more than one [in, out] column tile of 4096 (kernels/awq-inl.h),
// the last one ragged, so the tiles' tables start at the right column.
TEST_P(AwqTest, RandomLayersMatchReference) {
  struct Shape {
    size_t k, n, gs;
  };
  const Shape shapes[] = {{1, 8, 1},      {5, 8, 2},      {33, 16, 8},  {64, 136, 32},
                          {130, 40, 64},  {70, 264, 128}, {3, 1032, 3}, {257, 64, 300},
                          {48, 2056, 16}, {3, 4104, 2},   {9, 8232, 4}};
  uint32_t seed = 1;
  for (const Shape& s : shapes) {
    for (ElemType scale_type : kScaleTypes) {
      for (bool special : {false, true}) {
        const AwqData d = RandomLayer(s.k, s.n, s.gs, scale_type, ++seed,
                                      special ? SpecialScaleBits() : RealisticScaleBits());
        for (WeightOrientation o : kOrientations) {
          const size_t rows = o == WeightOrientation::kOutIn ? s.n : s.k;
          for (ElemType out : kOutTypes) {
            const size_t rb = rows > 4 ? seed % 3 : 0;
            const size_t re = rows > 4 ? rows - seed % 4 : rows;
            EXPECT_TRUE(SameBytes(RunAwq(d, o, rb, re, out, seed % 7, seed % 5),
                                  ReferenceAwq(d, o, rb, re, out), ElemTypeBytes(out),
                                  Describe(d, o, rb, re, out)));
          }
        }
      }
    }
  }
}

// The [out, in] kernel's blocking (kernels/awq-inl.h: bands of 64 word
// columns x tiles of 1024 input rows; when the row stride is a multiple of
// 2 KiB, packed copies of tiles of min(1024, 64 KiB / the band's 64-byte
// pitch) rows): layers of more than two bands and more than two tiles, a
// ragged last tile, groups that end inside a tile, inside a vector pair or
// on the far side of a tile edge, row ranges that start and end mid-word
// and mid-band, and a band at the end of the rows, whose 64-byte copies
// reach past it (into the next row; the last row is copied exactly).
// Stated here rather than read from the kernel, so a change of blocking
// keeps these edges in view.
TEST_P(AwqTest, OutInBlockingEdgesMatchReference) {
  struct Case {
    size_t k, n, gs, rb, re;
    ElemType out;
    bool special;
  };
  const Case cases[] = {
      {2100, 1040, 128, 0, 1040, ElemType::kBf16, false},   // 130 words: 3 bands, 3 tiles
      {2100, 1040, 128, 507, 1029, ElemType::kF32, false},  // mid-word ends, 3 bands
      {2100, 1040, 128, 511, 513, ElemType::kF16, true},    // one row each side of a band edge
      {1100, 528, 100, 3, 525, ElemType::kF16, false},      // groups of 100: mid-pair, mid-tile
      {1100, 528, 100, 0, 528, ElemType::kF32, true},
      {1030, 520, 1030, 1, 519, ElemType::kBf16, false},  // one group over two tiles
      {1024, 512, 64, 0, 512, ElemType::kBf16, false},    // exactly one band and one tile
      {1025, 520, 1, 9, 519, ElemType::kF16, false},      // a group per input row
      {1100, 4096, 128, 3, 1033, ElemType::kBf16,
       false},  // 2 KiB rows: packed, 256-row tiles (last band 1024)
      {600, 8192, 100, 1000, 1100, ElemType::kF32,
       false},  // 4 KiB rows: packed, 13 words: one 1024-row tile
      {260, 16384, 128, 509, 1043, ElemType::kF16, true},     // 8 KiB rows: packed, 256-row tiles
      {1300, 4096, 128, 4000, 4096, ElemType::kBf16, false},  // packed band at the rows' end
  };
  uint32_t seed = 100;
  for (const Case& c : cases) {
    const AwqData d = RandomLayer(c.k, c.n, c.gs, ElemType::kF16, ++seed,
                                  c.special ? SpecialScaleBits() : RealisticScaleBits());
    EXPECT_TRUE(SameBytes(RunAwq(d, WeightOrientation::kOutIn, c.rb, c.re, c.out, seed % 7,
                                 seed % 5),
                          ReferenceAwq(d, WeightOrientation::kOutIn, c.rb, c.re, c.out),
                          ElemTypeBytes(c.out),
                          Describe(d, WeightOrientation::kOutIn, c.rb, c.re, c.out)));
  }
}

// Raw scale bits of `type` around the in-out kernel's F16 in-range bounds
// for a column whose differences reach max_diff in magnitude: ±2^-14 (in)
// and the next value below it in the type (out: F16-subnormal products),
// 1.5 * 2^-15 (out), ±0 (in), the values within 3 steps of the type's
// rounding of 65536 / max_diff (products on both sides of 2^16, those that
// round to F16 Inf included), and a realistic scale.
std::vector<uint32_t> F16InRangeBoundaryRaws(ElemType type, float max_diff) {
  const auto raw_of = [type](float value) -> uint32_t {
    const uint32_t bits = std::bit_cast<uint32_t>(value);
    if (type == ElemType::kF32) return bits;
    if (type == ElemType::kBf16) return bits >> 16;  // truncation: any BF16 is fine
    return ref::F32BitsToF16(bits);
  };
  const uint32_t sign = type == ElemType::kF32 ? 0x80000000u : 0x8000u;
  std::vector<uint32_t> magnitudes = {raw_of(0x1p-14f), raw_of(0x1p-14f) - 1, raw_of(0x1.8p-15f),
                                      0u, raw_of(0.0123f)};
  const uint32_t top = raw_of(65536.0f / max_diff);
  for (uint32_t k = top - 3; k <= top + 3; ++k) magnitudes.push_back(k);
  std::vector<uint32_t> raws;
  for (uint32_t m : magnitudes) {
    raws.push_back(m);
    raws.push_back(m | sign);
  }
  return raws;
}

// Groups on both sides of the in-out kernel's F16 in-range test
// (kernels/awq-inl.h: AwqColumnF16InRange on every column of a column tile
// and group), whose F16 outputs take the integer rounding on SSE4/SSSE3.
// Groups of two rows; codes (i + 3j) % 16 put every code in every row.
// Uniform: every column of a group has the same zero (0, 15, 7, 8, 3:
// differences up to 15, 8 and 12) and the same scale, one of
// F16InRangeBoundaryRaws for that zero, so the group is in range exactly
// when that scale is; N = 72 (whole vector units and a partial one on every
// target) and 1040 (a second column tile of 16 columns). Mixed: zero and
// scale vary by column, so one column out of range decides a group. All
// scale types and outputs, both orientations, against the reference.
TEST_P(AwqTest, F16InRangeBoundaryScales) {
  constexpr std::array<uint32_t, 5> kZeros = {0, 15, 7, 8, 3};
  for (const bool mixed : {false, true}) {
    for (const size_t n : {size_t{72}, size_t{1040}}) {
      if (mixed && n != 72) continue;
      for (ElemType scale_type : kScaleTypes) {
        std::vector<std::vector<uint32_t>> raws;  // per zero
        for (uint32_t z : kZeros) {
          raws.push_back(F16InRangeBoundaryRaws(scale_type, static_cast<float>(std::max(z, 15 - z))));
        }
        const size_t groups = kZeros.size() * raws[0].size();
        AwqData d{2 * groups, n, 2, scale_type, std::vector<uint8_t>(2 * groups * n / 2),
                  std::vector<uint8_t>(groups * n / 2), {}};
        const size_t words = n / 8;
        for (size_t i = 0; i < d.k; ++i) {
          for (size_t w = 0; w < words; ++w) {
            uint32_t word = 0;
            for (size_t c = 0; c < 8; ++c) {
              const size_t j = 8 * w + c;
              word |= static_cast<uint32_t>((i + 3 * j) % 16) << ref::AwqNibbleShift(j);
            }
            PutLe(d.qweight, i * words + w, word);
          }
        }
        for (size_t g = 0; g < groups; ++g) {
          std::vector<uint32_t> zero_words(words, 0);
          for (size_t j = 0; j < n; ++j) {
            const size_t pick = mixed ? g + j : g;
            const size_t zi = (pick / raws[0].size()) % kZeros.size();
            zero_words[j / 8] |= kZeros[zi] << ref::AwqNibbleShift(j);
            const uint32_t raw = raws[zi][pick % raws[0].size()];
            for (size_t b = 0; b < ElemTypeBytes(scale_type); ++b) {
              d.scales.push_back(static_cast<uint8_t>(raw >> (8 * b)));
            }
          }
          for (size_t w = 0; w < words; ++w) PutLe(d.qzeros, g * words + w, zero_words[w]);
        }
        for (WeightOrientation o : kOrientations) {
          const size_t rows = o == WeightOrientation::kOutIn ? d.n : d.k;
          for (ElemType out : kOutTypes) {
            EXPECT_TRUE(SameBytes(RunAwq(d, o, 0, rows, out, 1, 2), ReferenceAwq(d, o, 0, rows, out),
                                  ElemTypeBytes(out), Describe(d, o, 0, rows, out)))
                << (mixed ? "mixed" : "uniform");
          }
        }
      }
    }
  }
}

// The NaN rule: an infinite scale times a zero difference is 0xFFC00000, a
// NaN scale comes out quiet with its sign; an Inf scale times a nonzero
// difference is a signed Inf.
TEST_P(AwqTest, NonFiniteScales) {
  AwqData d{1, 8, 1, ElemType::kF32, std::vector<uint8_t>(4), std::vector<uint8_t>(4), {}};
  PutLe(d.qweight, 0, 0x33333331u);  // q = 1 for column 0, 3 elsewhere
  PutLe(d.qzeros, 0, 0x33333333u);   // z = 3
  const uint32_t scales[8] = {0x7F800000u, 0x7F800000u, 0xFF800001u, 0x7FC00000u,
                              0x3F800000u, 0x3F800000u, 0x3F800000u, 0x3F800000u};
  d.scales = AsBytes(std::vector<uint32_t>(scales, scales + 8));
  const auto out = RunAwq(d, WeightOrientation::kInOut, 0, 1, ElemType::kF32);
  uint32_t got[8];
  std::memcpy(got, out.data(), sizeof(got));
  EXPECT_EQ(got[0], 0xFF800000u);  // (1 - 3) * Inf
  EXPECT_EQ(got[1], 0xFFC00000u);  // 0 * Inf
  EXPECT_EQ(got[2], 0xFFC00001u);  // signalling NaN scale, quieted
  EXPECT_EQ(got[3], 0x7FC00000u);
  EXPECT_EQ(got[4], 0x00000000u);  // 0 * 1 = +0
  const auto out_t = RunAwq(d, WeightOrientation::kOutIn, 0, 8, ElemType::kF32);
  EXPECT_EQ(out_t, out);  // K = 1: the transpose is the same bytes
}

TEST_P(AwqTest, PropertyMatchesReference) {
  const bool ok = rc::check("DequantAwq matches the reference", [] {
    const size_t k = *rc::gen::inRange<size_t>(1, 90);
    const size_t n = 8 * *rc::gen::inRange<size_t>(1, 40);
    const size_t gs = *rc::gen::inRange<size_t>(1, k + 40);
    const auto scale_type = *rc::gen::elementOf(kScaleTypes);
    const auto out_type = *rc::gen::elementOf(kOutTypes);
    const auto o = *rc::gen::elementOf(kOrientations);
    const auto seed = *rc::gen::arbitrary<uint32_t>();
    const bool special = *rc::gen::arbitrary<bool>();
    const AwqData d = RandomLayer(k, n, gs, scale_type, seed,
                                  special ? SpecialScaleBits() : RealisticScaleBits());
    const size_t rows = o == WeightOrientation::kOutIn ? n : k;
    const size_t rb = *rc::gen::inRange<size_t>(0, rows + 1);
    const size_t re = *rc::gen::inRange<size_t>(rb, rows + 1);
    const size_t offset = *rc::gen::inRange<size_t>(0, 64);
    RC_ASSERT(SameBytes(RunAwq(d, o, rb, re, out_type, offset, (offset * 7) % 64),
                        ReferenceAwq(d, o, rb, re, out_type), ElemTypeBytes(out_type),
                        Describe(d, o, rb, re, out_type)));
  });
  EXPECT_TRUE(ok);
}

TEST_P(AwqTest, RegistryEntriesMatchReference) {
  size_t entries = 0;
  for (const KernelInfo& kernel : Kernels()) {
    if (kernel.family != "awq") continue;
    ++entries;
    EXPECT_EQ(kernel.probe(), GetParam());
    for (size_t blocks : {0, 1, 2, 3, 17, 33}) {
      const std::vector<uint8_t> input =
          PseudoRandomBytes(blocks * kernel.in_block_bytes, static_cast<uint32_t>(blocks + 5));
      EXPECT_TRUE(MatchesReference(kernel, input, blocks % 3, blocks % 5))
          << kernel.name << " blocks=" << blocks;
    }
  }
  EXPECT_EQ(entries, 6u);
}

// ---- The checked API -------------------------------------------------------

TEST_P(AwqTest, CheckedApiRejectsBadCalls) {
  const AwqData good = RandomLayer(8, 16, 4, ElemType::kF16, 3, RealisticScaleBits());
  std::vector<std::byte> out(16 * 8 * 4, std::byte{0x5A});
  const auto untouched = [&out] {
    for (std::byte b : out) {
      if (b != std::byte{0x5A}) return false;
    }
    return true;
  };
  const auto run = [&](AwqLayer layer, WeightOrientation o, uint64_t rb, uint64_t re,
                       ElemType out_type, size_t out_bytes) {
    return DequantAwq(layer, o, rb, re, out_type, {out.data(), out_bytes});
  };
  const AwqLayer base = LayerOf(good, good.qweight.data(), good.qzeros.data(), good.scales.data());
  const auto in_out = WeightOrientation::kInOut;
  const auto out_in = WeightOrientation::kOutIn;
  struct Bad {
    const char* what;
    AwqLayer layer;
    WeightOrientation o;
    uint64_t rb, re;
    ElemType out_type;
    size_t out_bytes;
  };
  std::vector<Bad> bad;
  auto with = [&base](auto edit) {
    AwqLayer l = base;
    edit(l);
    return l;
  };
  bad.push_back({"in_features 0", with([](AwqLayer& l) { l.in_features = 0; }), in_out, 0, 0,
                 ElemType::kBf16, 0});
  bad.push_back({"out_features 12", with([](AwqLayer& l) { l.out_features = 12; }), in_out, 0, 1,
                 ElemType::kBf16, 256});
  bad.push_back({"out_features 0", with([](AwqLayer& l) { l.out_features = 0; }), in_out, 0, 1,
                 ElemType::kBf16, 256});
  bad.push_back({"group_size 0", with([](AwqLayer& l) { l.group_size = 0; }), in_out, 0, 1,
                 ElemType::kBf16, 256});
  bad.push_back({"scale e4m3", with([](AwqLayer& l) { l.scale_type = ElemType::kF8E4m3; }),
                 in_out, 0, 1, ElemType::kBf16, 256});
  bad.push_back({"scale f32 (size)", with([](AwqLayer& l) { l.scale_type = ElemType::kF32; }),
                 in_out, 0, 1, ElemType::kBf16, 256});
  bad.push_back({"qweight short", with([](AwqLayer& l) { l.qweight = l.qweight.first(60); }),
                 in_out, 0, 1, ElemType::kBf16, 256});
  bad.push_back({"qzeros long", with([&good](AwqLayer& l) {
                   l.qzeros = AsSpan(good.qweight.data(), good.qzeros.size() + 4);
                 }),
                 in_out, 0, 1, ElemType::kBf16, 256});
  bad.push_back({"scales short", with([](AwqLayer& l) { l.scales = l.scales.first(62); }), in_out,
                 0, 1, ElemType::kBf16, 256});
  bad.push_back({"group_size 3 (groups)", with([](AwqLayer& l) { l.group_size = 3; }), in_out, 0,
                 1, ElemType::kBf16, 256});
  bad.push_back({"out e5m2", base, in_out, 0, 1, ElemType::kF8E5m2, 256});
  bad.push_back({"rows past K", base, in_out, 0, 9, ElemType::kBf16, 512});
  bad.push_back({"rows past N", base, out_in, 10, 17, ElemType::kBf16, 512});
  bad.push_back({"rows reversed", base, in_out, 3, 2, ElemType::kBf16, 512});
  bad.push_back({"short output", base, in_out, 0, 2, ElemType::kBf16, 63});
  bad.push_back({"short f32 output", base, out_in, 0, 2, ElemType::kF32, 63});
  for (const Bad& b : bad) {
    const Status status = run(b.layer, b.o, b.rb, b.re, b.out_type, b.out_bytes);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << b.what;
    EXPECT_FALSE(status.message().empty()) << b.what;
    EXPECT_TRUE(untouched()) << b.what;
  }
  // The edges that are fine: an empty range, exact output sizes.
  EXPECT_TRUE(run(base, in_out, 8, 8, ElemType::kBf16, 0).ok());
  EXPECT_TRUE(run(base, out_in, 0, 2, ElemType::kF32, 64).ok());
  EXPECT_TRUE(run(base, in_out, 7, 8, ElemType::kBf16, 32).ok());
}

AMN_INSTANTIATE_PER_TARGET(AwqTest);

}  // namespace
}  // namespace amn::test
