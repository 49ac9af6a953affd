// Family GgmlKQuantQuant (kernels/ggml_kquant_encode-inl.h) on every
// supported target against its scalar reference (kernels/ref/
// ggml_kquant_encode_ref.h, itself checked byte for byte against ggml in
// ggml_kquant_encode_test): the blocks byte for byte, for every type, every
// input type (F32, and BF16/F16 from the same values), several rows per
// call, misaligned input, the QuantError sums byte for byte, and NaN/Inf
// refused at the same index with the same blocks written before it, and
// the batched searches' short last batches (1 to 3 super-blocks left) and
// special super-blocks at every position of a batch (KQuantBatchCases). The
// probe proves which target ran.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "amn/targets.h"
#include "dispatch/encoders.h"
#include "kernels/ref/float_convert_ref.h"
#include "kernels/ref/ggml_kquant_encode_ref.h"
#include "tests/fixtures.h"
#include "tests/ggml_encode_runs.h"
#include "tests/quant_fixture_files.h"
#include "tests/ggml_kquant_inputs.h"
#include "tests/target_param.h"

namespace amn::test {
namespace {

// The values as bytes of `type` (BF16/F16 by the reference's RNE narrowing),
// after `skew` bytes of padding so the input is misaligned.
std::vector<uint8_t> AsBytes(const std::vector<float>& x, ElemType type, size_t skew) {
  std::vector<uint8_t> out(skew, 0);
  for (float v : x) {
    const uint32_t b = std::bit_cast<uint32_t>(v);
    if (type == ElemType::kF32) {
      for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(b >> (8 * i)));
      continue;
    }
    // F16 saturates at its largest finite value so the case stays finite
    // (the outlier and huge-magnitude cases exceed F16's range).
    const float f16_safe = std::isfinite(v) ? std::clamp(v, -65504.0f, 65504.0f) : v;
    const uint16_t h = type == ElemType::kBf16
                           ? ref::F32BitsToBf16(b)
                           : ref::F32BitsToF16(std::bit_cast<uint32_t>(f16_safe));
    out.push_back(static_cast<uint8_t>(h));
    out.push_back(static_cast<uint8_t>(h >> 8));
  }
  return out;
}

using Encoded = EncodedBlocks;

bool SameBytes(const kernels::ErrorSums& a, const kernels::ErrorSums& b) {
  return std::memcmp(&a, &b, sizeof(a)) == 0;
}

// The dispatched encoder, and the scalar reference once per input
// (ggml_encode_runs.h), on rows x cols values.
Encoded Encode(GgmlType type, const uint8_t* in, ElemType in_type, uint64_t rows, uint64_t cols,
               const float* imatrix = nullptr) {
  return RunGgmlEncoder(internal::EncodeGgmlKQuantQuant, ref::KQuantEncodeBlockBytes(type), type,
                        in, in_type, rows, cols, imatrix);
}
const Encoded& Reference(GgmlType type, const uint8_t* in, ElemType in_type, uint64_t rows,
                         uint64_t cols, const float* imatrix = nullptr) {
  return ReferenceRun(ref::EncodeGgmlKQuantQuant, ref::KQuantEncodeBlockBytes(type), type, in,
                      in_type, rows, cols, imatrix);
}

class KQuantEncodePerTarget : public PerTarget {};

TEST_P(KQuantEncodePerTarget, MatchesReferenceOnEveryType) {
  ASSERT_EQ(::amn::GgmlKQuantEncodeTarget(), GetParam());
  const ElemType in_types[] = {ElemType::kF32, ElemType::kBf16, ElemType::kF16};
  std::vector<KQuantCase> cases = KQuantCases(Emulated() ? 5 : 1);
  for (KQuantCase& c : KQuantBatchCases()) cases.push_back(std::move(c));
  for (const KQuantCase& c : cases) {
    for (GgmlType type : kKQuantEncodeTypes) {
      for (ElemType in_type : in_types) {
        const size_t skew = c.x.size() % 3 + 1;
        const std::vector<uint8_t> in = AsBytes(c.x, in_type, skew);
        // Two rows when the case splits evenly into 512-element rows.
        const uint64_t cols = c.x.size() % 512 == 0 ? c.x.size() / 2 : c.x.size();
        const uint64_t rows = c.x.size() / cols;
        const Encoded want = Reference(type, in.data() + skew, in_type, rows, cols);
        const Encoded got =
            Encode(type, in.data() + skew, in_type, rows, cols);
        EXPECT_EQ(got.result, want.result) << KQuantName(type) << " " << c.name;
        EXPECT_TRUE(SameBytes(got.errors, want.errors)) << KQuantName(type) << " " << c.name;
        // The sums were computed (F16 flushes the tiniest cases to zero).
        if (in_type == ElemType::kF32) {
          EXPECT_GT(want.errors.sq_ref[0], 0.0) << c.name;
        }
        EXPECT_EQ(want.result, kernels::kAllFinite);
        size_t first = 0;
        while (first < want.blocks.size() && got.blocks[first] == want.blocks[first]) ++first;
        ASSERT_EQ(first, want.blocks.size())
            << KQuantName(type) << " " << c.name << " from " << ElemTypeName(in_type)
            << ": first differing byte (block " << first / ref::KQuantEncodeBlockBytes(type)
            << ", byte " << first % ref::KQuantEncodeBlockBytes(type) << ")";
      }
    }
  }
}

// With an importance matrix (cols values shared by every row): case k
// takes importance vector k mod 6 of ImatrixCases, so every vector meets
// several row families; one Gaussian case meets all six.
TEST_P(KQuantEncodePerTarget, MatchesReferenceWithImatrix) {
  ASSERT_EQ(::amn::GgmlKQuantEncodeTarget(), GetParam());
  const ElemType in_types[] = {ElemType::kF32, ElemType::kBf16, ElemType::kF16};
  std::vector<KQuantCase> cases = KQuantCases(Emulated() ? 5 : 1);
  for (KQuantCase& c : KQuantBatchCases()) cases.push_back(std::move(c));
  for (size_t k = 0; k < cases.size(); ++k) {
    const KQuantCase& c = cases[k];
    const uint64_t cols = c.x.size() % 512 == 0 ? c.x.size() / 2 : c.x.size();
    const uint64_t rows = c.x.size() / cols;
    const std::vector<ImatrixCase> imatrices = ImatrixCases(cols);
    for (size_t m = 0; m < imatrices.size(); ++m) {
      if (k != 0 && m != k % imatrices.size()) continue;
      const float* w = imatrices[m].w.data();
      for (GgmlType type : kKQuantEncodeTypes) {
        for (ElemType in_type : in_types) {
          const std::string what = KQuantName(type) + " " + c.name + " imatrix " +
                                   imatrices[m].name + " from " + std::string(ElemTypeName(in_type));
          const size_t skew = c.x.size() % 3 + 1;
          const std::vector<uint8_t> in = AsBytes(c.x, in_type, skew);
          const Encoded want = Reference(type, in.data() + skew,
                                          in_type, rows, cols, w);
          const Encoded got = Encode(type, in.data() + skew,
                                         in_type, rows, cols, w);
          EXPECT_EQ(got.result, want.result) << what;
          EXPECT_EQ(want.result, kernels::kAllFinite) << what;
          EXPECT_TRUE(SameBytes(got.errors, want.errors)) << what;
          size_t first = 0;
          while (first < want.blocks.size() && got.blocks[first] == want.blocks[first]) ++first;
          ASSERT_EQ(first, want.blocks.size())
              << what << ": first differing byte (block "
              << first / ref::KQuantEncodeBlockBytes(type) << ", byte "
              << first % ref::KQuantEncodeBlockBytes(type) << ")";
        }
      }
    }
  }
}

TEST_P(KQuantEncodePerTarget, RefusesNonFiniteLikeTheReference) {
  ASSERT_EQ(::amn::GgmlKQuantEncodeTarget(), GetParam());
  const float bad[] = {std::numeric_limits<float>::quiet_NaN(),
                       std::numeric_limits<float>::infinity(),
                       -std::numeric_limits<float>::infinity()};
  for (GgmlType type : kKQuantEncodeTypes) {
    for (size_t k = 0; k < 3; ++k) {
      std::vector<float> x = GaussianRow(40 + static_cast<uint32_t>(k), 1024, 1.0f);
      const size_t at = 300 + 211 * k;  // in super-block 1, 2 or 3
      x[at] = bad[k];
      x[at + 5] = bad[(k + 1) % 3];
      for (ElemType in_type : {ElemType::kF32, ElemType::kBf16, ElemType::kF16}) {
        const std::vector<uint8_t> in = AsBytes(x, in_type, 0);
        const Encoded want = Reference(type, in.data(), in_type, 1, 1024);
        const Encoded got = Encode(type, in.data(), in_type, 1, 1024);
        EXPECT_EQ(want.result, at);
        EXPECT_EQ(got.result, at) << KQuantName(type);
        EXPECT_TRUE(got.blocks == want.blocks) << KQuantName(type);
      }
    }
  }
}

// Real weights (the expected BF16 of every gguf_reference fixture, as BF16
// input): many exact ties, as in real checkpoints. Under emulation the
// first 4096 elements of each file.
TEST_P(KQuantEncodePerTarget, MatchesReferenceOnRealWeights) {
  ASSERT_EQ(::amn::GgmlKQuantEncodeTarget(), GetParam());
  const auto files = FixtureFiles("gguf_reference", ".bin");
  AMN_SKIP_WITHOUT_FIXTURES(files, "gguf_reference");
  for (size_t f = 0; f < files.size(); ++f) {
    // Under emulation one file in four (the same ones every run): the scalar
    // reference is the slow side there, and every file runs natively.
    if (!RunCase(f, 4)) continue;
    const auto& path = files[f];
    const auto fixture = ReadGgmlBlockFixture(path);
    ASSERT_TRUE(fixture.has_value()) << path << ": malformed fixture";
    const uint32_t n = fixture->n;
    const uint64_t cols = std::min<uint64_t>(n / 256 * 256, Emulated() ? 4096 : 65536);
    const uint8_t* bf16 = fixture->golden_bf16.data();
    for (GgmlType type : kKQuantEncodeTypes) {
      const Encoded want = Reference(type, bf16, ElemType::kBf16, 1, cols);
      const Encoded got =
          Encode(type, bf16, ElemType::kBf16, 1, cols);
      EXPECT_EQ(got.result, want.result);
      EXPECT_TRUE(got.blocks == want.blocks) << KQuantName(type) << " " << path.filename();
      // With importance values: the same weights as rows of 256 columns.
      const std::vector<float> w = ImatrixCases(256)[0].w;
      const Encoded want_w = Reference(type, bf16, ElemType::kBf16,
                                        cols / 256, 256, w.data());
      const Encoded got_w = Encode(type, bf16,
                                       ElemType::kBf16, cols / 256, 256, w.data());
      EXPECT_TRUE(got_w.blocks == want_w.blocks)
          << KQuantName(type) << " imatrix " << path.filename();
    }
  }
}

AMN_INSTANTIATE_PER_TARGET(KQuantEncodePerTarget);

}  // namespace
}  // namespace amn::test
