// bitsandbytes dequantization (amn::DequantBnb4, amn::DequantBnbInt8) on
// every supported target: the bnb_reference fixtures bit for bit (whole and
// sub-ranges with odd begins), the NF4/FP4 codebooks as bitsandbytes defines
// them against the fixtures' stored quant_map, all 16 codes and the FP4
// sign-of-zero rule with hand-derived values, double quant over several
// nested blocks with an offset (expected values from the formula written out
// here), block sizes 32..4096 with tail blocks, per-block tables with a
// different absmax in every block (±0, subnormal, Inf, NaN) over ranges
// starting mid-block, INT8 rows at the int8 limits
// and SCB 0, random tensors against the scalar reference for every output
// type, NaN/Inf scales, the registry rows, a RapidCheck property and the
// checked API's errors.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "amn/bnb_dequant.h"
#include "amn/kernel_registry.h"
#include "kernels/ref/bnb_ref.h"
#include "kernels/ref/float_convert_ref.h"
#include "tests/fixtures.h"
#include "tests/kernel_check.h"
#include "tests/quant_fixture_files.h"
#include "tests/target_param.h"

namespace amn::test {
namespace {

constexpr std::array kOutTypes = {ElemType::kF32, ElemType::kBf16, ElemType::kF16};

uint32_t Bits(float f) { return std::bit_cast<uint32_t>(f); }
float FromBits(uint32_t bits) { return std::bit_cast<float>(bits); }

// The fixture README's BF16 rule, written out: round to nearest even on the
// bits (no NaN occurs where this is used).
uint16_t Bf16Rne(float f) {
  const uint32_t x = Bits(f);
  return static_cast<uint16_t>((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16);
}

// The codebooks, from bitsandbytes' source. NF4: csrc/kernels.cu
// nf4_dequantization_lut. FP4: functional.py get_4bit_type("fp4"):
// [0, 0.0625, 8, 12, 4, 6, 2, 3, -0, -0.0625, -8, -12, -4, -6, -2, -3] divided
// by 12 in f32, where the Python int -0 is +0.
const std::array<float, 16> kNf4 = {-1.0f,
                                    -0.6961928009986877f,
                                    -0.5250730514526367f,
                                    -0.39491748809814453f,
                                    -0.28444138169288635f,
                                    -0.18477343022823334f,
                                    -0.09105003625154495f,
                                    0.0f,
                                    0.07958029955625534f,
                                    0.16093020141124725f,
                                    0.24611230194568634f,
                                    0.33791524171829224f,
                                    0.44070982933044434f,
                                    0.5626170039176941f,
                                    0.7229568362236023f,
                                    1.0f};
std::array<float, 16> Fp4Codebook() {
  const float raw[16] = {0, 0.0625f, 8, 12, 4, 6, 2, 3, 0, -0.0625f, -8, -12, -4, -6, -2, -3};
  std::array<float, 16> cb{};
  volatile float twelve = 12.0f;  // divide at run time, in f32, as torch does
  for (int i = 0; i < 16; ++i) cb[i] = raw[i] / twelve;
  return cb;
}

template <typename T>
std::vector<std::byte> LeBytesOf(const std::vector<T>& values) {
  std::vector<std::byte> bytes(values.size() * sizeof(T));
  if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}
std::span<const std::byte> AsSpan(const std::vector<std::byte>& v) { return {v.data(), v.size()}; }

// A 4-bit tensor and the buffers it points into.
struct Tensor4 {
  std::vector<std::byte> packed, quant_map, absmax, nested_absmax, nested_quant_map;
  Bnb4Tensor t;
  void Bind() {
    t.packed = AsSpan(packed);
    t.quant_map = AsSpan(quant_map);
    t.absmax = AsSpan(absmax);
    t.nested_absmax = AsSpan(nested_absmax);
    t.nested_quant_map = AsSpan(nested_quant_map);
  }
};

bnb::Bnb4View ViewOf(const Bnb4Tensor& t) {
  bnb::Bnb4View v;
  v.packed = reinterpret_cast<const uint8_t*>(t.packed.data());
  v.quant_map = reinterpret_cast<const uint8_t*>(t.quant_map.data());
  v.absmax = reinterpret_cast<const uint8_t*>(t.absmax.data());
  v.block_size = t.block_size;
  v.double_quant = t.double_quant;
  v.nested_absmax = reinterpret_cast<const uint8_t*>(t.nested_absmax.data());
  v.nested_quant_map = reinterpret_cast<const uint8_t*>(t.nested_quant_map.data());
  v.nested_block_size = t.nested_block_size;
  v.nested_offset_bits = Bits(t.nested_offset);
  return v;
}

// Runs DequantBnb4 on [begin, end) into a buffer `out_offset` bytes past a
// 64-byte boundary, followed by canaries; returns the output bytes.
testing::AssertionResult RunBnb4(const Bnb4Tensor& t, uint64_t begin, uint64_t end,
                                 ElemType out_type, size_t out_offset, std::vector<uint8_t>& got) {
  const size_t bytes = (end - begin) * ElemTypeBytes(out_type);
  PlacedBuffer out(bytes, out_offset, 0x5A);
  const Status status =
      DequantBnb4(t, begin, end, out_type, {reinterpret_cast<std::byte*>(out.data()), bytes});
  if (!status.ok()) return testing::AssertionFailure() << status.ToString();
  if (!out.CanaryIntact()) return testing::AssertionFailure() << "wrote past out";
  got.assign(out.data(), out.data() + bytes);
  return testing::AssertionSuccess();
}

std::vector<uint8_t> ReferenceBnb4(const Bnb4Tensor& t, uint64_t begin, uint64_t end,
                                   ElemType out_type) {
  std::vector<uint8_t> want((end - begin) * ElemTypeBytes(out_type) + 4);
  const bnb::Bnb4View v = ViewOf(t);
  if (out_type == ElemType::kF32) {
    ref::DequantBnb4ToF32(v, begin, end, reinterpret_cast<float*>(want.data()));
  } else if (out_type == ElemType::kBf16) {
    ref::DequantBnb4ToBf16(v, begin, end, reinterpret_cast<uint16_t*>(want.data()));
  } else {
    ref::DequantBnb4ToF16(v, begin, end, reinterpret_cast<uint16_t*>(want.data()));
  }
  want.resize(want.size() - 4);
  return want;
}

testing::AssertionResult Bnb4MatchesReference(const Bnb4Tensor& t, uint64_t begin, uint64_t end,
                                              ElemType out_type, size_t out_offset = 0) {
  std::vector<uint8_t> got;
  const std::string what = "bnb4 " + std::string(ElemTypeName(out_type)) + " [" +
                           std::to_string(begin) + ", " + std::to_string(end) + ") of " +
                           std::to_string(t.elements) + " bs " + std::to_string(t.block_size) +
                           (t.double_quant ? " dq" : "");
  const testing::AssertionResult ran = RunBnb4(t, begin, end, out_type, out_offset, got);
  if (!ran) return testing::AssertionFailure() << what << ": " << ran.message();
  return SameBytes(got, ReferenceBnb4(t, begin, end, out_type), ElemTypeBytes(out_type), what);
}

// A random 4-bit tensor: random codes, absmax from `absmax_bits` cycling.
Tensor4 RandomTensor(uint64_t n, uint64_t block_size, bool double_quant, uint32_t seed,
                     const std::array<float, 16>& codebook,
                     const std::vector<uint32_t>& absmax_bits, uint64_t nested_block = 256,
                     float offset = 0.0f) {
  Tensor4 x;
  x.t.elements = n;
  x.t.block_size = block_size;
  x.t.double_quant = double_quant;
  const std::vector<uint8_t> packed = PseudoRandomBytes((n + 1) / 2, seed);
  x.packed = LeBytesOf(packed);
  x.quant_map = LeBytesOf(std::vector<float>(codebook.begin(), codebook.end()));
  const uint64_t nb = (n + block_size - 1) / block_size;
  if (!double_quant) {
    std::vector<uint32_t> a(nb);
    for (uint64_t i = 0; i < nb; ++i) a[i] = absmax_bits[i % absmax_bits.size()];
    x.absmax = LeBytesOf(a);
  } else {
    x.absmax = LeBytesOf(PseudoRandomBytes(nb, seed + 1));
    std::vector<uint32_t> nested((nb + nested_block - 1) / nested_block);
    for (size_t i = 0; i < nested.size(); ++i) nested[i] = absmax_bits[i % absmax_bits.size()];
    x.nested_absmax = LeBytesOf(nested);
    std::vector<float> nq(256);
    for (int i = 0; i < 256; ++i) nq[i] = (static_cast<float>(i) - 127.0f) / 129.0f;
    x.nested_quant_map = LeBytesOf(nq);
    x.t.nested_block_size = nested_block;
    x.t.nested_offset = offset;
  }
  x.Bind();
  return x;
}

std::vector<uint32_t> TypicalAbsmax() {
  return {Bits(0.0421f), Bits(0.5f), Bits(1.0f), Bits(3.0e-3f), Bits(0.173f), Bits(12.5f)};
}
// Absmax values that reach every class of result, NaN and Inf included.
std::vector<uint32_t> SpecialAbsmax() {
  return {Bits(0.0421f), Bits(-0.75f),    Bits(0.0f),     Bits(-0.0f),
          Bits(1e38f),   Bits(0x1p-130f), Bits(65504.0f), 0x7F800000u,
          0xFF800000u,   0x7FC00000u,     0xFFC12345u,    0x7F800001u,
          Bits(1e-45f),  Bits(0x1p-20f),  Bits(3.0e38f),  Bits(1.0f / 3)};
}

// ---- Fixtures ------------------------------------------------------------

struct Fixture4 {
  std::string name;
  Tensor4 x;
  std::vector<uint8_t> expected;  // BF16
};

std::vector<std::byte> AsByteVector(const std::vector<uint8_t>& v) {
  return {reinterpret_cast<const std::byte*>(v.data()),
          reinterpret_cast<const std::byte*>(v.data() + v.size())};
}

// A bnb_reference 4-bit file (tests/quant_fixture_files.h) as a tensor.
bool ParseFixture4(const std::optional<BnbFixture>& r, Fixture4& f) {
  if (!r || (r->format != 0 && r->format != 2)) return false;
  f.name = r->name;
  f.x.packed = AsByteVector(r->packed);
  f.x.absmax = AsByteVector(r->absmax);
  f.x.quant_map = AsByteVector(r->quant_map);
  f.x.nested_absmax = AsByteVector(r->nested_absmax);
  f.x.nested_quant_map = AsByteVector(r->nested_quant_map);
  f.expected = r->expected;
  f.x.t.elements = r->elements;
  f.x.t.block_size = r->block_size;
  f.x.t.double_quant = r->format == 2;
  f.x.t.nested_block_size = 256;  // not stored; bitsandbytes' default
  f.x.t.nested_offset = r->nested_offset;
  f.x.Bind();
  return true;
}

struct FixtureInt8 {
  std::string name;
  std::vector<std::byte> weight, scb;
  BnbInt8Tensor t;
  std::vector<uint8_t> expected;
};

bool ParseFixtureInt8(const std::optional<BnbFixture>& r, FixtureInt8& f) {
  if (!r || r->format != 1) return false;
  f.name = r->name;
  f.weight = AsByteVector(r->weight);
  f.scb = AsByteVector(r->scb);
  f.expected = r->expected;
  f.t.rows = r->rows;
  f.t.cols = r->cols;
  f.t.weight = AsSpan(f.weight);
  f.t.scb = AsSpan(f.scb);
  return true;
}

class BnbTest : public PerTarget {};

TEST_P(BnbTest, ProbeReportsForcedTarget) {
  EXPECT_EQ(TargetName(BnbTarget()), TargetName(GetParam()));
}

// Every fixture, whole and in sub-ranges (odd begins, ranges inside one
// block, across blocks, a one-element range), BF16 against the stored
// expected bytes.
TEST_P(BnbTest, FixturesBitExact) {
  ASSERT_EQ(BnbTarget(), GetParam());
  const auto files = FixtureFiles("bnb_reference", ".bin");
  AMN_SKIP_WITHOUT_FIXTURES(files, "bnb_reference");
  size_t n4 = 0, n8 = 0;
  for (const auto& path : files) {
    const std::optional<BnbFixture> file = ReadBnbFixture(path);
    ASSERT_TRUE(file) << path << ": header and section lengths do not match the file";
    if (file->format == 1) {
      FixtureInt8 f;
      ASSERT_TRUE(ParseFixtureInt8(file, f)) << path;
      ++n8;
      for (auto [r0, r1] : {std::pair<uint64_t, uint64_t>{0, f.t.rows}, {3, 4}, {17, 200}}) {
        const size_t bytes = (r1 - r0) * f.t.cols * 2;
        for (size_t offset : {0, 1}) {
          PlacedBuffer out(bytes, offset, 0x5A);
          ASSERT_TRUE(DequantBnbInt8(f.t, r0, r1, ElemType::kBf16,
                                     {reinterpret_cast<std::byte*>(out.data()), bytes})
                          .ok());
          EXPECT_TRUE(out.CanaryIntact());
          const std::vector<uint8_t> got(out.data(), out.data() + bytes);
          const std::vector<uint8_t> want(f.expected.begin() + r0 * f.t.cols * 2,
                                          f.expected.begin() + r1 * f.t.cols * 2);
          EXPECT_TRUE(SameBytes(got, want, 2,
                                path.filename().string() + " rows " + std::to_string(r0) + ".." +
                                    std::to_string(r1)));
        }
      }
      continue;
    }
    Fixture4 f;
    ASSERT_TRUE(ParseFixture4(file, f)) << path;
    ++n4;
    const uint64_t n = f.x.t.elements;
    ASSERT_EQ(f.expected.size(), n * 2) << path;
    for (auto [b, e] : {std::pair<uint64_t, uint64_t>{0, n},
                        {1, n},
                        {0, n - 1},
                        {63, 64},
                        {65, 200},
                        {7, 8},
                        {33, 97},
                        {n - 1, n},
                        {129, 129}}) {
      for (size_t offset : {0, 3}) {
        std::vector<uint8_t> got;
        ASSERT_TRUE(RunBnb4(f.x.t, b, e, ElemType::kBf16, offset, got)) << path;
        const std::vector<uint8_t> want(f.expected.begin() + b * 2, f.expected.begin() + e * 2);
        EXPECT_TRUE(SameBytes(
            got, want, 2,
            path.filename().string() + " [" + std::to_string(b) + ", " + std::to_string(e) + ")"));
      }
    }
    // The other outputs agree with the reference on real data too.
    for (ElemType out_type : kOutTypes) {
      EXPECT_TRUE(Bnb4MatchesReference(f.x.t, 0, n, out_type)) << path;
      EXPECT_TRUE(Bnb4MatchesReference(f.x.t, 5, n - 3, out_type, 1)) << path;
    }
  }
  EXPECT_EQ(n4, 4u);
  EXPECT_EQ(n8, 1u);
}

// The stored quant_maps are exactly bitsandbytes' codebooks; the FP4 file's
// expected output has -0 (0x8000) exactly where nibble 8 occurs.
TEST(BnbFixtures, CodebooksAndSignOfZero) {
  const auto files = FixtureFiles("bnb_reference", ".bin");
  AMN_SKIP_WITHOUT_FIXTURES(files, "bnb_reference");
  const std::array<float, 16> fp4 = Fp4Codebook();
  size_t checked = 0;
  for (const auto& path : files) {
    const std::optional<BnbFixture> file = ReadBnbFixture(path);
    ASSERT_TRUE(file) << path << ": header and section lengths do not match the file";
    Fixture4 f;
    if (file->format == 1) continue;
    ASSERT_TRUE(ParseFixture4(file, f)) << path;
    const bool is_fp4 = path.filename().string().find("fp4") != std::string::npos;
    const std::array<float, 16>& cb = is_fp4 ? fp4 : kNf4;
    for (int k = 0; k < 16; ++k) {
      uint32_t stored;
      std::memcpy(&stored, f.x.quant_map.data() + 4 * k, 4);
      EXPECT_EQ(stored, Bits(cb[k])) << path << " entry " << k;
    }
    if (is_fp4) {
      EXPECT_EQ(Bits(fp4[8]), 0u);  // +0.0 stored at index 8
      size_t neg_zero = 0;
      for (uint64_t e = 0; e < f.x.t.elements; ++e) {
        const uint8_t byte = static_cast<uint8_t>(f.x.packed[e / 2]);
        const unsigned nib = e % 2 == 0 ? byte >> 4 : byte & 15u;
        uint16_t want;
        std::memcpy(&want, &f.expected[2 * e], 2);
        if (nib == 8) {
          EXPECT_EQ(want, 0x8000u) << e;
          ++neg_zero;
        }
        if (nib == 0) {
          EXPECT_EQ(want, 0x0000u) << e;
        }
      }
      EXPECT_GT(neg_zero, 0u);
    }
    ++checked;
  }
  EXPECT_EQ(checked, 4u);
}

// ---- Hand-derived values -------------------------------------------------

// All 16 codes of NF4 and FP4 in one block each, with absmax 2.0 (exact
// products: expected = Bf16Rne(cb * 2)) and absmax -0.5; FP4 nibble 8 gives
// -0.0 (and +0.0 under a negative absmax), nibble 0 +0.0.
TEST_P(BnbTest, AllSixteenCodes) {
  for (const bool fp4 : {false, true}) {
    const std::array<float, 16> cb = fp4 ? Fp4Codebook() : kNf4;
    for (const float absmax : {2.0f, -0.5f}) {
      Tensor4 x;
      x.t.elements = 32;
      x.t.block_size = 32;
      std::vector<uint8_t> packed(16);
      for (int k = 0; k < 16; ++k) packed[k] = static_cast<uint8_t>(k << 4 | (15 - k));
      x.packed = LeBytesOf(packed);
      x.quant_map = LeBytesOf(std::vector<float>(cb.begin(), cb.end()));
      x.absmax = LeBytesOf(std::vector<float>{absmax});
      x.Bind();
      std::vector<uint8_t> got_f32, got_bf16;
      ASSERT_TRUE(RunBnb4(x.t, 0, 32, ElemType::kF32, 0, got_f32));
      ASSERT_TRUE(RunBnb4(x.t, 0, 32, ElemType::kBf16, 0, got_bf16));
      for (int e = 0; e < 32; ++e) {
        const int nib = e % 2 == 0 ? e / 2 : 15 - e / 2;
        float value = cb[nib];
        if (fp4 && nib == 8) value = -0.0f;  // the CUDA kernel's sign * lut[0]
        const float want = value * absmax;   // exact: a power of two
        uint32_t f32;
        uint16_t bf16;
        std::memcpy(&f32, &got_f32[4 * e], 4);
        std::memcpy(&bf16, &got_bf16[2 * e], 2);
        EXPECT_EQ(f32, Bits(want)) << "fp4 " << fp4 << " nibble " << nib << " absmax " << absmax;
        EXPECT_EQ(bf16, Bf16Rne(want)) << "fp4 " << fp4 << " nibble " << nib;
        if (fp4 && nib == 8) {
          EXPECT_EQ(f32, absmax > 0 ? 0x80000000u : 0u);
        }
        if (fp4 && nib == 0) {
          EXPECT_EQ(f32, absmax > 0 ? 0u : 0x80000000u);
        }
      }
    }
  }
}

// Double quant over 3 nested blocks (nb = 600 > 256) with a non-zero offset
// and a nested block size parameter: F32 output equals the formula written
// out here, cb * (nq[code] * nested_absmax[b / 256] + offset), two separate
// f32 operations (the build has -ffp-contract=off); all outputs match the
// reference, over the whole tensor and odd sub-ranges.
TEST_P(BnbTest, DoubleQuantSeveralNestedBlocks) {
  for (const uint64_t nested_block : {256u, 100u}) {
    const uint64_t bs = 64, n = 600 * bs - 10;  // the last block is partial
    Tensor4 x = RandomTensor(
        n, bs, true, 7, kNf4,
        {Bits(0.0137f), Bits(0.0625f), Bits(0.021f), Bits(0.5f), Bits(0.33f), Bits(0.001f)},
        nested_block, 0.0505f);
    std::vector<uint8_t> got;
    ASSERT_TRUE(RunBnb4(x.t, 0, n, ElemType::kF32, 0, got));
    for (uint64_t e = 0; e < n; ++e) {
      const uint64_t b = e / bs;
      const uint8_t code = static_cast<uint8_t>(x.absmax[b]);
      float nq, na;
      std::memcpy(&nq, x.nested_quant_map.data() + 4 * code, 4);
      std::memcpy(&na, x.nested_absmax.data() + 4 * (b / nested_block), 4);
      const float scaled = nq * na;
      const float absmax = scaled + x.t.nested_offset;
      const uint8_t byte = static_cast<uint8_t>(x.packed[e / 2]);
      const float want = kNf4[e % 2 == 0 ? byte >> 4 : byte & 15] * absmax;
      uint32_t g;
      std::memcpy(&g, &got[4 * e], 4);
      ASSERT_EQ(g, Bits(want)) << "element " << e << " nested block " << nested_block;
    }
    for (ElemType out_type : kOutTypes) {
      EXPECT_TRUE(Bnb4MatchesReference(x.t, 0, n, out_type));
      EXPECT_TRUE(Bnb4MatchesReference(x.t, 255 * bs + 33, 520 * bs + 7, out_type, 5));
    }
  }
}

// Block sizes 2..4096 (bitsandbytes uses 32..4096), tensors ending in a
// partial block, odd and even element counts, random codes, every output,
// whole and odd sub-ranges, misaligned output.
TEST_P(BnbTest, BlockSizesAndTails) {
  uint32_t seed = 11;
  for (const uint64_t bs : {uint64_t{2}, uint64_t{6}, uint64_t{32}, uint64_t{34}, uint64_t{64},
                            uint64_t{128}, uint64_t{4096}}) {
    for (const uint64_t n :
         {uint64_t{1}, uint64_t{2}, uint64_t{31}, 3 * bs, 3 * bs + 1, 5 * bs - 7, uint64_t{9000}}) {
      for (const bool fp4 : {false, true}) {
        Tensor4 x = RandomTensor(n, bs, false, seed++, fp4 ? Fp4Codebook() : kNf4, TypicalAbsmax());
        for (ElemType out_type : kOutTypes) {
          EXPECT_TRUE(Bnb4MatchesReference(x.t, 0, n, out_type, seed % 7));
          if (n > 3) {
            EXPECT_TRUE(Bnb4MatchesReference(x.t, 1, n - 2, out_type, 2));
          }
          if (n > 100) {
            EXPECT_TRUE(Bnb4MatchesReference(x.t, n / 2 + 1, n / 2 + 40, out_type));
          }
        }
      }
    }
  }
}

// The per-block tables built in registers (AVX2 F32: two 8-entry lane
// tables; SSE4/SSSE3: four byte planes): bitsandbytes' block sizes 64..4096,
// each block with a different absmax (±0, subnormal, Inf, NaN, huge and
// typical values, so a table kept from the previous block shows), tensors
// ending in odd partial blocks, ranges starting and ending mid-block at odd
// and even elements, every output type.
TEST_P(BnbTest, RegisterTablesPerBlock) {
  std::vector<uint32_t> absmax = {Bits(0.0f),   Bits(0.0421f), Bits(-0.0f),    0x00000003u,
                                  Bits(-0.75f), 0x7F800000u,   Bits(1e-40f),   0xFFC12345u,
                                  Bits(3e38f),  0xFF800000u,   0x7F800001u,    Bits(12.5f),
                                  0x80400000u,  Bits(0.173f),  Bits(65504.0f), Bits(1.0f / 3)};
  uint32_t seed = 101;
  for (uint64_t bs = 64; bs <= 4096; bs *= 2) {
    const uint64_t n = 5 * bs + (bs == 64 ? 3 * bs + 37 : 13);
    for (const bool fp4 : {false, true}) {
      Tensor4 x = RandomTensor(n, bs, false, seed++, fp4 ? Fp4Codebook() : kNf4, absmax);
      for (ElemType out_type : kOutTypes) {
        EXPECT_TRUE(Bnb4MatchesReference(x.t, 0, n, out_type));
        EXPECT_TRUE(Bnb4MatchesReference(x.t, bs / 2, n, out_type, 3));
        EXPECT_TRUE(Bnb4MatchesReference(x.t, bs + 7, 3 * bs + 5, out_type, 1));
        EXPECT_TRUE(Bnb4MatchesReference(x.t, 2 * bs - 1, 2 * bs + 2, out_type));
      }
    }
    std::rotate(absmax.begin(), absmax.begin() + 3, absmax.end());
  }
}

// NaN / Inf / zero / huge / subnormal-producing absmax (plain and via the
// nested table), and codebooks holding NaN, Inf and -0.
TEST_P(BnbTest, SpecialValues) {
  std::array<float, 16> odd = kNf4;
  odd[1] = std::numeric_limits<float>::infinity();
  odd[2] = FromBits(0x7F800001u);  // signalling NaN
  odd[3] = FromBits(0xFFC00042u);
  odd[9] = -0.0f;
  odd[10] = 0.0f;
  for (const auto& cb : {kNf4, Fp4Codebook(), odd}) {
    Tensor4 plain = RandomTensor(16 * 64 + 9, 64, false, 3, cb, SpecialAbsmax());
    Tensor4 dq = RandomTensor(300 * 32, 32, true, 4, cb, SpecialAbsmax(), 256,
                              std::numeric_limits<float>::infinity());
    Tensor4 dq_nan =
        RandomTensor(300 * 32, 32, true, 5, cb, SpecialAbsmax(), 7, FromBits(0x7FA00000u));
    for (ElemType out_type : kOutTypes) {
      for (const Tensor4* x : {&plain, &dq, &dq_nan}) {
        EXPECT_TRUE(Bnb4MatchesReference(x->t, 0, x->t.elements, out_type, 1));
        EXPECT_TRUE(Bnb4MatchesReference(x->t, 3, x->t.elements - 5, out_type));
      }
    }
  }
}

// The NaN rule of the reference itself (bnb::NanOf): first operand's NaN
// quieted, else the second's, else 0xFFC00000.
TEST(BnbReference, NanRule) {
  EXPECT_EQ(bnb::MulBits(0x7F800001u, Bits(2.0f)), 0x7FC00001u);
  EXPECT_EQ(bnb::MulBits(Bits(2.0f), 0xFF800005u), 0xFFC00005u);
  EXPECT_EQ(bnb::MulBits(0x7FC00001u, 0xFF800005u), 0x7FC00001u);
  EXPECT_EQ(bnb::MulBits(0u, 0x7F800000u), 0xFFC00000u);
  EXPECT_EQ(bnb::AddBits(0x7F800000u, 0xFF800000u), 0xFFC00000u);
  EXPECT_EQ(bnb::AddBits(Bits(1.0f), 0x7F800003u), 0x7FC00003u);
  // INT8: 0 * Inf SCB, and a NaN SCB.
  EXPECT_EQ(ref::BnbInt8ElementBits(0, 0x7F800000u), 0xFFC00000u);
  EXPECT_EQ(ref::BnbInt8ElementBits(5, 0xFF800010u), 0xFFC00010u);
  EXPECT_EQ(ref::BnbInt8ElementBits(-3, 0x7F800000u), 0xFF800000u);
}

// ---- INT8 ----------------------------------------------------------------

struct TensorInt8 {
  std::vector<std::byte> weight, scb;
  BnbInt8Tensor t;
};

TensorInt8 MakeInt8(uint64_t rows, uint64_t cols, const std::vector<uint8_t>& w,
                    const std::vector<uint32_t>& scb_bits) {
  TensorInt8 x;
  x.weight = LeBytesOf(w);
  std::vector<uint32_t> scb(rows);
  for (uint64_t r = 0; r < rows; ++r) scb[r] = scb_bits[r % scb_bits.size()];
  x.scb = LeBytesOf(scb);
  x.t.rows = rows;
  x.t.cols = cols;
  x.t.weight = AsSpan(x.weight);
  x.t.scb = AsSpan(x.scb);
  return x;
}

testing::AssertionResult Int8MatchesReference(const BnbInt8Tensor& t, uint64_t r0, uint64_t r1,
                                              ElemType out_type, size_t out_offset) {
  const size_t n = (r1 - r0) * t.cols;
  const size_t bytes = n * ElemTypeBytes(out_type);
  PlacedBuffer out(bytes, out_offset, 0x5A);
  const Status status =
      DequantBnbInt8(t, r0, r1, out_type, {reinterpret_cast<std::byte*>(out.data()), bytes});
  if (!status.ok()) return testing::AssertionFailure() << status.ToString();
  if (!out.CanaryIntact()) return testing::AssertionFailure() << "wrote past out";
  std::vector<uint8_t> want(bytes + 4);
  const auto* w = reinterpret_cast<const uint8_t*>(t.weight.data()) + r0 * t.cols;
  const auto* s = reinterpret_cast<const uint8_t*>(t.scb.data()) + 4 * r0;
  if (out_type == ElemType::kF32) {
    ref::DequantBnbInt8ToF32(w, s, r1 - r0, t.cols, reinterpret_cast<float*>(want.data()));
  } else if (out_type == ElemType::kBf16) {
    ref::DequantBnbInt8ToBf16(w, s, r1 - r0, t.cols, reinterpret_cast<uint16_t*>(want.data()));
  } else {
    ref::DequantBnbInt8ToF16(w, s, r1 - r0, t.cols, reinterpret_cast<uint16_t*>(want.data()));
  }
  want.resize(bytes);
  return SameBytes(std::vector<uint8_t>(out.data(), out.data() + bytes), want,
                   ElemTypeBytes(out_type),
                   "int8 " + std::string(ElemTypeName(out_type)) + " rows " + std::to_string(r0) +
                       ".." + std::to_string(r1) + " cols " + std::to_string(t.cols));
}

// All 256 weights per row, under SCB values incl. 0, against the formula
// written out here: (f32(w) * SCB) * f32(7.874015718698502e-3), left to
// right as int8_vectorwise_dequant computes it.
TEST_P(BnbTest, Int8AllWeightsFormula) {
  const std::vector<float> scbs = {0.0734f, 127.0f, 0.0f, 1.0f, 3.0e-3f, 2.5e5f, -0.0f};
  std::vector<uint8_t> w;
  for (size_t r = 0; r < scbs.size(); ++r) {
    for (int v = 0; v < 256; ++v) w.push_back(static_cast<uint8_t>(v));
  }
  std::vector<uint32_t> bits;
  for (float s : scbs) bits.push_back(Bits(s));
  TensorInt8 x = MakeInt8(scbs.size(), 256, w, bits);
  std::vector<float> f32(w.size());
  std::vector<uint16_t> bf16(w.size());
  ASSERT_TRUE(
      DequantBnbInt8(x.t, 0, scbs.size(), ElemType::kF32, std::as_writable_bytes(std::span(f32)))
          .ok());
  ASSERT_TRUE(
      DequantBnbInt8(x.t, 0, scbs.size(), ElemType::kBf16, std::as_writable_bytes(std::span(bf16)))
          .ok());
  const float inv127 = static_cast<float>(7.874015718698502e-3);
  for (size_t r = 0; r < scbs.size(); ++r) {
    for (int v = 0; v < 256; ++v) {
      const size_t i = r * 256 + static_cast<size_t>(v);
      const float product = static_cast<float>(static_cast<int8_t>(v)) * scbs[r];
      const float want = product * inv127;
      EXPECT_EQ(Bits(f32[i]), Bits(want))
          << "w " << int{static_cast<int8_t>(v)} << " scb " << scbs[r];
      EXPECT_EQ(bf16[i], Bf16Rne(want));
    }
  }
  // w = 127 at SCB 127: 16129 * f32(1/127) rounds back to exactly 127.
  EXPECT_EQ(f32[256 + 127], 127.0f);
  EXPECT_EQ(Bits(f32[2 * 256 + 200]), 0x80000000u);  // -56 * +0: -0
}

// Random weights, shapes around every vector width, SCB incl. NaN/Inf/0.
TEST_P(BnbTest, Int8RandomAgainstReference) {
  uint32_t seed = 5;
  std::vector<uint32_t> scb = {Bits(0.0734f), Bits(1e38f), Bits(0.0f),  0x7F800000u,
                               0xFFC00123u,   0x7F800001u, Bits(-2.5f), Bits(1e-40f)};
  for (const uint64_t cols : {1u, 2u, 7u, 16u, 31u, 33u, 64u, 100u, 257u}) {
    for (const uint64_t rows : {1u, 3u, 9u}) {
      TensorInt8 x = MakeInt8(rows, cols, PseudoRandomBytes(rows * cols, seed++), scb);
      for (ElemType out_type : kOutTypes) {
        EXPECT_TRUE(Int8MatchesReference(x.t, 0, rows, out_type, seed % 5));
        if (rows > 2) {
          EXPECT_TRUE(Int8MatchesReference(x.t, 1, rows - 1, out_type, 0));
        }
      }
    }
  }
}

// The smallest positive SCB for which `holds` (false below it, true from it
// on: a monotone test of the reference's result) is true, by bisection on
// the bit patterns.
uint32_t FirstScbWhere(bool (*holds)(uint32_t scb_bits)) {
  uint32_t lo = 0, hi = 0x7F800000u;  // holds(hi)
  while (hi - lo > 1) {
    const uint32_t mid = lo + (hi - lo) / 2;
    (holds(mid) ? hi : lo) = mid;
  }
  return hi;
}

// SCBs on both sides of Int8RowF16InRange (kernels/bnb-inl.h), whose rows'
// F16 outputs take the integer rounding on SSE4/SSSE3, every weight in
// every row, found from the reference's own products: the smallest SCB
// whose w = 1 result is >= 2^-14 (in) and the F32 below it (out: F16
// subnormal results), the largest whose w = -128 result is < 2^16 (in) and
// the next (out), the smallest whose w = -128 result rounds to F16 Inf
// (>= 65520: in), each with both signs; ±0 and realistic SCBs. Rows of 256
// and 259 columns (the last chunk of a row takes the general tail path).
TEST_P(BnbTest, Int8F16InRangeBoundaryScales) {
  const uint32_t low = FirstScbWhere(
      [](uint32_t scb) { return ref::BnbInt8ElementBits(1, scb) >= 0x38800000u; });
  const uint32_t high = FirstScbWhere(
      [](uint32_t scb) { return (ref::BnbInt8ElementBits(-128, scb) & 0x7FFFFFFFu) >= 0x47800000u; });
  const uint32_t to_inf = FirstScbWhere(
      [](uint32_t scb) { return (ref::BnbInt8ElementBits(-128, scb) & 0x7FFFFFFFu) >= 0x477FF000u; });
  std::vector<uint32_t> scbs;
  // low / 2 and 3e-3 (out) put the results of several small |w| among the
  // F16 subnormals, where a too-loose test would give wrong bits.
  // 1.5 * high (out) gives results up to 1.5 * 2^16, which the integer
  // rounding would turn into NaN patterns (just above 2^16 it still gives
  // Inf).
  for (uint32_t magnitude : {low, low - 1, low - 0x00800000u, Bits(3.0e-3f), high - 1, high,
                             Bits(1.5f * std::bit_cast<float>(high)), to_inf, to_inf - 1, 0u,
                             Bits(0.0734f), Bits(1.25f)}) {
    scbs.push_back(magnitude);
    scbs.push_back(magnitude | 0x80000000u);
  }
  // Not vacuous: the boundaries are where the tests say.
  EXPECT_GE(ref::BnbInt8ElementBits(1, low), 0x38800000u);
  EXPECT_LT(ref::BnbInt8ElementBits(1, low - 1), 0x38800000u);
  EXPECT_LT(ref::BnbInt8ElementBits(-128, high - 1) & 0x7FFFFFFFu, 0x47800000u);
  EXPECT_EQ(ref::F32BitsToF16(ref::BnbInt8ElementBits(-128, to_inf)), 0xFC00u);
  EXPECT_EQ(ref::F32BitsToF16(ref::BnbInt8ElementBits(-128, to_inf - 1)), 0xFBFFu);
  for (const uint64_t cols : {256u, 259u}) {
    std::vector<uint8_t> w;
    for (size_t r = 0; r < scbs.size(); ++r) {
      for (uint64_t c = 0; c < cols; ++c) w.push_back(static_cast<uint8_t>(c + 3 * r));
    }
    TensorInt8 x = MakeInt8(scbs.size(), cols, w, scbs);
    for (ElemType out_type : kOutTypes) {
      EXPECT_TRUE(Int8MatchesReference(x.t, 0, scbs.size(), out_type, 2));
      EXPECT_TRUE(Int8MatchesReference(x.t, 1, scbs.size() - 1, out_type, 0));
    }
  }
}

// ---- Property, registry, errors --------------------------------------------

TEST_P(BnbTest, PropertyMatchesReference) {
  const bool ok = rc::check("DequantBnb4 matches the reference", [] {
    const auto out_type = *rc::gen::elementOf(kOutTypes);
    const uint64_t bs = 2 * *rc::gen::inRange<uint64_t>(1, 80);
    const uint64_t n = *rc::gen::inRange<uint64_t>(1, 3000);
    const bool dq = *rc::gen::arbitrary<bool>();
    const uint64_t nested = *rc::gen::inRange<uint64_t>(1, 20);
    const auto absmax_bits =
        *rc::gen::container<std::vector<uint32_t>>(7, rc::gen::arbitrary<uint32_t>());
    const auto cb_bits =
        *rc::gen::container<std::vector<uint32_t>>(16, rc::gen::arbitrary<uint32_t>());
    std::array<float, 16> cb{};
    for (int k = 0; k < 16; ++k) cb[k] = FromBits(cb_bits[k]);
    const auto choose_cb = *rc::gen::inRange(0, 3);
    Tensor4 x = RandomTensor(n, bs, dq, *rc::gen::arbitrary<uint32_t>() | 1,
                             choose_cb == 0 ? kNf4 : (choose_cb == 1 ? Fp4Codebook() : cb),
                             absmax_bits, nested, FromBits(*rc::gen::arbitrary<uint32_t>()));
    const uint64_t begin = *rc::gen::inRange<uint64_t>(0, n + 1);
    const uint64_t end = *rc::gen::inRange<uint64_t>(begin, n + 1);
    const size_t out_offset = *rc::gen::inRange<size_t>(0, 64);
    RC_ASSERT(Bnb4MatchesReference(x.t, begin, end, out_type, out_offset));
  });
  EXPECT_TRUE(ok);
}

TEST_P(BnbTest, Int8PropertyMatchesReference) {
  const bool ok = rc::check("DequantBnbInt8 matches the reference", [] {
    const auto out_type = *rc::gen::elementOf(kOutTypes);
    const uint64_t rows = *rc::gen::inRange<uint64_t>(1, 6);
    const uint64_t cols = *rc::gen::inRange<uint64_t>(1, 300);
    const auto weights =
        *rc::gen::container<std::vector<uint8_t>>(rows * cols, rc::gen::arbitrary<uint8_t>());
    const auto scb =
        *rc::gen::container<std::vector<uint32_t>>(rows, rc::gen::arbitrary<uint32_t>());
    TensorInt8 x = MakeInt8(rows, cols, weights, scb);
    const uint64_t r0 = *rc::gen::inRange<uint64_t>(0, rows + 1);
    const uint64_t r1 = *rc::gen::inRange<uint64_t>(r0, rows + 1);
    RC_ASSERT(Int8MatchesReference(x.t, r0, r1, out_type, *rc::gen::inRange<size_t>(0, 64)));
  });
  EXPECT_TRUE(ok);
}

TEST_P(BnbTest, RegistryEntriesMatchReference) {
  size_t entries = 0;
  for (const KernelInfo& kernel : Kernels()) {
    if (kernel.family != "bnb") continue;
    ++entries;
    EXPECT_EQ(kernel.probe(), GetParam());
    for (size_t n : {0, 64, 128, 1024, 64 * 513, 64 * 1100}) {
      const size_t units = n / kernel.block_elems;
      const std::vector<uint8_t> input =
          PseudoRandomBytes(units * kernel.in_block_bytes, static_cast<uint32_t>(n + 1));
      EXPECT_TRUE(MatchesReference(kernel, input, n % 3, n % 5)) << kernel.name << " n=" << n;
    }
  }
  EXPECT_EQ(entries, 12u);
}

// Each bad call returns kInvalidArgument, names the problem, writes nothing.
TEST_P(BnbTest, CheckedApiRejectsBadCalls) {
  Tensor4 good = RandomTensor(100, 32, false, 1, kNf4, TypicalAbsmax());   // nb = 4
  Tensor4 dq = RandomTensor(600, 2, true, 2, kNf4, TypicalAbsmax(), 256);  // nb 300, 2 nested
  std::vector<std::byte> out(1000, std::byte{0x5A});
  const auto untouched = [&out] {
    for (std::byte b : out) {
      if (b != std::byte{0x5A}) return false;
    }
    return true;
  };
  struct Bad {
    const char* what;
    Bnb4Tensor t;
    uint64_t begin, end;
    ElemType out_type;
    size_t out_bytes;
  };
  std::vector<Bad> bad;
  const auto with = [&](const char* what, Bnb4Tensor t, uint64_t b = 0, uint64_t e = 100,
                        ElemType o = ElemType::kBf16, size_t bytes = 200) {
    bad.push_back({what, t, b, e, o, bytes});
  };
  Bnb4Tensor t = good.t;
  t.block_size = 0;
  with("block_size", t);
  t.block_size = 33;
  with("block_size", t);
  t = good.t;
  t.packed = t.packed.first(49);
  with("packed", t);
  t = good.t;
  t.quant_map = t.quant_map.first(60);
  with("quant_map", t);
  t = good.t;
  t.absmax = t.absmax.first(12);
  with("absmax", t);
  t = good.t;
  t.elements = 101;  // packed needs 51 bytes
  with("packed", t);
  with("range", good.t, 50, 101);
  with("range", good.t, 60, 50);
  with("output", good.t, 0, 100, ElemType::kBf16, 199);
  with("output", good.t, 0, 100, ElemType::kF32, 399);
  with("output type", good.t, 0, 100, ElemType::kF8E4m3, 200);
  t = dq.t;
  t.nested_block_size = 0;
  with("nested_block_size", t, 0, 10);
  t = dq.t;
  t.nested_absmax = t.nested_absmax.first(4);
  with("nested_absmax", t, 0, 10);
  t = dq.t;
  t.nested_quant_map = t.nested_quant_map.first(1020);
  with("nested_quant_map", t, 0, 10);
  t = dq.t;
  t.absmax = good.absmax;  // f32 bytes where u8 codes belong
  with("absmax", t, 0, 10);
  for (const Bad& b : bad) {
    const Status status = DequantBnb4(b.t, b.begin, b.end, b.out_type, {out.data(), b.out_bytes});
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << b.what;
    EXPECT_NE(status.message().find(b.what), std::string::npos)
        << b.what << ": " << status.message();
    EXPECT_TRUE(untouched()) << b.what;
  }
  EXPECT_TRUE(DequantBnb4(good.t, 0, 100, ElemType::kBf16, {out.data(), 200}).ok());
  EXPECT_TRUE(DequantBnb4(good.t, 100, 100, ElemType::kBf16, {out.data(), 0}).ok());
  EXPECT_TRUE(DequantBnb4(dq.t, 1, 251, ElemType::kF32, {out.data(), 1000}).ok());

  TensorInt8 x = MakeInt8(4, 10, PseudoRandomBytes(40, 1), {Bits(1.0f)});
  std::fill(out.begin(), out.end(), std::byte{0x5A});
  BnbInt8Tensor i8 = x.t;
  i8.weight = i8.weight.first(39);
  EXPECT_EQ(DequantBnbInt8(i8, 0, 4, ElemType::kBf16, {out.data(), 80}).code(),
            StatusCode::kInvalidArgument);
  i8 = x.t;
  i8.scb = i8.scb.first(12);
  EXPECT_EQ(DequantBnbInt8(i8, 0, 4, ElemType::kBf16, {out.data(), 80}).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(DequantBnbInt8(x.t, 2, 5, ElemType::kBf16, {out.data(), 80}).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(DequantBnbInt8(x.t, 3, 2, ElemType::kBf16, {out.data(), 80}).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(DequantBnbInt8(x.t, 0, 4, ElemType::kF16, {out.data(), 79}).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(DequantBnbInt8(x.t, 0, 4, ElemType::kF8E5m2, {out.data(), 80}).code(),
            StatusCode::kInvalidArgument);
  EXPECT_TRUE(untouched());
  EXPECT_TRUE(DequantBnbInt8(x.t, 1, 3, ElemType::kF32, {out.data(), 80}).ok());
}

AMN_INSTANTIATE_PER_TARGET(BnbTest);

}  // namespace
}  // namespace amn::test
