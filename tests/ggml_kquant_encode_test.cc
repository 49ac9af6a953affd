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
      FAIL() << KQuantName(type) << " " << what << ": block " << b << " differs first at byte " << k
             << " (ours " << int(got[b * block_bytes + k]) << ", ggml "
             << int(want[b * block_bytes + k]) << ")";
    }
  }
}

TEST(GgmlKQuantEncodeRef, GeneratedRowsMatchGgml) {
  const auto* ggml = AMN_GGML_ORACLE_OR_SKIP();
  for (const KQuantCase& c : KQuantCases()) {
    for (GgmlType type : kKQuantEncodeTypes) {
      ExpectSameAsGgml(*ggml, type, c.x, static_cast<int64_t>(c.x.size()), c.name);
    }
  }
}

// Real weights: every gguf_reference fixture's expected BF16 output (a
// dequantized real tensor), widened to F32, quantized to every type.
TEST(GgmlKQuantEncodeRef, RealFixtureWeightsMatchGgml) {
  const auto* ggml = AMN_GGML_ORACLE_OR_SKIP();
  const auto files = FixtureFiles("gguf_reference", ".bin");
  AMN_SKIP_WITHOUT_FIXTURES(files, "gguf_reference");
  for (const auto& path : files) {
    const auto fixture = ReadGgmlBlockFixture(path);
    ASSERT_TRUE(fixture.has_value()) << path << ": malformed fixture";
    const uint32_t n = fixture->n;
    const uint8_t* bf16 = fixture->golden_bf16.data();
    const size_t n_used = n / 256 * 256;
    std::vector<float> x(n_used);
    for (size_t i = 0; i < n_used; ++i) {
      const uint32_t h = static_cast<uint32_t>(bf16[2 * i] | bf16[2 * i + 1] << 8);
      x[i] = std::bit_cast<float>(h << 16);
    }
    for (GgmlType type : kKQuantEncodeTypes) {
      ExpectSameAsGgml(*ggml, type, x, 256, path.filename().string());
    }
  }
}

}  // namespace
}  // namespace amn::test
