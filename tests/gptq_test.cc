// GPTQ dequantization (amn::DequantGptq) on every supported target: the
// three gptq_reference fixtures bit for bit in both orientations and in row
// sub-ranges; hand-packed layers of 2, 3, 4 and 8 bits (every code, every
// stored zero, 3-bit fields straddling words, v1 and v2 zeros, act-order
// g_idx, one group) against the GPTQModel formula computed here; random
// layers and a RapidCheck property against the scalar reference; special
// scales; the registry rows; and the checked API's errors.
#include "amn/gptq_dequant.h"

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "amn/kernel_registry.h"
#include "kernels/gptq_layout.h"
#include "kernels/ref/float_convert_ref.h"
#include "kernels/ref/gptq_ref.h"
#include "tests/fixtures.h"
#include "tests/kernel_check.h"
#include "tests/quant_fixture_files.h"
#include "tests/target_param.h"

namespace amn::test {
namespace {

constexpr std::array kOutTypes = {ElemType::kF32, ElemType::kBf16, ElemType::kF16};
constexpr std::array kBitWidths = {2u, 3u, 4u, 8u};

// A layer with owned storage; Layer() points a GptqLayer at it.
struct OwnedLayer {
  uint32_t bits = 4;
  uint64_t k = 0, n = 0, groups = 0, group_size = 0;
  bool zeros_plus_one = true;
  ElemType scale_type = ElemType::kF16;
  std::vector<uint8_t> qweight, qzeros, scales, g_idx;

