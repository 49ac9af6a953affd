// The newer ggml block types NVFP4 (40), Q1_0 (41), Q2_0 (42) through
// amn::DequantGgml and amn::QuantizeGgml on every supported target, anchored
// on ggml itself (the oracle library): decoding against dequantize_row_*, F32
// bit for bit, F16/BF16 against the oracle's F32 rounded by this file's own
// round-to-nearest-even; encoding byte for byte against ggml_quantize_chunk,
// with and without an importance matrix (ggml ignores it for these types),
// on Gaussian rows, outliers, zeros and -0.0, subnormals, NVFP4's scale
// rounding boundaries and Q1_0's order-sensitive sums. Also: the
// oracle's type ids and block sizes against our table, every UE4M3 scale
// byte, special F16 scales, misaligned buffers against the scalar reference,
// and the registry entries.
#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "amn/ggml_dequant.h"
#include "amn/kernel_registry.h"
#include "amn/quantize.h"
#include "kernels/ggml_blocks.h"
#include "kernels/ref/ggml_encode_ref.h"
#include "kernels/ref/ggml_legacy_ref.h"
#include "tests/ggml_check.h"
#include "tests/ggml_oracle.h"
#include "tests/kernel_check.h"
#include "tests/target_param.h"

namespace amn::test {
namespace {

using G = GgmlType;
constexpr std::array kNewTypes = {G::kNVFP4, G::kQ1_0, G::kQ2_0};
constexpr std::array kOutTypes = {ElemType::kF32, ElemType::kBf16, ElemType::kF16};

const GgmlTypeInfo& Info(GgmlType type) { return *FindGgmlType(static_cast<uint32_t>(type)); }

const char* DequantSymbol(GgmlType type) {
  return type == G::kNVFP4 ? "dequantize_row_nvfp4"
         : type == G::kQ1_0 ? "dequantize_row_q1_0"
                            : "dequantize_row_q2_0";
}

// ggml's dequantize_row_<type> of whole blocks.
std::vector<float> OracleDecode(const GgmlOracle& ggml, GgmlType type,
                                const std::vector<uint8_t>& blocks) {
  using Fn = void (*)(const void*, float*, int64_t);
  const auto fn = reinterpret_cast<Fn>(ggml.Symbol(DequantSymbol(type)));
  EXPECT_NE(fn, nullptr) << DequantSymbol(type);
  const size_t n = blocks.size() / Info(type).block_bytes * Info(type).block_elems;
  std::vector<float> y(n);
  if (fn != nullptr && n != 0) fn(blocks.data(), y.data(), static_cast<int64_t>(n));
  return y;
}

// IEEE round to nearest even of v to `mant` fraction bits, exponents >=
// emin (subnormals below), Inf above the largest finite: in double, where
// every step here is exact. Independent of the library's converters.
double RoundIeee(double v, int mant, int emin, int emax) {
  if (v == 0 || std::isinf(v)) return v;
  const double a = std::fabs(v);
  const int e = std::max(std::ilogb(a), emin);
  const double r = std::ldexp(std::nearbyint(std::ldexp(a, mant - e)), e - mant);
  const double max_finite = std::ldexp(2.0 - std::ldexp(1.0, -mant), emax);
  return std::copysign(r > max_finite ? INFINITY : r, v);
}
double F16Value(uint16_t h) {
  const int e = (h >> 10) & 31, m = h & 1023;
  const double mag = e == 0    ? std::ldexp(m, -24)
                     : e == 31 ? (m == 0 ? INFINITY : NAN)
                               : std::ldexp(1024 + m, e - 25);
  return (h & 0x8000) ? -mag : mag;
}
double Bf16Value(uint16_t h) { return std::bit_cast<float>(static_cast<uint32_t>(h) << 16); }

// DequantGgml at the active target against the oracle's values.
testing::AssertionResult MatchesOracle(const GgmlOracle& ggml, GgmlType type,
                                       const std::vector<uint8_t>& blocks, ElemType out) {
  const std::vector<float> want = OracleDecode(ggml, type, blocks);
  const size_t w = out == ElemType::kF32 ? 4 : 2;
  std::vector<std::byte> got(want.size() * w);
  const Status status = DequantGgml(type, blocks, out, got);
  if (!status.ok()) return testing::AssertionFailure() << status.ToString();
  for (size_t i = 0; i < want.size(); ++i) {
    const auto fail = [&] {
      const size_t b = i / Info(type).block_elems;
      std::string bytes;
      for (size_t k = 0; k < Info(type).block_bytes; ++k) {
        bytes += std::to_string(blocks[b * Info(type).block_bytes + k]) + " ";
      }
      return testing::AssertionFailure() << Info(type).name << "->" << ElemTypeName(out)
                                         << " element " << i << " want " << want[i]
                                         << " (block bytes " << bytes << ")";
    };
    if (out == ElemType::kF32) {
      uint32_t have = 0;
      std::memcpy(&have, got.data() + 4 * i, 4);
      if (have != std::bit_cast<uint32_t>(want[i])) return fail() << " have bits " << have;
      continue;
    }
    uint16_t h = 0;
    std::memcpy(&h, got.data() + 2 * i, 2);
    const double have = out == ElemType::kF16 ? F16Value(h) : Bf16Value(h);
    if (std::isnan(want[i])) {
      if (!std::isnan(have) || std::signbit(have) != std::signbit(want[i])) return fail();
      continue;
    }
    const double expect =
        out == ElemType::kF16 ? RoundIeee(want[i], 10, -14, 15) : RoundIeee(want[i], 7, -126, 127);
    if (have != expect || std::signbit(have) != std::signbit(expect)) {
      return fail() << " have " << have << " expect " << expect;
    }
  }
  return testing::AssertionSuccess();
}

void Put16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
}

// Blocks that reach every code in every position and every scale: NVFP4's
// 256 UE4M3 bytes in each sub-block slot; for Q1_0/Q2_0 F16 d at ±0,
// subnormals, normals, the largest finite, ±Inf, quiet and signalling NaNs,
// with all-equal code bytes (so Q2_0's code 1 meets Inf: Inf * 0) and mixed.
std::vector<uint8_t> EdgeBlocks(GgmlType type) {
  const size_t bb = Info(type).block_bytes;
  std::vector<uint8_t> blocks;
  if (type == G::kNVFP4) {
    for (size_t b = 0; b < 256; ++b) {
      std::vector<uint8_t> block(bb);
      for (size_t s = 0; s < 4; ++s) block[s] = static_cast<uint8_t>(b + 64 * s);
      for (size_t l = 4; l < bb; ++l) block[l] = static_cast<uint8_t>(b + (l - 4) * 17);
      blocks.insert(blocks.end(), block.begin(), block.end());
    }
    return blocks;
  }
  constexpr std::array<uint16_t, 14> kD = {0x0000, 0x8000, 0x0001, 0x03FF, 0x8200, 0x0400, 0x3C00,
                                           0xB555, 0x7BFF, 0xFBFF, 0x7C00, 0xFC00, 0x7E00, 0xFD01};
  for (uint16_t d : kD) {
    for (uint8_t fill : {uint8_t{0x00}, uint8_t{0x55}, uint8_t{0xAA}, uint8_t{0xFF}, uint8_t{0x1B}}) {
      std::vector<uint8_t> block(bb, fill);
      Put16(block.data(), d);
      blocks.insert(blocks.end(), block.begin(), block.end());
    }
    std::vector<uint8_t> block = PseudoRandomBytes(bb, d);
    Put16(block.data(), d);
    blocks.insert(blocks.end(), block.begin(), block.end());
  }
  return blocks;
}

// ---- Host-only anchors -----------------------------------------------------

// The oracle's ggml agrees with the ggml mirror these kernels were written
// from (ggml.h: NVFP4 = 40, Q1_0 = 41, Q2_0 = 42; ggml-common.h: 36 bytes per
// 64, 18 per 128, 18 per 64) and with our type table.
TEST(GgmlNewTypes, OracleTypeTraitsMatchTable) {
  const auto* ggml = AMN_GGML_ORACLE_OR_SKIP();
  using SizeFn = size_t (*)(int);
  using BlockFn = int64_t (*)(int);
  using NameFn = const char* (*)(int);
  const auto type_size = reinterpret_cast<SizeFn>(ggml->Symbol("ggml_type_size"));
  const auto blck_size = reinterpret_cast<BlockFn>(ggml->Symbol("ggml_blck_size"));
  const auto type_name = reinterpret_cast<NameFn>(ggml->Symbol("ggml_type_name"));
  ASSERT_TRUE(type_size != nullptr && blck_size != nullptr && type_name != nullptr);
  struct Want {
    GgmlType type;
    const char* ggml_name;
    size_t bytes, elems;
  };
  for (const Want& w : {Want{G::kNVFP4, "nvfp4", 36, 64}, Want{G::kQ1_0, "q1_0", 18, 128},
                        Want{G::kQ2_0, "q2_0", 18, 64}}) {
    const int id = static_cast<int>(w.type);
    EXPECT_EQ(type_size(id), w.bytes) << w.ggml_name;
    EXPECT_EQ(static_cast<size_t>(blck_size(id)), w.elems) << w.ggml_name;
    EXPECT_STREQ(type_name(id), w.ggml_name);
    EXPECT_EQ(Info(w.type).block_bytes, w.bytes);
    EXPECT_EQ(Info(w.type).block_elems, w.elems);
    EXPECT_TRUE(Info(w.type).quantized);
    EXPECT_TRUE(GgmlTypeDecodable(w.type));
  }
  EXPECT_EQ(Info(G::kNVFP4).name, "NVFP4");
  EXPECT_EQ(Info(G::kQ1_0).name, "Q1_0");
  EXPECT_EQ(Info(G::kQ2_0).name, "Q2_0");
  EXPECT_EQ(ggml::kNvfp4Bytes, 36u);
  EXPECT_EQ(ggml::kQ1_0Bytes, 18u);
  EXPECT_EQ(ggml::kQ2_0Bytes, 18u);
}

// Every UE4M3 byte against ggml_ue4m3_to_fp32's formula, evaluated here with
// ldexp: 0 and 0x7F are 0; bit 7 is ignored; (1 + m/8) * 2^(e-7) / 2, or
// m * 2^-9 / 2 for e = 0.
TEST(GgmlNewTypes, Ue4m3ScalesMatchGgmlFormula) {
  for (int x = 0; x < 256; ++x) {
    const int e = (x >> 3) & 15, m = x & 7;
    float want = e == 0 ? std::ldexp(static_cast<float>(m), -9)
                        : std::ldexp(1.0f + static_cast<float>(m) / 8.0f, e - 7);
    want *= 0.5f;
    if (x == 0 || x == 0x7F) want = 0.0f;
    EXPECT_EQ(std::bit_cast<float>(ggml::Ue4m3HalfBits(static_cast<uint8_t>(x))), want) << x;
  }
}

// ---- Per target ------------------------------------------------------------

class GgmlNewTypesTest : public PerTarget {};

TEST_P(GgmlNewTypesTest, EdgeBlocksMatchGgml) {
  const auto* ggml = AMN_GGML_ORACLE_OR_SKIP();
  for (GgmlType type : kNewTypes) {
    const std::vector<uint8_t> blocks = EdgeBlocks(type);
    for (ElemType out : kOutTypes) EXPECT_TRUE(MatchesOracle(*ggml, type, blocks, out));
  }
}

TEST_P(GgmlNewTypesTest, RandomBlocksMatchGgml) {
  const auto* ggml = AMN_GGML_ORACLE_OR_SKIP();
  uint32_t seed = 3;
  for (GgmlType type : kNewTypes) {
    for (size_t n_blocks : {1, 2, 3, 7, 16, 33, 200}) {
      const std::vector<uint8_t> blocks =
          PseudoRandomBytes(n_blocks * Info(type).block_bytes, seed++);
      for (ElemType out : kOutTypes) EXPECT_TRUE(MatchesOracle(*ggml, type, blocks, out));
    }
  }
}

// The scalar reference (what the fuzzer and bench compare with) on odd block
// counts and misaligned buffers, with canaries after the output.
TEST_P(GgmlNewTypesTest, MisalignedBuffersMatchReference) {
  uint32_t seed = 40;
  for (GgmlType type : kNewTypes) {
    for (size_t n_blocks : {0, 1, 5, 17}) {
      const std::vector<uint8_t> blocks =
          PseudoRandomBytes(n_blocks * Info(type).block_bytes, seed++);
      for (ElemType out : kOutTypes) {
        for (size_t offset : {0, 1, 3, 30}) {
          EXPECT_TRUE(MatchesGgmlReference(type, blocks, out, offset, offset * 3 + 1));
        }
      }
    }
    for (ElemType out : kOutTypes) EXPECT_TRUE(MatchesGgmlReference(type, EdgeBlocks(type), out));
  }
}

// x86 BF16/F16 outputs of calls of >= 64 NVFP4 blocks go through per-call
// rows of each UE4M3 byte's 16 results (ggml_legacy-inl.h,
// GgmlNvfp4ByRows), and F32 outputs on SSSE3, SSE4 and NEON through
// the BF16 rows, widened: every scale byte in every sub-block slot with every
// code in every position (16 rotations of the codes, sub-block i scaled by
// byte (i % 256 + i / 256)), against the reference; calls of 63, 64 and 65
// blocks (the threshold) and misaligned buffers.
TEST_P(GgmlNewTypesTest, Nvfp4EveryScaleByteEveryCode) {
  const size_t bb = ggml::kNvfp4Bytes;
  std::vector<uint8_t> blocks(1024 * bb);
  for (size_t i = 0; i < 4096; ++i) {  // sub-block i: block i / 4, slot i % 4
    const size_t r = i / 256;
    uint8_t* x = blocks.data() + i / 4 * bb;
    x[i % 4] = static_cast<uint8_t>(i + r);
    for (size_t l = 0; l < 8; ++l) {  // element l: low nibble; l + 8: high nibble
      x[4 + (i % 4) * 8 + l] = static_cast<uint8_t>(((l + r) & 15) | (((l + 8 + r) & 15) << 4));
    }
  }
  for (ElemType out : {ElemType::kF32, ElemType::kBf16, ElemType::kF16}) {
    EXPECT_TRUE(MatchesGgmlReference(G::kNVFP4, blocks, out));
    EXPECT_TRUE(MatchesGgmlReference(G::kNVFP4, blocks, out, 1, 3));
    for (size_t n_blocks : {63, 64, 65}) {
      const std::vector<uint8_t> part(blocks.begin() + 100 * bb,
                                      blocks.begin() + (100 + n_blocks) * bb);
      EXPECT_TRUE(MatchesGgmlReference(G::kNVFP4, part, out, 0, 1)) << n_blocks;
    }
  }
}

TEST_P(GgmlNewTypesTest, RegistryEntriesMatchReference) {
  size_t entries = 0;
  uint32_t seed = 70;
  for (const KernelInfo& kernel : Kernels()) {
    const std::string stem(kernel.name.substr(0, kernel.name.find("_to_")));
    if (kernel.family != "ggml_legacy" || (stem != "nvfp4_gguf" && stem != "q1_0" && stem != "q2_0")) {
      continue;
    }
    ++entries;
    EXPECT_EQ(kernel.probe(), GetParam()) << kernel.name;
    for (size_t n_blocks : {1, 3, 10}) {
      const std::vector<uint8_t> blocks = PseudoRandomBytes(n_blocks * kernel.in_block_bytes, seed++);
      EXPECT_TRUE(amn::test::MatchesReference(kernel, blocks, 1, 7)) << kernel.name;
    }
  }
  EXPECT_EQ(entries, 3 * kNewTypes.size());
}


// ---- Encoding: QuantizeGgml (F32 rows) against ggml_quantize_chunk ---------

std::vector<float> Gaussian(uint32_t seed, size_t n, float scale) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> x(n);
  for (float& v : x) v = dist(rng) * scale;
  return x;
}

