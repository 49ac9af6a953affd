// The scalar reference of the ggml simple-type encoders
// (kernels/ref/ggml_encode_ref.h) against ggml itself (tests/ggml_oracle.h:
// ggml_quantize_chunk of the pinned prebuilt, no importance matrix), byte
// for byte, on synthetic rows built to reach every branch (outliers, zero
// and constant blocks, subnormals, signed zeros, rounding midpoints) and on
// the real values of every gguf_reference fixture.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/ref/float_convert_ref.h"
#include "kernels/ref/ggml_encode_imatrix_ref.h"
#include "kernels/ref/ggml_encode_ref.h"
#include "tests/fixtures.h"
#include "tests/quant_fixture_files.h"
#include "tests/ggml_oracle.h"

namespace amn::test {
namespace {

constexpr GgmlType kTypes[] = {GgmlType::kQ4_0,   GgmlType::kQ4_1,  GgmlType::kQ5_0,
                               GgmlType::kQ5_1,   GgmlType::kQ8_0,  GgmlType::kIQ4_NL,
                               GgmlType::kMXFP4,  GgmlType::kTQ1_0, GgmlType::kTQ2_0,
                               GgmlType::kNVFP4, GgmlType::kQ1_0,  GgmlType::kQ2_0};

std::string TypeName(GgmlType t) { return "ggml type " + std::to_string(static_cast<int>(t)); }

// Ours against ggml's for rows of n_per_row; on a difference, names the
// first differing byte, its block and the block's inputs.
void ExpectSameAsGgml(const GgmlOracle& ggml, GgmlType type, const std::vector<float>& x,
                      size_t n_per_row, const std::string& what) {
  const size_t be = ref::GgmlEncodeBlockElems(type);
  const size_t bb = ref::GgmlEncodeBlockBytes(type);
  ASSERT_NE(be, 0u);
  ASSERT_EQ(x.size() % n_per_row, 0u);
  ASSERT_EQ(n_per_row % be, 0u);
  const std::vector<uint8_t> want = ggml.Quantize(static_cast<int>(type), x, n_per_row);
  ASSERT_EQ(want.size(), x.size() / be * bb) << TypeName(type);
  // Exactly sized, with canaries after it.
  std::vector<uint8_t> got(want.size() + 16, 0xA5);
  for (size_t r = 0; r < x.size() / n_per_row; ++r) {
    ASSERT_TRUE(ref::QuantizeGgmlRow(type, x.data() + r * n_per_row, n_per_row,
                                     got.data() + r * (n_per_row / be * bb)));
  }
  for (size_t k = 0; k < 16; ++k) ASSERT_EQ(got[want.size() + k], 0xA5) << "overrun";
  for (size_t i = 0; i < want.size(); ++i) {
    if (got[i] != want[i]) {
      const size_t b = i / bb;
      std::string inputs;
      for (size_t k = 0; k < be && k < 32; ++k) {
        inputs += std::to_string(x[b * be + k]) + " ";
      }
      FAIL() << TypeName(type) << ", " << what << ": byte " << i << " (block " << b
             << ", byte " << i % bb << ") is " << int{got[i]} << ", ggml wrote " << int{want[i]}
             << "; block inputs: " << inputs;
    }
  }
}

std::vector<float> Gaussian(uint32_t seed, size_t n, float scale) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> x(n);
  for (float& v : x) v = dist(rng) * scale;
  return x;
}

constexpr size_t kRow = 1024;  // four TQ super-blocks, 32 legacy blocks

void ExpectAllTypes(const GgmlOracle& ggml, const std::vector<float>& x, const std::string& what,
                    size_t n_per_row = kRow) {
  for (GgmlType t : kTypes) ExpectSameAsGgml(ggml, t, x, n_per_row, what);
}

TEST(GgmlEncodeRef, GaussianRows) {
  const auto* ggml = AMN_GGML_ORACLE_OR_SKIP();
  for (uint32_t seed : {1u, 2u, 3u}) {
    for (float scale : {1e-3f, 0.02f, 1.0f, 300.0f, 1e5f}) {
      ExpectAllTypes(*ggml, Gaussian(seed, 4 * kRow, scale),
                     "gaussian seed " + std::to_string(seed) + " scale " + std::to_string(scale));
    }
  }
}

TEST(GgmlEncodeRef, OneHugeOutlier) {
  const auto* ggml = AMN_GGML_ORACLE_OR_SKIP();
  uint32_t seed = 10;
  for (float outlier : {50.0f, -7e4f, 6.6e5f, 1e30f, -3e38f}) {
    std::vector<float> x = Gaussian(seed++, 2 * kRow, 1.0f);
    for (size_t at : {size_t{5}, size_t{300}, size_t{kRow + 777}}) x[at] = outlier;
    ExpectAllTypes(*ggml, x, "outlier " + std::to_string(outlier));
  }
}

TEST(GgmlEncodeRef, ZeroAndConstantBlocks) {
  const auto* ggml = AMN_GGML_ORACLE_OR_SKIP();
  std::vector<float> x = Gaussian(20, 2 * kRow, 1.0f);
  // Whole TQ super-blocks and legacy blocks: zeros, -0.0, one constant each.
  const float fills[] = {0.0f, -0.0f, 0.37f, -2.5f, 1e-20f, 65504.0f, -1.0f, 3.0f};
  for (size_t f = 0; f < 8; ++f) {
    for (size_t k = 0; k < 256; ++k) x[f * 256 + k] = fills[f];
  }
  ExpectAllTypes(*ggml, x, "zero and constant blocks");
  std::vector<float> signed_zeros(kRow);
  for (size_t k = 0; k < kRow; ++k) signed_zeros[k] = (k * 7 % 3 == 0) ? -0.0f : 0.0f;
  ExpectAllTypes(*ggml, signed_zeros, "signed zeros");
}

TEST(GgmlEncodeRef, Subnormals) {
  const auto* ggml = AMN_GGML_ORACLE_OR_SKIP();
  // Scales from normal down into F32 subnormals, where 1/d overflows and
  // F16 scales flush to zero.
  for (float scale : {1e-30f, 1e-36f, 3e-38f, 1e-39f, 1e-42f, 1e-45f}) {
    std::vector<float> x = Gaussian(30, kRow, scale);
    for (size_t k = 0; k < kRow; k += 37) x[k] = std::bit_cast<float>(uint32_t{1});
    ExpectAllTypes(*ggml, x, "subnormal scale " + std::to_string(scale));
  }
  std::vector<float> x(kRow);
  for (size_t k = 0; k < kRow; ++k) {
    x[k] = std::bit_cast<float>(static_cast<uint32_t>((k * 2654435761u) & 0x807FFFFFu));
  }
  ExpectAllTypes(*ggml, x, "random subnormal bit patterns");
}

TEST(GgmlEncodeRef, RoundingMidpoints) {
  const auto* ggml = AMN_GGML_ORACLE_OR_SKIP();
  // Each block: an anchor that makes d (or 1/d) a small power of two or an
  // integer, then half-integers and codebook midpoints, so x * id lands
  // exactly on .5 for every type's rounding.
  const float anchors[] = {127.0f, -8.0f, 8.0f, 15.0f, -16.0f, 31.0f, 2.0f, 1.0f,
                           12.0f,  6.0f,  -127.0f, 0.5f, 4.0f, 24.0f, -1.0f, 254.0f};
  std::vector<float> x(2 * kRow);
  for (size_t b = 0; b < x.size() / 32; ++b) {
    const float a = anchors[b % 16];
    x[b * 32] = a;
    for (size_t k = 1; k < 32; ++k) {
      const float half = (static_cast<float>(k) - 16.0f) + 0.5f;  // -14.5 .. 15.5
      x[b * 32 + k] = (b / 16) % 2 == 0 ? half * std::fabs(a) / 16.0f : half / 2.0f;
    }
  }
  ExpectAllTypes(*ggml, x, "midpoints");
  // IQ4_NL: -127 makes one trial scale exactly 1, and every other element
  // sits halfway between two codebook entries (best_index_int8's tie).
  const float mids[] = {-115.5f, -93.5f, -74.0f, -57.0f, -42.0f, -28.5f, -16.0f, -4.5f,
                        7.0f,    19.0f,  31.5f,  45.5f,  61.0f,  79.0f,  101.0f};
  std::vector<float> t(kRow);
  for (size_t k = 0; k < kRow; ++k) t[k] = k % 32 == 0 ? -127.0f : mids[(k + k / 32) % 15];
  ExpectSameAsGgml(*ggml, GgmlType::kIQ4_NL, t, kRow, "codebook midpoints");
  // Min/max types: min 0, max 15 or 31, then half-integers in between.
  for (float top : {15.0f, 31.0f}) {
    std::vector<float> y(kRow);
    for (size_t k = 0; k < kRow; ++k) {
      y[k] = k % 32 == 0 ? 0.0f : k % 32 == 1 ? top : static_cast<float>(k % 31) + 0.5f;
    }
    ExpectAllTypes(*ggml, y, "min/max midpoints " + std::to_string(top));
  }
}

// MXFP4's exponent is floorf(log2f(amax)): amax just below a power of two,
// where log2f rounds up to the integer, and exact powers of two.
TEST(GgmlEncodeRef, Mxfp4ExponentNearPowersOfTwo) {
  const auto* ggml = AMN_GGML_ORACLE_OR_SKIP();
  std::vector<float> x(4 * kRow);
  for (size_t b = 0; b < x.size() / 32; ++b) {
    const int k = static_cast<int>(b % 64) - 32;
    const float p = std::ldexp(1.0f, k);
    const float amax = b % 3 == 0 ? p : b % 3 == 1 ? std::nextafter(p, 0.0f)
                                                   : std::nextafter(p, 2 * p);
    for (size_t j = 0; j < 32; ++j) x[b * 32 + j] = amax * static_cast<float>(j) / 31.0f;
    x[b * 32 + b % 32] = (b % 2 == 0) ? amax : -amax;
  }
  ExpectSameAsGgml(*ggml, GgmlType::kMXFP4, x, kRow, "amax near powers of two");
}

TEST(GgmlEncodeRef, RowLengths) {
  const auto* ggml = AMN_GGML_ORACLE_OR_SKIP();
  const std::vector<float> x = Gaussian(40, 3 * 2560, 0.5f);
  ExpectAllTypes(*ggml, x, "rows of 2560", 2560);
  ExpectAllTypes(*ggml, std::vector<float>(x.begin(), x.begin() + 256), "one row of 256", 256);
}

// With an importance matrix: ggml's quantize_<type>(..., quant_weights), the
// row's blocks from make_qx_quants / make_qkx3_quants / the IQ4_NL search.
void ExpectImatrixSameAsGgml(const GgmlOracle& ggml, GgmlType type, const std::vector<float>& x,
                             const std::vector<float>& imatrix, const std::string& what) {
  const size_t n_per_row = imatrix.size();
  const size_t bb = ref::GgmlEncodeBlockBytes(type);
  const size_t row_bytes = n_per_row / ref::GgmlEncodeBlockElems(type) * bb;
  const std::vector<uint8_t> want =
      ggml.Quantize(static_cast<int>(type), x, static_cast<int64_t>(n_per_row), imatrix.data());
  ASSERT_EQ(want.size(), x.size() / n_per_row * row_bytes);
  std::vector<uint8_t> got(want.size());
  for (size_t r = 0; r < x.size() / n_per_row; ++r) {
    ASSERT_TRUE(ref::QuantizeGgmlRowImatrix(type, x.data() + r * n_per_row, n_per_row,
                                            imatrix.data(), got.data() + r * row_bytes));
  }
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(got[i], want[i]) << TypeName(type) << " with imatrix, " << what << ": byte " << i
                               << " (block " << i / bb << ", byte " << i % bb << ")";
  }
}

