// The encoders (amn/quantize.h) on every supported target against their
// scalar references (kernels/ref/fp8_encode_ref.h, bnb_encode_ref.h): codes,
// absmax/SCB/scales and the QuantError sums byte for byte, over adversarial
// inputs (±0, F32/F16/BF16 subnormals, values exactly on the NF4/FP4 pivots
// and FP8 rounding midpoints and one ulp either side, huge values, all-equal
// and all-zero blocks, partial edge blocks and groups, odd element counts,
// misaligned input), every input type, and NaN/Inf refused at the same
// index as the reference. The probe proves which target ran.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "amn/quantize.h"
#include "kernels/bnb_encode_tables.h"
#include "kernels/bnb_layout.h"
#include "kernels/encode_common.h"
#include "kernels/ref/bnb_encode_ref.h"
#include "kernels/ref/fp8_encode_ref.h"
#include "kernels/ref/fp8_ref.h"
#include "tests/fixtures.h"
#include "tests/quant_fixture_files.h"
#include "tests/target_param.h"

namespace amn::test {
namespace {

float FromBits(uint32_t bits) { return std::bit_cast<float>(bits); }
uint32_t Bits(float f) { return std::bit_cast<uint32_t>(f); }

// F32 -> the input type's bits, by truncation (any finite pattern is a fine
// input; the point is that the same bytes reach both sides).
void AppendAs(ElemType type, float v, std::vector<uint8_t>& out) {
  uint32_t b = Bits(v);
  if (type == ElemType::kF32) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(b >> (8 * i)));
    return;
  }
  uint16_t h;
  if (type == ElemType::kBf16) {
    h = static_cast<uint16_t>(b >> 16);
  } else {
    // A crude F16 pattern from the value's magnitude class; keeps sign,
    // covers subnormals, normals and the largest finite.
    const uint32_t sign = (b >> 16) & 0x8000u;
    const int e = static_cast<int>((b >> 23) & 0xFF) - 127;
    uint32_t mag;
    if (!std::isfinite(v)) {
      mag = std::isnan(v) ? 0x7E00u : 0x7C00u;
    } else if (e < -24) {
      mag = 0;
    } else if (e < -14) {
      mag = (0x400u | ((b >> 13) & 0x3FFu)) >> (-14 - e);
    } else if (e > 15) {
      mag = 0x7BFFu;
    } else {
      mag = (static_cast<uint32_t>(e + 15) << 10) | ((b >> 13) & 0x3FFu);
    }
    h = static_cast<uint16_t>(sign | mag);
  }
  out.push_back(static_cast<uint8_t>(h));
  out.push_back(static_cast<uint8_t>(h >> 8));
}

// Adversarial values around `unit` (the block's absmax or the group's scale).
float Pick(std::mt19937& rng, float unit, bool fp8) {
  std::uniform_int_distribution<int> kind(0, 11);
  std::uniform_real_distribution<float> uni(-1.0f, 1.0f);
  const float s = (rng() & 1) ? 1.0f : -1.0f;
  switch (kind(rng)) {
    case 0: return 0.0f;
    case 1: return -0.0f;
    case 2: return s * FromBits(1 + rng() % 0x7FFFFFu);  // F32 subnormal
    case 3: return s * unit;                             // hits ±1 after scaling
    case 4: {
      if (fp8) {
        // A midpoint between two neighbouring E4M3 values, times the scale.
        const uint8_t c = static_cast<uint8_t>(rng() % 0x7E);
        const float a = FromBits(ref::E4m3ToF32Bits(c)), b = FromBits(ref::E4m3ToF32Bits(c + 1));
        return s * ((a + b) / 2) * unit;
      }
      const float p = (rng() & 1) ? bnb::kNf4Pivots[rng() % 15] : bnb::kFp4Pivots[rng() % 7];
      return (rng() & 1 ? p : -p) * unit;  // exactly on a pivot for unit 1
    }
    case 5: {
      const float p = bnb::kNf4Pivots[rng() % 15] * unit;
      return std::nextafter(p, (rng() & 1) ? 10.0f : -10.0f);
    }
    case 6: return s * 3.0e38f;
    case 7: return s * FromBits(0x00800000u);  // smallest F32 normal
    default: return uni(rng) * unit;
  }
}

struct Input {
  ElemType type;
  uint64_t rows, cols;
  std::vector<uint8_t> storage;  // leading `offset` bytes of padding
  size_t offset;
  FloatRows rows_view() const {
    const size_t bytes = rows * cols * ElemTypeBytes(type);
    return FloatRows{type,
                     {reinterpret_cast<const std::byte*>(storage.data() + offset), bytes},
                     rows,
                     cols};
  }
  const uint8_t* data() const { return storage.data() + offset; }
};