constexpr size_t kRow = 1024;

// Named rows of kRow elements (several rows each).
std::vector<std::pair<std::string, std::vector<float>>> EncodeCases() {
  std::vector<std::pair<std::string, std::vector<float>>> cases;
  for (float scale : {1e-3f, 0.02f, 1.0f, 300.0f, 1e5f}) {
    cases.emplace_back("gaussian " + std::to_string(scale), Gaussian(1, 3 * kRow, scale));
  }
  {
    std::vector<float> x = Gaussian(2, 2 * kRow, 1.0f);
    for (size_t at : {size_t{5}, size_t{300}, size_t{kRow + 777}}) x[at] = 6.6e5f;
    x[1500] = -3e38f;
    x[100] = 1e30f;
    cases.emplace_back("outliers", x);
  }
  {
    std::vector<float> x(kRow);
    for (size_t k = 0; k < kRow; ++k) x[k] = (k * 7 % 3 == 0) ? -0.0f : 0.0f;
    for (size_t k = 512; k < 640; ++k) x[k] = k % 2 ? 0.37f : -0.37f;  // constant magnitude
    for (size_t k = 640; k < 768; ++k) x[k] = -2.5f;
    cases.emplace_back("zeros, -0.0, constants", x);
  }
  for (float scale : {1e-30f, 1e-36f, 3e-38f, 1e-39f, 1e-42f, 1e-45f}) {
    std::vector<float> x = Gaussian(3, kRow, scale);
    for (size_t k = 0; k < kRow; k += 37) x[k] = std::bit_cast<float>(uint32_t{1});
    cases.emplace_back("subnormal scale " + std::to_string(scale), x);
  }
  {
    std::vector<float> x(kRow);
    for (size_t k = 0; k < kRow; ++k) {
      x[k] = std::bit_cast<float>(static_cast<uint32_t>((k * 2654435761u) & 0x807FFFFFu));
    }
    cases.emplace_back("subnormal bit patterns", x);
  }
  {
    // NVFP4 scales: amax / 6 on and around every UE4M3 rounding boundary
    // (mantissa bit 19 set or not, carries into the exponent), in the
    // subnormal range (amax / 6 < 2^-6) and past 448; the other elements at
    // codebook midpoints of the scale.
    std::vector<float> x(4 * kRow);
    for (size_t s = 0; s < x.size() / 16; ++s) {
      const int e = static_cast<int>(s % 30) - 18;  // 2^-18 .. 2^11
      const uint32_t man = static_cast<uint32_t>((s / 30) % 16) << 19;
      float base = std::bit_cast<float>((static_cast<uint32_t>(127 + e) << 23) | man);
      if (s % 3 == 1) base = std::nextafter(base, 0.0f);
      if (s % 3 == 2) base = std::nextafter(base, INFINITY);
      const float amax = base * 6.0f;
      for (size_t j = 0; j < 16; ++j) {
        x[16 * s + j] = amax * (static_cast<float>(j % 12) + 0.5f) / 12.0f * (j % 2 ? -1.0f : 1.0f);
      }
      x[16 * s + s % 16] = s % 2 ? -amax : amax;
    }
    cases.emplace_back("nvfp4 scale boundaries", x);
  }
  {
    // Q1_0: large and small magnitudes mixed, so the sequential sum's
    // rounding differs from any other order; Q2_0: exact halves of amax.
    std::vector<float> x(2 * kRow);
    for (size_t k = 0; k < x.size(); ++k) {
      x[k] = k % 64 == 0 ? 1.6777216e7f : (k % 5 == 0 ? -1.0f : 0.5f + static_cast<float>(k % 3));
      if (k % 128 >= 64) x[k] = k % 64 == 0 ? 8.0f : (static_cast<float>(k % 17) - 8.0f) * 0.5f;
    }
    cases.emplace_back("sum order and halves", x);
  }
  return cases;
}

