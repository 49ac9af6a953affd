// Scaled FP8 dequantization (amn::DequantFp8Rows) on every supported target
// against the scalar reference, bit for bit: all 256 codes of both formats
// into every output type under special scales (NaN, Inf, zero, negative,
// overflowing, subnormal-producing), block widths that do and do not divide
// the row, misaligned buffers with canaries, a RapidCheck property, the
// registry entries, and the checked API's errors. The reference itself is
// anchored on double-precision products and on the documented NaN rule.
#include "amn/fp8_dequant.h"

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "amn/kernel_registry.h"
#include "kernels/ref/float_convert_ref.h"
#include "kernels/ref/fp8_dequant_ref.h"
#include "kernels/ref/fp8_ref.h"
#include "tests/kernel_check.h"
#include "tests/target_param.h"

namespace amn::test {
namespace {

constexpr std::array kCodeTypes = {ElemType::kF8E4m3, ElemType::kF8E5m2};
constexpr std::array kOutTypes = {ElemType::kF32, ElemType::kBf16, ElemType::kF16};

float FromBits(uint32_t bits) { return std::bit_cast<float>(bits); }

// Scales that reach every class of result: exact powers of two, inexact
// values, products below the F16/BF16 normal range and inside F32's
// subnormals, products past F16 and BF16 (and F32) to Inf, negatives, both
// zeros, both infinities, quiet and signalling NaNs of either sign; the
// largest scale whose E4M3 pre-scaling by 2^8 (the F16C route,
// kernels/fp8_dequant-inl.h) stays finite, and the smallest that overflows.
std::vector<float> SpecialScales() {
  return {1.0f,
          0.5f,
          0x1p-7f,
          1.5f,
          3.0e-3f,
          1.0f / 3,
          0.1f,
          448.0f,
          65504.0f,
          1e30f,
          std::numeric_limits<float>::max(),
          0x1.fffffep119f,
          0x1p120f,
          -0x1p120f,
          0x1p-20f,
          0x1p-30f,
          1e-38f,
          std::numeric_limits<float>::min(),
          std::numeric_limits<float>::denorm_min(),
          -1.0f,
          -0.75f,
          -3.0e-3f,
          -1e38f,
          0.0f,
          -0.0f,
          std::numeric_limits<float>::infinity(),
          -std::numeric_limits<float>::infinity(),
          FromBits(0x7FC00000u),
          FromBits(0xFFC12345u),
          FromBits(0x7F800001u),
          FromBits(0xFF800123u)};
}

std::vector<uint8_t> AllCodes() {
  std::vector<uint8_t> codes(256);
  for (size_t i = 0; i < codes.size(); ++i) codes[i] = static_cast<uint8_t>(i);
  return codes;
}

void Reference(ElemType code_type, ElemType out_type, const uint8_t* codes, size_t rows,
               size_t cols, const float* scales, size_t block_cols, void* out) {
  const bool e4m3 = code_type == ElemType::kF8E4m3;
  auto* out16 = static_cast<uint16_t*>(out);
  switch (out_type) {
    case ElemType::kF32:
      (e4m3 ? ref::DequantE4m3ToF32 : ref::DequantE5m2ToF32)(codes, rows, cols, scales, block_cols,
                                                             static_cast<float*>(out));
      break;
    case ElemType::kBf16:
      (e4m3 ? ref::DequantE4m3ToBf16 : ref::DequantE5m2ToBf16)(codes, rows, cols, scales,
                                                               block_cols, out16);
      break;
    default:
      (e4m3 ? ref::DequantE4m3ToF16 : ref::DequantE5m2ToF16)(codes, rows, cols, scales, block_cols,
                                                             out16);
      break;
  }
}

using Placed = PlacedBuffer;

struct Case {
  ElemType code_type;
  ElemType out_type;
  size_t cols;
  size_t block_cols;
  size_t code_offset = 0;   // bytes past a 64-byte boundary
  size_t scale_offset = 0;  // floats past a 64-byte boundary
  size_t out_offset = 0;    // bytes past a 64-byte boundary, any value
};

std::string Describe(const Case& c, size_t n_codes) {
  return std::string(ElemTypeName(c.code_type)) + "->" + std::string(ElemTypeName(c.out_type)) +
         " codes=" + std::to_string(n_codes) + " cols=" + std::to_string(c.cols) +
         " block_cols=" + std::to_string(c.block_cols) +
         " offsets=" + std::to_string(c.code_offset) + "/" + std::to_string(c.scale_offset) + "/" +
         std::to_string(c.out_offset);
}

// Runs DequantFp8Rows on placed copies of the inputs and compares its output
// bytes with the reference's; checks the canary and that inputs are intact.
testing::AssertionResult DequantMatchesReference(const Case& c, const std::vector<uint8_t>& codes,
                                                 const std::vector<float>& scales) {
  const size_t rows = codes.size() / c.cols;
  const size_t out_size = ElemTypeBytes(c.out_type);
  const size_t out_bytes = codes.size() * out_size;
  std::vector<uint8_t> expected(out_bytes + 4);  // + 4: a valid pointer when empty
  Reference(c.code_type, c.out_type, codes.data(), rows, c.cols, scales.data(), c.block_cols,
            expected.data());

  Placed code_buf(codes.size(), c.code_offset, 0);
  if (!codes.empty()) std::memcpy(code_buf.data(), codes.data(), codes.size());
  const size_t scale_bytes = scales.size() * sizeof(float);
  Placed scale_buf(scale_bytes, c.scale_offset * sizeof(float), 0);
  std::memcpy(scale_buf.data(), scales.data(), scale_bytes);
  Placed out_buf(out_bytes, c.out_offset, 0x5A);

  const Status status = DequantFp8Rows(
      c.code_type, {code_buf.data(), codes.size()}, c.cols,
      {reinterpret_cast<const float*>(scale_buf.data()), scales.size()}, c.block_cols, c.out_type,
      {reinterpret_cast<std::byte*>(out_buf.data()), out_bytes});
  const std::string what = Describe(c, codes.size());
  if (!status.ok()) return testing::AssertionFailure() << what << ": " << status.ToString();
  if (!out_buf.CanaryIntact()) return testing::AssertionFailure() << what << ": wrote past out";
  if (!codes.empty() && std::memcmp(code_buf.data(), codes.data(), codes.size()) != 0) {
    return testing::AssertionFailure() << what << ": modified its codes";
  }
  for (size_t i = 0; i < codes.size(); ++i) {
    const uint8_t* got = out_buf.data() + i * out_size;
    const uint8_t* want = expected.data() + i * out_size;
    if (std::memcmp(got, want, out_size) != 0) {
      uint32_t got_bits = 0, want_bits = 0;
      std::memcpy(&got_bits, got, out_size);
      std::memcpy(&want_bits, want, out_size);
      const size_t col = i % c.cols;
      return testing::AssertionFailure()
             << what << ": element " << i << " (code 0x" << std::hex << int{codes[i]}
             << ", scale bits 0x" << std::bit_cast<uint32_t>(scales[col / c.block_cols])
             << ") gave 0x" << got_bits << ", reference 0x" << want_bits;
    }
  }
  return testing::AssertionSuccess();
}


// n scales cycling through SpecialScales() from `start`.
std::vector<float> CyclingScales(size_t n, size_t start) {
  const std::vector<float> special = SpecialScales();
  std::vector<float> scales(n);
  for (size_t i = 0; i < n; ++i) scales[i] = special[(start + i) % special.size()];
  return scales;
}

// ---- The reference itself -----------------------------------------------

// Finite products are the IEEE single-precision product: computed exactly
// in double (24 + 24 significant bits fit in 53), then rounded once.
TEST(Fp8DequantReference, FiniteProductsAreCorrectlyRounded) {
  for (const float scale : SpecialScales()) {
    for (int code = 0; code < 256; ++code) {
      for (const bool e4m3 : {true, false}) {
        const uint32_t value_bits = e4m3 ? ref::E4m3ToF32Bits(static_cast<uint8_t>(code))
                                         : ref::E5m2ToF32Bits(static_cast<uint8_t>(code));
        const float value = FromBits(value_bits);
        const double exact = static_cast<double>(value) * static_cast<double>(scale);
        if (exact != exact) continue;  // NaN: the rule below
        const float want = static_cast<float>(exact);
        EXPECT_EQ(ref::ScaledF32Bits(value_bits, scale), std::bit_cast<uint32_t>(want))
            << "code " << code << " e4m3 " << e4m3 << " scale " << scale;
      }
    }
  }
}

TEST(Fp8DequantReference, NanRule) {
  const uint32_t e4m3_nan = ref::E4m3ToF32Bits(0x7F);
  const uint32_t neg_e5m2_nan = ref::E5m2ToF32Bits(0xFE);
  const uint32_t e5m2_inf = ref::E5m2ToF32Bits(0x7C);
  const uint32_t one = ref::E4m3ToF32Bits(0x38);
  // A NaN code keeps its NaN, even against a NaN or negative scale.
  EXPECT_EQ(ref::ScaledF32Bits(e4m3_nan, 2.0f), e4m3_nan);
  EXPECT_EQ(ref::ScaledF32Bits(e4m3_nan, -2.0f), e4m3_nan);
  EXPECT_EQ(ref::ScaledF32Bits(e4m3_nan, FromBits(0xFF800123u)), e4m3_nan);
  EXPECT_EQ(ref::ScaledF32Bits(neg_e5m2_nan, FromBits(0x7FC00000u)), neg_e5m2_nan);
  // Else a NaN scale, quieted, sign and payload kept.
  EXPECT_EQ(ref::ScaledF32Bits(one, FromBits(0x7F800001u)), 0x7FC00001u);
  EXPECT_EQ(ref::ScaledF32Bits(one, FromBits(0xFFC12345u)), 0xFFC12345u);
  EXPECT_EQ(ref::ScaledF32Bits(e5m2_inf, FromBits(0xFF800123u)), 0xFFC00123u);
  // Else 0 * Inf: x86's default NaN.
  EXPECT_EQ(ref::ScaledF32Bits(e5m2_inf, 0.0f), 0xFFC00000u);
  EXPECT_EQ(ref::ScaledF32Bits(0u, std::numeric_limits<float>::infinity()), 0xFFC00000u);
  EXPECT_EQ(ref::ScaledF32Bits(0x80000000u, -std::numeric_limits<float>::infinity()), 0xFFC00000u);
  // Infinities multiply as IEEE says.
  EXPECT_EQ(ref::ScaledF32Bits(e5m2_inf, -0.5f), 0xFF800000u);
  EXPECT_EQ(ref::ScaledF32Bits(one, std::numeric_limits<float>::infinity()), 0x7F800000u);
}

// ---- Every target against the reference ---------------------------------

class Fp8DequantTest : public PerTarget {};

TEST_P(Fp8DequantTest, ProbeReportsForcedTarget) {
  EXPECT_EQ(TargetName(Fp8DequantTarget()), TargetName(GetParam()));
}

// All 256 codes under each special scale: one row, one 256-column block per
// scale (vector-aligned blocks), and again with 257-column blocks so every
// block boundary falls inside a vector.
TEST_P(Fp8DequantTest, EveryCodeEveryScale) {
  ASSERT_EQ(Fp8DequantTarget(), GetParam());
  const std::vector<float> scales = SpecialScales();
  std::vector<uint8_t> codes;
  for (size_t s = 0; s < scales.size(); ++s) {
    for (int code = 0; code < 256; ++code) codes.push_back(static_cast<uint8_t>(code + s));
  }
  for (ElemType code_type : kCodeTypes) {
    for (ElemType out_type : kOutTypes) {
      EXPECT_TRUE(DequantMatchesReference({code_type, out_type, codes.size(), 256}, codes, scales));
      std::vector<uint8_t> shifted = codes;
      shifted.resize(257 * (scales.size() - 1));
      EXPECT_TRUE(
          DequantMatchesReference({code_type, out_type, shifted.size(), 257}, shifted, scales));
    }
  }
}

// Per-tensor, per-channel style calls: all 256 codes times each scale with
// block_cols == cols, over several rows (one run across rows).
TEST_P(Fp8DequantTest, OneScalePerCall) {
  const std::vector<uint8_t> codes = AllCodes();
  for (ElemType code_type : kCodeTypes) {
    for (ElemType out_type : kOutTypes) {
      for (const float scale : SpecialScales()) {
        EXPECT_TRUE(DequantMatchesReference({code_type, out_type, 32, 32}, codes, {scale}));
        EXPECT_TRUE(DequantMatchesReference({code_type, out_type, 256, 256}, codes, {scale}));
      }
    }
  }
}

// Block widths {1, 3, 16, 17, 128, cols, > cols} and row lengths that are not
// multiples of any vector width, over several rows, with misaligned codes,
// scales and outputs (odd byte addresses included).
TEST_P(Fp8DequantTest, BlocksRowsAndAlignments) {
  uint32_t seed = 1;
  for (size_t cols : {1, 2, 7, 31, 33, 100, 129, 257, 300}) {
    for (size_t rows : {1, 2, 5}) {
      const std::vector<uint8_t> codes = PseudoRandomBytes(rows * cols, seed++);
      for (size_t block_cols : {size_t{1}, size_t{3}, size_t{16}, size_t{17}, size_t{128}, cols,
                                cols + 5, std::numeric_limits<size_t>::max()}) {
        const size_t n_scales = (cols - 1) / block_cols + 1;
        const std::vector<float> scales = CyclingScales(n_scales, seed);
        for (ElemType code_type : kCodeTypes) {
          for (ElemType out_type : kOutTypes) {
            const size_t offset = seed % 8;
            EXPECT_TRUE(DequantMatchesReference(
                {code_type, out_type, cols, block_cols, offset, offset % 3, (offset * 5) % 64},
                codes, scales));
          }
        }
      }
    }
  }
}

// Long rows in 128-column blocks (the DeepSeek layout), finite weights:
// exercises the broadcast fast path over many whole vectors.
TEST_P(Fp8DequantTest, LongRowsIn128Blocks) {
  const size_t cols = 4096 + 13;
  const std::vector<uint8_t> codes = PseudoRandomBytes(3 * cols, 99);
  const std::vector<float> scales = CyclingScales((cols + 127) / 128, 3);
  for (ElemType code_type : kCodeTypes) {
    for (ElemType out_type : kOutTypes) {
      EXPECT_TRUE(
          DequantMatchesReference({code_type, out_type, cols, 128, 0, 0, 0}, codes, scales));
      EXPECT_TRUE(
          DequantMatchesReference({code_type, out_type, cols, 128, 3, 1, 7}, codes, scales));
    }
  }
}

// Calls whose scales each cover from a few hundred to tens of thousands of
// elements, on both sides of the size from which SSE4/SSSE3 build one
// 256-entry table per scale and look the outputs up (fp8_dequant-inl.h,
// kFp8LookupMinElems): per-tensor (one scale over rows x cols), per-channel
// (one row, one scale), and 128-column blocks over several rows with a
// partial last block; every special scale, every code, misaligned buffers.
TEST_P(Fp8DequantTest, ManyElementsPerScale) {
  const std::vector<float> special = SpecialScales();
  std::vector<uint8_t> codes(16 * 1025);
  for (size_t i = 0; i < codes.size(); ++i) codes[i] = static_cast<uint8_t>(i * 97 + i / 256);
  const auto first = [&codes](size_t n) {
    return std::vector<uint8_t>(codes.begin(), codes.begin() + static_cast<ptrdiff_t>(n));
  };
  struct Shape {
    size_t rows, cols, block_cols;
  };
  constexpr std::array kOneScale = {
      Shape{1, 255, 255}, Shape{1, 1023, 1023}, Shape{1, 1024, 1024},  Shape{3, 341, 341},
      Shape{4, 256, 256}, Shape{5, 205, 205},   Shape{16, 1025, 2000}, Shape{1, 3000, 3000}};
  // rows x 128 per whole block: 896, 1152, 2048; the last block 37 columns.
  constexpr std::array kBlocks = {Shape{7, 421, 128}, Shape{9, 421, 128}, Shape{16, 421, 128}};
  for (ElemType code_type : kCodeTypes) {
    for (ElemType out_type : kOutTypes) {
      for (size_t s = 0; s < special.size(); ++s) {
        for (const Shape& shape : kOneScale) {
          EXPECT_TRUE(DequantMatchesReference(
              {code_type, out_type, shape.cols, shape.block_cols, s % 5, s % 3, (s * 3) % 64},
              first(shape.rows * shape.cols), {special[s]}));
        }
        for (const Shape& shape : kBlocks) {
          EXPECT_TRUE(DequantMatchesReference(
              {code_type, out_type, shape.cols, shape.block_cols, s % 5, s % 3, (s * 3) % 64},
              first(shape.rows * shape.cols), CyclingScales(4, s)));
        }
      }
    }
  }
}

// Blocks of finite codes only (E4M3 without NaN; E5M2 without Inf and NaN),
// one block per special scale: the F16C targets take their direct path
// (fp8_dequant-inl.h, DequantDirectSpan; every output type) for every block
// whose scale is finite once folded. Then the same blocks with one special
// code in the last element of every other block, which that path must hand
// back to the general one, and block widths that leave a partial chunk.
TEST_P(Fp8DequantTest, FiniteCodeBlocksEveryScale) {
  const std::vector<float> scales = SpecialScales();
  for (ElemType code_type : kCodeTypes) {
    const bool e4m3 = code_type == ElemType::kF8E4m3;
    std::vector<uint8_t> finite;
    for (int code = 0; code < 256; ++code) {
      const int magnitude = code & 0x7F;
      if (e4m3 ? magnitude != 0x7F : magnitude < 0x7C) finite.push_back(static_cast<uint8_t>(code));
    }
    for (size_t block_cols : {size_t{64}, size_t{256}, size_t{200}}) {
      std::vector<uint8_t> codes(block_cols * scales.size());
      for (size_t i = 0; i < codes.size(); ++i) codes[i] = finite[(i * 7 + i / 64) % finite.size()];
      std::vector<uint8_t> marked = codes;
      for (size_t b = 0; b < scales.size(); b += 2) {
        marked[(b + 1) * block_cols - 1] = e4m3 ? 0xFF : static_cast<uint8_t>(0x7C + b % 4);
      }
      for (ElemType out_type : kOutTypes) {
        EXPECT_TRUE(
            DequantMatchesReference({code_type, out_type, codes.size(), block_cols}, codes, scales));
        EXPECT_TRUE(DequantMatchesReference({code_type, out_type, codes.size(), block_cols, 1, 0, 3},
                                            marked, scales));
      }
    }
  }
}

// BF16 through per-scale nibble tables (fp8_dequant-inl.h, BuildNibbleTables;
// every x86 target but SCALAR, scales covering >= 1024 elements) holds only
// while the exponent steps do, so: scales at both ends of that range (the
// smallest whose smallest normal product is a normal F32, the largest whose
// largest finite product stays finite in BF16) and just outside, either
// sign; and scales with 9-bit significands, whose products with each
// mantissa include exact BF16 midpoints (ties to even; counted below). Each
// scale covers one row of 4 x 256 codes + 7: every table entry, NaN, Inf and
// both zeros.
TEST_P(Fp8DequantTest, NibbleTableBoundsAndTies) {
  std::vector<uint8_t> row;
  for (int copy = 0; copy < 4; ++copy) {
    for (int code = 0; code < 256; ++code) {
      row.push_back(static_cast<uint8_t>((code * 37 + copy) & 0xFF));
    }
  }
  for (int code = 0; code < 7; ++code) row.push_back(static_cast<uint8_t>(code * 41));
  for (ElemType code_type : kCodeTypes) {
    const bool e4m3 = code_type == ElemType::kF8E4m3;
    const auto decode = e4m3 ? ref::E4m3ToF32Bits : ref::E5m2ToF32Bits;
    const int bias = e4m3 ? 7 : 15;
    const int mantissa_bits = e4m3 ? 3 : 2;
    const uint32_t max_finite_value = decode(e4m3 ? 0x7E : 0x7B);
    const auto finite_bf16 = [&](uint32_t scale_bits) {
      const uint32_t product = ref::ScaledF32Bits(max_finite_value, FromBits(scale_bits));
      return (ref::F32BitsToBf16(product) & 0x7F80) != 0x7F80;
    };
    uint32_t inside = std::bit_cast<uint32_t>(1.0f), outside = 0x7F7FFFFFu;
    while (outside - inside > 1) {
      const uint32_t mid = inside + (outside - inside) / 2;
      (finite_bf16(mid) ? inside : outside) = mid;
    }
    const uint32_t low = static_cast<uint32_t>(bias) << 23;  // 2^(bias - 127)
    std::vector<float> scales;
    // low / 2 and 0.75 low: where the steps fail (the smallest products are
    // F32 subnormals), so a looser bound than low is caught.
    for (uint32_t bits : {low - (1u << 23), low - (1u << 22), low - 1, low, low + 1, 2 * low,
                          inside - 1, inside, outside, outside + 1}) {
      scales.push_back(FromBits(bits));
      scales.push_back(FromBits(bits | 0x80000000u));
    }
    std::vector<int> ties(size_t{1} << mantissa_bits);
    for (uint32_t k = 0; k < 256; ++k) {
      for (int exponent : {-20, 0, 7}) {
        const float scale = std::ldexp(static_cast<float>(256 + k) / 256, exponent);
        scales.push_back(k % 2 ? -scale : scale);
        for (size_t m = 0; m < ties.size(); ++m) {
          // (1 + m / 2^mantissa_bits) * scale, exact in F32 (<= 17 bits): a
          // BF16 midpoint when its low 16 bits are exactly 0x8000.
          const float value = 1.0f + static_cast<float>(m) / static_cast<float>(ties.size());
          if ((std::bit_cast<uint32_t>(value * scale) & 0xFFFF) == 0x8000) ++ties[m];
        }
      }
    }
    for (size_t m = 0; m < ties.size(); ++m) EXPECT_GT(ties[m], 0) << "mantissa " << m;
    for (size_t s = 0; s < scales.size(); ++s) {
      EXPECT_TRUE(DequantMatchesReference(
          {code_type, ElemType::kBf16, row.size(), row.size(), s % 5, s % 3, (s * 3) % 64}, row,
          {scales[s]}));
      EXPECT_TRUE(DequantMatchesReference({code_type, ElemType::kBf16, 128, 128},
                                          std::vector<uint8_t>(row.begin(), row.begin() + 1024),
                                          {scales[s]}));
    }
  }
}

TEST_P(Fp8DequantTest, EmptyInputWritesNothing) {
  for (ElemType out_type : kOutTypes) {
    EXPECT_TRUE(
        DequantMatchesReference({ElemType::kF8E4m3, out_type, 5, 2}, {}, {1.0f, 2.0f, 3.0f}));
  }
}

// Any codes, shape, block width, scale bits (NaNs included) and alignment.
TEST_P(Fp8DequantTest, PropertyMatchesReference) {
  const bool ok = rc::check("DequantFp8Rows matches the reference", [] {
    const auto code_type = *rc::gen::elementOf(kCodeTypes);
    const auto out_type = *rc::gen::elementOf(kOutTypes);
    const size_t cols = *rc::gen::inRange<size_t>(1, 200);
    const size_t rows = *rc::gen::inRange<size_t>(0, 5);
    const size_t block_cols = *rc::gen::inRange<size_t>(1, cols + 4);
    const auto codes =
        *rc::gen::container<std::vector<uint8_t>>(rows * cols, rc::gen::arbitrary<uint8_t>());
    const auto scale_bits = *rc::gen::container<std::vector<uint32_t>>(
        (cols - 1) / block_cols + 1, rc::gen::arbitrary<uint32_t>());
    std::vector<float> scales(scale_bits.size());
    for (size_t i = 0; i < scales.size(); ++i) scales[i] = FromBits(scale_bits[i]);
    const size_t code_offset = *rc::gen::inRange<size_t>(0, 64);
    const size_t scale_offset = *rc::gen::inRange<size_t>(0, 16);
    const size_t out_offset = *rc::gen::inRange<size_t>(0, 64);
    RC_ASSERT(DequantMatchesReference(
        {code_type, out_type, cols, block_cols, code_offset, scale_offset, out_offset}, codes,
        scales));
  });
  EXPECT_TRUE(ok);
}

// The registry entries (128-column blocks, scales cycling every 8 blocks,
// rows of 1024 plus a remainder): every code, lengths around the splits.
TEST_P(Fp8DequantTest, RegistryEntriesMatchReference) {
  std::vector<uint8_t> codes;
  for (size_t i = 0; i < 3000; ++i) codes.push_back(static_cast<uint8_t>(i * 7 + i / 256));
  size_t entries = 0;
  for (const KernelInfo& kernel : Kernels()) {
    if (kernel.family != "fp8_dequant") continue;
    ++entries;
    EXPECT_EQ(kernel.probe(), GetParam());
    for (size_t n : {0, 1, 17, 127, 128, 129, 1023, 1024, 1025, 2048 + 300, 3000}) {
      const std::vector<uint8_t> input(codes.begin(), codes.begin() + n);
      EXPECT_TRUE(MatchesReference(kernel, input, n % 5, n % 3)) << "n=" << n;
    }
  }
  EXPECT_EQ(entries, 6u);
}

// ---- The checked API ----------------------------------------------------

// Each bad call returns kInvalidArgument and leaves the output untouched.
TEST_P(Fp8DequantTest, CheckedApiRejectsBadCalls) {
  const std::vector<uint8_t> codes(12, 0x38);  // 1.0 in E4M3
  const std::vector<float> scales = {2.0f, 3.0f, 4.0f};
  std::vector<std::byte> out(12 * 4, std::byte{0x5A});
  const auto untouched = [&out] {
    for (std::byte b : out) {
      if (b != std::byte{0x5A}) return false;
    }
    return true;
  };
  struct Bad {
    const char* what;
    ElemType code_type;
    size_t n_codes;
    size_t cols;
    size_t n_scales;
    size_t block_cols;
    ElemType out_type;
    size_t out_bytes;
  };
  const ElemType e4m3 = ElemType::kF8E4m3;
  const Bad bad_calls[] = {
      {"f32 codes", ElemType::kF32, 12, 4, 3, 2, ElemType::kBf16, 24},
      {"bf16 codes", ElemType::kBf16, 12, 4, 3, 2, ElemType::kBf16, 24},
      {"e5m2 output", e4m3, 12, 4, 3, 2, ElemType::kF8E5m2, 24},
      {"e4m3 output", e4m3, 12, 4, 3, 2, ElemType::kF8E4m3, 24},
      {"zero cols", e4m3, 12, 0, 3, 2, ElemType::kBf16, 24},
      {"zero block_cols", e4m3, 12, 4, 3, 0, ElemType::kBf16, 24},
      {"partial row", e4m3, 12, 5, 3, 2, ElemType::kBf16, 24},
      {"too few scales", e4m3, 12, 6, 2, 2, ElemType::kBf16, 24},
      {"too few scales, uneven", e4m3, 12, 12, 2, 5, ElemType::kBf16, 24},
      {"short bf16 output", e4m3, 12, 4, 2, 2, ElemType::kBf16, 23},
      {"short f32 output", e4m3, 12, 4, 2, 2, ElemType::kF32, 47},
      {"f16 output one element short", e4m3, 12, 4, 2, 2, ElemType::kF16, 22},
  };
  for (const Bad& bad : bad_calls) {
    const Status status = DequantFp8Rows(bad.code_type, {codes.data(), bad.n_codes}, bad.cols,
                                         {scales.data(), bad.n_scales}, bad.block_cols,
                                         bad.out_type, {out.data(), bad.out_bytes});
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << bad.what;
    EXPECT_FALSE(status.message().empty()) << bad.what;
    EXPECT_TRUE(untouched()) << bad.what;
  }
  // The edges that are fine: exact sizes, spare scales, spare output.
  EXPECT_TRUE(
      DequantFp8Rows(e4m3, codes, 4, {scales.data(), 2}, 2, ElemType::kBf16, {out.data(), 24})
          .ok());
  uint16_t bf16 = 0;
  std::memcpy(&bf16, out.data(), sizeof(bf16));
  EXPECT_EQ(bf16, 0x4000u);  // 1.0 * 2.0
  EXPECT_TRUE(DequantFp8Rows(e4m3, codes, 4, scales, 3, ElemType::kF32, out).ok());
  float f32 = 0;
  std::memcpy(&f32, out.data() + 3 * sizeof(float), sizeof(f32));
  EXPECT_EQ(f32, 3.0f);  // column 3 is in the second block of 3
}

AMN_INSTANTIATE_PER_TARGET(Fp8DequantTest);

}  // namespace
}  // namespace amn::test
