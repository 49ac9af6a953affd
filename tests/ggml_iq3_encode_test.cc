// The IQ3_XXS and IQ3_S encoders' scalar reference
// (kernels/ref/ggml_iq3_encode_ref.h) against ggml itself
// (tests/ggml_oracle.h: ggml_quantize_chunk, without and with the same
// quant_weights): the blocks must be the same bytes. Rows: the shared
// quantizer cases (tests/ggml_kquant_inputs.h: Gaussian rows at several
// scales, outliers, all-zero, all-equal and ±0 blocks, zero sub-blocks,
// subnormals) with magnitudes capped where ggml itself aborts, as rows of
// 256, 512, 1024 or 4096 elements; importance vectors:
// tests/ggml_kquant_inputs.h ImatrixCases. Controls show the comparison
// catches a wrong importance vector and a wrong neighbour table.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "amn/ggml_type.h"
#include "kernels/ggml_iq_grids.h"
#include "kernels/ref/ggml_iq3_encode_ref.h"
#include "kernels/ref/ggml_iq3_index.h"
#include "tests/fixtures.h"
#include "tests/ggml_kquant_inputs.h"
#include "tests/ggml_oracle.h"
#include "tests/quant_fixture_files.h"

namespace amn::test {
namespace {

constexpr GgmlType kIq3Types[] = {GgmlType::kIQ3_XXS, GgmlType::kIQ3_S};

std::string Name(GgmlType t) { return t == GgmlType::kIQ3_XXS ? "IQ3_XXS" : "IQ3_S"; }

// ggml asserts (aborts the process) when every neighbour of a group has an
// infinite weighted distance, which happens once x^4 overflows F32: the
// oracle can only be asked about |x| <= 1e8. Larger values are capped
// there (sign kept), so the outlier cases still hold a value 1e4 to 1e10
// times their neighbours.
std::vector<KQuantCase> Iq3Cases() {
  std::vector<KQuantCase> cases = KQuantCases();
  for (KQuantCase& c : cases) {
    for (float& v : c.x) {
      if (std::fabs(v) > 1e8f) v = std::copysign(1e8f, v);
    }
  }
  std::vector<float> x = GaussianRow(41, 2048, 0.5f);
  x[3] = 4e4f;              // a huge outlier in the first group
  x[256 + 255] = -7e7f;     // a huge negative one at a super-block's last element
  x[1024 + 33] = 1e-39f;    // a subnormal among normal values
  x[1024 + 34] = -0.0f;
  cases.push_back({"outliers 4e4 / -7e7", x});
  return cases;
}

size_t RowLength(size_t n) {
  return n % 4096 == 0 ? 4096 : n % 1024 == 0 ? 1024 : n % 512 == 0 ? 512 : 256;
}

std::vector<uint8_t> Ours(GgmlType type, const std::vector<float>& x, size_t n_per_row,
                          const float* imatrix) {
  const size_t row_bytes = n_per_row / 256 * ref::Iq3EncodeBlockBytes(type);
  const size_t rows = x.size() / n_per_row;
  std::vector<uint8_t> got(rows * row_bytes + 16, 0xA5);  // canary after the blocks
  for (size_t r = 0; r < rows; ++r) {
    ref::QuantizeIq3Row(type, x.data() + r * n_per_row, n_per_row, got.data() + r * row_bytes,
                        imatrix);
  }
  for (size_t k = 0; k < 16; ++k) EXPECT_EQ(got[rows * row_bytes + k], 0xA5) << "overrun";
  got.resize(rows * row_bytes);
  return got;
}

long FirstDifferentBlock(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b,
                         size_t block_bytes) {
  for (size_t k = 0; k < std::min(a.size(), b.size()); ++k) {
    if (a[k] != b[k]) return static_cast<long>(k / block_bytes);
  }
  return a.size() == b.size() ? -1 : 0;
}

void ExpectSameAsGgml(const GgmlOracle& ggml, GgmlType type, const std::vector<float>& x,
                      size_t n_per_row, const float* imatrix, const std::string& what) {
  const std::vector<uint8_t> want =
      ggml.Quantize(static_cast<int>(type), x, static_cast<int64_t>(n_per_row), imatrix);
  const size_t block_bytes = ref::Iq3EncodeBlockBytes(type);
  ASSERT_EQ(want.size(), x.size() / 256 * block_bytes) << what;
  const std::vector<uint8_t> got = Ours(type, x, n_per_row, imatrix);
  const long b = FirstDifferentBlock(got, want, block_bytes);
  if (b >= 0) {
    size_t k = 0;
    while (got[b * block_bytes + k] == want[b * block_bytes + k]) ++k;
    ADD_FAILURE() << Name(type) << " " << what << ": block " << b << " differs first at byte " << k
                  << " (ours " << int(got[b * block_bytes + k]) << ", ggml "
                  << int(want[b * block_bytes + k]) << ")";
  }
}

TEST(GgmlIq3EncodeRef, GgmlDoesNotRequireAnImatrix) {
  const auto* ggml = AMN_GGML_ORACLE_OR_SKIP();
  for (GgmlType type : kIq3Types) {
    EXPECT_FALSE(ggml->RequiresImatrix(static_cast<int>(type))) << Name(type);
    EXPECT_EQ(ggml->RowSize(static_cast<int>(type), 256), ref::Iq3EncodeBlockBytes(type));
  }
}

TEST(GgmlIq3EncodeRef, GeneratedRowsMatchGgmlWithoutImatrix) {
  const auto* ggml = AMN_GGML_ORACLE_OR_SKIP();
  for (const KQuantCase& c : Iq3Cases()) {
    for (GgmlType type : kIq3Types) {
      ExpectSameAsGgml(*ggml, type, c.x, RowLength(c.x.size()), nullptr, c.name);
    }
  }
}

TEST(GgmlIq3EncodeRef, GeneratedRowsMatchGgmlWithImatrix) {
  const auto* ggml = AMN_GGML_ORACLE_OR_SKIP();
  for (const KQuantCase& c : Iq3Cases()) {
    const size_t n_per_row = RowLength(c.x.size());
    for (const ImatrixCase& w : ImatrixCases(n_per_row)) {
      for (GgmlType type : kIq3Types) {
        ExpectSameAsGgml(*ggml, type, c.x, n_per_row, w.w.data(), c.name + " / imatrix " + w.name);
      }
    }
  }
}

// Several row lengths over the same data: rows of 256 .. 4096 share one
// importance vector of their own length.
TEST(GgmlIq3EncodeRef, RowLengthsMatchGgml) {
  const auto* ggml = AMN_GGML_ORACLE_OR_SKIP();
  const std::vector<float> x = GaussianRow(51, 6144, 0.05f);
  for (size_t n_per_row : {256u, 768u, 2048u, 6144u}) {
    const std::vector<float> w = ImatrixCases(n_per_row)[1].w;
    for (GgmlType type : kIq3Types) {
      const std::string what = "rows of " + std::to_string(n_per_row);
      ExpectSameAsGgml(*ggml, type, x, n_per_row, nullptr, what);
      ExpectSameAsGgml(*ggml, type, x, n_per_row, w.data(), what + " with imatrix");
    }
  }
}

// Real weights: the gguf_reference fixtures' expected BF16 (dequantized
// real tensors) as rows of 256 (at most 32 rows per file).
TEST(GgmlIq3EncodeRef, RealFixtureWeightsMatchGgml) {
  const auto* ggml = AMN_GGML_ORACLE_OR_SKIP();
  const auto files = FixtureFiles("gguf_reference", ".bin");
  AMN_SKIP_WITHOUT_FIXTURES(files, "gguf_reference");
  for (const auto& path : files) {
    const auto fixture = ReadGgmlBlockFixture(path);
    ASSERT_TRUE(fixture.has_value()) << path << ": malformed fixture";
    const size_t n_used = std::min<size_t>(fixture->n / 256 * 256, 32 * 256);
    std::vector<float> x(n_used);
    const uint8_t* bf16 = fixture->golden_bf16.data();
    for (size_t i = 0; i < n_used; ++i) {
      const uint32_t h = static_cast<uint32_t>(bf16[2 * i] | bf16[2 * i + 1] << 8);
      x[i] = std::bit_cast<float>(h << 16);
    }
    const std::vector<float> w = ImatrixCases(256)[0].w;
    for (GgmlType type : kIq3Types) {
      ExpectSameAsGgml(*ggml, type, x, 256, nullptr, path.filename().string());
      ExpectSameAsGgml(*ggml, type, x, 256, w.data(), path.filename().string() + " / imatrix");
    }
  }
}

// The comparison can fail: importance values reversed within each group of
// 4 columns, and no importance values at all, give other bytes than ggml's
// with the right vector.
TEST(GgmlIq3EncodeRef, WrongImportanceIsCaught) {
  const auto* ggml = AMN_GGML_ORACLE_OR_SKIP();
  const std::vector<float> x = GaussianRow(77, 2048, 1.0f);
  const std::vector<float> w = ImatrixCases(1024)[0].w;
  std::vector<float> permuted = w;
  for (size_t i = 0; i < permuted.size(); i += 4) {
    std::reverse(permuted.begin() + i, permuted.begin() + i + 4);
  }
  for (GgmlType type : kIq3Types) {
    const size_t bb = ref::Iq3EncodeBlockBytes(type);
    const std::vector<uint8_t> want = ggml->Quantize(static_cast<int>(type), x, 1024, w.data());
    EXPECT_GE(FirstDifferentBlock(Ours(type, x, 1024, permuted.data()), want, bb), 0) << Name(type);
    EXPECT_GE(FirstDifferentBlock(Ours(type, x, 1024, nullptr), want, bb), 0) << Name(type);
  }
}

// The search tables, independently of the encoder: every grid entry maps to
// itself, every off-grid point's candidates are grid entries in (distance,
// index) order covering exactly nwant distinct distances, the nearest of
// which no grid entry beats; the first neighbour lists ggml builds are
// pinned by hand (point 1 = levels (1,0,0,0)).
TEST(GgmlIq3Index, TablesHaveGgmlsShape) {
  for (int which = 0; which < 2; ++which) {
    const ref::Iq3Index& index = which == 0 ? ref::Iq3Index::Xxs() : ref::Iq3Index::S();
    const int nwant = which == 0 ? 2 : 3;
    int on_grid = 0;
    for (uint32_t u = 0; u < 4096; ++u) {
      const int g = index.GridIndex(u);
      auto dist = [&](int e) {
        int d2 = 0;
        for (int i = 0; i < 4; ++i) {
          const int diff = 2 * index.Level(e, i) - 2 * static_cast<int>((u >> (3 * i)) & 7);
          d2 += diff * diff;
        }
        return d2;
      };
      if (g >= 0) {
        ++on_grid;
        for (int i = 0; i < 4; ++i) ASSERT_EQ(index.Level(g, i), static_cast<int>((u >> (3 * i)) & 7));
        continue;
      }
      const ref::Iq3Neighbours list = index.NeighboursOf(u);
      ASSERT_GE(list.n, 1);
      int nearest = 1 << 30;
      for (int e = 0; e < index.grid_size(); ++e) nearest = std::min(nearest, dist(e));
      ASSERT_EQ(dist(list.index[0]), nearest) << "u " << u;
      int distinct = 1;
      for (int c = 1; c < list.n; ++c) {
        const int a = dist(list.index[c - 1]), b = dist(list.index[c]);
        ASSERT_TRUE(a < b || (a == b && list.index[c - 1] < list.index[c])) << "u " << u;
        distinct += a < b ? 1 : 0;
      }
      for (int c = 0; c < list.n_pad; ++c) {
        for (int i = 0; i < 4; ++i) {
          ASSERT_EQ(list.q[i * list.n_pad + c],
                    c < list.n ? 2.0f * index.Level(list.index[c], i) + 1.0f : 0.0f);
        }
      }
      ASSERT_EQ(distinct, nwant) << "u " << u;
    }
    EXPECT_EQ(on_grid, index.grid_size());
  }
}

}  // namespace
}  // namespace amn::test