testing::AssertionResult EncodesAsGgml(const GgmlOracle& ggml, GgmlType type,
                                       const std::vector<float>& x, const float* imatrix) {
  const std::vector<uint8_t> want =
      ggml.Quantize(static_cast<int>(type), x, static_cast<int64_t>(kRow), imatrix);
  std::vector<std::byte> got(want.size());
  const Status status = QuantizeGgml(
      type,
      FloatRows{ElemType::kF32, std::as_bytes(std::span(x)), x.size() / kRow, kRow},
      imatrix != nullptr ? std::span<const float>(imatrix, kRow) : std::span<const float>(),
      got, nullptr);
  if (!status.ok()) return testing::AssertionFailure() << status.ToString();
  const size_t bb = Info(type).block_bytes;
  for (size_t i = 0; i < want.size(); ++i) {
    if (static_cast<uint8_t>(got[i]) != want[i]) {
      return testing::AssertionFailure()
             << Info(type).name << ": byte " << i << " (block " << i / bb << ", byte " << i % bb
             << ") is " << int{static_cast<uint8_t>(got[i])} << ", ggml wrote " << int{want[i]};
    }
  }
  return testing::AssertionSuccess();
}

TEST_P(GgmlNewTypesTest, EncodesAsGgml) {
  const auto* ggml = AMN_GGML_ORACLE_OR_SKIP();
  std::vector<float> imatrix(kRow);
  for (size_t i = 0; i < kRow; ++i) imatrix[i] = i % 53 == 7 ? 0.0f : 0.25f + static_cast<float>(i % 13);
  for (const auto& [what, x] : EncodeCases()) {
    for (GgmlType type : kNewTypes) {
      EXPECT_TRUE(EncodesAsGgml(*ggml, type, x, nullptr)) << what;
      EXPECT_TRUE(EncodesAsGgml(*ggml, type, x, imatrix.data())) << what << ", with imatrix";
    }
  }
}