// rows x cols of adversarial values; every `unit`-sized run sometimes all
// equal or all zero.
Input MakeInput(std::mt19937& rng, ElemType type, uint64_t rows, uint64_t cols, uint64_t run,
                float unit, bool fp8) {
  Input in{type, rows, cols, {}, rng() % 3};
  in.storage.assign(in.offset, 0xEE);
  const uint64_t n = rows * cols;
  for (uint64_t i = 0; i < n;) {
    const uint64_t len = std::min(run, n - i);
    const int mode = static_cast<int>(rng() % 8);
    const float same = Pick(rng, unit, fp8);
    for (uint64_t k = 0; k < len; ++k, ++i) {
      const float v = mode == 0 ? 0.0f : mode == 1 ? same : Pick(rng, unit, fp8);
      AppendAs(type, v, in.storage);
    }
  }
  return in;
}

bool SameSums(const QuantError& e, const kernels::ErrorSums& s, uint64_t n) {
  const kernels::ErrorTotals t = kernels::ReduceErrors(s);
  return e.elements == n && Bits(0) == 0 && std::bit_cast<uint64_t>(e.sum_abs) ==
                                                std::bit_cast<uint64_t>(t.sum_abs) &&
         std::bit_cast<uint64_t>(e.max_abs) == std::bit_cast<uint64_t>(t.max_abs) &&
         std::bit_cast<uint64_t>(e.sum_sq_err) == std::bit_cast<uint64_t>(t.sum_sq_err) &&
         std::bit_cast<uint64_t>(e.sum_sq_ref) == std::bit_cast<uint64_t>(t.sum_sq_ref);
}

constexpr std::array kTypes = {ElemType::kBf16, ElemType::kF16, ElemType::kF32};

// ---- The checks, one per encoder -----------------------------------------
// Each also encodes once more without error sums (the C ABI's error NULL,
// which takes the kernels' loops without them) and wants the same bytes.

// Codes and error sums with the given scales, one per group.
testing::AssertionResult Fp8MatchesWithScales(const Input& in, uint64_t gr, uint64_t gc,
                                              bool e5m2, const std::vector<float>& scales) {
  const Fp8Format format = e5m2 ? Fp8Format::kE5m2 : Fp8Format::kE4m3;
  const uint64_t n = in.rows * in.cols;
  std::vector<std::byte> codes(n);
  std::vector<uint8_t> codes_ref(n);
  QuantError err;
  kernels::ErrorSums sums;
  const Status q = QuantizeFp8(in.rows_view(), gr, gc, format, scales, codes, &err);
  ref::QuantizeFp8Ref(in.data(), in.type, in.rows, in.cols, gr, gc, e5m2, scales.data(),
                      codes_ref.data(), &sums);
  if (!q.ok()) return testing::AssertionFailure() << q.ToString();
  for (uint64_t i = 0; i < n; ++i) {
    if (static_cast<uint8_t>(codes[i]) != codes_ref[i]) {
      return testing::AssertionFailure() << "code " << i << ": 0x" << std::hex
                                         << int{static_cast<uint8_t>(codes[i])} << " vs 0x"
                                         << int{codes_ref[i]};
    }
  }
  if (!SameSums(err, sums, n)) return testing::AssertionFailure() << "error sums differ";
  std::vector<std::byte> plain(n);
  if (!QuantizeFp8(in.rows_view(), gr, gc, format, scales, plain, nullptr).ok() || plain != codes) {
    return testing::AssertionFailure() << "codes without error sums differ";
  }
  return testing::AssertionSuccess();
}

// With the scales of Fp8ScaleFromAmax, after checking AbsMaxGrid.
testing::AssertionResult Fp8Matches(const Input& in, uint64_t gr, uint64_t gc, bool e5m2) {
  const Fp8Format format = e5m2 ? Fp8Format::kE5m2 : Fp8Format::kE4m3;
  const uint64_t grid = ((in.rows + gr - 1) / gr) * ((in.cols + gc - 1) / gc);
  std::vector<float> amax(grid), amax_ref(grid);
  const Status s = AbsMaxGrid(in.rows_view(), gr, gc, amax);
  const uint64_t bad_ref =
      ref::AbsMaxGridRef(in.data(), in.type, in.rows, in.cols, gr, gc, amax_ref.data());
  if (!s.ok()) return testing::AssertionFailure() << "AbsMaxGrid: " << s.ToString();
  if (bad_ref != kernels::kAllFinite) return testing::AssertionFailure() << "ref refused";
  if (std::memcmp(amax.data(), amax_ref.data(), 4 * grid) != 0) {
    return testing::AssertionFailure() << "amax differs";
  }
  std::vector<float> scales;
  for (float a : amax) scales.push_back(Fp8ScaleFromAmax(a, format));
  return Fp8MatchesWithScales(in, gr, gc, e5m2, scales);
}