std::vector<float> Imatrix(uint32_t seed, size_t n) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0.0f, 4.0f);
  std::vector<float> w(n);
  for (size_t i = 0; i < n; ++i) w[i] = i % 53 == 7 ? 0.0f : u(rng) * u(rng);
  return w;
}

TEST(GgmlEncodeRef, ImatrixGaussianAndEdgeRows) {
  const auto* ggml = AMN_GGML_ORACLE_OR_SKIP();
  for (GgmlType t : kTypes) {
    for (uint32_t seed : {1u, 2u}) {
      for (float scale : {0.02f, 1.0f, 1e4f}) {
        ExpectImatrixSameAsGgml(*ggml, t, Gaussian(seed, 4 * kRow, scale), Imatrix(seed, kRow),
                                "gaussian scale " + std::to_string(scale));
      }
    }
    std::vector<float> x = Gaussian(7, 2 * kRow, 1.0f);
    for (size_t k = 0; k < 256; ++k) x[k] = 0.0f;
    for (size_t k = 256; k < 512; ++k) x[k] = -1.5f;
    for (size_t k = 512; k < 544; ++k) x[k] = 1e-16f * static_cast<float>(k % 5);
    x[900] = 3e4f;
    ExpectImatrixSameAsGgml(*ggml, t, x, Imatrix(9, kRow), "zero, constant, tiny, outlier");
    ExpectImatrixSameAsGgml(*ggml, t, x, std::vector<float>(kRow, 1.0f), "unit imatrix");
  }
}

