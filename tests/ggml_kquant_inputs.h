// Rows that stress ggml's K-quant searches, shared by the oracle test
// (tests/ggml_kquant_encode_test.cc) and the per-target test
// (tests/ggml_kquant_encode_target_test.cc): Gaussian rows over seeds and
// scales, shifted / one-sided / uniform rows, outliers, all-zero, ±0,
// all-equal and sparse sub-blocks, tiny, subnormal and huge magnitudes.
// Every case is a whole number of 256-element super-blocks.
#ifndef AMN_TESTS_GGML_KQUANT_INPUTS_H_
#define AMN_TESTS_GGML_KQUANT_INPUTS_H_

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "amn/ggml_type.h"

namespace amn::test {

inline constexpr GgmlType kKQuantEncodeTypes[] = {GgmlType::kQ4_K, GgmlType::kQ6_K,
                                                  GgmlType::kQ5_K, GgmlType::kQ2_K,
                                                  GgmlType::kQ3_K, GgmlType::kIQ4_XS};

inline std::string KQuantName(GgmlType t) {
  switch (t) {
    case GgmlType::kQ2_K: return "Q2_K";
    case GgmlType::kQ3_K: return "Q3_K";
    case GgmlType::kQ4_K: return "Q4_K";
    case GgmlType::kQ5_K: return "Q5_K";
    case GgmlType::kQ6_K: return "Q6_K";
    default: return "IQ4_XS";
  }
}

struct KQuantCase {
  std::string name;
  std::vector<float> x;
};

inline std::vector<float> GaussianRow(uint32_t seed, size_t n, float sigma) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, sigma);
  std::vector<float> x(n);
  for (float& v : x) v = dist(rng);
  return x;
}

// `stride` > 1 keeps every stride-th Gaussian case (for emulated runs).
inline std::vector<KQuantCase> KQuantCases(uint32_t stride = 1) {
  std::vector<KQuantCase> cases;
  const float sigmas[] = {1.0f, 0.02f, 3e-5f, 1e4f};
  uint32_t k = 0;
  for (uint32_t seed = 1; seed <= 4; ++seed) {
    for (float sigma : sigmas) {
      if (k++ % stride != 0) continue;
      cases.push_back({"gaussian seed " + std::to_string(seed) + " sigma " + std::to_string(sigma),
                       GaussianRow(seed, 4096, sigma)});
    }
  }
  // Non-centred and skewed rows: the min of the affine types, the sign of
  // the largest scale of the symmetric ones.
  std::vector<float> shifted = GaussianRow(7, 2048, 0.5f);
  for (float& v : shifted) v += 2.0f;
  cases.push_back({"shifted", shifted});
  std::vector<float> negative = GaussianRow(8, 2048, 1.0f);
  for (float& v : negative) v = -std::fabs(v);
  cases.push_back({"negative", negative});
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> uni(-1.0f, 1.0f);
  std::vector<float> uniform(2048);
  for (float& v : uniform) v = uni(rng);
  cases.push_back({"uniform", uniform});
  for (uint32_t seed = 1; seed <= 3; ++seed) {
    std::vector<float> x = GaussianRow(seed, 1024, 0.01f);
    x[seed * 37] = 1000.0f;      // one huge outlier in block 0
    x[256 + seed * 5] = -50.0f;  // a negative one in block 1
    x[512 + 16 * seed] = 1e30f;  // a huge one at a sub-block's first element
    cases.push_back({"outlier seed " + std::to_string(seed), x});
  }
  {
    std::vector<float> x = GaussianRow(11, 256 * 8, 1.0f);
    std::fill(x.begin(), x.begin() + 256, 0.0f);                        // zeros
    for (int i = 256; i < 512; ++i) x[i] = (i % 3) ? -0.0f : 0.0f;      // ±0
    std::fill(x.begin() + 512, x.begin() + 768, 0.75f);                 // all equal
    std::fill(x.begin() + 768, x.begin() + 1024, -3.0f);                // all equal < 0
    std::fill(x.begin() + 1024, x.begin() + 1056, 0.0f);                // a zero sub-block
    std::fill(x.begin() + 1280 + 64, x.begin() + 1280 + 96, 2.5f);      // an equal one
    for (int i = 1536; i < 1792; ++i) x[i] = (i % 16 == 0) ? 1.0f : 0.0f;  // sparse
    cases.push_back({"degenerate", x});
  }
  {
    // Below GROUP_MAX_EPS, scales whose F16 is zero or subnormal, huge.
    std::vector<float> x;
    const float scales[] = {1e-40f, 1e-38f, 1e-16f, 1e-10f, 1e-6f, 3e-5f, 65504.0f, 1e8f};
    for (uint32_t b = 0; b < 8; ++b) {
      for (float v : GaussianRow(20 + b, 256, 1.0f)) x.push_back(v * scales[b]);
    }
    std::mt19937 bits_rng(5);
    for (int i = 0; i < 256; ++i) x.push_back(std::bit_cast<float>(static_cast<uint32_t>(bits_rng() & 0x807FFFFFu)));
    x[8 * 256 + 100] = 1e-3f;
    cases.push_back({"tiny/subnormal", x});
  }
  {
    // Magnitudes whose squares underflow (the weights x^2 become 0, so the
    // symmetric searches' sums vanish) with ±0 among them.
    std::vector<float> x = GaussianRow(30, 512, 1e-38f);
    for (size_t i = 0; i < x.size(); i += 7) x[i] = (i % 2) ? 0.0f : -0.0f;
    cases.push_back({"near-subnormal with zeros", x});
  }
  return cases;
}