testing::AssertionResult Bnb4Matches(const Input& in, uint64_t bs, bool fp4, bool given,
                                     std::mt19937& rng) {
  const uint64_t n = in.rows * in.cols;
  const uint64_t nb = (n + bs - 1) / bs;
  std::vector<float> absmax(nb), absmax_ref(nb);
  if (given) {
    for (uint64_t b = 0; b < nb; ++b) {
      const int k = static_cast<int>(rng() % 4);
      absmax[b] = k == 0 ? 0.0f : k == 1 ? 1.0f : std::fabs(Pick(rng, 2.0f, false));
      if (!std::isfinite(absmax[b])) absmax[b] = 1.0f;
    }
    absmax_ref = absmax;
  }
  std::vector<std::byte> packed((n + 1) / 2);
  std::vector<uint8_t> packed_ref((n + 1) / 2);
  QuantError err;
  kernels::ErrorSums sums;
  const Status s = QuantizeBnb4(in.rows_view(), bs, fp4 ? Bnb4Type::kFp4 : Bnb4Type::kNf4, given,
                                absmax, packed, &err);
  ref::QuantizeBnb4Ref(in.data(), in.type, n, bs, fp4, given, absmax_ref.data(),
                       packed_ref.data(), &sums);
  if (!s.ok()) return testing::AssertionFailure() << s.ToString();
  if (std::memcmp(absmax.data(), absmax_ref.data(), 4 * nb) != 0) {
    return testing::AssertionFailure() << "absmax differs";
  }
  if (std::memcmp(packed.data(), packed_ref.data(), packed.size()) != 0) {
    for (size_t k = 0; k < packed.size(); ++k) {
      if (static_cast<uint8_t>(packed[k]) != packed_ref[k]) {
        return testing::AssertionFailure() << "packed byte " << k << ": 0x" << std::hex
                                           << int{static_cast<uint8_t>(packed[k])} << " vs 0x"
                                           << int{packed_ref[k]};
      }
    }
  }
  if (!SameSums(err, sums, n)) return testing::AssertionFailure() << "error sums differ";
  std::vector<float> plain_absmax = given ? absmax_ref : std::vector<float>(nb);
  std::vector<std::byte> plain(packed.size());
  if (!QuantizeBnb4(in.rows_view(), bs, fp4 ? Bnb4Type::kFp4 : Bnb4Type::kNf4, given, plain_absmax,
                    plain, nullptr)
           .ok() ||
      plain != packed || std::memcmp(plain_absmax.data(), absmax.data(), 4 * nb) != 0) {
    return testing::AssertionFailure() << "output without error sums differs";
  }
  return testing::AssertionSuccess();
}

testing::AssertionResult Int8Matches(const Input& in, bool given, std::mt19937& rng) {
  const uint64_t n = in.rows * in.cols;
  std::vector<float> scb(in.rows), scb_ref(in.rows);
  if (given) {
    for (auto& v : scb) {
      v = (rng() % 4 == 0) ? 0.0f : std::fabs(Pick(rng, 1.0f, false));
      if (!std::isfinite(v)) v = 1.0f;
    }
    scb_ref = scb;
  }
  std::vector<int8_t> codes(n), codes_ref(n);
  QuantError err;
  kernels::ErrorSums sums;
  const Status s = QuantizeBnbInt8(in.rows_view(), given, scb, codes, &err);
  ref::QuantizeBnbInt8Ref(in.data(), in.type, in.rows, in.cols, given, scb_ref.data(),
                          codes_ref.data(), &sums);
  if (!s.ok()) return testing::AssertionFailure() << s.ToString();
  if (std::memcmp(scb.data(), scb_ref.data(), 4 * in.rows) != 0) {
    return testing::AssertionFailure() << "SCB differs";
  }
  if (codes != codes_ref) return testing::AssertionFailure() << "codes differ";
  if (!SameSums(err, sums, n)) return testing::AssertionFailure() << "error sums differ";
  std::vector<float> plain_scb = given ? scb_ref : std::vector<float>(in.rows);
  std::vector<int8_t> plain(n);
  if (!QuantizeBnbInt8(in.rows_view(), given, plain_scb, plain, nullptr).ok() || plain != codes ||
      std::memcmp(plain_scb.data(), scb.data(), 4 * in.rows) != 0) {
    return testing::AssertionFailure() << "output without error sums differs";
  }
  return testing::AssertionSuccess();
}