  GptqLayer Layer() const {
    GptqLayer layer;
    layer.bits = bits;
    layer.in_features = k;
    layer.out_features = n;
    layer.groups = groups;
    layer.group_size = group_size;
    layer.zeros_plus_one = zeros_plus_one;
    layer.scale_type = scale_type;
    layer.qweight = std::as_bytes(std::span(qweight));
    layer.qzeros = std::as_bytes(std::span(qzeros));
    layer.scales = std::as_bytes(std::span(scales));
    layer.g_idx = std::as_bytes(std::span(g_idx));
    return layer;
  }
  gptq::LayerView View() const {
    gptq::LayerView view;
    view.bits = bits;
    view.k = k;
    view.n = n;
    view.groups = groups;
    view.group_size = group_size;
    view.zeros_plus_one = zeros_plus_one;
    view.scale_type = scale_type;
    view.qweight = qweight.data();
    view.qzeros = qzeros.data();
    view.scales = scales.data();
    view.g_idx = g_idx.empty() ? nullptr : g_idx.data();
    return view;
  }
  size_t Group(size_t i) const {
    return g_idx.empty() ? i / group_size : LoadLe32(g_idx.data() + 4 * i);
  }
};

// ---- An independent packer, written from GPTQModel's pack() loops -------
// (PackableQuantLinear.pack): for 2/4/8 bits, word w of a column holds
// values w*pf .. w*pf + pf - 1 at shifts bits * (v % pf); for 3 bits every
// 3 words hold 32 values: 10 at shifts 0..27, the 11th split as bits 30-31
// of word 0 and bit 0 of word 1, 10 at shifts 1..28, the 22nd split as bit
// 31 of word 1 and bits 0-1 of word 2, 10 at shifts 2..29.
std::vector<uint32_t> PackLine(const std::vector<uint32_t>& values, uint32_t bits) {
  std::vector<uint32_t> words(values.size() * bits / 32, 0);
  if (bits != 3) {
    const size_t pf = 32 / bits;
    for (size_t w = 0; w < words.size(); ++w) {
      for (size_t v = 0; v < pf; ++v) words[w] |= values[w * pf + v] << (bits * v);
    }
    return words;
  }
  size_t i = 0;
  for (size_t w = 0; w < words.size(); w += 3) {
    for (size_t v = 0; v < 10; ++v) words[w] |= values[i + v] << (3 * v);
    i += 10;
    words[w] |= values[i] << 30;
    words[w + 1] |= (values[i] >> 2) & 1;
    ++i;
    for (size_t v = 0; v < 10; ++v) words[w + 1] |= values[i + v] << (3 * v + 1);
    i += 10;
    words[w + 1] |= values[i] << 31;
    words[w + 2] |= (values[i] >> 1) & 3;
    ++i;
    for (size_t v = 0; v < 10; ++v) words[w + 2] |= values[i + v] << (3 * v + 2);
    i += 10;
  }
  return words;
}

void PutLe32(std::vector<uint8_t>& bytes, size_t at, uint32_t v) {
  for (int b = 0; b < 4; ++b) bytes[at + b] = static_cast<uint8_t>(v >> (8 * b));
}

// Logical contents of a layer: codes q[i][j], stored zero fields zf[g][j],
// F32 scales s[g][j] (exactly representable in the chosen scale type).
struct Logical {
  std::vector<std::vector<uint32_t>> q, zf;
  std::vector<std::vector<float>> s;
  std::vector<int32_t> g_idx;  // empty: i / group_size
};

OwnedLayer Pack(const Logical& l, uint32_t bits, uint64_t group_size, bool plus_one,
                ElemType scale_type) {
  OwnedLayer o;
  o.bits = bits;
  o.k = l.q.size();
  o.n = l.q[0].size();
  o.groups = l.zf.size();
  o.group_size = group_size;
  o.zeros_plus_one = plus_one;
  o.scale_type = scale_type;
  const size_t rows = o.k * bits / 32;
  o.qweight.resize(rows * o.n * 4);
  for (size_t j = 0; j < o.n; ++j) {
    std::vector<uint32_t> column(o.k);
    for (size_t i = 0; i < o.k; ++i) column[i] = l.q[i][j];
    const std::vector<uint32_t> words = PackLine(column, bits);
    for (size_t w = 0; w < rows; ++w) PutLe32(o.qweight, 4 * (w * o.n + j), words[w]);
  }
  const size_t zero_words = o.n * bits / 32;
  o.qzeros.resize(o.groups * zero_words * 4);
  const size_t scale_bytes = ElemTypeBytes(scale_type);
  o.scales.resize(o.groups * o.n * scale_bytes);
  for (size_t g = 0; g < o.groups; ++g) {
    const std::vector<uint32_t> words = PackLine(l.zf[g], bits);
    for (size_t w = 0; w < zero_words; ++w) PutLe32(o.qzeros, 4 * (g * zero_words + w), words[w]);
    for (size_t j = 0; j < o.n; ++j) {
      const uint32_t f32 = std::bit_cast<uint32_t>(l.s[g][j]);
      const size_t at = (g * o.n + j) * scale_bytes;
      if (scale_type == ElemType::kF32) {
        PutLe32(o.scales, at, f32);
      } else {
        const uint16_t h = scale_type == ElemType::kF16 ? ref::F32BitsToF16(f32) : (f32 >> 16);
        o.scales[at] = static_cast<uint8_t>(h);
        o.scales[at + 1] = static_cast<uint8_t>(h >> 8);
      }
    }
  }
  if (!l.g_idx.empty()) {
    o.g_idx.resize(4 * o.k);
    for (size_t i = 0; i < o.k; ++i) PutLe32(o.g_idx, 4 * i, static_cast<uint32_t>(l.g_idx[i]));
  }
  return o;
}

// The GPTQModel formula in F32, from the logical contents.
float Expected(const Logical& l, size_t group_size, bool plus_one, size_t i, size_t j) {
  const size_t g = l.g_idx.empty() ? i / group_size : static_cast<size_t>(l.g_idx[i]);
  const float z = static_cast<float>(l.zf[g][j] + (plus_one ? 1 : 0));
  const float difference = static_cast<float>(l.q[i][j]) - z;
  return l.s[g][j] * difference;
}

// Scales exact in F16 and BF16 alike: (1 + m/8) * 2^e, e in [-12, 5], signed.
float SmallScale(uint32_t seed) {
  const float mantissa = 1.0f + static_cast<float>(seed % 8) / 8.0f;
  const int exponent = static_cast<int>((seed / 8) % 18) - 12;
  const float s = std::ldexp(mantissa, exponent);
  return (seed / 144) % 3 == 2 ? -s : s;
}

// K x N codes cycling through every value (column-dependent phase), zero
// fields cycling through every value, groups of group_size or the g_idx.
Logical MakeLogical(uint32_t bits, size_t k, size_t n, size_t groups, uint32_t seed,
                    bool act_order) {
  const uint32_t levels = 1u << bits;
  Logical l;
  l.q.assign(k, std::vector<uint32_t>(n));
  for (size_t i = 0; i < k; ++i) {
    for (size_t j = 0; j < n; ++j) l.q[i][j] = static_cast<uint32_t>(i + 3 * j + seed) % levels;
  }
  l.zf.assign(groups, std::vector<uint32_t>(n));
  l.s.assign(groups, std::vector<float>(n));
  for (size_t g = 0; g < groups; ++g) {
    for (size_t j = 0; j < n; ++j) {
      l.zf[g][j] = static_cast<uint32_t>(j + 5 * g + seed) % levels;
      l.s[g][j] = SmallScale(static_cast<uint32_t>(j * 7 + g * 13 + seed));
    }
  }
  if (act_order) {
    // Act-order: g_idx[i] = perm[i] / group_size for a shuffled perm, so the
    // group jumps between neighbouring rows.
    std::vector<int32_t> perm(k);
    std::iota(perm.begin(), perm.end(), 0);
    std::mt19937 rng(seed);
    std::shuffle(perm.begin(), perm.end(), rng);
    const size_t group_size = (k + groups - 1) / groups;
    for (int32_t& p : perm) p = static_cast<int32_t>(static_cast<size_t>(p) / group_size);
    l.g_idx = perm;
  }
  return l;
}

// Runs DequantGptq into a placed buffer (offset `out_offset` bytes past a
// 64-byte boundary, canary after it) and returns the bytes, or fails.
testing::AssertionResult RunDequant(const GptqLayer& layer, WeightOrientation orientation, size_t begin,
                             size_t end, ElemType out_type, std::vector<uint8_t>* bytes,
                             size_t out_offset = 0) {
  const size_t row_elems =
      orientation == WeightOrientation::kOutIn ? layer.in_features : layer.out_features;
  const size_t n_bytes = (end - begin) * row_elems * ElemTypeBytes(out_type);
  PlacedBuffer out(n_bytes, out_offset, 0x5A);
  const Status status = DequantGptq(layer, orientation, begin, end, out_type,
                                    {reinterpret_cast<std::byte*>(out.data()), n_bytes});
  if (!status.ok()) return testing::AssertionFailure() << status.ToString();
  if (!out.CanaryIntact()) return testing::AssertionFailure() << "wrote past out";
  bytes->assign(out.data(), out.data() + n_bytes);
  return testing::AssertionSuccess();
}

uint32_t ElementBits(const std::vector<uint8_t>& bytes, size_t at, ElemType type) {
  uint32_t v = 0;
  std::memcpy(&v, bytes.data() + at * ElemTypeBytes(type), ElemTypeBytes(type));
  return v;
}

uint32_t Encode(uint32_t f32_bits, ElemType type) {
  if (type == ElemType::kF32) return f32_bits;
  return type == ElemType::kBf16 ? ref::F32BitsToBf16(f32_bits) : ref::F32BitsToF16(f32_bits);
}

// Whole, middle and last-row ranges of both orientations against the
// reference (computed once, in [in, out] order).
testing::AssertionResult MatchesReferenceRows(const OwnedLayer& o, ElemType out_type,
                                              size_t out_offset = 0) {
  std::vector<uint8_t> want(o.k * o.n * ElemTypeBytes(out_type) + 4);
  ref::DequantGptq(o.View(), WeightOrientation::kInOut, 0, o.k, out_type, want.data());
  for (const WeightOrientation orientation :
       {WeightOrientation::kInOut, WeightOrientation::kOutIn}) {
    const bool out_in = orientation == WeightOrientation::kOutIn;
    const size_t rows = out_in ? o.n : o.k;
    const size_t row_elems = out_in ? o.k : o.n;
    const size_t ranges[][2] = {{0, rows}, {rows / 3, rows - rows / 4}, {rows - 1, rows}};
    for (const auto& range : ranges) {
      std::vector<uint8_t> got;
      auto run = RunDequant(o.Layer(), orientation, range[0], range[1], out_type, &got, out_offset);
      if (!run) return run;
      for (size_t e = 0; e < (range[1] - range[0]) * row_elems; ++e) {
        const size_t r = range[0] + e / row_elems, c = e % row_elems;
        const size_t at = out_in ? c * o.n + r : r * o.n + c;  // (i, j) in [in, out]
        if (ElementBits(got, e, out_type) != ElementBits(want, at, out_type)) {
          return testing::AssertionFailure()
                 << (out_in ? "kOutIn" : "kInOut") << " bits " << o.bits << " K " << o.k << " N "
                 << o.n << " groups " << o.groups << " group_size " << o.group_size
                 << (o.g_idx.empty() ? "" : " g_idx") << " scales "
                 << ElemTypeName(o.scale_type) << " out " << ElemTypeName(out_type) << " rows ["
                 << range[0] << ", " << range[1] << ") element " << e << ": "
                 << ElementBits(got, e, out_type) << ", reference "
                 << ElementBits(want, at, out_type);
        }
      }
    }
  }
  return testing::AssertionSuccess();
}

// ---- The reference itself -------------------------------------------------

// Hand-packed layers against the formula: every code and stored zero (the
// all-ones zero field gets + 1 with no carry), 3-bit straddles, v1 and v2.
TEST(GptqReference, MatchesFormulaOnPackedLayers) {
  for (const uint32_t bits : kBitWidths) {
    for (const bool act_order : {false, true}) {
      for (const bool plus_one : {true, false}) {
        const size_t k = 96, n = 64, groups = 3;
        const Logical l = MakeLogical(bits, k, n, groups, bits * 11 + act_order, act_order);
        const OwnedLayer o = Pack(l, bits, 32, plus_one, ElemType::kF32);
        for (size_t i = 0; i < k; ++i) {
          for (size_t j = 0; j < n; ++j) {
            ASSERT_EQ(gptq::WeightCode(o.View(), i, j), l.q[i][j]) << bits << " " << i << " " << j;
            ASSERT_EQ(ref::GptqValueBits(o.View(), i, j),
                      std::bit_cast<uint32_t>(Expected(l, 32, plus_one, i, j)))
                << "bits " << bits << " i " << i << " j " << j;
          }
        }
      }
    }
  }
}

// The all-ones stored zero is mask + 1 (no carry into the next field), and
// the neighbouring fields keep their own + 1: hand-derived 4-bit values.
TEST(GptqReference, PlusOnePerFieldWithoutCarry) {
  OwnedLayer o;
  o.bits = 4;
  o.k = 8;
  o.n = 8;
  o.groups = 1;
  o.group_size = 8;
  o.scale_type = ElemType::kF32;
  o.qweight.assign(4 * 8, 0);                       // every code 0
  o.qzeros = {0xFF, 0x00, 0x00, 0x00};              // fields 15, 15, 0, 0, ...
  o.scales.assign(4 * 8, 0);
  for (size_t j = 0; j < 8; ++j) PutLe32(o.scales, 4 * j, std::bit_cast<uint32_t>(1.0f));
  EXPECT_EQ(ref::GptqValueBits(o.View(), 0, 0), std::bit_cast<uint32_t>(-16.0f));
  EXPECT_EQ(ref::GptqValueBits(o.View(), 0, 1), std::bit_cast<uint32_t>(-16.0f));
  EXPECT_EQ(ref::GptqValueBits(o.View(), 0, 2), std::bit_cast<uint32_t>(-1.0f));
  o.zeros_plus_one = false;
  EXPECT_EQ(ref::GptqValueBits(o.View(), 0, 0), std::bit_cast<uint32_t>(-15.0f));
  EXPECT_EQ(ref::GptqValueBits(o.View(), 0, 2), std::bit_cast<uint32_t>(0.0f));
}

// NaN and Inf scales: the pinned NaN choice and IEEE signs.
TEST(GptqReference, SpecialScales) {
  OwnedLayer o;
  o.bits = 8;
  o.k = 4;
  o.n = 4;
  o.groups = 1;
  o.group_size = 4;
  o.scale_type = ElemType::kF32;
  o.zeros_plus_one = false;
  // Column j is word j: columns 0 and 3 hold code 5 four times, 1 and 2 code 0.
  o.qweight = {5, 5, 5, 5, 0, 0, 0, 0, 0, 0, 0, 0, 5, 5, 5, 5};
  o.qzeros = {5, 5, 5, 5};
  o.scales.assign(16, 0);
  const uint32_t scales[4] = {0x7F800000u, 0x7F800001u, 0xFF800000u, 0x80000000u};
  for (size_t j = 0; j < 4; ++j) PutLe32(o.scales, 4 * j, scales[j]);
  EXPECT_EQ(ref::GptqValueBits(o.View(), 0, 0), 0xFFC00000u);  // Inf * 0
  EXPECT_EQ(ref::GptqValueBits(o.View(), 1, 1), 0x7FC00001u);  // NaN quieted
  EXPECT_EQ(ref::GptqValueBits(o.View(), 1, 2), 0x7F800000u);  // -Inf * -5
  EXPECT_EQ(ref::GptqValueBits(o.View(), 1, 3), 0x80000000u);  // -0 * +0
}

// ---- Fixtures ---------------------------------------------------------------

struct Fixture {
  std::string name;
  OwnedLayer layer;
  std::vector<uint8_t> expected;  // BF16 [in][out]
};

std::vector<Fixture> LoadFixtures() {
  std::vector<Fixture> fixtures;
  for (const auto& path : FixtureFiles("gptq_reference", ".bin")) {
    const std::optional<PackedLinearFixture> f = ReadGptqFixture(path);
    if (!f) {
      ADD_FAILURE() << path << ": header and section lengths do not match the file";
      continue;
    }
    Fixture fx;
    fx.name = f->name;
    OwnedLayer& o = fx.layer;
    o.bits = f->bits;
    o.group_size = f->group_size;
    o.k = f->in;
    o.n = f->out;
    o.scale_type = ScaleElemType(f->scale_dtype);
    o.groups = o.k / o.group_size;
    o.zeros_plus_one = true;
    o.qweight = f->qweight;
    o.scales = f->scales;
    o.qzeros = f->qzeros;
    o.g_idx = f->g_idx;
    fx.expected = f->expected;
    fixtures.push_back(std::move(fx));
  }
  return fixtures;
}

TEST(GptqReference, Fixtures) {
  const auto fixtures = LoadFixtures();
  AMN_SKIP_WITHOUT_FIXTURES(fixtures, "gptq_reference");
  EXPECT_EQ(fixtures.size(), 3u);
  for (const Fixture& fx : fixtures) {
    std::vector<uint8_t> got(fx.expected.size());
    ref::DequantGptq(fx.layer.View(), WeightOrientation::kInOut, 0, fx.layer.k, ElemType::kBf16,
                     got.data());
    EXPECT_EQ(got, fx.expected) << fx.name;
  }
}

class GptqTest : public PerTarget {};

TEST_P(GptqTest, ProbeReportsForcedTarget) {
  EXPECT_EQ(TargetName(GptqTarget()), TargetName(GetParam()));
}

// Each fixture: kInOut equals the expected BF16 bytes; kOutIn equals their
// transpose; sub-ranges of rows equal the matching slices.
TEST_P(GptqTest, Fixtures) {
  const auto fixtures = LoadFixtures();
  AMN_SKIP_WITHOUT_FIXTURES(fixtures, "gptq_reference");
  ASSERT_EQ(GptqTarget(), GetParam());
  EXPECT_EQ(fixtures.size(), 3u);
  for (const Fixture& fx : fixtures) {
    const size_t k = fx.layer.k, n = fx.layer.n;
    std::vector<uint8_t> got;
    ASSERT_TRUE(RunDequant(fx.layer.Layer(), WeightOrientation::kInOut, 0, k, ElemType::kBf16, &got, 3));
    EXPECT_EQ(got, fx.expected) << fx.name;
    std::vector<uint8_t> transposed(fx.expected.size());
    for (size_t i = 0; i < k; ++i) {
      for (size_t j = 0; j < n; ++j) {
        std::memcpy(&transposed[2 * (j * k + i)], &fx.expected[2 * (i * n + j)], 2);
      }
    }
    ASSERT_TRUE(RunDequant(fx.layer.Layer(), WeightOrientation::kOutIn, 0, n, ElemType::kBf16, &got, 1));
    EXPECT_EQ(got, transposed) << fx.name << " kOutIn";
    const std::pair<size_t, size_t> ranges[] = {{5, 77}, {255, 256}, {128, 200}};
    // The fixtures' g_idx is i / group_size (so DequantGptq runs them on
    // the sequential-group paths); without it the same bytes must come out.
    OwnedLayer sequential = fx.layer;
    sequential.g_idx.clear();
    ASSERT_TRUE(RunDequant(sequential.Layer(), WeightOrientation::kInOut, 0, k, ElemType::kBf16,
                           &got, 5));
    EXPECT_EQ(got, fx.expected) << fx.name << " without g_idx";
    ASSERT_TRUE(RunDequant(sequential.Layer(), WeightOrientation::kOutIn, 0, n, ElemType::kBf16,
                           &got));
    EXPECT_EQ(got, transposed) << fx.name << " kOutIn without g_idx";
    for (const auto& range : ranges) {
      ASSERT_TRUE(RunDequant(fx.layer.Layer(), WeightOrientation::kInOut, range.first, range.second,
                      ElemType::kBf16, &got));
      EXPECT_TRUE(std::equal(got.begin(), got.end(), fx.expected.begin() + 2 * range.first * n))
          << fx.name << " kInOut rows " << range.first;
      ASSERT_TRUE(RunDequant(fx.layer.Layer(), WeightOrientation::kOutIn, range.first, range.second,
                      ElemType::kBf16, &got));
      EXPECT_TRUE(std::equal(got.begin(), got.end(), transposed.begin() + 2 * range.first * k))
          << fx.name << " kOutIn rows " << range.first;
    }
  }
}

// Hand-packed layers on this target against the formula computed here,
// for every width, output type, zero convention, act-order or not, one
// group (group_size = K) or several, and each scale type.
TEST_P(GptqTest, PackedLayersMatchFormula) {
  for (const uint32_t bits : kBitWidths) {
    for (const bool act_order : {false, true}) {
      for (const size_t groups : {size_t{1}, size_t{4}}) {
        for (const ElemType scale_type : {ElemType::kF16, ElemType::kBf16, ElemType::kF32}) {
          const bool plus_one = scale_type != ElemType::kBf16;
          const size_t k = 128, n = 96;
          const size_t group_size = k / groups;
          const Logical l =
              MakeLogical(bits, k, n, groups, bits + static_cast<uint32_t>(groups), act_order);
          const OwnedLayer o = Pack(l, bits, group_size, plus_one, scale_type);
          for (const ElemType out_type : kOutTypes) {
            std::vector<uint8_t> in_out, out_in;
            ASSERT_TRUE(RunDequant(o.Layer(), WeightOrientation::kInOut, 0, k, out_type, &in_out, 1));
            ASSERT_TRUE(RunDequant(o.Layer(), WeightOrientation::kOutIn, 0, n, out_type, &out_in, 2))
                << "bits " << bits << " groups " << groups << " act " << act_order << " out "
                << ElemTypeName(out_type) << " scales " << ElemTypeName(scale_type);
            for (size_t i = 0; i < k; ++i) {
              for (size_t j = 0; j < n; ++j) {
                const uint32_t want = Encode(
                    std::bit_cast<uint32_t>(Expected(l, group_size, plus_one, i, j)), out_type);
                ASSERT_EQ(ElementBits(in_out, i * n + j, out_type), want)
                    << "kInOut bits " << bits << " act " << act_order << " i " << i << " j " << j;
                ASSERT_EQ(ElementBits(out_in, j * k + i, out_type), want)
                    << "kOutIn bits " << bits << " act " << act_order << " i " << i << " j " << j;
              }
            }
          }
        }
      }
    }
  }
}

// A random valid layer of the given width: random words, zeros and scale
// bits (F16/BF16/F32 patterns, finite), group_size not dividing K, optional
// random g_idx.
OwnedLayer RandomLayer(uint32_t bits, size_t k, size_t n, size_t group_size, bool with_g_idx,
                       ElemType scale_type, uint32_t seed) {
  OwnedLayer o;
  o.bits = bits;
  o.k = k;
  o.n = n;
  o.group_size = group_size;
  o.groups = (k + group_size - 1) / group_size + (seed % 2);
  o.zeros_plus_one = seed % 3 != 0;
  o.scale_type = scale_type;
  o.qweight = PseudoRandomBytes(k * bits / 32 * n * 4, seed);
  o.qzeros = PseudoRandomBytes(o.groups * (n * bits / 32) * 4, seed + 1);
  o.scales = PseudoRandomBytes(o.groups * n * ElemTypeBytes(scale_type), seed + 2);
  // Keep the scales finite and moderate: clear the top exponent bit.
  const size_t size = ElemTypeBytes(scale_type);
  for (size_t at = 0; at < o.scales.size(); at += size) o.scales[at + size - 1] &= 0xBF;
  if (with_g_idx) {
    o.g_idx.resize(4 * k);
    std::mt19937 rng(seed);
    for (size_t i = 0; i < k; ++i) PutLe32(o.g_idx, 4 * i, rng() % o.groups);
  }
  return o;
}

// Random layers, shapes with partial vectors and several chunks, every
// width, output, orientation and row sub-range.
TEST_P(GptqTest, RandomLayersMatchReference) {
  uint32_t seed = 7;
  for (const uint32_t bits : kBitWidths) {
    // K and N multiples of 32 suit every width; N > kGptqChunk and
    // K > kGptqChunk take several chunks.
    const std::pair<size_t, size_t> shapes[] = {{32, 32}, {64, 96}, {160, 1056}, {2080, 64}};
    for (const auto& shape : shapes) {
      for (const bool with_g_idx : {false, true}) {
        for (const ElemType out_type : kOutTypes) {
          const ElemType scale_type =
              seed % 3 == 0 ? ElemType::kF32 : seed % 3 == 1 ? ElemType::kBf16 : ElemType::kF16;
          // Groups that straddle vectors (48), that align with them (64),
          // and one group for the whole layer.
          const size_t group_size = seed % 3 == 0 ? 48 : seed % 3 == 1 ? 64 : shape.first;
          // One case in 4 under emulation: 4 is prime to the 3 output and
          // scale types, so every combination still runs.
          if (!RunCase(seed, 4)) {
            ++seed;
            continue;
          }
          const OwnedLayer o = RandomLayer(bits, shape.first, shape.second, group_size, with_g_idx,
                                           scale_type, seed++);
          EXPECT_TRUE(MatchesReferenceRows(o, out_type, seed % 7));
        }
      }
    }
  }
}

// Widths whose K and N are not multiples of 32: 4-bit K = N = 8, 8-bit
// K = N = 4, 2-bit 16.
TEST_P(GptqTest, SmallestPackableShapes) {
  uint32_t seed = 99;
  const std::pair<uint32_t, size_t> widths[] = {{4, 8}, {8, 4}, {2, 16}, {4, 24}};
  for (const auto& [bits, unit] : widths) {
    for (const ElemType out_type : kOutTypes) {
      for (const bool with_g_idx : {false, true}) {
        const OwnedLayer o =
            RandomLayer(bits, unit, unit * 3, 5, with_g_idx, ElemType::kF16, seed++);
        EXPECT_TRUE(MatchesReferenceRows(o, out_type, 1));
      }
    }
  }
}

// kOutIn runs inside one group (BroadcastRun; for 2 and 3 bits on x86 the
// u16 code path, eight fields = kBits bytes per block) and the 32-row
// blocks of layers under 1024 word rows (8 bits, 4 bits on 128-bit
// vectors: the tiles of a block take each chunk in turn): runs of one and
// of several steps between group boundaries that fall mid-step, K past one
// 512-element chunk and K that is not a whole step, row ranges that start
// and end mid-tile (N = 104 for 4 and 8 bits: rows [34, 78) are one block
// and a part block).
TEST_P(GptqTest, ShortRunsAndRowBlocksMatchReference) {
  uint32_t seed = 300;
  for (const uint32_t bits : kBitWidths) {
    const size_t n = bits >= 4 ? 104 : 96;
    for (const size_t k : {96, 104, 224, 544}) {
      if (k * bits % 32 != 0 || (k == 104 && bits < 4)) continue;
      for (const size_t group_size : {8, 16, 24, 40, 136}) {
        for (const ElemType out_type : kOutTypes) {
          if (!RunCase(seed, 3)) {
            ++seed;
            continue;
          }
          const OwnedLayer o = RandomLayer(bits, k, n, group_size, false, ElemType::kF16, seed++);
          EXPECT_TRUE(MatchesReferenceRows(o, out_type, seed % 5));
        }
      }
    }
  }
}

// kOutIn row blocks of long layers (gptq_out_in-inl.h: with at least 1024
// qweight word rows, the tiles of up to 256 rows of a call take each
// 512-element chunk in turn; on AVX-512 in packed bands of 256 (4 bits)
// or 128 (8 bits) columns): N = 544 is two whole blocks and one of 32
// rows, so the whole range crosses block boundaries and ends in a part
// block, and N = 552 ends in a part tile (the rows [N / 3, N - N / 4) of
// MatchesReferenceRows start and end in one too); K = 1024 word rows plus
// a part chunk (8 bits: 4112, 4 bits: 8208). 2 and 3 bits (whose N is a
// multiple of 16 or 32) take one layer each, N = 288 (a whole block and a
// part one), K = 16400 and 10944 (1025 and 1026 word rows). The emulated
// fleet runs 8 bits only.
TEST_P(GptqTest, LongLayerRowBlocksMatchReference) {
  uint32_t seed = 500;
  const struct {
    uint32_t bits;
    size_t k;
    std::vector<size_t> n;
  } layers[] = {{2, 16400, {288}}, {3, 10944, {288}}, {4, 8208, {544, 552}}, {8, 4112, {544, 552}}};
  for (const auto& layer : layers) {
    if (!RunCase(layer.bits, 8)) continue;
    for (const size_t n : layer.n) {
      const ElemType out_type = kOutTypes[(layer.bits + n) % std::size(kOutTypes)];
      const OwnedLayer o = RandomLayer(layer.bits, layer.k, n, 136, false, ElemType::kF16, seed++);
      EXPECT_TRUE(MatchesReferenceRows(o, out_type, layer.bits % 5));
    }
  }
}

// A g_idx that is i / group_size takes the sequential paths (DequantGptq
// detects it); one that differs in a single place, or follows another group
// size, must not.
TEST_P(GptqTest, NearlySequentialGIdx) {
  for (const uint32_t bits : kBitWidths) {
    OwnedLayer o = RandomLayer(bits, 256, 64, 32, true, ElemType::kF16, bits + 40);
    o.groups = 8;
    o.qzeros = PseudoRandomBytes(8 * (64 * bits / 32) * 4, 1);
    o.scales.resize(8 * 64 * 2);
    for (size_t at = 1; at < o.scales.size(); at += 2) o.scales[at] &= 0xBF;
    for (size_t i = 0; i < 256; ++i) PutLe32(o.g_idx, 4 * i, static_cast<uint32_t>(i / 32));
    for (const uint64_t group_size : {0, 32, 16, 64}) {
      o.group_size = group_size;
      for (const ElemType out_type : kOutTypes) EXPECT_TRUE(MatchesReferenceRows(o, out_type, 1));
    }
    PutLe32(o.g_idx, 4 * 100, 5);
    o.group_size = 32;
    for (const ElemType out_type : kOutTypes) EXPECT_TRUE(MatchesReferenceRows(o, out_type, 1));
  }
}

// Act-order layers with more groups than a tile's zero and scale tables
// hold (2100: on every target; 600: with 8-lane tiles, AVX2 and AVX-512;
// 200 fits everywhere) read each
// element's zeros and scales from the layer: every width, v1 and v2 zeros,
// every scale type, a g_idx that uses the last qzeros rows (whose words
// are copied, not loaded past the tensor, which is exactly as long as the
// layer needs), every row range (MatchesReferenceRows: whole, a middle
// range that is no whole number of tiles, one row), and a NaN scale.
TEST_P(GptqTest, GIdxBeyondTheTables) {
  uint32_t seed = 500;
  constexpr size_t kK = 64, kN = 96;
  for (const uint32_t bits : kBitWidths) {
    for (const size_t groups : {size_t{200}, size_t{600}, size_t{2100}}) {
      for (const ElemType scale_type : {ElemType::kF16, ElemType::kBf16, ElemType::kF32}) {
        OwnedLayer o = RandomLayer(bits, kK, kN, 1, true, scale_type, seed++);
        o.groups = groups;
        o.qzeros = PseudoRandomBytes(groups * (kN * bits / 32) * 4, seed++);
        const size_t size = ElemTypeBytes(scale_type);
        o.scales = PseudoRandomBytes(groups * kN * size, seed++);
        for (size_t at = 0; at < o.scales.size(); at += size) o.scales[at + size - 1] &= 0xBF;
        std::mt19937 rng(seed);
        for (size_t i = 0; i < kK; ++i) {
          PutLe32(o.g_idx, 4 * i, static_cast<uint32_t>(i < 3 ? groups - 1 - i : rng() % groups));
        }
        if (scale_type == ElemType::kF32 && groups == 200) {
          PutLe32(o.scales, 4 * ((groups - 2) * kN + 50), 0x7FC00001u);  // row 50's group 198
        }
        for (const ElemType out_type : kOutTypes) {
          EXPECT_TRUE(MatchesReferenceRows(o, out_type, seed % 5));
        }
      }
    }
  }
}

// Scales that reach every class of result: NaN (quiet, signalling, either
// sign), ±Inf (Inf * 0 where q == z), ±0, subnormal, huge (overflow to Inf
// in F16/BF16), with codes equal to the zero included.
TEST_P(GptqTest, SpecialScalesMatchReference) {
  const uint32_t special[] = {0x7FC00000u, 0xFFC12345u, 0x7F800001u, 0xFF800123u, 0x7F800000u,
                              0xFF800000u, 0x00000000u, 0x80000000u, 0x00000001u, 0x80400000u,
                              0x7F7FFFFFu, 0x477FF000u, 0x3F800000u, 0xBDCCCCCDu, 0x33800000u,
                              0x38800000u};
  for (const uint32_t bits : kBitWidths) {
    OwnedLayer o = RandomLayer(bits, 64, 64, 16, false, ElemType::kF32, bits);
    // Small codes and zeros so q == z happens often.
    for (uint8_t& b : o.qweight) b &= 0x11;
    for (uint8_t& b : o.qzeros) b &= 0x11;
    o.zeros_plus_one = false;
    for (size_t s = 0; s < o.scales.size() / 4; ++s) {
      PutLe32(o.scales, 4 * s, special[(s * 5 + s / 16) % std::size(special)]);
    }
    for (const ElemType out_type : kOutTypes) EXPECT_TRUE(MatchesReferenceRows(o, out_type, 5));
    // And with an act-order g_idx (groups in reverse, shuffled).
    OwnedLayer act = o;
    act.g_idx.resize(4 * act.k);
    for (size_t i = 0; i < act.k; ++i) {
      PutLe32(act.g_idx, 4 * i, static_cast<uint32_t>((act.groups - 1) - (i * 7) % act.groups));
    }
    for (const ElemType out_type : kOutTypes) EXPECT_TRUE(MatchesReferenceRows(act, out_type, 3));
    // The same special values as F16 and BF16 scales.
    for (const ElemType scale_type : {ElemType::kF16, ElemType::kBf16}) {
      OwnedLayer h = o;
      h.scale_type = scale_type;
      h.scales.assign(o.groups * o.n * 2, 0);
      for (size_t s = 0; s < o.groups * o.n; ++s) {
        const uint32_t f32 = LoadLe32(o.scales.data() + 4 * s);
        const uint16_t v =
            scale_type == ElemType::kF16 ? ref::F32BitsToF16(f32) : static_cast<uint16_t>(f32 >> 16);
        h.scales[2 * s] = static_cast<uint8_t>(v);
        h.scales[2 * s + 1] = static_cast<uint8_t>(v >> 8);
      }
      for (const ElemType out_type : kOutTypes) EXPECT_TRUE(MatchesReferenceRows(h, out_type, 2));
    }
  }
}

// The largest F32 scale s with fl(d * s) < 2^16.
float LargestScaleBelow2To16(float d) {
  float s = 65536.0f / d;
  while (d * s >= 65536.0f) s = std::nextafter(s, 0.0f);
  while (d * std::nextafter(s, 1e30f) < 65536.0f) s = std::nextafter(s, 1e30f);
  return s;
}

// 8-bit groups on both sides of the F16 in-range test (BroadcastRun,
// kernels/gptq_out_in-inl.h: F16InRangeProducts on the scale with
// max(|z|, |255 - z|)), whose F16 outputs take the integer rounding on
// SSE4/SSSE3: every code in every column, zeros 1..256 (v1 and v2), and per
// column a scale of ±2^-14 (in), the F32 below it and 1.5 * 2^-15 (out:
// F16-subnormal results), ±0, the largest with 255 or 256 times it below
// 2^16 (in; results rounding to F16 Inf included), the next F32 and 1.5
// times it (out: results up to 1.5 * 2^16, which the integer rounding would
// turn into NaN patterns; just above 2^16 it still gives Inf), and a
// realistic one; as F32 and as F16 scales.
TEST_P(GptqTest, F16InRangeBoundaryScales) {
  constexpr size_t kK = 256, kN = 72;
  constexpr std::array<uint32_t, 6> kZeroFields = {0, 254, 127, 128, 255, 3};
  for (const bool plus_one : {false, true}) {
    Logical l;
    l.q.assign(kK, std::vector<uint32_t>(kN));
    for (size_t i = 0; i < kK; ++i) {
      for (size_t j = 0; j < kN; ++j) l.q[i][j] = static_cast<uint32_t>(i + 3 * j) % 256;
    }
    l.zf.assign(1, std::vector<uint32_t>(kN));
    l.s.assign(1, std::vector<float>(kN));
    for (size_t j = 0; j < kN; ++j) {
      const uint32_t zf = kZeroFields[j % kZeroFields.size()];
      const float z = static_cast<float>(zf + (plus_one ? 1 : 0));
      const float max_diff = std::max(z, 255.0f - z);
      const float below = LargestScaleBelow2To16(max_diff);
      const float scales[] = {0x1p-14f, -0x1p-14f, std::nextafter(0x1p-14f, 0.0f),
                              -0x1.8p-15f, 0.0f, -0.0f, below, -below,
                              std::nextafter(below, 1e30f), -std::nextafter(below, 1e30f),
                              1.5f * below, 0.0123f};
      l.zf[0][j] = zf;
      l.s[0][j] = scales[(j / kZeroFields.size()) % std::size(scales)];
    }
    for (const ElemType scale_type : {ElemType::kF32, ElemType::kF16}) {
      const OwnedLayer o = Pack(l, 8, kK, plus_one, scale_type);
      for (const ElemType out_type : kOutTypes) {
        EXPECT_TRUE(MatchesReferenceRows(o, out_type, 1)) << "plus_one " << plus_one;
      }
    }
  }
}

// Act-order tiles on both sides of their F16 in-range test
// (kernels/gptq_out_in-inl.h: F16InRangeProducts on every scale of a tile
// with |q - z| <= 2^bits), whose F16 outputs take the integer rounding on
// SSE4/SSSE3: a permuted g_idx, every code in every column, zeros up to
// 2^bits (v1 zeros of 2^bits - 1, plus one), and in each block of 8
// columns (one or two tiles) one column whose every group has a scale that
// puts the tile in range (the largest with 2^bits times it below 2^16,
// 2^-14, ±0) or out (the next F32 above that largest, 1.5 times it, the
// largest with 2^bits - 1 times it below 2^16, whose 2^bits times it the
// integer rounding would turn into a NaN pattern, the F32 below 2^-14, an
// F16-subnormal scale), the other columns a realistic one; as F32 and as
// F16 scales.
TEST_P(GptqTest, ActOrderF16InRangeBoundaryScales) {
  constexpr size_t kK = 256, kGroupSize = 32, kGroups = kK / kGroupSize;
  for (const uint32_t bits : {4u, 8u}) {
    const uint32_t levels = 1u << bits;
    const float below = LargestScaleBelow2To16(static_cast<float>(levels));
    const float specials[] = {below,
                              -below,
                              std::nextafter(below, 1e30f),
                              1.5f * below,
                              LargestScaleBelow2To16(static_cast<float>(levels - 1)),
                              0x1p-14f,
                              std::nextafter(0x1p-14f, 0.0f),
                              -0x1.8p-15f,
                              0.0f,
                              -0.0f};
    const size_t n = 8 * std::size(specials);
    for (const bool plus_one : {false, true}) {
      Logical l;
      l.q.assign(kK, std::vector<uint32_t>(n));
      for (size_t i = 0; i < kK; ++i) {
        for (size_t j = 0; j < n; ++j) l.q[i][j] = static_cast<uint32_t>(i + 3 * j) % levels;
      }
      l.zf.assign(kGroups, std::vector<uint32_t>(n));
      l.s.assign(kGroups, std::vector<float>(n));
      for (size_t g = 0; g < kGroups; ++g) {
        for (size_t j = 0; j < n; ++j) {
          l.zf[g][j] = (g + j) % 2 == 0 ? levels - 1 : (g * 5 + j) % levels;
          l.s[g][j] = j % 8 == 3 ? specials[j / 8] : 0.0123f * static_cast<float>(1 + (g + j) % 3);
        }
      }
      l.g_idx.resize(kK);
      for (size_t i = 0; i < kK; ++i) l.g_idx[i] = static_cast<int32_t>(i * 37 % kK / kGroupSize);
      for (const ElemType scale_type : {ElemType::kF32, ElemType::kF16}) {
        const OwnedLayer o = Pack(l, bits, kGroupSize, plus_one, scale_type);
        EXPECT_TRUE(MatchesReferenceRows(o, ElemType::kF16, 1))
            << "bits " << bits << " plus_one " << plus_one;
      }
    }
  }
}

TEST_P(GptqTest, PropertyMatchesReference) {
  const bool ok = rc::check("DequantGptq matches the reference", [] {
    const uint32_t bits = *rc::gen::elementOf(kBitWidths);
    const size_t unit = bits == 3 ? 32 : 32 / bits;
    const size_t k = unit * *rc::gen::inRange<size_t>(0, 12);
    const size_t n = unit * *rc::gen::inRange<size_t>(1, 12);
    const size_t group_size = *rc::gen::inRange<size_t>(1, k + 2);
    const bool with_g_idx = *rc::gen::arbitrary<bool>();
    const auto scale_type = *rc::gen::elementOf(std::array{ElemType::kF32, ElemType::kF16,
                                                           ElemType::kBf16});
    const auto out_type = *rc::gen::elementOf(kOutTypes);
    const auto seed = *rc::gen::arbitrary<uint32_t>();
    OwnedLayer o = RandomLayer(bits, k, n, group_size, with_g_idx, scale_type, seed);
    if (o.groups == 0) {  // K == 0 and an even seed: keep one (unused) group
      o.groups = 1;
      o.qzeros.assign(n * bits / 32 * 4, 0);
      o.scales.assign(n * ElemTypeBytes(scale_type), 0);
    }
    const auto orientation = *rc::gen::elementOf(
        std::array{WeightOrientation::kInOut, WeightOrientation::kOutIn});
    const size_t rows = orientation == WeightOrientation::kOutIn ? n : k;
    const size_t begin = *rc::gen::inRange<size_t>(0, rows + 1);
    const size_t end = *rc::gen::inRange<size_t>(begin, rows + 1);
    const size_t offset = *rc::gen::inRange<size_t>(0, 64);
    std::vector<uint8_t> got;
    RC_ASSERT(RunDequant(o.Layer(), orientation, begin, end, out_type, &got, offset));
    std::vector<uint8_t> want(got.size() + 4);
    ref::DequantGptq(o.View(), orientation, begin, end, out_type, want.data());
    want.resize(got.size());
    RC_ASSERT(got == want);
  });
  EXPECT_TRUE(ok);
}

// The registry rows: every width and output, the GEMM layout and the
// act-order layer (groups of 32 in a permuted g_idx), lengths of 0 to 3
// units.
TEST_P(GptqTest, RegistryEntriesMatchReference) {
  size_t entries = 0;
  for (const KernelInfo& kernel : Kernels()) {
    if (kernel.family != "gptq") continue;
    ++entries;
    EXPECT_EQ(kernel.probe(), GetParam());
    for (size_t units : {0, 1, 3}) {
      const std::vector<uint8_t> input =
          PseudoRandomBytes(units * kernel.in_block_bytes, static_cast<uint32_t>(units + 5));
      EXPECT_TRUE(MatchesReference(kernel, input, units % 2, units)) << kernel.name << " " << units;
    }
  }
  EXPECT_EQ(entries, 16u);
}

// ---- The checked API ----------------------------------------------------------

TEST_P(GptqTest, CheckedApiRejectsBadCalls) {
  const Logical l = MakeLogical(4, 64, 16, 2, 1, false);
  const OwnedLayer good = Pack(l, 4, 32, true, ElemType::kF16);
  OwnedLayer with_g_idx = good;
  with_g_idx.g_idx.assign(4 * 64, 0);
  std::vector<std::byte> out(64 * 16 * 4, std::byte{0x5A});
  const auto untouched = [&out] {
    return std::all_of(out.begin(), out.end(), [](std::byte b) { return b == std::byte{0x5A}; });
  };
  struct Bad {
    const char* what;
    GptqLayer layer;
    WeightOrientation orientation = WeightOrientation::kOutIn;
    uint64_t begin = 0, end = 16;
    ElemType out_type = ElemType::kBf16;
    size_t out_bytes = 64 * 16 * 2;
    const char* names = "";  // a word the message must contain
  };
  std::vector<Bad> bad;
  const auto with = [&](const char* what, const char* names, auto edit) {
    Bad b{what, good.Layer()};
    b.names = names;
    edit(b);
    bad.push_back(b);
  };
  with("bits 5", "bits", [](Bad& b) { b.layer.bits = 5; });
  with("bits 0", "bits", [](Bad& b) { b.layer.bits = 0; });
  with("K not packable", "in_features", [](Bad& b) { b.layer.in_features = 63; });
  with("N not packable", "out_features", [](Bad& b) { b.layer.out_features = 15; });
  with("short qweight", "qweight",
       [](Bad& b) { b.layer.qweight = b.layer.qweight.first(b.layer.qweight.size() - 4); });
  with("short qzeros", "qzeros",
       [](Bad& b) { b.layer.qzeros = b.layer.qzeros.first(b.layer.qzeros.size() - 4); });
  with("short scales", "scales",
       [](Bad& b) { b.layer.scales = b.layer.scales.first(b.layer.scales.size() - 2); });
  with("scales of the wrong type", "scales", [](Bad& b) { b.layer.scale_type = ElemType::kF32; });
  with("fp8 scales", "scale_type", [](Bad& b) { b.layer.scale_type = ElemType::kF8E4m3; });
  with("rows past the end", "rows", [](Bad& b) { b.end = 17; });
  with("rows reversed", "rows", [](Bad& b) { b.begin = 3, b.end = 2; });
  with("kInOut rows past the end", "rows",
       [](Bad& b) { b.orientation = WeightOrientation::kInOut, b.end = 65; });
  with("out too small", "out", [](Bad& b) { b.out_bytes -= 1; });
  with("out f32 too small", "out", [](Bad& b) { b.out_type = ElemType::kF32; });
  with("e4m3 output", "output", [](Bad& b) { b.out_type = ElemType::kF8E4m3; });
  with("groups 0", "groups", [](Bad& b) {
    b.layer.groups = 0;
    b.layer.qzeros = {};
    b.layer.scales = {};
  });
  with("group_size 0", "group_size", [](Bad& b) { b.layer.group_size = 0; });
  with("too few groups", "groups", [](Bad& b) { b.layer.group_size = 16; });
  for (const Bad& b : bad) {
    const Status status = DequantGptq(b.layer, b.orientation, b.begin, b.end, b.out_type,
                                      {out.data(), b.out_bytes});
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << b.what;
    EXPECT_NE(status.message().find(b.names), std::string::npos) << b.what << ": " << status.message();
    EXPECT_TRUE(untouched()) << b.what;
  }
  // g_idx: wrong size, a negative value, a value == groups (the index named).
  GptqLayer layer = with_g_idx.Layer();
  layer.g_idx = layer.g_idx.first(4 * 63);
  EXPECT_EQ(DequantGptq(layer, WeightOrientation::kOutIn, 0, 16, ElemType::kBf16, out).code(),
            StatusCode::kInvalidArgument);
  for (const int32_t value : {-1, 2}) {
    OwnedLayer o = with_g_idx;
    PutLe32(o.g_idx, 4 * 37, static_cast<uint32_t>(value));
    const Status status =
        DequantGptq(o.Layer(), WeightOrientation::kInOut, 0, 1, ElemType::kBf16, out);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(status.message().find("g_idx[37]"), std::string::npos) << status.message();
  }
  EXPECT_TRUE(untouched());
  // With a g_idx, group_size is not used and may be 0.
  OwnedLayer no_size = with_g_idx;
  no_size.group_size = 0;
  EXPECT_TRUE(
      DequantGptq(no_size.Layer(), WeightOrientation::kOutIn, 0, 16, ElemType::kBf16, out).ok());
  // Empty row ranges and exact sizes are fine.
  EXPECT_TRUE(DequantGptq(good.Layer(), WeightOrientation::kOutIn, 16, 16, ElemType::kF32, {}).ok());
  EXPECT_TRUE(DequantGptq(good.Layer(), WeightOrientation::kInOut, 0, 64, ElemType::kF32,
                          {out.data(), 64 * 16 * 4})
                  .ok());
}

AMN_INSTANTIATE_PER_TARGET(GptqTest);

}  // namespace
}  // namespace amn::test
