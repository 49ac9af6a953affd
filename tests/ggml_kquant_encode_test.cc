// The K-quant encoders' scalar reference (kernels/ref/ggml_kquant_encode_ref.h)
// against ggml itself (tests/ggml_oracle.h: ggml_quantize_chunk without
// importance matrix, i.e. quantize_row_<type>_ref): the blocks must be the
// same bytes. Inputs: Gaussian rows over several seeds and scales, one huge
// outlier, all-zero and all-equal sub-blocks, subnormals, ±0, tiny and huge
// magnitudes, and the real weights of the gguf_reference fixtures (their
// expected BF16, widened), each quantized to every type of the family.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "amn/ggml_type.h"
#include "kernels/ref/ggml_kquant_encode_ref.h"
#include "tests/fixtures.h"
#include "tests/ggml_oracle.h"

namespace amn::test {
namespace {

constexpr GgmlType kTypes[] = {GgmlType::kQ4_K, GgmlType::kQ6_K, GgmlType::kQ5_K,
                               GgmlType::kQ2_K, GgmlType::kQ3_K, GgmlType::kIQ4_XS};

std::string TypeName(GgmlType t) {
  switch (t) {
    case GgmlType::kQ2_K: return "Q2_K";
    case GgmlType::kQ3_K: return "Q3_K";
    case GgmlType::kQ4_K: return "Q4_K";
    case GgmlType::kQ5_K: return "Q5_K";
    case GgmlType::kQ6_K: return "Q6_K";
    default: return "IQ4_XS";
  }
}

// Ours against ggml's on `x` (rows of n_per_row); reports the first
// differing block.
void ExpectSameAsGgml(const GgmlOracle& ggml, GgmlType type, const std::vector<float>& x,
                      int64_t n_per_row, const std::string& what) {
  const int id = static_cast<int>(type);
  const std::vector<uint8_t> want = ggml.Quantize(id, x, n_per_row);
  const size_t block_bytes = ref::KQuantEncodeBlockBytes(type);
  ASSERT_EQ(want.size(), x.size() / 256 * block_bytes) << what;
  std::vector<uint8_t> got(want.size() + 16, 0xA5);  // canary after the blocks
  ref::QuantizeKQuantRow(type, x.data(), x.size(), got.data());
  for (size_t k = 0; k < 16; ++k) ASSERT_EQ(got[want.size() + k], 0xA5) << what << ": overrun";
  for (size_t b = 0; b < x.size() / 256; ++b) {
    const int cmp = std::memcmp(got.data() + b * block_bytes, want.data() + b * block_bytes,
                                block_bytes);
    if (cmp != 0) {
      size_t k = 0;
      while (got[b * block_bytes + k] == want[b * block_bytes + k]) ++k;
      FAIL() << TypeName(type) << " " << what << ": block " << b << " differs first at byte " << k
             << " (ours " << int(got[b * block_bytes + k]) << ", ggml "
             << int(want[b * block_bytes + k]) << ")";
    }
  }
}

std::vector<float> Gaussian(uint32_t seed, size_t n, float sigma) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, sigma);
  std::vector<float> x(n);
  for (float& v : x) v = dist(rng);
  return x;
}

TEST(GgmlKQuantEncodeRef, GaussianRowsMatchGgml) {
  const auto* ggml = AMN_GGML_ORACLE_OR_SKIP();
  const float sigmas[] = {1.0f, 0.02f, 3e-5f, 1e4f};
  for (GgmlType type : kTypes) {
    for (uint32_t seed = 1; seed <= 4; ++seed) {
      for (float sigma : sigmas) {
        ExpectSameAsGgml(*ggml, type, Gaussian(seed, 4096, sigma), 1024,
                         "seed " + std::to_string(seed) + " sigma " + std::to_string(sigma));
      }
    }
  }
}

// Non-centred and skewed rows exercise the min (affine types) and the sign
// of the largest scale (symmetric types).
TEST(GgmlKQuantEncodeRef, ShiftedAndOneSidedRowsMatchGgml) {
  const auto* ggml = AMN_GGML_ORACLE_OR_SKIP();
  for (GgmlType type : kTypes) {
    std::vector<float> shifted = Gaussian(7, 2048, 0.5f);
    for (float& v : shifted) v += 2.0f;
    ExpectSameAsGgml(*ggml, type, shifted, 2048, "shifted");
    std::vector<float> negative = Gaussian(8, 2048, 1.0f);
    for (float& v : negative) v = -std::fabs(v);
    ExpectSameAsGgml(*ggml, type, negative, 2048, "negative");
    std::mt19937 rng(9);
    std::uniform_real_distribution<float> uni(-1.0f, 1.0f);
    std::vector<float> uniform(2048);
    for (float& v : uniform) v = uni(rng);
    ExpectSameAsGgml(*ggml, type, uniform, 2048, "uniform");
  }
}