class QuantizeTest : public PerTarget {};

TEST_P(QuantizeTest, ProbeReportsForcedTarget) {
  EXPECT_EQ(TargetName(EncodeTarget()), TargetName(GetParam()));
}

// Shapes around vector and tile sizes, every type, both formats / types.
TEST_P(QuantizeTest, SweepMatchesReference) {
  std::mt19937 rng(1234);
  const std::vector<std::pair<uint64_t, uint64_t>> shapes = {
      {1, 1},  {1, 2},   {1, 3},  {1, 15},  {1, 16},  {1, 17},  {2, 31},  {3, 33},
      {1, 64}, {1, 255}, {1, 256}, {1, 257}, {2, 300}, {5, 129}, {130, 7}, {3, 1000},
      // Last partial 4-bit block a whole number of vector pairs (the
      // whole-tile path takes it too), and several tiles.
      {1, 96}, {3, 352}, {2, 4128}};
  for (const ElemType type : kTypes) {
    for (const auto& [rows, cols] : shapes) {
      SCOPED_TRACE(testing::Message() << ElemTypeName(type) << " " << rows << "x" << cols);
      for (const bool e5m2 : {false, true}) {
        const float unit = e5m2 ? 1.0f : 0.5f;
        const Input in = MakeInput(rng, type, rows, cols, 16, unit, true);
        EXPECT_TRUE(Fp8Matches(in, rows, cols, e5m2));  // per tensor
        EXPECT_TRUE(Fp8Matches(in, 1, cols, e5m2));     // per channel
        EXPECT_TRUE(Fp8Matches(in, 2, 5, e5m2));        // partial edge groups
        EXPECT_TRUE(Fp8Matches(in, 128, 128, e5m2));
      }
      for (const uint64_t bs : {2u, 6u, 16u, 32u, 64u, 128u, 256u, 300u}) {
        const Input in = MakeInput(rng, type, rows, cols, bs, 1.0f, false);
        for (const bool fp4 : {false, true}) {
          EXPECT_TRUE(Bnb4Matches(in, bs, fp4, false, rng)) << "bs " << bs << " fp4 " << fp4;
          EXPECT_TRUE(Bnb4Matches(in, bs, fp4, true, rng)) << "bs " << bs << " fp4 " << fp4;
        }
      }
      const Input in = MakeInput(rng, type, rows, cols, cols, 1.0f, false);
      EXPECT_TRUE(Int8Matches(in, false, rng));
      EXPECT_TRUE(Int8Matches(in, true, rng));
    }
  }
}

// Groups of subnormals so small that amax / max_finite underflows: the
// scale is the smallest subnormal, not 0 (which QuantizeFp8 refuses), and
// every target still writes the reference's codes. Found by the property
// below with one-element groups.
TEST_P(QuantizeTest, Fp8TinySubnormalGroupsGetTheSmallestScale) {
  const float tiny = std::bit_cast<float>(uint32_t{0x00010000});  // BF16 0x0001, 2^-133
  EXPECT_EQ(Bits(Fp8ScaleFromAmax(tiny, Fp8Format::kE5m2)), 1u);   // 2^-149
  EXPECT_EQ(Bits(Fp8ScaleFromAmax(tiny, Fp8Format::kE4m3)), Bits(tiny / 448.0f));
  for (const ElemType type : kTypes) {
    Input in{type, 2, 3, {}, 1};
    in.storage.assign(in.offset, 0xEE);
    for (const float v : {tiny, -tiny, 0.0f, 3 * tiny, -0.0f, 1.0f}) AppendAs(type, v, in.storage);
    for (const bool e5m2 : {false, true}) {
      EXPECT_TRUE(Fp8Matches(in, 1, 1, e5m2)) << ElemTypeName(type) << " e5m2 " << e5m2;
      EXPECT_TRUE(Fp8Matches(in, 1, 2, e5m2)) << ElemTypeName(type) << " e5m2 " << e5m2;
    }
  }
}

