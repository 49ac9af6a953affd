// The ggml I-quant family (IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S,
// IQ1_M) through amn::DequantGgml on every supported target, bit for bit: the
// real-model gguf_reference fixtures to BF16, random super-blocks against the
// scalar reference for every output, edge f16 super scales (±0, subnormal,
// max, ±Inf, NaN payloads), every byte value, block counts, misaligned
// buffers with canaries, a RapidCheck property, the registry rows; and, on
// the host, the lattice tables pinned against ggml-common.h and hand-worked
// blocks anchoring the reference.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "amn/ggml_dequant.h"
#include "amn/kernel_registry.h"
#include "kernels/ggml_iq_blocks.h"
#include "kernels/ref/ggml_iquant_ref.h"
#include "tests/ggml_check.h"
#include "tests/kernel_check.h"
#include "tests/target_param.h"

namespace amn::test {
namespace {

constexpr std::array kTypes = {GgmlType::kIQ2_XXS, GgmlType::kIQ2_XS, GgmlType::kIQ2_S,
                               GgmlType::kIQ3_XXS, GgmlType::kIQ3_S,  GgmlType::kIQ1_S,
                               GgmlType::kIQ1_M};
constexpr std::array kOutTypes = {ElemType::kF32, ElemType::kBf16, ElemType::kF16};
constexpr size_t kQK = 256;

// Writes the f16 super scale d of a block (IQ1_M keeps it in the top nibbles
// of its four scale words; the other types at byte 0).
void SetD(GgmlType type, uint8_t* block, uint16_t d) {
  if (type != GgmlType::kIQ1_M) {
    block[0] = static_cast<uint8_t>(d);
    block[1] = static_cast<uint8_t>(d >> 8);
    return;
  }
  for (int w = 0; w < 4; ++w) {
    uint8_t& top = block[iq::iq1m::kScales + 2 * w + 1];
    top = static_cast<uint8_t>((top & 0x0F) | (((d >> (4 * w)) & 0xF) << 4));
  }
}

// Random blocks with moderate finite d (random sign).
std::vector<uint8_t> RandomBlocks(GgmlType type, size_t n_blocks, uint32_t seed) {
  std::vector<uint8_t> bytes = PseudoRandomBytes(n_blocks * GgmlBlockBytes(type), seed);
  const std::vector<uint8_t> scales = PseudoRandomBytes(2 * n_blocks, seed ^ 0x5bd1e995u);
  for (size_t i = 0; i < n_blocks; ++i) {
    const uint16_t r = static_cast<uint16_t>(scales[2 * i] | scales[2 * i + 1] << 8);
    const uint16_t d = static_cast<uint16_t>(0x1000 + r % 0x3000) | (r & 0x8000);
    SetD(type, bytes.data() + i * GgmlBlockBytes(type), d);
  }
  return bytes;
}

class GgmlIQuantTest : public PerTarget {};

TEST_P(GgmlIQuantTest, ProbeReportsForcedTarget) { EXPECT_EQ(GgmlIQuantTarget(), GetParam()); }

TEST_P(GgmlIQuantTest, FixturesMatchGoldenBf16) {
  const size_t checked = CheckGoldenFixtures(kTypes);
  if (checked == 0) GTEST_SKIP() << "no I-quant gguf_reference fixtures; set AMN_FIXTURES_DIR";
  EXPECT_GE(checked, kTypes.size());
}

TEST_P(GgmlIQuantTest, RandomBlocksEveryOutput) {
  for (GgmlType type : kTypes) {
    const auto blocks = RandomBlocks(type, 8, static_cast<uint32_t>(type));
    for (ElemType out : kOutTypes) {
      EXPECT_TRUE(MatchesGgmlReference(type, blocks, out))
          << GgmlName(type) << " out " << ElemTypeName(out);
    }
  }
}

TEST_P(GgmlIQuantTest, BlockCountsAndAlignments) {
  for (GgmlType type : kTypes) {
    for (size_t n_blocks : {size_t{0}, size_t{1}, size_t{2}, size_t{3}, size_t{17}}) {
      const auto blocks = RandomBlocks(type, n_blocks, static_cast<uint32_t>(n_blocks * 131 + 7));
      for (ElemType out : kOutTypes) {
        for (size_t in_off : {size_t{0}, size_t{1}, size_t{3}}) {
          for (size_t out_off : {size_t{0}, size_t{2}, size_t{6}}) {
            EXPECT_TRUE(MatchesGgmlReference(type, blocks, out, in_off, out_off))
                << GgmlName(type) << " n=" << n_blocks << " in+" << in_off << " out+" << out_off;
          }
        }
      }
    }
  }
}

// One block per byte value v (every index, sign and scale field = v), then
// random codes under every edge d.
TEST_P(GgmlIQuantTest, EdgeScalesAndEveryByteValue) {
  // 0x7FFF and 0xFC07: NaNs whose widened F32 low bits are >= 0x8000, which
  // BF16 rounding without the NaN rule (the kernels' finite-factor path)
  // would carry into the exponent or sign.
  const std::vector<uint16_t> d_edges = {0x0000, 0x8000, 0x0001, 0x83FF, 0x0400, 0x3C00,
                                         0x7BFF, 0xFBFF, 0x7C00, 0xFC00, 0x7E00, 0x7C01,
                                         0xFE01, 0x3555, 0x7FFF, 0xFC07};
  for (GgmlType type : kTypes) {
    const size_t bb = GgmlBlockBytes(type);
    std::vector<uint8_t> every(256 * bb);
    for (size_t v = 0; v < 256; ++v) {
      uint8_t* block = every.data() + v * bb;
      std::memset(block, static_cast<int>(v), bb);
      SetD(type, block, d_edges[v % d_edges.size()]);
    }
    auto random = RandomBlocks(type, d_edges.size(), 11);
    for (size_t i = 0; i < d_edges.size(); ++i) SetD(type, random.data() + i * bb, d_edges[i]);
    for (ElemType out : kOutTypes) {
      EXPECT_TRUE(MatchesGgmlReference(type, every, out, 1, 2)) << GgmlName(type) << " every byte";
      EXPECT_TRUE(MatchesGgmlReference(type, random, out)) << GgmlName(type) << " edge d";
    }
  }
}

TEST_P(GgmlIQuantTest, PropertyMatchesReference) {
  const bool ok = rc::check("random I-quant blocks match the reference", [] {
    const auto type = *rc::gen::elementOf(std::vector<GgmlType>(kTypes.begin(), kTypes.end()));
    const auto out =
        *rc::gen::elementOf(std::vector<ElemType>(kOutTypes.begin(), kOutTypes.end()));
    const size_t n_blocks = *rc::gen::inRange<size_t>(0, 5);
    const auto blocks = *rc::gen::container<std::vector<uint8_t>>(n_blocks * GgmlBlockBytes(type),
                                                                 rc::gen::arbitrary<uint8_t>());
    RC_ASSERT(MatchesGgmlReference(type, blocks, out, *rc::gen::inRange<size_t>(0, 8),
                                   *rc::gen::inRange<size_t>(0, 8)));
  });
  EXPECT_TRUE(ok);
}

// The NaN rule stated in kernels/ref/ggml_iquant_ref.h, checked against bits
// written out here: d = NaN gives d's quieted NaN everywhere, d = ±Inf gives
// infinities and d = +0 zeros, signed by the element's sign at d = 1.
TEST_P(GgmlIQuantTest, SpecialScalesGiveStatedBits) {
  for (GgmlType type : kTypes) {
    auto block = RandomBlocks(type, 1, 3);
    std::vector<float> y(kQK);
    const auto run = [&](uint16_t d) {
      SetD(type, block.data(), d);
      EXPECT_TRUE(DequantGgml(type, block, ElemType::kF32, std::as_writable_bytes(std::span(y))).ok());
    };
    run(0x7D23);  // signalling NaN, payload 0x123 -> quiet 0x7FE46000
    for (float v : y) EXPECT_EQ(std::bit_cast<uint32_t>(v), 0x7FE46000u) << GgmlName(type);
    run(0xFE01);  // quiet NaN, negative, payload 0x201
    for (float v : y) EXPECT_EQ(std::bit_cast<uint32_t>(v), 0xFFC02000u) << GgmlName(type);
    // Each element's sign, from the scalar reference at d = 1 (every element
    // finite and non-zero there).
    std::vector<float> finite(kQK);
    SetD(type, block.data(), 0x3C00);
    ASSERT_TRUE(ref::DequantIQuantToF32(static_cast<uint32_t>(type), block.data(), 1,
                                        finite.data()));
    run(0x7C00);
    for (size_t i = 0; i < kQK; ++i) {
      ASSERT_NE(finite[i], 0.0f) << GgmlName(type) << " " << i;
      EXPECT_EQ(y[i], std::signbit(finite[i]) ? -INFINITY : INFINITY) << GgmlName(type) << " " << i;
    }
    run(0x0000);
    for (size_t i = 0; i < kQK; ++i) {
      EXPECT_EQ(std::bit_cast<uint32_t>(y[i]), std::signbit(finite[i]) ? 0x80000000u : 0u)
          << GgmlName(type) << " " << i;
    }
  }
}

TEST_P(GgmlIQuantTest, RegistryEntriesMatchReference) {
  size_t entries = 0;
  for (const KernelInfo& kernel : Kernels()) {
    if (kernel.family != "ggml_iquant") continue;
    ++entries;
    EXPECT_EQ(kernel.probe(), GetParam());
    ASSERT_EQ(kernel.block_elems, kQK);
    for (size_t n_blocks : {size_t{0}, size_t{1}, size_t{5}}) {
      for (GgmlType type : kTypes) {
        if (GgmlBlockBytes(type) != kernel.in_block_bytes) continue;
        const auto blocks = RandomBlocks(type, n_blocks, static_cast<uint32_t>(n_blocks + 99));
        EXPECT_TRUE(::amn::test::MatchesReference(kernel, blocks, n_blocks, 2 * n_blocks))
            << kernel.name << " n_blocks=" << n_blocks;
      }
    }
  }
  EXPECT_EQ(entries, 3 * kTypes.size());
}

AMN_INSTANTIATE_PER_TARGET(GgmlIQuantTest);

// ---- Host: the tables and the reference, anchored outside the code. ----

// FNV-1a 64 over the little-endian bytes of each entry.
template <typename T, size_t N>
uint64_t Fnv1a(const std::array<T, N>& table) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (T entry : table) {
    for (size_t j = 0; j < sizeof(T); ++j) {
      h = (h ^ ((static_cast<uint64_t>(entry) >> (8 * j)) & 0xff)) * 0x100000001b3ull;
    }
  }
  return h;
}

// Checksums and entries [0], [1], [N/2], [N-1] computed from ggml-common.h
// (ggml-org/ggml, 2026-08) by a script outside this repository.
TEST(IQuantGrids, MatchGgmlCommon) {
  EXPECT_EQ(Fnv1a(iq::kIq2XxsGrid), 0xbb4ee025b5ac6e8eull);
  EXPECT_EQ(Fnv1a(iq::kIq2XsGrid), 0xc9b1ee61e79909bdull);
  EXPECT_EQ(Fnv1a(iq::kIq2SGrid), 0x123edd38a3b62b90ull);
  EXPECT_EQ(Fnv1a(iq::kIq3XxsGrid), 0xdfa5dc83d6a155d5ull);
  EXPECT_EQ(Fnv1a(iq::kIq3SGrid), 0xfa37020c25b44829ull);
  EXPECT_EQ(Fnv1a(iq::kIq1SGrid), 0x6703ed863501ae2eull);
  EXPECT_EQ(iq::kIq2XxsGrid[1], 0x080808080808082bull);
  EXPECT_EQ(iq::kIq2XxsGrid[128], 0x082b2b0808082b08ull);
  EXPECT_EQ(iq::kIq2XxsGrid[255], 0x2b2b2b1908081908ull);
  EXPECT_EQ(iq::kIq2XsGrid[256], 0x190808080808192bull);
  EXPECT_EQ(iq::kIq2SGrid[512], 0x19080819082b1919ull);
  EXPECT_EQ(iq::kIq2SGrid[1023], 0x2b2b2b2b2b2b2b2bull);
  EXPECT_EQ(iq::kIq3XxsGrid[128], 0x141c3e04u);
  EXPECT_EQ(iq::kIq3XxsGrid[255], 0x3e341c04u);
  EXPECT_EQ(iq::kIq3SGrid[1], 0x01010103u);
  EXPECT_EQ(iq::kIq3SGrid[256], 0x05090507u);
  EXPECT_EQ(iq::kIq1SGrid[0], 0xffffffffffffffffull);
  EXPECT_EQ(iq::kIq1SGrid[1024], 0x0000000000ff0100ull);
  EXPECT_EQ(iq::kIq1SGrid[2047], 0x0101010101010101ull);
}

TEST(IQuantGrids, KSignsHaveEvenParity) {
  // ggml ksigns_iq2xs begins 0, 129, 130, 3, 132, 5, 6, 135 and ends 255.
  const std::array<uint8_t, 8> head = {0, 129, 130, 3, 132, 5, 6, 135};
  for (unsigned i = 0; i < head.size(); ++i) EXPECT_EQ(iq::KSigns(i), head[i]);
  EXPECT_EQ(iq::KSigns(127), 255);
  for (unsigned i = 0; i < 128; ++i) EXPECT_EQ(std::popcount(iq::KSigns(i)) % 2, 0) << i;
}

float Dequant1(GgmlType type, const std::vector<uint8_t>& block, size_t i) {
  std::vector<float> y(kQK);
  EXPECT_TRUE(ref::DequantIQuantToF32(static_cast<uint32_t>(type), block.data(), 1, y.data()));
  return y[i];
}

// Hand-worked blocks (d = 1, f16 0x3C00), values from the formulas in
// ../shared/fixtures/README.md and the grid entries pinned above.
TEST(IQuantReference, HandWorkedAnchors) {
  {  // IQ2_XXS: group 0, aux1 = scale 3 (db = 3.5/4), signs k=0 = 1 -> ksigns 129;
     // grid index byte 1 -> kIq2XxsGrid[1] = 2b,08,... : y[0] = -0.875*0x2b.
    std::vector<uint8_t> b(66, 0);
    b[1] = 0x3C;
    b[2] = 1;                                       // aux0 byte 0 = grid index 1
    const uint32_t aux1 = (3u << 28) | 1u;
    std::memcpy(b.data() + 6, &aux1, 4);
    EXPECT_EQ(Dequant1(GgmlType::kIQ2_XXS, b, 0), -0.875f * 43);
    EXPECT_EQ(Dequant1(GgmlType::kIQ2_XXS, b, 1), 0.875f * 8);
    EXPECT_EQ(Dequant1(GgmlType::kIQ2_XXS, b, 7), -0.875f * 8);  // parity sign
    EXPECT_EQ(Dequant1(GgmlType::kIQ2_XXS, b, 8), 0.875f * 8);   // grid[0], no signs
  }
  {  // IQ3_S: scale nibble 2 -> db = 5; qs[0] = 1 -> kIq3SGrid[1] byte 0 = 3;
     // signs[0] = 1 -> y[0] = -15; qh bit 0 set -> index 256 for y[0..3].
    std::vector<uint8_t> b(110, 0);
    b[1] = 0x3C;
    b[2] = 1;
    b[106] = 2;
    b[74] = 1;
    EXPECT_EQ(Dequant1(GgmlType::kIQ3_S, b, 0), -15.0f);
    EXPECT_EQ(Dequant1(GgmlType::kIQ3_S, b, 4), 5.0f);  // qs[1] = 0 -> grid[0] = 1
    b[66] = 1;                                            // index 256 + 1 = 257
    EXPECT_EQ(Dequant1(GgmlType::kIQ3_S, b, 0),
              -5.0f * static_cast<float>(iq::kIq3SGrid[257] & 0xff));
  }
  {  // IQ1_S: qh[0] = 0x8000 | 2 << 12 -> dl = 5, delta = -1/8; grid[0] = -1:
     // y = 5 * (-1 - 0.125) = -5.625.
    std::vector<uint8_t> b(50, 0);
    b[1] = 0x3C;
    const uint16_t qh = 0x8000 | (2 << 12);
    std::memcpy(b.data() + 34, &qh, 2);
    EXPECT_EQ(Dequant1(GgmlType::kIQ1_S, b, 0), -5.625f);
    EXPECT_EQ(Dequant1(GgmlType::kIQ1_S, b, 32), -0.875f);  // qh[1] = 0: dl 1, delta +1/8
  }
  {  // IQ1_M: d = 1 scattered (0x3C00: nibbles 0,0,C,3 into words 0..3);
     // scale word 0 = 1 -> dl_0 = 3; qh[0] = 0x08 -> delta -1/8: y = 3·(-1.125).
    std::vector<uint8_t> b(56, 0);
    b[48] = 1;
    SetD(GgmlType::kIQ1_M, b.data(), 0x3C00);
    b[32] = 0x08;
    EXPECT_EQ(Dequant1(GgmlType::kIQ1_M, b, 0), -3.375f);
    EXPECT_EQ(Dequant1(GgmlType::kIQ1_M, b, 8), -2.625f);  // group 1: qh nibble 0, delta +1/8
  }
}

TEST(IQuantReference, OtherTypesAreRefused) {
  float out[256];
  const uint8_t block[144] = {};
  EXPECT_FALSE(ref::DequantIQuantToF32(static_cast<uint32_t>(GgmlType::kQ4_K), block, 1, out));
  EXPECT_EQ(ref::IQuantBlockBytes(static_cast<uint32_t>(GgmlType::kIQ4_XS)), 0u);
}

}  // namespace
}  // namespace amn::test