TEST(GgmlKQuantEncodeRef, OutliersMatchGgml) {
  const auto* ggml = AMN_GGML_ORACLE_OR_SKIP();
  for (GgmlType type : kTypes) {
    for (uint32_t seed = 1; seed <= 3; ++seed) {
      std::vector<float> x = Gaussian(seed, 1024, 0.01f);
      x[seed * 37] = 1000.0f;       // one huge outlier in block 0
      x[256 + seed * 5] = -50.0f;   // a negative one in block 1
      x[512 + 16 * seed] = 1e30f;   // a huge one at a sub-block's first element
      ExpectSameAsGgml(*ggml, type, x, 1024, "outlier seed " + std::to_string(seed));
    }
  }
}

// Sub-blocks that are all zero, all ±0, all equal (positive, negative), and
// blocks whose every sub-block is so (the zero-block paths of every type).
TEST(GgmlKQuantEncodeRef, DegenerateBlocksMatchGgml) {
  const auto* ggml = AMN_GGML_ORACLE_OR_SKIP();
  for (GgmlType type : kTypes) {
    std::vector<float> x = Gaussian(11, 256 * 8, 1.0f);
    std::fill(x.begin(), x.begin() + 256, 0.0f);                 // block 0: zeros
    for (int i = 256; i < 512; ++i) x[i] = (i % 3) ? -0.0f : 0.0f;  // block 1: ±0
    std::fill(x.begin() + 512, x.begin() + 768, 0.75f);          // block 2: all equal
    std::fill(x.begin() + 768, x.begin() + 1024, -3.0f);         // block 3: all equal < 0
    std::fill(x.begin() + 1024, x.begin() + 1056, 0.0f);         // block 4: a zero sub-block
    std::fill(x.begin() + 1280 + 64, x.begin() + 1280 + 96, 2.5f);  // block 5: an equal one
    for (int i = 1536; i < 1792; ++i) x[i] = (i % 16 == 0) ? 1.0f : 0.0f;  // block 6: sparse
    ExpectSameAsGgml(*ggml, type, x, 256 * 8, "degenerate");
  }
}

// Subnormal and tiny values: below GROUP_MAX_EPS, scales whose F16 rounds
// to zero or to a subnormal, and a mix with normal values.
TEST(GgmlKQuantEncodeRef, TinyAndSubnormalValuesMatchGgml) {
  const auto* ggml = AMN_GGML_ORACLE_OR_SKIP();
  for (GgmlType type : kTypes) {
    std::vector<float> x;
    const float scales[] = {1e-40f, 1e-38f, 1e-16f, 1e-10f, 1e-6f, 3e-5f, 65504.0f, 1e8f};
    for (size_t b = 0; b < 8; ++b) {
      std::vector<float> g = Gaussian(20 + static_cast<uint32_t>(b), 256, 1.0f);
      for (float& v : g) x.push_back(v * scales[b]);
    }
    // A block of subnormal bit patterns with one normal value.
    std::mt19937 rng(5);
    for (int i = 0; i < 256; ++i) {
      const uint32_t bits = (rng() & 0x807FFFFFu);
      x.push_back(std::bit_cast<float>(bits));
    }
    x[8 * 256 + 100] = 1e-3f;
    ExpectSameAsGgml(*ggml, type, x, 256 * 9, "tiny/subnormal");
  }
}

// Real weights: every gguf_reference fixture's expected BF16 output (a
// dequantized real tensor), widened to F32, quantized to every type.
TEST(GgmlKQuantEncodeRef, RealFixtureWeightsMatchGgml) {
  const auto* ggml = AMN_GGML_ORACLE_OR_SKIP();
  const auto files = FixtureFiles("gguf_reference", ".bin");
  AMN_SKIP_WITHOUT_FIXTURES(files, "gguf_reference");
  for (const auto& path : files) {
    const std::vector<uint8_t> bytes = ReadBytes(path);
    ASSERT_GE(bytes.size(), 16u) << path;
    const uint32_t n = LoadLe32(bytes.data() + 4);
    const uint32_t raw_len = LoadLe32(bytes.data() + 8);
    const uint32_t golden_len = LoadLe32(bytes.data() + 12);
    ASSERT_EQ(bytes.size(), 16ull + raw_len + golden_len) << path;
    ASSERT_EQ(golden_len, 2ull * n) << path;
    const uint8_t* bf16 = bytes.data() + 16 + raw_len;
    const size_t n_used = n / 256 * 256;
    std::vector<float> x(n_used);
    for (size_t i = 0; i < n_used; ++i) {
      const uint32_t h = static_cast<uint32_t>(bf16[2 * i] | bf16[2 * i + 1] << 8);
      x[i] = std::bit_cast<float>(h << 16);
    }
    for (GgmlType type : kTypes) {
      ExpectSameAsGgml(*ggml, type, x, 256, path.filename().string());
    }
  }
}

}  // namespace
}  // namespace amn::test