// ---- x / scale on and next to every FP8 rounding midpoint ---------------
// Where a quotient computed other than by one IEEE division (x * (1 / scale),
// say) would round differently: these put x / scale on, and a few ulps
// either side of, every rounding midpoint, one such lane per vector (the
// rest 0), so a per-vector fallback taken for another lane cannot hide one.
// A product path with a midpoint filter, which these caught when planted
// wrong, is in performance/encoders.md ("The FP8 division", 2026-11-27).

constexpr uint64_t kMidpointCols = 16;

// Every midpoint between neighbouring FP8 values up to max_finite, > 0.
std::vector<float> Fp8Midpoints(bool e5m2) {
  const uint8_t top = e5m2 ? 0x7B : 0x7E;  // max_finite's code
  std::vector<float> mids;
  for (uint8_t c = 0; c < top; ++c) {
    const auto value = [e5m2](uint8_t code) {
      return FromBits(e5m2 ? ref::E5m2ToF32Bits(code) : ref::E4m3ToF32Bits(code));
    };
    mids.push_back((value(c) + value(static_cast<uint8_t>(c + 1))) / 2);  // exact
  }
  return mids;
}

// Rows of kMidpointCols elements, each with `x` at a random lane and 0
// elsewhere, and one scale per row.
struct MidpointRows {
  Input in;
  std::vector<float> scales;
  void Add(std::mt19937& rng, float x, float scale) {
    const uint64_t lane = rng() % kMidpointCols;
    for (uint64_t k = 0; k < kMidpointCols; ++k) AppendAs(in.type, k == lane ? x : 0.0f, in.storage);
    scales.push_back(scale);
    ++in.rows;
  }
  testing::AssertionResult Matches(bool e5m2) const {
    return Fp8MatchesWithScales(in, 1, kMidpointCols, e5m2, scales);
  }
};

// The input type's value nearest below or at v (BF16: truncated).
float AsType(ElemType type, float v) {
  return type == ElemType::kBf16 ? FromBits(Bits(v) & 0xFFFF0000u) : v;
}

// x random (BF16 or F32 values, both signs, 2^-30..2^30), scale = |x| / m
// and its neighbours up to 3 ulps away: x / scale on or next to +-m.
TEST_P(QuantizeTest, Fp8ScalesPuttingXOnMidpointsMatchReference) {
  std::mt19937 rng(77);
  for (const ElemType type : {ElemType::kBf16, ElemType::kF32}) {
    for (const bool e5m2 : {false, true}) {
      MidpointRows rows{{type, 0, kMidpointCols, {}, 1}, {}};
      rows.in.storage.assign(1, 0xEE);
      for (const float m : Fp8Midpoints(e5m2)) {
        for (int trial = 0; trial < 4; ++trial) {
          const int e = static_cast<int>(rng() % 61) - 30;
          const float mag = AsType(type, std::ldexp(1.0f + (rng() % 0x800000u) * 0x1p-23f, e));
          const float x = (rng() & 1) ? mag : -mag;
          float scale = mag / m;
          for (int k = 0; k < 3; ++k) scale = std::nextafter(scale, 0.0f);
          for (int k = -3; k <= 3; ++k, scale = std::nextafter(scale, 1e30f)) {
            rows.Add(rng, x, scale);
          }
        }
      }
      EXPECT_TRUE(rows.Matches(e5m2)) << ElemTypeName(type) << " e5m2 " << e5m2;
    }
  }
}

// Fixed scales (powers of two, 3, 1/3, 7, 1/7, 0.1), x = m * scale in the
// input type and its neighbours up to 3 ulps away.
TEST_P(QuantizeTest, Fp8XOnMidpointsTimesFixedScalesMatchReference) {
  std::mt19937 rng(78);
  for (const ElemType type : {ElemType::kBf16, ElemType::kF32}) {
    const uint32_t step = type == ElemType::kBf16 ? 0x10000u : 1u;  // one ulp, in F32 bits
    for (const bool e5m2 : {false, true}) {
      MidpointRows rows{{type, 0, kMidpointCols, {}, 2}, {}};
      rows.in.storage.assign(2, 0xEE);
      for (const float scale : {1.0f, 0x1p-5f, 0x1p7f, 3.0f, 1.0f / 3, 7.0f, 1.0f / 7, 0.1f}) {
        for (const float m : Fp8Midpoints(e5m2)) {
          const uint32_t mid = Bits(AsType(type, m * scale));
          for (int k = -3; k <= 3; ++k) {
            const float x = FromBits(mid + static_cast<uint32_t>(k) * step);
            rows.Add(rng, (rng() & 1) ? x : -x, scale);
          }
        }
      }
      EXPECT_TRUE(rows.Matches(e5m2)) << ElemTypeName(type) << " e5m2 " << e5m2;
    }
  }
}

