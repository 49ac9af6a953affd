// Family GgmlIq3Quant (kernels/ggml_iq3_encode-inl.h) on every supported
// target against its scalar reference (kernels/ref/ggml_iq3_encode_ref.h,
// itself checked byte for byte against ggml in ggml_iq3_encode_test): the
// blocks byte for byte for IQ3_XXS and IQ3_S, F32/BF16/F16 input, several
// rows per call, misaligned input, with and without importance values, the
// QuantError sums byte for byte, and NaN/Inf refused at the same index.
// Inputs include values whose squares overflow (where ggml itself aborts):
// both sides must still agree. The probe proves which target ran; the
// public QuantizeGgml routes both types to this family.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "amn/amn.h"
#include "amn/quantize.h"
#include "amn/targets.h"
#include "dispatch/encoders.h"
#include "kernels/ref/float_convert_ref.h"
#include "kernels/ref/ggml_iq3_encode_ref.h"
#include "tests/fixtures.h"
#include "tests/ggml_encode_runs.h"
#include "tests/ggml_kquant_inputs.h"
#include "tests/quant_fixture_files.h"
#include "tests/target_param.h"

namespace amn::test {
namespace {

constexpr GgmlType kIq3Types[] = {GgmlType::kIQ3_XXS, GgmlType::kIQ3_S};

std::string Name(GgmlType t) { return t == GgmlType::kIQ3_XXS ? "IQ3_XXS" : "IQ3_S"; }

// The values as bytes of `type` (BF16/F16 by the reference's RNE narrowing,
// F16 saturated to stay finite) after `skew` bytes of padding.
std::vector<uint8_t> AsBytes(const std::vector<float>& x, ElemType type, size_t skew) {
  std::vector<uint8_t> out(skew, 0);
  for (float v : x) {
    const uint32_t b = std::bit_cast<uint32_t>(v);
    if (type == ElemType::kF32) {
      for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(b >> (8 * i)));
      continue;
    }
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

// The dispatched encoder, and the scalar reference once per input
// (ggml_encode_runs.h), on rows x cols values.
Encoded Encode(GgmlType type, const uint8_t* in, ElemType in_type, uint64_t rows, uint64_t cols,
               const float* imatrix = nullptr) {
  return RunGgmlEncoder(internal::EncodeGgmlIq3Quant, ref::Iq3EncodeBlockBytes(type), type, in,
                        in_type, rows, cols, imatrix);
}
const Encoded& Reference(GgmlType type, const uint8_t* in, ElemType in_type, uint64_t rows,
                         uint64_t cols, const float* imatrix = nullptr) {
  return ReferenceRun(ref::EncodeGgmlIq3Quant, ref::Iq3EncodeBlockBytes(type), type, in, in_type,
                      rows, cols, imatrix);
}

void ExpectSame(const Encoded& got, const Encoded& want, GgmlType type, const std::string& what) {
  EXPECT_EQ(got.result, want.result) << what;
  EXPECT_EQ(std::memcmp(&got.errors, &want.errors, sizeof(got.errors)), 0) << what;
  size_t first = 0;
  while (first < want.blocks.size() && got.blocks[first] == want.blocks[first]) ++first;
  ASSERT_EQ(first, want.blocks.size())
      << what << ": first differing byte (block " << first / ref::Iq3EncodeBlockBytes(type)
      << ", byte " << first % ref::Iq3EncodeBlockBytes(type) << ")";
}

class Iq3EncodePerTarget : public PerTarget {};

// Case k takes importance vector k mod 6 (and case 0 none and all six).
TEST_P(Iq3EncodePerTarget, MatchesReference) {
  ASSERT_EQ(::amn::GgmlIq3EncodeTarget(), GetParam());
  const ElemType in_types[] = {ElemType::kF32, ElemType::kBf16, ElemType::kF16};
  const std::vector<KQuantCase> cases = KQuantCases(Emulated() ? 5 : 1);
  for (size_t k = 0; k < cases.size(); ++k) {
    const KQuantCase& c = cases[k];
    const uint64_t cols = c.x.size() % 512 == 0 ? c.x.size() / 2 : c.x.size();
    const uint64_t rows = c.x.size() / cols;
    const std::vector<ImatrixCase> imatrices = ImatrixCases(cols);
    for (size_t m = 0; m <= imatrices.size(); ++m) {
      // m == imatrices.size(): no importance values.
      if (k != 0 && m != imatrices.size() && m != k % imatrices.size()) continue;
      const float* w = m < imatrices.size() ? imatrices[m].w.data() : nullptr;
      for (GgmlType type : kIq3Types) {
        for (ElemType in_type : in_types) {
          const std::string what = Name(type) + " " + c.name + " imatrix " +
                                   (w != nullptr ? imatrices[m].name : "none") + " from " +
                                   std::string(ElemTypeName(in_type));
          const size_t skew = c.x.size() % 3 + 1;
          const std::vector<uint8_t> in = AsBytes(c.x, in_type, skew);
          const Encoded want = Reference(type, in.data() + skew, in_type,
                                          rows, cols, w);
          const Encoded got = Encode(type, in.data() + skew,
                                         in_type, rows, cols, w);
          EXPECT_EQ(want.result, kernels::kAllFinite) << what;
          ExpectSame(got, want, type, what);
        }
      }
    }
  }
}

TEST_P(Iq3EncodePerTarget, RefusesNonFiniteLikeTheReference) {
  ASSERT_EQ(::amn::GgmlIq3EncodeTarget(), GetParam());
  const float bad[] = {std::numeric_limits<float>::quiet_NaN(),
                       std::numeric_limits<float>::infinity(),
                       -std::numeric_limits<float>::infinity()};
  for (GgmlType type : kIq3Types) {
    for (size_t k = 0; k < 3; ++k) {
      std::vector<float> x = GaussianRow(40 + static_cast<uint32_t>(k), 1024, 1.0f);
      const size_t at = 300 + 211 * k;  // in super-block 1, 2 or 3
      x[at] = bad[k];
      x[at + 5] = bad[(k + 1) % 3];
      for (ElemType in_type : {ElemType::kF32, ElemType::kBf16, ElemType::kF16}) {
        const std::vector<uint8_t> in = AsBytes(x, in_type, 0);
        const Encoded want = Reference(type, in.data(), in_type, 1, 1024);
        const Encoded got =
            Encode(type, in.data(), in_type, 1, 1024);
        EXPECT_EQ(want.result, at);
        EXPECT_EQ(got.result, at) << Name(type);
        EXPECT_TRUE(got.blocks == want.blocks) << Name(type);
      }
    }
  }
}

// Real weights (the expected BF16 of the gguf_reference fixtures) as BF16
// input, with and without importance values; under emulation one file in
// four and 2048 elements of it.
TEST_P(Iq3EncodePerTarget, MatchesReferenceOnRealWeights) {
  ASSERT_EQ(::amn::GgmlIq3EncodeTarget(), GetParam());
  const auto files = FixtureFiles("gguf_reference", ".bin");
  AMN_SKIP_WITHOUT_FIXTURES(files, "gguf_reference");
  for (size_t f = 0; f < files.size(); ++f) {
    if (!RunCase(f, 4)) continue;
    const auto fixture = ReadGgmlBlockFixture(files[f]);
    ASSERT_TRUE(fixture.has_value()) << files[f] << ": malformed fixture";
    const uint64_t cols = std::min<uint64_t>(fixture->n / 256 * 256, Emulated() ? 2048 : 16384);
    if (cols == 0) continue;
    const uint8_t* bf16 = fixture->golden_bf16.data();
    const std::vector<float> w = ImatrixCases(256)[0].w;
    for (GgmlType type : kIq3Types) {
      const std::string what = Name(type) + " " + files[f].filename().string();
      ExpectSame(Encode(type, bf16, ElemType::kBf16, 1, cols),
                 Reference(type, bf16, ElemType::kBf16, 1, cols), type,
                 what);
      ExpectSame(Encode(type, bf16, ElemType::kBf16, cols / 256,
                            256, w.data()),
                 Reference(type, bf16, ElemType::kBf16, cols / 256, 256,
                            w.data()),
                 type, what + " imatrix");
    }
  }
}

AMN_INSTANTIATE_PER_TARGET(Iq3EncodePerTarget);

// The public API: both types are encodable without importance values, and
// QuantizeGgml writes the reference's bytes with and without them.
TEST(Iq3QuantizeGgml, RoutesToTheIq3Family) {
  const std::vector<float> x = GaussianRow(90, 1024, 0.3f);
  const std::vector<float> w = ImatrixCases(512)[0].w;
  for (GgmlType type : kIq3Types) {
    ASSERT_TRUE(CanQuantizeGgml(type)) << Name(type);
    for (const float* imatrix : {static_cast<const float*>(nullptr), w.data()}) {
      std::vector<uint8_t> want(1024 / 256 * ref::Iq3EncodeBlockBytes(type));
      for (int r = 0; r < 2; ++r) {
        ref::QuantizeIq3Row(type, x.data() + 512 * r, 512, want.data() + want.size() / 2 * r,
                            imatrix);
      }
      std::vector<std::byte> got(want.size());
      const FloatRows in{ElemType::kF32, std::as_bytes(std::span<const float>(x)), 2, 512};
      const std::span<const float> im =
          imatrix != nullptr ? std::span<const float>(w) : std::span<const float>();
      QuantError err;
      ASSERT_TRUE(QuantizeGgml(type, in, im, got, &err).ok()) << Name(type);
      EXPECT_EQ(std::memcmp(got.data(), want.data(), want.size()), 0) << Name(type);
      EXPECT_EQ(err.elements, 1024u);
      EXPECT_GT(err.sum_sq_ref, err.sum_sq_err) << Name(type);  // it does encode
    }
  }
}

// The C ABI: amn_quantize_ggml with ids 18 and 21 writes the reference's
// bytes for one row, with and without importance values.
TEST(Iq3QuantizeGgml, CAbiWritesTheReferenceBytes) {
  const std::vector<float> x = GaussianRow(91, 512, 2.0f);
  const std::vector<float> w = ImatrixCases(512)[2].w;
  for (GgmlType type : kIq3Types) {
    for (const float* imatrix : {static_cast<const float*>(nullptr), w.data()}) {
      std::vector<uint8_t> want(2 * ref::Iq3EncodeBlockBytes(type));
      ref::QuantizeIq3Row(type, x.data(), 512, want.data(), imatrix);
      std::vector<uint8_t> got(want.size());
      ASSERT_EQ(amn_quantize_ggml(static_cast<int>(type), x.data(), 512, imatrix, got.data(),
                                  got.size()),
                AMN_OK)
          << Name(type) << ": " << amn_last_error();
      EXPECT_TRUE(got == want) << Name(type);
    }
  }
}

}  // namespace
}  // namespace amn::test