// Every gguf_reference fixture's expected BF16, widened to F32, encoded to
// every type: real weight distributions.
TEST(GgmlEncodeRef, FixtureValues) {
  const auto files = FixtureFiles("gguf_reference", ".bin");
  AMN_SKIP_WITHOUT_FIXTURES(files, "gguf_reference");
  const auto* ggml = AMN_GGML_ORACLE_OR_SKIP();
  for (const auto& path : files) {
    const auto fixture = ReadGgmlBlockFixture(path);
    ASSERT_TRUE(fixture.has_value()) << path << ": malformed fixture";
    const uint32_t n = fixture->n;
    std::vector<float> x(n);
    const uint8_t* golden = fixture->golden_bf16.data();
    for (uint32_t i = 0; i < n; ++i) {
      x[i] = std::bit_cast<float>(static_cast<uint32_t>(golden[2 * i] | golden[2 * i + 1] << 8)
                                  << 16);
    }
    const size_t row = n % 4096 == 0 ? 4096 : 256;
    ASSERT_EQ(n % row, 0u) << path;
    ExpectAllTypes(*ggml, x, path.filename().string(), row);
    const std::vector<float> imatrix = Imatrix(n, row);
    for (GgmlType t : kTypes) {
      ExpectImatrixSameAsGgml(*ggml, t, x, imatrix, path.filename().string());
    }
  }
}

}  // namespace
}  // namespace amn::test