// Scales whose reciprocal is not a normal F32 (below 2^-126: 1 / scale
// overflows or is near it; above 2^126: it is subnormal), the edges of that
// range, and values that clamp.
TEST_P(QuantizeTest, Fp8TinyAndHugeScalesMatchReference) {
  std::mt19937 rng(79);
  const float kMax = std::numeric_limits<float>::max();
  const std::vector<float> scales = {
      FromBits(1),          0x1p-140f,       3 * 0x1p-135f,     0x1p-127f,
      FromBits(0x7FFFFFu),  0x1p-126f,       FromBits(0x800001u), 0x1p-125f,
      0x1p125f,             0x1p126f,        FromBits(0x7E800001u), 0x1p127f,
      3e38f,                kMax};
  for (const ElemType type : {ElemType::kBf16, ElemType::kF32}) {
    for (const bool e5m2 : {false, true}) {
      MidpointRows rows{{type, 0, kMidpointCols, {}, 0}, {}};
      for (const float scale : scales) {
        for (const float m : Fp8Midpoints(e5m2)) {
          const float mid = AsType(type, m * scale);
          if (!std::isfinite(mid)) continue;
          for (const float x : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, kMax)}) {
            rows.Add(rng, AsType(type, (rng() & 1) ? x : -x), scale);
          }
        }
        for (const float x : {kMax, 1e30f, 1.0f, 0x1p-126f, FromBits(1)}) {
          rows.Add(rng, AsType(type, (rng() & 1) ? x : -x), scale);
        }
      }
      EXPECT_TRUE(rows.Matches(e5m2)) << ElemTypeName(type) << " e5m2 " << e5m2;
    }
  }
}

TEST_P(QuantizeTest, PropertyMatchesReference) {
  const bool ok = rc::check("every encoder matches its reference", [] {
    std::mt19937 rng(*rc::gen::arbitrary<uint32_t>());
    const ElemType type = *rc::gen::elementOf(kTypes);
    const uint64_t rows = *rc::gen::inRange<uint64_t>(1, 9);
    const uint64_t cols = *rc::gen::inRange<uint64_t>(1, 700);
    const uint64_t gr = *rc::gen::inRange<uint64_t>(1, rows + 1);
    const uint64_t gc = *rc::gen::inRange<uint64_t>(1, cols + 1);
    const uint64_t bs = 2 * *rc::gen::inRange<uint64_t>(1, 200);
    const bool flag = *rc::gen::arbitrary<bool>();
    const bool given = *rc::gen::arbitrary<bool>();
    const Input fp8 = MakeInput(rng, type, rows, cols, gc, flag ? 1.0f : 0.25f, true);
    RC_ASSERT(Fp8Matches(fp8, gr, gc, flag));
    const Input bnb = MakeInput(rng, type, rows, cols, bs, 1.0f, false);
    RC_ASSERT(Bnb4Matches(bnb, bs, flag, given, rng));
    RC_ASSERT(Int8Matches(bnb, given, rng));
  });
  EXPECT_TRUE(ok);
}

