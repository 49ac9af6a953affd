// The IQ2/IQ1 encoders' dispatched neighbour scoring (kernels/
// ggml_iq2_neighbours-inl.h via dispatch/ggml_iq2_iq1_encode.cc) on every
// supported target against its scalar reference (ref::iq2::
// ScoreNeighboursRef): the distances bit for bit, for lists of every
// length up to past two vectors, over all four grids; then the whole
// encoder (internal::EncodeGgmlIq2Iq1Quant) against the reference encoder
// (itself checked against ggml in ggml_iq2_iq1_encode_test): blocks and
// error sums byte for byte, F32 and BF16 input, NaN refused at the same
// index. The probe proves which target ran.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "amn/targets.h"
#include "dispatch/ggml_iq2_iq1_encode.h"
#include "kernels/ref/float_convert_ref.h"
#include "kernels/ref/ggml_iq2_grid_index.h"
#include "kernels/ref/ggml_iq2_iq1_encode_ref.h"
#include "tests/ggml_encode_runs.h"
#include "tests/ggml_kquant_inputs.h"
#include "tests/target_param.h"

namespace amn::test {
namespace {

using GgmlIq2Iq1Targets = PerTarget;

constexpr GgmlType kTypes[] = {GgmlType::kIQ2_XXS, GgmlType::kIQ2_XS, GgmlType::kIQ2_S,
                               GgmlType::kIQ1_S, GgmlType::kIQ1_M};

TEST_P(GgmlIq2Iq1Targets, ProbeReportsTheForcedTarget) {
  EXPECT_EQ(::amn::GgmlIq2Iq1EncodeTarget(), GetParam());
}

TEST_P(GgmlIq2Iq1Targets, ScoringMatchesReferenceBits) {
  using ref::iq2::GridKind;
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> uni(0.0f, 3.0f);
  const float q2[3] = {1.0f, 3.0f, 5.0f};
  const float q1[3] = {-1.125f, -0.125f, 0.875f};
  for (GridKind kind : {GridKind::kIq2Xxs, GridKind::kIq2Xs, GridKind::kIq2S, GridKind::kIq1}) {
    const ref::iq2::GridIndex& grid = ref::iq2::GetGridIndex(kind);
    const std::vector<float> table = ref::iq2::GridTable(grid, kind == GridKind::kIq1 ? q1 : q2);
    for (size_t n = 0; n <= 40; ++n) {
      std::vector<uint16_t> list(n);
      for (uint16_t& g : list) g = static_cast<uint16_t>(rng() % grid.Size());
      float x[8], w[8];
      for (int i = 0; i < 8; ++i) {
        x[i] = normal(rng);
        w[i] = i == 3 ? 0.0f : uni(rng);  // a zero weight, as imatrix zeros give
      }
      const float scale = std::fabs(normal(rng)) + 0.01f;
      std::vector<float> want(n + 1, -7.0f), got(n + 1, -7.0f);
      ref::iq2::ScoreNeighboursRef(table.data(), list.data(), n, x, w, scale, want.data());
      internal::ScoreIq2Neighbours(table.data(), list.data(), n, x, w, scale, got.data());
      for (size_t j = 0; j <= n; ++j) {
        ASSERT_EQ(std::bit_cast<uint32_t>(got[j]), std::bit_cast<uint32_t>(want[j]))
            << "grid " << int(kind) << " n " << n << " j " << j;  // j == n: untouched
      }
    }
  }
}

using Encoded = EncodedBlocks;

// The dispatched encoder, and the scalar reference once per input
// (ggml_encode_runs.h), on rows x cols values.
Encoded Encode(GgmlType type, const void* in, ElemType in_type, uint64_t rows, uint64_t cols,
               const float* imatrix) {
  return RunGgmlEncoder(internal::EncodeGgmlIq2Iq1Quant, ref::Iq2Iq1EncodeBlockBytes(type), type,
                        in, in_type, rows, cols, imatrix);
}
const Encoded& Reference(GgmlType type, const void* in, ElemType in_type, uint64_t rows,
                         uint64_t cols, const float* imatrix) {
  // The overload with the scalar scorer (the other takes the scorer).
  const GgmlEncodeFn reference = ref::EncodeGgmlIq2Iq1Quant;
  return ReferenceRun(reference, ref::Iq2Iq1EncodeBlockBytes(type), type, in, in_type, rows, cols,
                      imatrix);
}

void ExpectSame(const Encoded& want, const Encoded& got, const std::string& what) {
  EXPECT_EQ(got.result, want.result) << what;
  EXPECT_TRUE(got.blocks == want.blocks) << what;
  EXPECT_EQ(std::memcmp(&got.errors, &want.errors, sizeof(want.errors)), 0) << what;
}

TEST_P(GgmlIq2Iq1Targets, EncoderMatchesReferenceBytes) {
  std::vector<KQuantCase> cases;
  for (const KQuantCase& c : KQuantCases(Emulated() ? 8 : 3)) {
    KQuantCase k = c;
    k.x.resize(std::min<size_t>(k.x.size(), 1024));
    for (float& v : k.x) {
      if (std::fabs(v) >= 1e18f) v = v < 0 ? -1e6f : 1e6f;  // see ggml_iq2_iq1_encode_test
    }
    cases.push_back(k);
  }
  for (const KQuantCase& c : cases) {
    const uint64_t cols = c.x.size() % 512 == 0 ? 512 : 256;
    const uint64_t rows = c.x.size() / cols;
    const std::vector<float> w = ImatrixCases(cols)[0].w;
    std::vector<uint16_t> bf16(c.x.size());
    for (size_t i = 0; i < c.x.size(); ++i) {
      bf16[i] = ref::F32BitsToBf16(std::bit_cast<uint32_t>(c.x[i]));
    }
    for (GgmlType type : kTypes) {
      const std::string what = c.name + " type " + std::to_string(static_cast<int>(type));
      ExpectSame(Reference(type, c.x.data(), ElemType::kF32, rows, cols, w.data()),
                 Encode(type, c.x.data(), ElemType::kF32, rows, cols, w.data()), what);
      ExpectSame(Reference(type, bf16.data(), ElemType::kBf16, rows, cols, w.data()),
                 Encode(type, bf16.data(), ElemType::kBf16, rows, cols, w.data()),
                 what + " bf16");
    }
  }
  // Without importance values (IQ2_S, IQ1_M), and a NaN refused by index.
  std::vector<float> x = GaussianRow(9, 1024, 0.5f);
  for (GgmlType type : {GgmlType::kIQ2_S, GgmlType::kIQ1_M}) {
    ExpectSame(Reference(type, x.data(), ElemType::kF32, 2, 512, nullptr),
               Encode(type, x.data(), ElemType::kF32, 2, 512, nullptr), "no imatrix");
  }
  x[700] = NAN;
  const std::vector<float> w = ImatrixCases(512)[0].w;
  for (GgmlType type : kTypes) {
    const Encoded want = Reference(type, x.data(), ElemType::kF32, 2, 512, w.data());
    EXPECT_EQ(want.result, 700u);
    ExpectSame(want, Encode(type, x.data(), ElemType::kF32, 2, 512, w.data()), "NaN");
  }
}

// Finite inputs whose squares overflow F32: every weight is Inf and the
// sub-block scales NaN. ggml aborts there (docs/schemes/
// ggml-encode-iq2-iq1.md, "Order, and what cannot match"); amn must give the
// reference's bytes on every target and read nothing out of bounds (IQ2_XXS
// read its grid map at an uninitialized key until 2026-11-28).
TEST_P(GgmlIq2Iq1Targets, OverflowingSquaresMatchReference) {
  // IQ2_XXS's levels then stay all zero: key 0 must be on its grid.
  ASSERT_GE(ref::iq2::GetGridIndex(ref::iq2::GridKind::kIq2Xxs).Map(0), 0);
  constexpr uint64_t kCols = 256;
  std::vector<float> x;
  for (uint64_t i = 0; i < kCols; ++i) {  // every element huge, signs mixed
    x.push_back((i % 3 == 0 ? -1.0f : 1.0f) * 3.0e38f / static_cast<float>(1 + i % 5));
  }
  for (uint64_t i = 0; i < kCols; ++i) {  // one huge element per group of 8
    x.push_back(i % 8 == 5 ? 2.0e30f : 0.01f * static_cast<float>(i % 13) - 0.06f);
  }
  for (uint64_t i = 0; i < kCols; ++i) {  // just past the overflow of one square
    x.push_back((i % 2 == 0 ? 1.9e19f : -1.0e19f) + static_cast<float>(i));
  }
  const uint64_t rows = x.size() / kCols;
  std::vector<uint16_t> bf16(x.size());
  for (size_t i = 0; i < x.size(); ++i) bf16[i] = ref::F32BitsToBf16(std::bit_cast<uint32_t>(x[i]));
  const std::vector<float> w = ImatrixCases(kCols)[0].w;
  for (GgmlType type : kTypes) {
    const std::string what = "type " + std::to_string(static_cast<int>(type));
    ExpectSame(Reference(type, x.data(), ElemType::kF32, rows, kCols, w.data()),
               Encode(type, x.data(), ElemType::kF32, rows, kCols, w.data()), what);
    ExpectSame(Reference(type, bf16.data(), ElemType::kBf16, rows, kCols, w.data()),
               Encode(type, bf16.data(), ElemType::kBf16, rows, kCols, w.data()), what + " bf16");
  }
}

AMN_INSTANTIATE_PER_TARGET(GgmlIq2Iq1Targets);

}  // namespace
}  // namespace amn::test
