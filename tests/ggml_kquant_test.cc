// The ggml K-quant family (Q2_K … Q8_K, IQ4_XS, TQ1_0, TQ2_0) through
// amn::DequantGgml on every supported target, bit for bit: the real-model and
// synthetic gguf_reference fixtures to BF16, random super-blocks against the
// scalar reference for every output, edge d/dmin values (±0, subnormal, ±Inf,
// NaN), every scale and code value, block counts, misaligned buffers with
// canaries, a RapidCheck property, the checked API's errors, and the NaN rule
// (exact NaN bits for every edge d/dmin, written out, not from the reference).
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "amn/ggml_dequant.h"
#include "amn/kernel_registry.h"
#include "kernels/ggml_kquant_blocks.h"
#include "kernels/ref/float_convert_ref.h"
#include "kernels/ref/ggml_kquant_ref.h"
#include "tests/fixtures.h"
#include "tests/ggml_check.h"
#include "tests/kernel_check.h"
#include "tests/target_param.h"

namespace amn::test {
namespace {

constexpr std::array kTypes = {GgmlType::kQ2_K, GgmlType::kQ3_K,   GgmlType::kQ4_K,
                               GgmlType::kQ5_K, GgmlType::kQ6_K,   GgmlType::kQ8_K,
                               GgmlType::kIQ4_XS, GgmlType::kTQ1_0, GgmlType::kTQ2_0};
constexpr std::array kOutTypes = {ElemType::kF32, ElemType::kBf16, ElemType::kF16};
constexpr size_t kQK = 256;
constexpr uint8_t kCanary = 0xA5;

size_t BlockBytes(GgmlType type) { return ref::KQuantBlockBytes(static_cast<uint32_t>(type)); }
size_t OutBytes(ElemType t) { return t == ElemType::kF32 ? 4 : 2; }

// Where d (and dmin) sit in a block, as (offset, bytes); bytes 4 is Q8_K's f32.
std::vector<std::pair<size_t, size_t>> ScaleFields(GgmlType type) {
  switch (type) {
    case GgmlType::kQ2_K: return {{80, 2}, {82, 2}};
    case GgmlType::kQ3_K: return {{108, 2}};
    case GgmlType::kQ4_K: return {{0, 2}, {2, 2}};
    case GgmlType::kQ5_K: return {{0, 2}, {2, 2}};
    case GgmlType::kQ6_K: return {{208, 2}};
    case GgmlType::kQ8_K: return {{0, 4}};
    case GgmlType::kIQ4_XS: return {{0, 2}};
    case GgmlType::kTQ1_0: return {{52, 2}};
    default: return {{64, 2}};
  }
}

// Random blocks whose d/dmin fields are finite, moderate f16/f32 values.
std::vector<uint8_t> RandomBlocks(GgmlType type, size_t n_blocks, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> bytes(n_blocks * BlockBytes(type));
  for (auto& b : bytes) b = static_cast<uint8_t>(rng());
  for (size_t i = 0; i < n_blocks; ++i) {
    for (auto [off, size] : ScaleFields(type)) {
      uint8_t* p = bytes.data() + i * BlockBytes(type) + off;
      if (size == 2) {
        const uint16_t h = static_cast<uint16_t>(0x1000 + rng() % 0x3000) | ((rng() & 1) << 15);
        p[0] = static_cast<uint8_t>(h);
        p[1] = static_cast<uint8_t>(h >> 8);
      } else {
        const uint32_t f = (0x38000000u + rng() % 0x0A000000u) | ((rng() & 1u) << 31);
        std::memcpy(p, &f, 4);  // little-endian host
      }
    }
  }
  return bytes;
}

// AssertionResult formats each << on its own, so std::hex would not stick.
std::string Hex(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "0x%X", v);
  return buf;
}

class GgmlKQuantTest : public PerTarget {};

TEST_P(GgmlKQuantTest, ProbeReportsForcedTarget) { EXPECT_EQ(GgmlKQuantTarget(), GetParam()); }

TEST_P(GgmlKQuantTest, FixturesMatchGoldenBf16) {
  const size_t checked = CheckGoldenFixtures(kTypes);
  if (checked == 0) GTEST_SKIP() << "no K-quant gguf_reference fixtures; set AMN_FIXTURES_DIR";
  EXPECT_GE(checked, 8u);  // Q2_K … Q6_K, IQ4_XS, TQ1_0, TQ2_0 (Q8_K has none)
}

TEST_P(GgmlKQuantTest, RandomBlocksEveryOutput) {
  for (GgmlType type : kTypes) {
    const auto blocks = RandomBlocks(type, 8, static_cast<uint32_t>(type));
    for (ElemType out : kOutTypes) {
      EXPECT_TRUE(MatchesGgmlReference(type, blocks, out)) << GgmlName(type) << " out " << static_cast<int>(out);
    }
  }
}

TEST_P(GgmlKQuantTest, BlockCountsAndAlignments) {
  for (GgmlType type : kTypes) {
    for (size_t n_blocks : {size_t{1}, size_t{2}, size_t{3}, size_t{17}}) {
      const auto blocks = RandomBlocks(type, n_blocks, static_cast<uint32_t>(n_blocks * 131));
      for (ElemType out : kOutTypes) {
        for (size_t in_off : {size_t{0}, size_t{1}, size_t{3}}) {
          for (size_t out_off : {size_t{0}, size_t{1}, size_t{2}, size_t{6}}) {
            EXPECT_TRUE(MatchesGgmlReference(type, blocks, out, in_off, out_off))
                << GgmlName(type) << " n=" << n_blocks << " in+" << in_off << " out+" << out_off;
          }
        }
      }
    }
  }
}

TEST_P(GgmlKQuantTest, EmptyInputWritesNothing) {
  for (GgmlType type : kTypes) {
    EXPECT_TRUE(MatchesGgmlReference(type, {}, ElemType::kBf16)) << GgmlName(type);
  }
}

// Every byte value in every position (all scale and code values), with
// edge d/dmin: ±0, f16 subnormal and max, ±Inf, NaN (and the f32 ones for Q8_K).
TEST_P(GgmlKQuantTest, EdgeScalesAndEveryByteValue) {
  const std::vector<uint16_t> f16_edges = {0x0000, 0x8000, 0x0001, 0x83FF, 0x0400, 0x3C00,
                                           0x7BFF, 0xFBFF, 0x7C00, 0xFC00, 0x7E00, 0x7C01,
                                           0xFE01, 0x3555};
  const std::vector<uint32_t> f32_edges = {0x00000000, 0x80000000, 0x00000001, 0x807FFFFF,
                                           0x3F800000, 0x7F7FFFFF, 0x7F800000, 0xFF800000,
                                           0x7FC00000, 0x7F800001, 0xFFC12345, 0x3DCCCCCD};
  for (GgmlType type : kTypes) {
    const size_t bb = BlockBytes(type);
    const auto fields = ScaleFields(type);
    const size_t n_edges = fields[0].second == 2 ? f16_edges.size() : f32_edges.size();
    // One block per byte value v: every byte v, then the scale fields from
    // the edge lists (d and dmin take different edges).
    std::vector<uint8_t> blocks(256 * bb);
    for (size_t v = 0; v < 256; ++v) {
      uint8_t* block = blocks.data() + v * bb;
      std::memset(block, static_cast<int>(v), bb);
      for (size_t f = 0; f < fields.size(); ++f) {
        const size_t e = (v + 5 * f) % n_edges;
        if (fields[f].second == 2) {
          block[fields[f].first] = static_cast<uint8_t>(f16_edges[e]);
          block[fields[f].first + 1] = static_cast<uint8_t>(f16_edges[e] >> 8);
        } else {
          std::memcpy(block + fields[f].first, &f32_edges[e], 4);
        }
      }
    }
    for (ElemType out : kOutTypes) {
      EXPECT_TRUE(MatchesGgmlReference(type, blocks, out, 1, 1)) << GgmlName(type);
    }
    // Random codes under every edge pair.
    auto random = RandomBlocks(type, n_edges * n_edges, 7);
    for (size_t i = 0; i < n_edges * n_edges; ++i) {
      for (size_t f = 0; f < fields.size(); ++f) {
        const size_t e = f == 0 ? i % n_edges : i / n_edges;
        uint8_t* p = random.data() + i * bb + fields[f].first;
        if (fields[f].second == 2) {
          p[0] = static_cast<uint8_t>(f16_edges[e]);
          p[1] = static_cast<uint8_t>(f16_edges[e] >> 8);
        } else {
          std::memcpy(p, &f32_edges[e], 4);
        }
      }
    }
    for (ElemType out : kOutTypes) {
      EXPECT_TRUE(MatchesGgmlReference(type, random, out)) << GgmlName(type) << " edge scales";
    }
  }
}

// The plain (finite-d) path rounds BF16 without the NaN rule
// (kernels/ggml_kquant-inl.h). Q8_K's f32 d is the one K-quant scale whose
// products overflow: with d at the largest finite f32 and every i8 code,
// q = 1 gives 0x7F7FFFFF (finite, rounds to BF16 Inf) and |q| >= 2 overflows
// to ±Inf; those blocks alternate with Inf/NaN d blocks (the NaN rule) and
// other large finite ones.
TEST_P(GgmlKQuantTest, OverflowingFiniteScalesAndSpecialBlocks) {
  // The NaNs' low 16 bits are >= 0x8000: rounded without the NaN rule they
  // would carry into the exponent or sign, so a special block taking the
  // plain path fails here.
  const std::vector<uint32_t> d_values = {0x7F7FFFFF, 0x7F800000, 0xFF7FFFFF, 0x7FFFFFFF,
                                          0x7F000000, 0xFF800000, 0x7E800001, 0xFFC0FFFF};
  const size_t bb = BlockBytes(GgmlType::kQ8_K);
  std::vector<uint8_t> blocks(d_values.size() * 2 * bb);
  for (size_t i = 0; i < d_values.size() * 2; ++i) {
    uint8_t* block = blocks.data() + i * bb;
    std::memcpy(block, &d_values[i % d_values.size()], 4);
    for (size_t k = 0; k < kQK; ++k) block[4 + k] = static_cast<uint8_t>(k * (i + 1));
  }
  // Not vacuous: the reference's F32 has the largest finite value, its BF16
  // both infinities and NaNs.
  std::vector<uint32_t> f32(d_values.size() * 2 * kQK);
  const std::vector<uint8_t> f32_bytes = GgmlReference(GgmlType::kQ8_K, blocks, ElemType::kF32);
  std::memcpy(f32.data(), f32_bytes.data(), f32_bytes.size());
  EXPECT_NE(std::count(f32.begin(), f32.end(), 0x7F7FFFFFu), 0);
  std::vector<uint16_t> bf16(f32.size());
  const std::vector<uint8_t> bf16_bytes = GgmlReference(GgmlType::kQ8_K, blocks, ElemType::kBf16);
  std::memcpy(bf16.data(), bf16_bytes.data(), bf16_bytes.size());
  EXPECT_NE(std::count(bf16.begin(), bf16.end(), uint16_t{0x7F80}), 0);
  EXPECT_NE(std::count(bf16.begin(), bf16.end(), uint16_t{0xFF80}), 0);
  EXPECT_NE(std::count_if(bf16.begin(), bf16.end(), [](uint16_t b) { return (b & 0x7FFF) > 0x7F80; }),
            0);
  for (ElemType out : kOutTypes) EXPECT_TRUE(MatchesGgmlReference(GgmlType::kQ8_K, blocks, out, 2, 4));
}

// Factors on both sides of KQuantF16InRange (kernels/ggml_kquant-inl.h),
// whose blocks' F16 outputs take the integer rounding on SSE4/SSSE3:
// Q8_K (every i8 code under d) with d = ±2^-14 (in) and the next F32 below
// (out: q = ±1 results are F16 subnormals), ±0 (±0 results, -0 included),
// 511.875 (128 * d = 65520, which rounds to F16 Inf) and the F32 below it,
// the largest d with 128 * d < 2^16 (in), 512 and 768 (out: results up to
// 1.5 * 2^16, which the integer rounding would turn into NaN patterns; just
// above 2^16 it still gives Inf), realistic d. Q6_K
// (random codes, every 6-bit value about 4 times per block; and blocks of
// codes -32 and 31 only) with d * scale = ±2^-14 (in) and F16-subnormal d
// (out), ±2047 * 32 = ±65504 (in), 2048 = 16 * -128 (out: -32 * -2048),
// 16.0156 * 127 (in), 24 * 127 (out: 32 * 3048 = 97536), ±0 scales beside
// in-range ones, a single slot out of range among in-range ones, and
// realistic d.
TEST_P(GgmlKQuantTest, F16InRangeBoundaryScales) {
  const std::vector<float> q8k_d = {
      0x1p-14f, -0x1p-14f, std::nextafter(0x1p-14f, 0.0f), -std::nextafter(0x1p-14f, 0.0f),
      0.0f, -0.0f, 511.875f, std::nextafter(511.875f, 0.0f), -std::nextafter(512.0f, 0.0f),
      512.0f, -512.0f, 768.0f, 1e-3f, -3.7e-4f};
  const size_t q8k_bytes = BlockBytes(GgmlType::kQ8_K);
  std::vector<uint8_t> q8k(q8k_d.size() * q8k_bytes, 0);
  for (size_t i = 0; i < q8k_d.size(); ++i) {
    uint8_t* block = q8k.data() + i * q8k_bytes;
    std::memcpy(block, &q8k_d[i], 4);  // little-endian host
    for (size_t k = 0; k < kQK; ++k) block[4 + k] = static_cast<uint8_t>(k + i);
  }
  for (ElemType out : kOutTypes) EXPECT_TRUE(MatchesGgmlReference(GgmlType::kQ8_K, q8k, out, 1, 2));

  // Q6_K: (d bits, the 16 scales as a function of the slot).
  struct Q6Case {
    uint16_t d;
    int8_t (*scale)(size_t);
  };
  const std::vector<Q6Case> q6k_cases = {
      {0x0400, [](size_t s) -> int8_t { return s % 2 ? 1 : -1; }},        // ±2^-14: in
      {0x03FF, [](size_t s) -> int8_t { return s % 2 ? 1 : -1; }},        // subnormal: out
      {0x0200, [](size_t s) -> int8_t { return s % 2 ? 2 : -2; }},        // 2^-14 via 2 * 2^-15: in
      {0x0000, [](size_t s) -> int8_t { return static_cast<int8_t>(s * 17); }},  // +0: in
      {0x8000, [](size_t s) -> int8_t { return static_cast<int8_t>(s * 17); }},  // -0: in
      {0x67FF, [](size_t s) -> int8_t { return s % 3 ? 1 : -1; }},        // ±65504: in
      {0x6800, [](size_t s) -> int8_t { return s == 5 ? 1 : 0; }},        // 2048 in one slot: out
      {0x4C00, [](size_t s) -> int8_t { return s % 2 ? 127 : -127; }},    // ±2032: in
      {0x4C00, [](size_t s) -> int8_t { return s == 15 ? -128 : 127; }},  // -2048 in one slot: out
      {0x4C01, [](size_t s) -> int8_t { return s % 2 ? 127 : -127; }},    // ±2033.98: in
      {0x7BFF, [](size_t s) -> int8_t { return s == 0 ? 1 : 0; }},        // 65504 * 32: out
      {0x4E00, [](size_t s) -> int8_t { return s % 2 ? 127 : 1; }},       // 24 * 127 * 32: out
      {0x2000, [](size_t s) -> int8_t { return static_cast<int8_t>(s * 9 + 1); }},  // realistic
      {0x0400, [](size_t s) -> int8_t { return s == 7 ? 0 : 1; }},        // a zero slot: in
  };
  using namespace kq::q6k;
  const size_t q6k_bytes = BlockBytes(GgmlType::kQ6_K);
  for (int codes = 0; codes < 3; ++codes) {  // random, all -32, all 31
    std::vector<uint8_t> q6k = RandomBlocks(GgmlType::kQ6_K, q6k_cases.size(), 61 + codes);
    for (size_t i = 0; i < q6k_cases.size(); ++i) {
      uint8_t* block = q6k.data() + i * q6k_bytes;
      if (codes > 0) std::memset(block + kQl, codes == 1 ? 0x00 : 0xFF, kScales - kQl);
      for (size_t s = 0; s < 16; ++s) block[kScales + s] = static_cast<uint8_t>(q6k_cases[i].scale(s));
      block[kD] = static_cast<uint8_t>(q6k_cases[i].d);
      block[kD + 1] = static_cast<uint8_t>(q6k_cases[i].d >> 8);
    }
    for (ElemType out : kOutTypes) {
      EXPECT_TRUE(MatchesGgmlReference(GgmlType::kQ6_K, q6k, out, 3, 0)) << "codes " << codes;
    }
  }
}

TEST_P(GgmlKQuantTest, PropertyMatchesReference) {
  const bool ok = rc::check("random K-quant blocks match the reference", [] {
    const auto type = *rc::gen::elementOf(std::vector<GgmlType>(kTypes.begin(), kTypes.end()));
    const auto out = *rc::gen::elementOf(std::vector<ElemType>(kOutTypes.begin(), kOutTypes.end()));
    const size_t n_blocks = *rc::gen::inRange<size_t>(0, 5);
    const auto blocks =
        *rc::gen::container<std::vector<uint8_t>>(n_blocks * BlockBytes(type), rc::gen::arbitrary<uint8_t>());
    const size_t in_off = *rc::gen::inRange<size_t>(0, 8);
    const size_t out_off = *rc::gen::inRange<size_t>(0, 8);
    RC_ASSERT(MatchesGgmlReference(type, blocks, out, in_off, out_off));
  });
  EXPECT_TRUE(ok);
}

TEST_P(GgmlKQuantTest, CheckedApiRejectsBadCalls) {
  std::vector<uint8_t> blocks(2 * 144);
  std::vector<std::byte> out(512 * 4);
  // Partial block.
  EXPECT_EQ(DequantGgml(GgmlType::kQ4_K, std::span(blocks.data(), 145), ElemType::kF32, out).code(),
            StatusCode::kInvalidArgument);
  // Short output.
  EXPECT_EQ(DequantGgml(GgmlType::kQ4_K, blocks, ElemType::kF32, std::span(out.data(), 511 * 4))
                .code(),
            StatusCode::kInvalidArgument);
  // Bad output type.
  EXPECT_EQ(DequantGgml(GgmlType::kQ4_K, blocks, ElemType::kF8E4m3, out).code(),
            StatusCode::kInvalidArgument);
  // Plain type.
  EXPECT_EQ(DequantGgml(GgmlType::kF32, blocks, ElemType::kF32, out).code(),
            StatusCode::kInvalidArgument);
  // A good call.
  EXPECT_TRUE(DequantGgml(GgmlType::kQ4_K, blocks, ElemType::kF32, out).ok());
}

// The registry entries (block inputs, KernelInfo::in_block_elems) through
// the shared kernel_check harness.
TEST_P(GgmlKQuantTest, RegistryEntriesMatchReference) {
  size_t entries = 0;
  for (const KernelInfo& kernel : Kernels()) {
    if (kernel.family != "ggml_kquant") continue;
    ++entries;
    EXPECT_EQ(kernel.probe(), GetParam());
    ASSERT_EQ(kernel.block_elems, kQK);
    for (GgmlType type : kTypes) {
      if (BlockBytes(type) != kernel.in_block_bytes) continue;
      for (size_t n_blocks : {size_t{0}, size_t{1}, size_t{5}}) {
        const auto blocks = RandomBlocks(type, n_blocks, static_cast<uint32_t>(n_blocks + 99));
        EXPECT_TRUE(::amn::test::MatchesReference(kernel, blocks, n_blocks, 2 * n_blocks))
            << kernel.name << " n_blocks=" << n_blocks;
      }
    }
  }
  EXPECT_EQ(entries, 3 * kTypes.size());  // BF16, F16, F32 each
}

// ---- The NaN rule (kernels/ref/ggml_kquant_ref.h), against expectations
// written out here rather than taken from the reference: a NaN result is d's
// quiet NaN, else dmin's, else 0xFFC00000, whatever the CPU.

// A d/dmin edge: its bits in the block (f16, or Q8_K's f32) and the F32 value
// the kernels compute with (F16 widened exactly; NaNs quiet, payload kept).
struct ScaleEdge {
  uint32_t raw;
  uint32_t f32;
};
constexpr std::array<ScaleEdge, 9> kF16ScaleEdges = {{
    {0x0000, 0x00000000},  // +0
    {0x8000, 0x80000000},  // -0
    {0x0001, 0x33800000},  // smallest subnormal, 2^-24
    {0x83FF, 0xB87FC000},  // largest negative subnormal
    {0x3C00, 0x3F800000},  // 1
    {0x7C00, 0x7F800000},  // +Inf
    {0xFC00, 0xFF800000},  // -Inf
    {0xFE05, 0xFFC0A000},  // quiet NaN, negative, payload 5
    {0x7C03, 0x7FC06000},  // signalling NaN, payload 3: quieted when widened
}};
constexpr std::array<ScaleEdge, 9> kF32ScaleEdges = {{
    {0x00000000, 0x00000000},
    {0x80000000, 0x80000000},
    {0x00000001, 0x00000001},  // f32 subnormal
    {0x807FFFFF, 0x807FFFFF},
    {0x3F800000, 0x3F800000},
    {0x7F800000, 0x7F800000},
    {0xFF800000, 0xFF800000},
    {0xFFC12345, 0xFFC12345},  // quiet NaN with payload
    {0x7F800001, 0x7FC00001},  // signalling NaN: the quiet bit set, as a multiply does
}};

// Every NaN the rule can give for the edges above, and its BF16/F16 forms
// (docs/formats.md: BF16 (x | 0x400000) >> 16, F16 sign | 0x7E00 | payload >> 13).
struct NanForms {
  uint32_t f32;
  uint16_t bf16;
  uint16_t f16;
};
constexpr std::array<NanForms, 5> kNanForms = {{
    {0xFFC00000, 0xFFC0, 0xFE00},  // ±Inf * 0, Inf - Inf
    {0xFFC0A000, 0xFFC0, 0xFE05},
    {0x7FC06000, 0x7FC0, 0x7E03},
    {0xFFC12345, 0xFFC1, 0xFE09},
    {0x7FC00001, 0x7FC0, 0x7E00},
}};

bool IsNanBits(uint32_t bits) { return (bits & 0x7FFFFFFFu) > 0x7F800000u; }
float AsFloat(uint32_t bits) { return std::bit_cast<float>(bits); }

// Blocks built so that every sub-block has factor s and min m (each 0 or 1)
// and even elements have code q[0], odd ones q[1]: every layout puts the
// code of element i in a byte (or nibble of a byte) of i's parity, so NaN and
// non-NaN lanes sit side by side in every vector.
struct UniformLayout {
  bool has_scale;  // per-sub-block factors (Q8_K, TQ1_0, TQ2_0: none, s = 1)
  bool has_min;    // Q2_K, Q4_K, Q5_K
  std::array<int, 2> q;
};

UniformLayout Layout(GgmlType type) {
  switch (type) {
    case GgmlType::kQ2_K: return {true, true, {0, 1}};
    case GgmlType::kQ3_K: return {true, false, {0, -4}};
    case GgmlType::kQ4_K: return {true, true, {0, 1}};
    case GgmlType::kQ5_K: return {true, true, {0, 17}};
    case GgmlType::kQ6_K: return {true, false, {0, -32}};
    case GgmlType::kQ8_K: return {false, false, {0, -1}};
    case GgmlType::kIQ4_XS: return {true, false, {1, -127}};  // its codebook has no 0
    case GgmlType::kTQ1_0: return {false, false, {0, -1}};
    default: return {false, false, {0, 1}};  // TQ2_0
  }
}

void Alternate(uint8_t* p, size_t n, uint8_t even, uint8_t odd) {
  for (size_t i = 0; i < n; ++i) p[i] = i % 2 == 0 ? even : odd;
}
void PutLe16(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
}

std::vector<uint8_t> UniformBlock(GgmlType type, uint32_t d, uint32_t dmin, int s, int m) {
  std::vector<uint8_t> b(BlockBytes(type), 0);
  const auto sm = static_cast<uint8_t>(s | m << 4);
  switch (type) {
    case GgmlType::kQ2_K:  // scales[16] @0 (lo nibble s, hi m), qs[64] @16, d @80, dmin @82
      std::memset(b.data(), sm, 16);
      Alternate(b.data() + 16, 64, 0x00, 0x55);
      PutLe16(b.data() + 80, d);
      PutLe16(b.data() + 82, dmin);
      break;
    case GgmlType::kQ3_K:  // hmask[32] @0, qs[64] @32, scales[12] @96 (6-bit, -32), d @108
      Alternate(b.data(), 32, 0xFF, 0x00);  // hmask bit clear: q - 4
      std::memset(b.data() + 96, 0x11 * s, 8);  // low 4 bits s, high 2 bits 2: s + 32
      std::memset(b.data() + 104, 0xAA, 4);
      PutLe16(b.data() + 108, d);
      break;
    case GgmlType::kQ4_K:
    case GgmlType::kQ5_K: {  // d @0, dmin @2, scales[12] @4, (Q5_K qh[32] @16), qs
      PutLe16(b.data(), d);
      PutLe16(b.data() + 2, dmin);
      std::memset(b.data() + 4, s, 4);
      std::memset(b.data() + 8, m, 4);
      std::memset(b.data() + 12, sm, 4);
      const bool q5 = type == GgmlType::kQ5_K;
      if (q5) Alternate(b.data() + 16, 32, 0x00, 0xFF);
      Alternate(b.data() + (q5 ? 48 : 16), 128, 0x00, 0x11);
      break;
    }
    case GgmlType::kQ6_K:  // ql[128] @0, qh[64] @128, scales[16] i8 @192, d @208
      Alternate(b.data() + 128, 64, 0xAA, 0x00);  // high bits 2: 32 - 32 = 0
      std::memset(b.data() + 192, s, 16);
      PutLe16(b.data() + 208, d);
      break;
    case GgmlType::kQ8_K:  // d f32 @0, qs[256] i8 @4
      std::memcpy(b.data(), &d, 4);  // little-endian host
      Alternate(b.data() + 4, 256, 0x00, 0xFF);
      break;
    case GgmlType::kIQ4_XS:  // d @0, scales_h u16 @2, scales_l[4] @4, qs[128] @8
      PutLe16(b.data(), d);
      PutLe16(b.data() + 2, 0xAAAA);  // high bits 2: ls = s + 32
      std::memset(b.data() + 4, 0x11 * s, 4);
      Alternate(b.data() + 8, 128, 0x88, 0x00);  // codebook[8] = 1, codebook[0] = -127
      break;
    case GgmlType::kTQ1_0:  // qs[48] @0, qh[4] @48 (base-3 digits), d @52
      Alternate(b.data(), 52, 128, 0);  // 128: every digit 1; 0: every digit 0
      PutLe16(b.data() + 52, d);
      break;
    default:  // TQ2_0: qs[64] @0, d @64
      Alternate(b.data(), 64, 0x55, 0xAA);  // 2-bit codes 1 and 2, minus 1
      PutLe16(b.data() + 64, d);
      break;
  }
  return b;
}

// One element as F32 bits: (d·s)·q − dmin·m (each product rounded; with s, m
// in {0, 1} and small q every finite result is exact), NaN by the rule.
uint32_t RuleValue(const UniformLayout& layout, uint32_t d, uint32_t dmin, int s, int m, int q) {
  float y = AsFloat(d) * static_cast<float>(s) * static_cast<float>(q);
  if (layout.has_min) y = y - AsFloat(dmin) * static_cast<float>(m);
  const uint32_t bits = std::bit_cast<uint32_t>(y);
  if (!IsNanBits(bits)) return bits;
  if (IsNanBits(d)) return d;  // the edges' F32 forms are quiet already
  if (IsNanBits(dmin)) return dmin;
  return 0xFFC00000u;
}

// Blocks for every (d, dmin, s, m) combination of `type`, and each element's
// expected F32 bits.
void RuleBlocks(GgmlType type, std::vector<uint8_t>& blocks, std::vector<uint32_t>& expected) {
  const UniformLayout layout = Layout(type);
  const auto& edges = type == GgmlType::kQ8_K ? kF32ScaleEdges : kF16ScaleEdges;
  const std::array<ScaleEdge, 1> no_min = {{{0, 0}}};
  for (const ScaleEdge& d : edges) {
    for (const ScaleEdge& dmin : layout.has_min ? std::span<const ScaleEdge>(edges)
                                                : std::span<const ScaleEdge>(no_min)) {
      for (int s = layout.has_scale ? 0 : 1; s <= 1; ++s) {
        for (int m = 0; m <= (layout.has_min ? 1 : 0); ++m) {
          const auto block = UniformBlock(type, d.raw, dmin.raw, s, m);
          blocks.insert(blocks.end(), block.begin(), block.end());
          for (size_t i = 0; i < kQK; ++i) {
            expected.push_back(RuleValue(layout, d.f32, dmin.f32, s, m, layout.q[i % 2]));
          }
        }
      }
    }
  }
}

// The expected output element: F32 bits, or their BF16/F16 form (NaNs from
// kNanForms, other values by the conversion reference, tested on its own).
testing::AssertionResult ExpectedOut(uint32_t f32, ElemType out, uint32_t* bits) {
  if (out == ElemType::kF32) {
    *bits = f32;
  } else if (!IsNanBits(f32)) {
    *bits = out == ElemType::kBf16 ? ref::F32BitsToBf16(f32) : ref::F32BitsToF16(f32);
  } else {
    const NanForms* forms = nullptr;
    for (const NanForms& n : kNanForms) {
      if (n.f32 == f32) forms = &n;
    }
    if (forms == nullptr) return testing::AssertionFailure() << "no NanForms for " << Hex(f32);
    *bits = out == ElemType::kBf16 ? forms->bf16 : forms->f16;
  }
  return testing::AssertionSuccess();
}

// Runs `type`'s rule blocks through DequantGgml (use_reference false: the
// active target) or the scalar reference and compares every element.
testing::AssertionResult FollowsNanRule(GgmlType type, ElemType out, bool use_reference) {
  std::vector<uint8_t> blocks;
  std::vector<uint32_t> expected;
  RuleBlocks(type, blocks, expected);
  const size_t w = OutBytes(out);
  std::vector<uint8_t> got(expected.size() * w, kCanary);
  if (use_reference) {
    got = GgmlReference(type, blocks, out);
  } else {
    const Status status =
        DequantGgml(type, blocks, out, std::as_writable_bytes(std::span(got)));
    if (!status.ok()) return testing::AssertionFailure() << status.ToString();
  }
  std::vector<uint32_t> nans_seen;
  for (size_t i = 0; i < expected.size(); ++i) {
    uint32_t want = 0, have = 0;
    if (auto ok = ExpectedOut(expected[i], out, &want); !ok) return ok;
    std::memcpy(&have, got.data() + i * w, w);  // little-endian host
    if (have != want) {
      return testing::AssertionFailure()
             << "block " << i / kQK << " element " << i % kQK << ": got " << Hex(have)
             << ", want " << Hex(want) << " (F32 " << Hex(expected[i]) << ")";
    }
    if (IsNanBits(expected[i]) &&
        std::find(nans_seen.begin(), nans_seen.end(), expected[i]) == nans_seen.end()) {
      nans_seen.push_back(expected[i]);
    }
  }
  // Not vacuous: the invalid NaN and d's two NaNs (and dmin's, same edges) occur.
  if (nans_seen.size() != 3) {
    return testing::AssertionFailure() << nans_seen.size() << " distinct NaNs, want 3";
  }
  return testing::AssertionSuccess();
}

TEST_P(GgmlKQuantTest, NanResultsFollowTheRule) {
  for (GgmlType type : kTypes) {
    for (ElemType out : kOutTypes) {
      EXPECT_TRUE(FollowsNanRule(type, out, false)) << GgmlName(type) << " out " << static_cast<int>(out);
    }
  }
}

// Hand-checked anchors, every value written out: Q2_K with +Inf dmin (and min
// 1) and a d that is +Inf, the F16 signalling NaN 0x7C03, or 1.
TEST_P(GgmlKQuantTest, NanAnchorsQ2K) {
  struct Anchor {
    uint16_t d;
    int s;
    uint32_t even_f32, odd_f32;  // codes 0 and 1
    uint16_t even_bf16, odd_bf16, even_f16, odd_f16;
  };
  const Anchor anchors[] = {
      // (Inf·1)·0 = NaN; (Inf·1)·1 − Inf·1 = Inf − Inf: both invalid.
      {0x7C00, 1, 0xFFC00000, 0xFFC00000, 0xFFC0, 0xFFC0, 0xFE00, 0xFE00},
      // d's NaN, quieted, wins over everything.
      {0x7C03, 0, 0x7FC06000, 0x7FC06000, 0x7FC0, 0x7FC0, 0x7E03, 0x7E03},
      // 1·0 − Inf = −Inf, 1·1 − Inf = −Inf: no NaN.
      {0x3C00, 1, 0xFF800000, 0xFF800000, 0xFF80, 0xFF80, 0xFC00, 0xFC00},
  };
  for (const Anchor& a : anchors) {
    const auto block = UniformBlock(GgmlType::kQ2_K, a.d, 0x7C00, a.s, 1);
    std::vector<uint32_t> f32(kQK);
    std::vector<uint16_t> bf16(kQK), f16(kQK);
    ASSERT_TRUE(DequantGgml(GgmlType::kQ2_K, block, ElemType::kF32,
                            std::as_writable_bytes(std::span(f32))).ok());
    ASSERT_TRUE(DequantGgml(GgmlType::kQ2_K, block, ElemType::kBf16,
                            std::as_writable_bytes(std::span(bf16))).ok());
    ASSERT_TRUE(DequantGgml(GgmlType::kQ2_K, block, ElemType::kF16,
                            std::as_writable_bytes(std::span(f16))).ok());
    for (size_t i = 0; i < kQK; ++i) {
      const bool even = i % 2 == 0;
      ASSERT_EQ(f32[i], even ? a.even_f32 : a.odd_f32) << "d " << Hex(a.d) << " i " << i;
      ASSERT_EQ(bf16[i], even ? a.even_bf16 : a.odd_bf16) << "d " << Hex(a.d) << " i " << i;
      ASSERT_EQ(f16[i], even ? a.even_f16 : a.odd_f16) << "d " << Hex(a.d) << " i " << i;
    }
  }
}

TEST(GgmlKQuantReference, NanResultsFollowTheRule) {
  for (GgmlType type : kTypes) {
    for (ElemType out : kOutTypes) {
      EXPECT_TRUE(FollowsNanRule(type, out, true)) << GgmlName(type) << " out " << static_cast<int>(out);
    }
  }
}

TEST(GgmlKQuantReference, OtherTypesAreRefused) {
  float out[256];
  const uint8_t block[34] = {};
  EXPECT_FALSE(ref::DequantKQuantToF32(static_cast<uint32_t>(GgmlType::kQ8_0), block, 1, out));
  EXPECT_EQ(ref::KQuantBlockBytes(static_cast<uint32_t>(GgmlType::kQ8_0)), 0u);
}

// Hand-computed anchors: Q4_K with d = 1, dmin = 0.5, scale 2 and min 1 in
// every sub-block, codes lo=3 hi=5: (1·2)·3 - 0.5·1 = 5.5, (1·2)·5 - 0.5 = 9.5.
TEST(GgmlKQuantReference, Q4KAnchor) {
  std::array<uint8_t, 144> b{};
  b[0] = 0x00; b[1] = 0x3C;  // d = 1
  b[2] = 0x00; b[3] = 0x38;  // dmin = 0.5
  for (int j = 0; j < 4; ++j) { b[4 + j] = 2; b[8 + j] = 1; }
  for (int j = 0; j < 4; ++j) b[12 + j] = 0x12;  // j>=4: sc lo 2, m hi 1
  for (int i = 0; i < 128; ++i) b[16 + i] = 0x53;
  float y[256];
  ASSERT_TRUE(ref::DequantKQuantToF32(12, b.data(), 1, y));
  EXPECT_EQ(y[0], 5.5f);
  EXPECT_EQ(y[32], 9.5f);
  EXPECT_EQ(y[255], 9.5f);
}

AMN_INSTANTIATE_PER_TARGET(GgmlKQuantTest);

}  // namespace
}  // namespace amn::test