// Every finite BF16 through every encoder on this target: FP8 at scales
// that put the values on and around the rounding midpoints and subnormals,
// NF4/FP4 with absmax 1 and 0.75 given (every pivot neighbourhood at BF16
// resolution), INT8 with SCB given.
TEST_P(QuantizeTest, EveryBf16MatchesReference) {
  std::vector<uint8_t> bytes;
  for (uint32_t h = 0; h < 0x10000; ++h) {
    if ((h & 0x7F80u) == 0x7F80u) continue;
    bytes.push_back(static_cast<uint8_t>(h));
    bytes.push_back(static_cast<uint8_t>(h >> 8));
  }
  const uint64_t n = bytes.size() / 2;
  Input in{ElemType::kBf16, 1, n, bytes, 0};
  for (const bool e5m2 : {false, true}) {
    // The last ones: reciprocals with rounding error, the ends of the range
    // with a normal 1 / scale and beyond, and x / scale = x * 1.0625 / 1.5
    // (1.0625 an E4M3 midpoint) and x * 0.6875 / 3 (one of E5M2).
    for (const float scale :
         {1.0f, 0.5f, 3.0f, 1.0f / 448, 1e-30f, 7.5e4f, 1.0f / 3, 1.0f / 7, 0.1f, 1.1f,
          std::nextafter(1.0f, 2.0f), std::nextafter(1.0f, 0.0f), 0x1p-126f, 1e-39f, 0x1p126f,
          3e38f, 1.5f / 1.0625f, 3.0f / 0.6875f}) {
      std::vector<std::byte> codes(n);
      std::vector<uint8_t> codes_ref(n);
      const std::vector<float> scales = {scale};
      ASSERT_TRUE(QuantizeFp8(in.rows_view(), 1, n, e5m2 ? Fp8Format::kE5m2 : Fp8Format::kE4m3,
                              scales, codes, nullptr)
                      .ok());
      ref::QuantizeFp8Ref(in.data(), in.type, 1, n, 1, n, e5m2, scales.data(), codes_ref.data(),
                          nullptr);
      EXPECT_EQ(std::memcmp(codes.data(), codes_ref.data(), n), 0) << e5m2 << " " << scale;
    }
  }
  for (const bool fp4 : {false, true}) {
    for (const float a : {1.0f, 0.75f}) {
      std::vector<float> absmax((n + 63) / 64, a), absmax_ref = absmax;
      std::vector<std::byte> packed((n + 1) / 2);
      std::vector<uint8_t> packed_ref((n + 1) / 2);
      ASSERT_TRUE(QuantizeBnb4(in.rows_view(), 64, fp4 ? Bnb4Type::kFp4 : Bnb4Type::kNf4, true,
                               absmax, packed, nullptr)
                      .ok());
      ref::QuantizeBnb4Ref(in.data(), in.type, n, 64, fp4, true, absmax_ref.data(),
                           packed_ref.data(), nullptr);
      EXPECT_EQ(std::memcmp(packed.data(), packed_ref.data(), packed.size()), 0) << fp4 << " " << a;
    }
  }
  std::vector<float> scb = {127.0f}, scb_ref = scb;
  std::vector<int8_t> i8(n), i8_ref(n);
  ASSERT_TRUE(QuantizeBnbInt8(in.rows_view(), true, scb, i8, nullptr).ok());
  ref::QuantizeBnbInt8Ref(in.data(), in.type, 1, n, true, scb_ref.data(), i8_ref.data(), nullptr);
  EXPECT_EQ(i8, i8_ref);
}

// INT8 rows whose SCB is their own max |x|, one per positive finite BF16
// max h: h, -h, then the 62 BF16 patterns just below h, signs alternating.
// x * (127 / SCB) is within rounding of ±127 at the max, which the kernels
// round without a clamp (Int8Scale::kWithin); with errors and without.
TEST_P(QuantizeTest, Int8RowsAtTheirMaxMatchReference) {
  Input in{ElemType::kBf16, 0, 64, {}, 0};
  for (uint32_t h = 1; h < 0x7F80u; ++h, ++in.rows) {
    for (uint32_t k = 0; k < 64; ++k) {
      const uint32_t below = k < 2 ? h : (h > k - 1 ? h - (k - 1) : 0);
      const uint32_t bits = below | ((k % 2) << 15);
      in.storage.push_back(static_cast<uint8_t>(bits));
      in.storage.push_back(static_cast<uint8_t>(bits >> 8));
    }
  }
  std::mt19937 rng(7);
  EXPECT_TRUE(Int8Matches(in, false, rng));
}

// A non-finite element is refused at its own index, whatever the tile or
// block it sits in, as the reference reports it.
TEST_P(QuantizeTest, NonFiniteRefusedAtReferenceIndex) {
  std::mt19937 rng(99);
  for (const ElemType type : kTypes) {
    const uint64_t rows = 3, cols = 600;
    for (const uint64_t at : {0u, 1u, 17u, 255u, 256u, 599u, 600u, 1799u}) {
      Input in = MakeInput(rng, type, rows, cols, 64, 1.0f, false);
      const size_t eb = ElemTypeBytes(type);
      std::vector<uint8_t> bad;
      AppendAs(type, (at % 2) ? std::numeric_limits<float>::infinity()
                              : std::numeric_limits<float>::quiet_NaN(),
               bad);
      std::memcpy(in.storage.data() + in.offset + at * eb, bad.data(), eb);
      const std::string want = "element " + std::to_string(at) + " ";
      std::vector<float> amax(2 * 5);
      const Status a = AbsMaxGrid(in.rows_view(), 2, 128, amax);
      EXPECT_NE(a.ToString().find(want), std::string::npos) << a.ToString();
      std::vector<float> scales(10, 1.0f);
      std::vector<std::byte> codes(rows * cols);
      const Status f = QuantizeFp8(in.rows_view(), 2, 128, Fp8Format::kE4m3, scales, codes, nullptr);
      EXPECT_NE(f.ToString().find(want), std::string::npos) << f.ToString();
      std::vector<float> absmax((rows * cols + 63) / 64);
      std::vector<std::byte> packed(rows * cols / 2);
      for (const bool given : {false, true}) {
        const Status b =
            QuantizeBnb4(in.rows_view(), 64, Bnb4Type::kNf4, given, absmax, packed, nullptr);
        EXPECT_NE(b.ToString().find(want), std::string::npos) << b.ToString();
        std::vector<float> scb(rows, 1.0f);
        std::vector<int8_t> i8(rows * cols);
        const Status c = QuantizeBnbInt8(in.rows_view(), given, scb, i8, nullptr);
        EXPECT_NE(c.ToString().find(want), std::string::npos) << c.ToString();
      }
    }
  }
}