// A sub-block whose amax is 6 times a UE4M3 byte's value gets that byte,
// except exponent 15 (0x78..0x7D): ggml_fp32_to_ue4m3 maps every such value
// to 0x7E (448). Checked against the oracle and our reference.
TEST(GgmlNewTypes, Ue4m3EncodeOfEveryScale) {
  const auto* ggml = AMN_GGML_ORACLE_OR_SKIP();
  std::vector<float> x(kRow * 2);
  for (size_t s = 0; s < x.size() / 16; ++s) {
    const uint8_t ue = static_cast<uint8_t>(s % 127);  // 0 .. 0x7E
    const float v = 2.0f * std::bit_cast<float>(ggml::Ue4m3HalfBits(ue));
    for (size_t j = 0; j < 16; ++j) x[16 * s + j] = (j == s % 16 ? 6.0f : 1.0f) * v;
  }
  const std::vector<uint8_t> want = ggml->Quantize(static_cast<int>(G::kNVFP4), x, kRow);
  for (size_t s = 0; s < x.size() / 16; ++s) {
    const uint8_t ue = s % 127 >= 0x78 ? 0x7E : static_cast<uint8_t>(s % 127);
    const size_t at = s / 4 * ggml::kNvfp4Bytes + s % 4;
    EXPECT_EQ(want[at], ue) << "sub-block " << s;
    EXPECT_EQ(ref::F32ToUe4m3(std::fabs(x[16 * s + s % 16]) / 6.0f), ue) << "sub-block " << s;
  }
}

AMN_INSTANTIATE_PER_TARGET(GgmlNewTypesTest);

}  // namespace
}  // namespace amn::test