// For the batched searches (several super-blocks in one search: Q2_K,
// Q3_K, Q4_K, Q5_K): a special super-block (all zero, huge, subnormal, one
// outlier) at every position of a batch of four (so also of two), one per
// batch among Gaussian ones, then a short last batch of three special ones;
// and Gaussian rows of 1, 2, 3, 5, 6, 7 super-blocks (short batches that
// search ordinary values, alone or after a full batch).
inline std::vector<KQuantCase> KQuantBatchCases() {
  std::vector<KQuantCase> cases;
  for (uint32_t blocks : {1u, 2u, 3u, 5u, 6u, 7u}) {
    cases.push_back({"gaussian, " + std::to_string(blocks) + " super-blocks",
                     GaussianRow(60 + blocks, 256 * blocks, 1.0f)});
  }
  std::vector<float> x;
  for (uint32_t q = 0; q < 17; ++q) {
    for (uint32_t p = 0; p < (q < 16 ? 4u : 3u); ++p) {
      std::vector<float> sb = GaussianRow(40 + 4 * q + p, 256, 1.0f);
      const uint32_t kind = q < 16 ? (p == q % 4 ? q / 4 : 4) : p;
      if (kind == 0) std::fill(sb.begin(), sb.end(), 0.0f);
      if (kind == 1) for (float& v : sb) v *= 1e30f;
      if (kind == 2) for (float& v : sb) v *= 1e-40f;
      if (kind == 3) {
        for (float& v : sb) v *= 0.01f;
        sb[(37 * q + 11) % 256] = 1000.0f;
      }
      x.insert(x.end(), sb.begin(), sb.end());
    }
  }
  cases.push_back({"batch positions", x});
  return cases;
}

// Importance vectors of n columns (what llama.cpp's imatrix tool stores:
// mean squared activations, so >= 0): random positive ones over seeds, a
// flat one, one with zeros (every 5th column, and a whole 16-column
// sub-block), and one spanning 1e-12 .. 1e12.
struct ImatrixCase {
  std::string name;
  std::vector<float> w;
};

inline std::vector<ImatrixCase> ImatrixCases(size_t n) {
  std::vector<ImatrixCase> cases;
  for (uint32_t seed = 1; seed <= 3; ++seed) {
    std::mt19937 rng(100 + seed);
    std::uniform_real_distribution<float> uni(0.01f, 4.0f);
    std::vector<float> w(n);
    for (float& v : w) v = uni(rng);
    cases.push_back({"random seed " + std::to_string(seed), w});
  }
  cases.push_back({"flat", std::vector<float>(n, 1.0f)});
  {
    std::mt19937 rng(200);
    std::uniform_real_distribution<float> uni(0.1f, 2.0f);
    std::vector<float> w(n);
    for (float& v : w) v = uni(rng);
    for (size_t i = 0; i < n; i += 5) w[i] = 0.0f;
    for (size_t i = 32; i < 48 && i < n; ++i) w[i] = 0.0f;
    cases.push_back({"with zeros", w});
  }
  {
    std::mt19937 rng(300);
    std::uniform_real_distribution<float> expo(-12.0f, 12.0f);
    std::vector<float> w(n);
    for (float& v : w) v = std::pow(10.0f, expo(rng));
    cases.push_back({"huge range", w});
  }
  return cases;
}

}  // namespace amn::test

#endif  // AMN_TESTS_GGML_KQUANT_INPUTS_H_