// The bnb_reference fixtures re-encode byte for byte on this target (as
// quantize_ref_test.cc checks the reference): plain 4-bit with absmax
// recomputed, double quant with the recovered absmax given, INT8 with SCB
// given.
TEST_P(QuantizeTest, BnbFixturesReencodeByteForByte) {
  const auto files = FixtureFiles("bnb_reference", ".bin");
  AMN_SKIP_WITHOUT_FIXTURES(files, "bnb_reference");
  for (const auto& path : files) {
    SCOPED_TRACE(path.string());
    const std::optional<BnbFixture> f = ReadBnbFixture(path);
    ASSERT_TRUE(f.has_value());
    const uint64_t n = f->expected.size() / 2;
    Input in{ElemType::kBf16, f->format == 1 ? f->rows : 1, f->format == 1 ? f->cols : n,
             f->expected, 0};
    if (f->format == 1) {
      std::vector<float> scb(f->rows);
      std::memcpy(scb.data(), f->scb.data(), 4 * scb.size());
      std::vector<int8_t> codes(n);
      ASSERT_TRUE(QuantizeBnbInt8(in.rows_view(), true, scb, codes, nullptr).ok());
      EXPECT_EQ(std::memcmp(codes.data(), f->weight.data(), n), 0);
      continue;
    }
    const bool fp4 = LoadLe32(&f->quant_map[4]) != Bits(bnb::kNf4Codebook[1]);
    const uint64_t nb = (n + f->block_size - 1) / f->block_size;
    std::vector<float> absmax(nb);
    if (f->format == 2) {
      bnb::Bnb4View view;
      view.absmax = f->absmax.data();
      view.double_quant = true;
      view.nested_absmax = f->nested_absmax.data();
      view.nested_quant_map = f->nested_quant_map.data();
      view.nested_block_size = 256;
      view.nested_offset_bits = Bits(f->nested_offset);
      for (uint64_t b = 0; b < nb; ++b) absmax[b] = FromBits(bnb::AbsmaxBits(view, b));
    }
    std::vector<std::byte> packed((n + 1) / 2);
    ASSERT_TRUE(QuantizeBnb4(in.rows_view(), f->block_size, fp4 ? Bnb4Type::kFp4 : Bnb4Type::kNf4,
                             f->format == 2, absmax, packed, nullptr)
                    .ok());
    EXPECT_EQ(std::memcmp(packed.data(), f->packed.data(), packed.size()), 0);
    if (f->format == 0) {
      EXPECT_EQ(std::memcmp(absmax.data(), f->absmax.data(), 4 * nb), 0);
    }
  }
}

// The fp8_reference fixtures re-encode byte for byte on this target with
// their own scales (as quantize_ref_test.cc checks the reference).
TEST_P(QuantizeTest, Fp8FixturesReencodeByteForByte) {
  const auto files = FixtureFiles("fp8_reference", ".bin");
  AMN_SKIP_WITHOUT_FIXTURES(files, "fp8_reference");
  for (const auto& path : files) {
    SCOPED_TRACE(path.string());
    const auto f = ReadFp8Fixture(path);
    ASSERT_TRUE(f) << "malformed fixture";
    const Input in{ElemType::kBf16, f->rows, f->cols, f->expected, 0};
    std::vector<std::byte> codes(f->weight.size());
    ASSERT_TRUE(QuantizeFp8(in.rows_view(), f->group_rows(), f->group_cols(), Fp8Format::kE4m3,
                            Fp8FixtureScales(*f), codes, nullptr)
                    .ok());
    EXPECT_EQ(std::memcmp(codes.data(), f->weight.data(), f->weight.size()), 0);
  }
}

AMN_INSTANTIATE_PER_TARGET(QuantizeTest);

}  // namespace
}  // namespace amn::test
