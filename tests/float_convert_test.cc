// F32/F16/BF16 conversion kernels on every supported target against the
// scalar reference, bit for bit: exhaustive over 16-bit inputs, every F32
// rounding/class boundary, a dense random sample, awkward sizes and
// alignments, and a RapidCheck property.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <cstring>
#include <random>
#include <string_view>
#include <vector>

#include "amn/convert.h"
#include "amn/kernel_registry.h"
#include "hwy/base.h"
#include "kernels/ref/float_convert_ref.h"
#include "tests/kernel_check.h"
#include "tests/target_param.h"

namespace amn::test {
namespace {

constexpr std::string_view kF32Input[] = {"f32_to_bf16", "f32_to_f16"};
constexpr std::string_view kU16Input[] = {"bf16_to_f32", "f16_to_f32", "f16_to_bf16",
                                          "bf16_to_f16"};

class FloatConvertTest : public PerTarget {};

TEST_P(FloatConvertTest, ProbeReportsForcedTarget) {
  EXPECT_EQ(TargetName(FloatConvertTarget()), TargetName(GetParam()));
}

// Every F16/BF16 bit pattern (signalling NaNs with every payload, -0,
// subnormals) through each 16-bit-input kernel. For f16_to_f32/f16_to_bf16 on
// AVX2/AVX3* this is the proof that F16C's vcvtph2ps matches the reference,
// NaN rule included (both quiet a signalling NaN and keep its payload).
TEST_P(FloatConvertTest, Every16BitInput) {
  const std::vector<uint8_t> all = AllU16Bytes();
  for (std::string_view name : kU16Input) {
    EXPECT_TRUE(MatchesReference(KernelNamed(name), all));
  }
}

// f16_to_bf16 and bf16_to_f16 (and f16_to_f32 on SSSE3/SSE4) convert a
// vector on u16 lanes only when every lane is easy (a normal F16 or zero;
// a BF16 in F16's normal range) and send any other vector through F32. One special value at each
// position among 125 otherwise easy inputs (whole vectors and a tail on every target) must still
// give the reference's bits; the easy range's edge values are planted too.
TEST_P(FloatConvertTest, OneSpecialLaneAtEveryPosition) {
  struct Case {
    std::string_view kernel;
    uint16_t easy_lo, easy_hi;  // easy magnitudes: [easy_lo, easy_hi)
    std::vector<uint16_t> planted;
  };
  const Case cases[] = {
      {"f16_to_bf16",
       0x0400,
       0x7C00,
       {0x0000, 0x8000, 0x0001, 0x83FF, 0x0400, 0xFBFF, 0x7BFF, 0x7C00, 0xFC00, 0x7C01, 0x7E00,
        0xFFFF}},
      {"f16_to_f32",
       0x0400,
       0x7C00,
       {0x0000, 0x8000, 0x0001, 0x83FF, 0x0400, 0xFBFF, 0x7BFF, 0x7C00, 0xFC00, 0x7C01, 0x7E00,
        0xFFFF}},
      {"bf16_to_f16",
       113 << 7,
       143 << 7,
       {0x0000, 0x8000, 0x0001, 0x807F, 0x3380, 0x3800, 0xB87F, 0x3880, 0x477F, 0xC780, 0x4780,
        0x7F80, 0xFF80, 0x7F81, 0x7FC0, 0xFFFF}},
  };
  constexpr size_t kCount = 125;
  std::mt19937 rng(20261127);
  for (const Case& c : cases) {
    std::vector<uint16_t> easy(kCount);
    for (uint16_t& bits : easy) {
      const uint16_t abs = static_cast<uint16_t>(c.easy_lo + rng() % (c.easy_hi - c.easy_lo));
      bits = static_cast<uint16_t>(abs | (rng() & 0x8000u));
    }
    const KernelInfo& kernel = KernelNamed(c.kernel);
    for (size_t pos = 0; pos < kCount; ++pos) {
      for (uint16_t special : c.planted) {
        std::vector<uint16_t> input = easy;
        input[pos] = special;
        EXPECT_TRUE(MatchesReference(kernel, AsBytes(input)))
            << c.kernel << " 0x" << std::hex << special << " at " << std::dec << pos;
      }
    }
  }
}

TEST_P(FloatConvertTest, F32EdgeCases) {
  const std::vector<uint8_t> edges = AsBytes(F32EdgeBits());
  for (std::string_view name : kF32Input) {
    EXPECT_TRUE(MatchesReference(KernelNamed(name), edges));
  }
}

TEST_P(FloatConvertTest, DenseRandomF32) {
  std::mt19937 rng(20261121);
  std::vector<uint32_t> bits(1 << 18);
  for (uint32_t& b : bits) b = rng();
  const std::vector<uint8_t> bytes = AsBytes(bits);
  for (std::string_view name : kF32Input) {
    EXPECT_TRUE(MatchesReference(KernelNamed(name), bytes));
  }
}

// Counts around the vector width, at every element offset up to a vector,
// so tails, misaligned loads/stores and the canaries are all exercised.
TEST_P(FloatConvertTest, SizesAndAlignments) {
  std::mt19937 rng(7);
  const size_t lanes = 64;  // >= any x86/NEON/SVE_256 vector of u32 or u16
  const size_t counts[] = {0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 1000};
  for (const KernelInfo& kernel : Kernels()) {
    if (kernel.family != "float_convert") continue;
    for (size_t n : counts) {
      std::vector<uint8_t> input(n * ElemTypeBytes(kernel.in));
      for (uint8_t& byte : input) byte = static_cast<uint8_t>(rng());
      for (size_t offset : {size_t{0}, size_t{1}, size_t{3}, lanes - 1}) {
        EXPECT_TRUE(MatchesReference(kernel, input, offset, (offset * 5) % lanes))
            << "n=" << n << " offset=" << offset;
      }
    }
  }
}

TEST_P(FloatConvertTest, PropertyMatchesReference) {
  for (std::string_view name : kF32Input) {
    const KernelInfo& kernel = KernelNamed(name);
    const bool ok = rc::check(std::string(name), [&kernel](const std::vector<uint32_t>& bits,
                                                           uint8_t in_off, uint8_t out_off) {
      RC_ASSERT(MatchesReference(kernel, AsBytes(bits), in_off % 64, out_off % 64));
    });
    EXPECT_TRUE(ok);
  }
  for (std::string_view name : kU16Input) {
    const KernelInfo& kernel = KernelNamed(name);
    const bool ok = rc::check(std::string(name), [&kernel](const std::vector<uint16_t>& bits,
                                                           uint8_t in_off, uint8_t out_off) {
      RC_ASSERT(MatchesReference(kernel, AsBytes(bits), in_off % 64, out_off % 64));
    });
    EXPECT_TRUE(ok);
  }
}

// The checked API refuses an output span that is too small and writes nothing.
TEST_P(FloatConvertTest, CheckedApiRejectsShortOutput) {
  const float in[3] = {1.0f, 2.0f, 3.0f};
  uint16_t out[2] = {0xAAAA, 0xAAAA};
  const Status status = ConvertF32ToBf16(in, out);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(out[0], 0xAAAA);
  uint16_t wide[4] = {0, 0, 0, 0x1234};
  ASSERT_TRUE(ConvertF32ToBf16(in, wide).ok());
  EXPECT_EQ(wide[0], 0x3F80);  // 1.0
  EXPECT_EQ(wide[1], 0x4000);  // 2.0
  EXPECT_EQ(wide[2], 0x4040);  // 3.0
  EXPECT_EQ(wide[3], 0x1234);  // untouched past in.size()
}

AMN_INSTANTIATE_PER_TARGET(FloatConvertTest);

// Every one of the 2^32 F32 bit patterns through f32_to_f16 on every supported
// target, against the scalar reference: the proof that F16C's vcvtps2ph (used
// on AVX2/AVX3) and the F32-adder rounding of the other targets
// (F32BitsToF16Magnitude) round, overflow, flush and quiet NaNs exactly as
// kernels/ref/float_convert_ref.cc does, signalling NaNs with zero top payload
// bits included. One loop over targets so each reference chunk is computed
// once. Under emulation, one chunk in 4099 (a stride coprime to the chunk
// layout's powers of two, so every exponent is still visited).
TEST(FloatConvertExhaustive, EveryF32PatternToF16OnEveryTarget) {
  constexpr uint64_t kChunk = uint64_t{1} << 16;
  constexpr uint64_t kChunks = (uint64_t{1} << 32) / kChunk;
  const std::vector<TargetId> targets = SupportedTargets();
  std::vector<float> in(kChunk);
  std::vector<uint16_t> want(kChunk);
  std::vector<uint16_t> got(kChunk);
  struct ClearOnExit {
    ~ClearOnExit() { ClearForcedTarget(); }
  } clear_on_exit;
  for (uint64_t c = 0; c < kChunks; ++c) {
    if (!RunCase(c, 4099)) continue;
    for (uint64_t i = 0; i < kChunk; ++i) {
      const uint32_t bits = static_cast<uint32_t>(c * kChunk + i);
      std::memcpy(&in[i], &bits, sizeof(bits));
      want[i] = ref::F32BitsToF16(bits);
    }
    for (TargetId target : targets) {
      ASSERT_TRUE(ForceTarget(target).ok());
      ASSERT_TRUE(ConvertF32ToF16(in, got).ok());
      if (std::memcmp(got.data(), want.data(), kChunk * sizeof(uint16_t)) != 0) {
        for (uint64_t i = 0; i < kChunk; ++i) {
          ASSERT_EQ(got[i], want[i]) << TargetName(target) << " input 0x" << std::hex
                                     << c * kChunk + i;
        }
      }
    }
  }
}

}  // namespace
}  // namespace amn::test
