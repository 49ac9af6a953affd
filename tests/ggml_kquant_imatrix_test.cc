// The K-quant encoders' scalar reference with an importance matrix
// (kernels/ref/ggml_kquant_encode_ref.h, the *_KW searches) against ggml
// itself (tests/ggml_oracle.h: ggml_quantize_chunk given the same
// quant_weights, i.e. quantize_row_<type>_impl / quantize_iq4_xs): the
// blocks must be the same bytes. Rows: the shared K-quant cases
// (tests/ggml_kquant_inputs.h) as 1024- or 512-element rows sharing one
// importance vector, and the gguf_reference fixture weights; importance
// vectors: tests/ggml_kquant_inputs.h ImatrixCases. A control test shows the
// comparison catches a wrongly ordered importance vector.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "amn/ggml_type.h"
#include "kernels/ref/ggml_kquant_encode_ref.h"
#include "tests/fixtures.h"
#include "tests/quant_fixture_files.h"
#include "tests/ggml_kquant_inputs.h"
#include "tests/ggml_oracle.h"

namespace amn::test {
namespace {

// Ours over rows of n_per_row, each with `imatrix` (n_per_row values).
std::vector<uint8_t> Ours(GgmlType type, const std::vector<float>& x, size_t n_per_row,
                          const float* imatrix) {
  const size_t row_bytes = n_per_row / 256 * ref::KQuantEncodeBlockBytes(type);
  const size_t rows = x.size() / n_per_row;
  std::vector<uint8_t> got(rows * row_bytes + 16, 0xA5);  // canary after the blocks
  for (size_t r = 0; r < rows; ++r) {
    ref::QuantizeKQuantRow(type, x.data() + r * n_per_row, n_per_row, got.data() + r * row_bytes,
                           imatrix);
  }
  for (size_t k = 0; k < 16; ++k) EXPECT_EQ(got[rows * row_bytes + k], 0xA5) << "overrun";
  got.resize(rows * row_bytes);
  return got;
}

// Index of the first differing block, or -1.
long FirstDifferentBlock(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b,
                         size_t block_bytes) {
  for (size_t k = 0; k < a.size(); ++k) {
    if (a[k] != b[k]) return static_cast<long>(k / block_bytes);
  }
  return -1;
}

void ExpectSameAsGgml(const GgmlOracle& ggml, GgmlType type, const std::vector<float>& x,
                      size_t n_per_row, const std::vector<float>& imatrix,
                      const std::string& what) {
  const std::vector<uint8_t> want =
      ggml.Quantize(static_cast<int>(type), x, static_cast<int64_t>(n_per_row), imatrix.data());
  const size_t block_bytes = ref::KQuantEncodeBlockBytes(type);
  ASSERT_EQ(want.size(), x.size() / 256 * block_bytes) << what;
  const std::vector<uint8_t> got = Ours(type, x, n_per_row, imatrix.data());
  const long b = FirstDifferentBlock(got, want, block_bytes);
  if (b >= 0) {
    size_t k = 0;
    while (got[b * block_bytes + k] == want[b * block_bytes + k]) ++k;
    ADD_FAILURE() << KQuantName(type) << " " << what << ": block " << b << " differs first at byte "
                  << k << " (ours " << int(got[b * block_bytes + k]) << ", ggml "
                  << int(want[b * block_bytes + k]) << ")";
  }
}

size_t RowLength(size_t n) { return n % 1024 == 0 ? 1024 : n % 512 == 0 ? 512 : n; }

TEST(GgmlKQuantImatrixRef, GeneratedRowsMatchGgml) {
  const auto* ggml = AMN_GGML_ORACLE_OR_SKIP();
  for (const KQuantCase& c : KQuantCases()) {
    const size_t n_per_row = RowLength(c.x.size());
    for (const ImatrixCase& w : ImatrixCases(n_per_row)) {
      for (GgmlType type : kKQuantEncodeTypes) {
        ExpectSameAsGgml(*ggml, type, c.x, n_per_row, w.w, c.name + " / imatrix " + w.name);
      }
    }
  }
}

// Real weights: every gguf_reference fixture's expected BF16 (a dequantized
// real tensor), widened to F32, as rows of 256 (at most 64 rows per file).
TEST(GgmlKQuantImatrixRef, RealFixtureWeightsMatchGgml) {
  const auto* ggml = AMN_GGML_ORACLE_OR_SKIP();
  const auto files = FixtureFiles("gguf_reference", ".bin");
  AMN_SKIP_WITHOUT_FIXTURES(files, "gguf_reference");
  for (const auto& path : files) {
    const auto fixture = ReadGgmlBlockFixture(path);
    ASSERT_TRUE(fixture.has_value()) << path << ": malformed fixture";
    const uint32_t n = fixture->n;
    const uint8_t* bf16 = fixture->golden_bf16.data();
    const size_t n_used = std::min<size_t>(n / 256 * 256, 64 * 256);
    std::vector<float> x(n_used);
    for (size_t i = 0; i < n_used; ++i) {
      const uint32_t h = static_cast<uint32_t>(bf16[2 * i] | bf16[2 * i + 1] << 8);
      x[i] = std::bit_cast<float>(h << 16);
    }
    for (const ImatrixCase& w : ImatrixCases(256)) {
      for (GgmlType type : kKQuantEncodeTypes) {
        ExpectSameAsGgml(*ggml, type, x, 256, w.w,
                         path.filename().string() + " / imatrix " + w.name);
      }
    }
  }
}

// The comparison can fail: the same importance values in another order
// (reversed within each 16-column group, so every sub-block sees the same
// multiset) must change some block of every type, and ggml must see it.
TEST(GgmlKQuantImatrixRef, PermutedImportanceIsCaught) {
  const auto* ggml = AMN_GGML_ORACLE_OR_SKIP();
  const std::vector<float> x = GaussianRow(77, 4096, 1.0f);
  const std::vector<float> w = ImatrixCases(1024)[0].w;
  std::vector<float> permuted = w;
  for (size_t i = 0; i < permuted.size(); i += 16) {
    std::reverse(permuted.begin() + i, permuted.begin() + i + 16);
  }
  for (GgmlType type : kKQuantEncodeTypes) {
    const std::vector<uint8_t> want = ggml->Quantize(static_cast<int>(type), x, 1024, w.data());
    const std::vector<uint8_t> wrong = Ours(type, x, 1024, permuted.data());
    EXPECT_GE(FirstDifferentBlock(wrong, want, ref::KQuantEncodeBlockBytes(type)), 0)
        << KQuantName(type);
    // And without importance values ggml writes other bytes again.
    const std::vector<uint8_t> plain = Ours(type, x, 1024, nullptr);
    EXPECT_GE(FirstDifferentBlock(plain, want, ref::KQuantEncodeBlockBytes(type)), 0)
        << KQuantName(type);
  }
}

}  // namespace
}  // namespace amn::test
