// amn::QuantizeGgml on every target this CPU supports (and the emulated
// fleet): the dispatched kernel of family GgmlLegacyQuant gives the bytes
// and error sums of the scalar reference (kernels/ref/ggml_encode_ref.h,
// itself checked against ggml in ggml_encode_test) for every type, input
// type, row shape and value class; the checked API refuses what it must.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "amn/amn.h"
#include "amn/quantize.h"
#include "dispatch/encoders.h"
#include "kernels/encode_common.h"
#include "kernels/ggml_blocks.h"
#include "kernels/ref/float_convert_ref.h"
#include "kernels/ref/ggml_encode_ref.h"
#include "tests/fixtures.h"
#include "tests/quant_fixture_files.h"
#include "tests/ggml_oracle.h"
#include "tests/target_param.h"

namespace amn::test {
namespace {

constexpr GgmlType kTypes[] = {GgmlType::kQ4_0,  GgmlType::kQ4_1,  GgmlType::kQ5_0,
                               GgmlType::kQ5_1,  GgmlType::kQ8_0,  GgmlType::kIQ4_NL,
                               GgmlType::kMXFP4, GgmlType::kTQ1_0, GgmlType::kTQ2_0,
                               GgmlType::kNVFP4, GgmlType::kQ1_0,  GgmlType::kQ2_0};
constexpr ElemType kInputs[] = {ElemType::kF32, ElemType::kBf16, ElemType::kF16};

// F32 values as `type` bytes (BF16: the top half; F16: IEEE RNE), placed
// `offset` bytes into the buffer so the kernel reads a misaligned pointer.
std::vector<std::byte> AsBytes(const std::vector<float>& x, ElemType type, size_t offset) {
  const size_t eb = ElemTypeBytes(type);
  std::vector<std::byte> b(offset + x.size() * eb);
  for (size_t i = 0; i < x.size(); ++i) {
    // F16 input holds only what F16 can: larger magnitudes saturate.
    const float v16 = std::fabs(x[i]) > 65504.0f ? std::copysign(65504.0f, x[i]) : x[i];
    const uint32_t bits = std::bit_cast<uint32_t>(type == ElemType::kF16 ? v16 : x[i]);
    uint32_t v = bits;
    if (type == ElemType::kBf16) v = bits >> 16;
    if (type == ElemType::kF16) v = ref::F32BitsToF16(bits);
    std::memcpy(b.data() + offset + i * eb, &v, eb);  // little-endian host
  }
  return b;
}

// Value classes: each generator fills n values for seed s.
std::vector<float> Values(int cls, size_t n, uint32_t s) {
  std::mt19937 rng(s);
  std::normal_distribution<float> g(0.0f, 1.0f);
  std::vector<float> x(n);
  for (size_t i = 0; i < n; ++i) {
    switch (cls) {
      case 0: x[i] = g(rng) * 0.02f; break;                       // weights
      case 1: x[i] = i % 97 == 5 ? 3e4f * g(rng) : g(rng); break;  // outliers
      case 2: x[i] = (i / 64) % 3 == 0 ? 0.0f : (i / 64) % 3 == 1 ? -0.0f : 0.75f; break;
      case 3: x[i] = g(rng) * 1e-39f; break;                       // subnormal
      case 4: {  // half-integers and midpoints around integer anchors
        const float half = static_cast<float>(static_cast<int>(i % 32) - 16) + 0.5f;
        x[i] = i % 32 == 0 ? static_cast<float>(8 << (i / 32 % 5)) : half;
        break;
      }
      case 5: {  // IQ4_NL ties: -127 fixes a trial scale of exactly 1, then
                 // the midpoints between neighbouring codebook entries
        static constexpr float kMid[] = {-115.5f, -93.5f, -74.0f, -57.0f, -42.0f,
                                         -28.5f,  -16.0f, -4.5f,  7.0f,   19.0f,
                                         31.5f,   45.5f,  61.0f,  79.0f,  101.0f};
        // Odd blocks: codebook entries with two midpoints, so the trial
        // scale 1 wins and its ties decide the stored scale.
        const int8_t kv = ggml::kIq4NlValues[(i * 7 + i / 32) % 16];
        const bool all_mid = (i / 32) % 2 == 0 || i % 32 == 5 || i % 32 == 20;
        x[i] = i % 32 == 0 ? -127.0f : all_mid ? kMid[(i + i / 32) % 15] : static_cast<float>(kv);
        break;
      }
      case 6: {  // 32-element blocks of eight kinds; in a run of 8 blocks
                 // (the encoders' batch of per-block scales) kind (p + r) % 8
                 // at position p of run r, so over 8 runs every kind takes
                 // every lane of the batch
        const size_t blk = i / 32, kind = (blk % 8 + blk / 8) % 8;
        const float v = g(rng);
        switch (kind) {
          case 0: x[i] = v * 0.02f; break;                          // weights
          case 1: x[i] = i % 32 == 3 ? -0.0f : 0.0f; break;         // zero, d = 0
          case 2: x[i] = v * 1e-38f; break;                         // 1/d overflows
          case 3: x[i] = v * 1e37f; break;                          // F16 d overflows
          case 4: x[i] = i % 32 == 7 ? -4.0f : v; break;            // negative signed max
          case 5: x[i] = static_cast<float>(static_cast<int>(i % 32) - 16) + 0.5f; break;
          case 6: x[i] = i % 2 == 0 ? 3e38f : -3e38f; break;        // max - min overflows
          default: x[i] = v * 1e-6f; break;                         // F16-subnormal d
        }
        break;
      }
      default: {  // any finite F32 bit pattern: huge, tiny, mixed in a block
        uint32_t bits;
        do bits = static_cast<uint32_t>(rng()); while ((bits & 0x7F800000u) == 0x7F800000u);
        x[i] = std::bit_cast<float>(bits);
      }
    }
  }
  return x;
}
constexpr int kClasses = 8;

class GgmlEncodeTarget : public PerTarget {};

TEST_P(GgmlEncodeTarget, ProbeSaysTheTargetRan) {
  EXPECT_EQ(TargetName(GgmlLegacyEncodeTarget()), TargetName(GetParam()));
}

TEST_P(GgmlEncodeTarget, SameBytesAndErrorsAsReference) {
  struct Shape {
    uint64_t rows, cols;
  };
  uint32_t seed = 1;
  for (GgmlType type : kTypes) {
    const uint64_t be = ref::GgmlEncodeBlockElems(type);
    const uint64_t bb = ref::GgmlEncodeBlockBytes(type);
    // 67 blocks: 8 whole batches of per-block scales and a partial one.
    const Shape shapes[] = {{1, be}, {3, 2 * be}, {2, 8 * be}, {1, 11 * be}, {1, 67 * be}};
    for (const Shape& shape : shapes) {
      for (int cls = 0; cls < kClasses; ++cls) {
        for (ElemType in_type : kInputs) {
          const uint64_t n = shape.rows * shape.cols;
          const std::vector<float> x = Values(cls, n, seed++);
          const std::vector<std::byte> in = AsBytes(x, in_type, seed % 3);
          const std::span<const std::byte> bytes(in.data() + seed % 3, in.size() - seed % 3);
          const uint64_t out_bytes = n / be * bb;
          std::vector<std::byte> got(out_bytes + 8, std::byte{0xA5});
          QuantError err;
          const Status s = QuantizeGgml(type, FloatRows{in_type, bytes, shape.rows, shape.cols},
                                        {}, std::span(got.data(), out_bytes), &err);
          ASSERT_TRUE(s.ok()) << s.ToString();
          for (size_t k = 0; k < 8; ++k) ASSERT_EQ(got[out_bytes + k], std::byte{0xA5});
          std::vector<uint8_t> want(out_bytes);
          kernels::ErrorSums sums;
          ASSERT_EQ(ref::EncodeGgmlLegacyQuant(
                        kernels::GgmlQuantArgs{
                            kernels::EncodeInput{reinterpret_cast<const uint8_t*>(bytes.data()),
                                                 in_type, shape.rows, shape.cols},
                            type, nullptr, want.data()},
                        &sums),
                    kernels::kAllFinite);
          const std::string what = "type " + std::to_string(static_cast<int>(type)) +
                                   ", class " + std::to_string(cls) + ", input " +
                                   std::string(ElemTypeName(in_type)) + ", " +
                                   std::to_string(shape.rows) + "x" + std::to_string(shape.cols);
          for (size_t i = 0; i < out_bytes; ++i) {
            ASSERT_EQ(static_cast<uint8_t>(got[i]), want[i]) << what << ", byte " << i;
          }
          const kernels::ErrorTotals t = kernels::ReduceErrors(sums);
          EXPECT_EQ(err.elements, n) << what;
          EXPECT_EQ(std::bit_cast<uint64_t>(err.sum_abs), std::bit_cast<uint64_t>(t.sum_abs))
              << what;
          EXPECT_EQ(std::bit_cast<uint64_t>(err.max_abs), std::bit_cast<uint64_t>(t.max_abs))
              << what;
          EXPECT_EQ(std::bit_cast<uint64_t>(err.sum_sq_err),
                    std::bit_cast<uint64_t>(t.sum_sq_err))
              << what;
          EXPECT_EQ(std::bit_cast<uint64_t>(err.sum_sq_ref),
                    std::bit_cast<uint64_t>(t.sum_sq_ref))
              << what;
        }
      }
    }
  }
}

// Real weights: every gguf_reference fixture's expected BF16 as the input
// (decoded quantized weights sit on grids, so they hit IQ4_NL's ties and
// Q4_x's exact halves far more often than random values do).
TEST_P(GgmlEncodeTarget, FixtureValuesSameAsReference) {
  const auto files = FixtureFiles("gguf_reference", ".bin");
  AMN_SKIP_WITHOUT_FIXTURES(files, "gguf_reference");
  for (size_t f = 0; f < files.size(); ++f) {
    if (!RunCase(f, 6)) continue;
    const auto fixture = ReadGgmlBlockFixture(files[f]);
    ASSERT_TRUE(fixture.has_value()) << files[f] << ": malformed fixture";
    const uint32_t n = fixture->n;
    ASSERT_EQ(n % 4096, 0u);
    const std::span<const std::byte> golden = std::as_bytes(std::span(fixture->golden_bf16));
    const FloatRows in{ElemType::kBf16, golden, n / 4096, 4096};
    for (GgmlType type : kTypes) {
      const uint64_t out_bytes =
          n / ref::GgmlEncodeBlockElems(type) * ref::GgmlEncodeBlockBytes(type);
      std::vector<std::byte> got(out_bytes);
      ASSERT_TRUE(QuantizeGgml(type, in, {}, got, nullptr).ok());
      std::vector<uint8_t> want(out_bytes);
      ASSERT_EQ(ref::EncodeGgmlLegacyQuant(
                    kernels::GgmlQuantArgs{
                        kernels::EncodeInput{reinterpret_cast<const uint8_t*>(golden.data()),
                                             ElemType::kBf16, n / 4096, 4096},
                        type, nullptr, want.data()},
                    nullptr),
                kernels::kAllFinite);
      EXPECT_TRUE(std::memcmp(got.data(), want.data(), out_bytes) == 0)
          << files[f].filename() << ", type " << static_cast<int>(type);
    }
  }
}

// QuantizeGgml routes the K-quants to their family (GgmlKQuantQuant): the
// family's own kernel gives the same bytes, and so does ggml.
TEST_P(GgmlEncodeTarget, RoutesKQuantsToTheirFamily) {
  const GgmlType kquants[] = {GgmlType::kQ2_K, GgmlType::kQ3_K, GgmlType::kQ4_K,
                              GgmlType::kQ5_K, GgmlType::kQ6_K, GgmlType::kIQ4_XS};
  const auto* ggml = GgmlOracle::Get();
  const std::vector<float> x = Values(0, 2 * 512, 21);
  const std::vector<std::byte> in = AsBytes(x, ElemType::kF32, 0);
  for (GgmlType type : kquants) {
    size_t row_bytes = 0;
    ASSERT_EQ(amn_ggml_row_size(static_cast<int>(type), 512, &row_bytes), AMN_OK);
    std::vector<std::byte> got(2 * row_bytes);
    ASSERT_TRUE(QuantizeGgml(type, FloatRows{ElemType::kF32, in, 2, 512}, {}, got, nullptr).ok());
    std::vector<uint8_t> want(2 * row_bytes);
    ASSERT_EQ(internal::EncodeGgmlKQuantQuant(
                  kernels::GgmlQuantArgs{
                      kernels::EncodeInput{reinterpret_cast<const uint8_t*>(in.data()),
                                           ElemType::kF32, 2, 512},
                      type, nullptr, want.data()},
                  nullptr),
              kernels::kAllFinite);
    EXPECT_TRUE(std::memcmp(got.data(), want.data(), want.size()) == 0)
        << "type " << static_cast<int>(type);
    if (ggml != nullptr) {
      EXPECT_TRUE(ggml->Quantize(static_cast<int>(type), x, 512) == want)
          << "type " << static_cast<int>(type) << " vs ggml";
    }
  }
}

// The dispatched kernel straight against ggml, where the oracle is here.
TEST_P(GgmlEncodeTarget, SameBytesAsGgml) {
  const auto* ggml = AMN_GGML_ORACLE_OR_SKIP();
  for (GgmlType type : kTypes) {
    const std::vector<float> x = Values(0, 4 * 512, 77);
    const std::vector<uint8_t> want = ggml->Quantize(static_cast<int>(type), x, 512);
    std::vector<std::byte> got(want.size());
    const std::vector<std::byte> in = AsBytes(x, ElemType::kF32, 0);
    ASSERT_TRUE(QuantizeGgml(type, FloatRows{ElemType::kF32, in, 4, 512}, {}, got, nullptr).ok());
    for (size_t i = 0; i < want.size(); ++i) {
      ASSERT_EQ(static_cast<uint8_t>(got[i]), want[i]) << "type " << static_cast<int>(type)
                                                        << ", byte " << i;
    }
  }
}

// The C ABI (one F32 row per call) gives the C++ API's bytes.
TEST_P(GgmlEncodeTarget, CAbiMatchesCppApi) {
  for (GgmlType type : kTypes) {
    const uint64_t cols = 2 * 256;
    const std::vector<float> x = Values(1, cols, 9);
    std::vector<std::byte> want(cols / ref::GgmlEncodeBlockElems(type) *
                                ref::GgmlEncodeBlockBytes(type));
    const std::vector<std::byte> in = AsBytes(x, ElemType::kF32, 0);
    ASSERT_TRUE(QuantizeGgml(type, FloatRows{ElemType::kF32, in, 1, cols}, {}, want, nullptr).ok());
    size_t row_bytes = 0;
    ASSERT_EQ(amn_ggml_row_size(static_cast<int>(type), cols, &row_bytes), AMN_OK);
    ASSERT_EQ(row_bytes, want.size());
    std::vector<std::byte> got(row_bytes);
    ASSERT_EQ(amn_quantize_ggml(static_cast<int>(type), x.data(), cols, nullptr, got.data(),
                                got.size()),
              AMN_OK)
        << amn_last_error();
    EXPECT_TRUE(got == want) << "type " << static_cast<int>(type);
  }
}

// With an importance matrix: the API's bytes and error sums are the
// reference's on every target (which runs the reference for the types that
// use one) and ggml's.
TEST_P(GgmlEncodeTarget, ImatrixSameAsReferenceAndGgml) {
  const uint64_t rows = 3, cols = 512;
  std::vector<float> imatrix(cols);
  for (size_t i = 0; i < cols; ++i) imatrix[i] = 0.25f + static_cast<float>(i % 13);
  const auto* ggml = GgmlOracle::Get();
  for (GgmlType type : kTypes) {
    for (ElemType in_type : kInputs) {
      const std::vector<float> x = Values(0, rows * cols, 11);
      const std::vector<std::byte> in = AsBytes(x, in_type, 1);
      const std::span<const std::byte> bytes(in.data() + 1, in.size() - 1);
      const uint64_t out_bytes =
          rows * cols / ref::GgmlEncodeBlockElems(type) * ref::GgmlEncodeBlockBytes(type);
      std::vector<std::byte> got(out_bytes);
      QuantError err;
      ASSERT_TRUE(
          QuantizeGgml(type, FloatRows{in_type, bytes, rows, cols}, imatrix, got, &err).ok());
      std::vector<uint8_t> want(out_bytes);
      kernels::ErrorSums sums;
      ASSERT_EQ(ref::EncodeGgmlLegacyQuant(
                    kernels::GgmlQuantArgs{
                        kernels::EncodeInput{reinterpret_cast<const uint8_t*>(bytes.data()),
                                             in_type, rows, cols},
                        type, imatrix.data(), want.data()},
                    &sums),
                kernels::kAllFinite);
      EXPECT_TRUE(std::memcmp(got.data(), want.data(), out_bytes) == 0)
          << "type " << static_cast<int>(type);
      EXPECT_EQ(std::bit_cast<uint64_t>(err.sum_sq_err),
                std::bit_cast<uint64_t>(kernels::ReduceErrors(sums).sum_sq_err));
      if (ggml != nullptr && in_type == ElemType::kF32) {
        const std::vector<uint8_t> g =
            ggml->Quantize(static_cast<int>(type), x, cols, imatrix.data());
        EXPECT_TRUE(g == want) << "type " << static_cast<int>(type) << " vs ggml";
      }
    }
  }
}

TEST_P(GgmlEncodeTarget, NonFiniteNamesTheElement) {
  for (GgmlType type : kTypes) {
    const uint64_t be = ref::GgmlEncodeBlockElems(type);
    for (uint64_t at : {uint64_t{0}, be - 1, 3 * be + 7}) {
      for (float bad : {NAN, INFINITY, -INFINITY}) {
        std::vector<float> x = Values(0, 4 * be, 5);
        x[at] = bad;
        x[4 * be - 1] = NAN;  // a later one: the first is named
        const std::vector<std::byte> in = AsBytes(x, ElemType::kF32, 0);
        std::vector<std::byte> out(4 * ref::GgmlEncodeBlockBytes(type));
        const Status s = QuantizeGgml(type, FloatRows{ElemType::kF32, in, 2, 2 * be}, {}, out,
                                      nullptr);
        EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
        EXPECT_NE(s.message().find("input element " + std::to_string(at) + " "),
                  std::string::npos)
            << s.ToString();
      }
    }
  }
}

TEST_P(GgmlEncodeTarget, RefusesBadShapes) {
  const std::vector<std::byte> in = AsBytes(Values(0, 64, 1), ElemType::kF32, 0);
  std::vector<std::byte> out(2 * 34);
  const float imatrix[64] = {};
  // cols not a whole number of blocks.
  EXPECT_EQ(QuantizeGgml(GgmlType::kQ8_0, FloatRows{ElemType::kF32, in, 4, 16}, {}, out, nullptr)
                .code(),
            StatusCode::kInvalidArgument);
  // TQ2_0 needs 256 columns.
  EXPECT_EQ(QuantizeGgml(GgmlType::kTQ2_0, FloatRows{ElemType::kF32, in, 1, 64}, {}, out, nullptr)
                .code(),
            StatusCode::kInvalidArgument);
  // out one byte short, and one too long.
  EXPECT_EQ(QuantizeGgml(GgmlType::kQ8_0, FloatRows{ElemType::kF32, in, 1, 64}, {},
                         std::span(out.data(), 67), nullptr)
                .code(),
            StatusCode::kInvalidArgument);
  std::vector<std::byte> longer(69);
  EXPECT_EQ(QuantizeGgml(GgmlType::kQ8_0, FloatRows{ElemType::kF32, in, 1, 64}, {}, longer,
                         nullptr)
                .code(),
            StatusCode::kInvalidArgument);
  // input size not rows * cols.
  EXPECT_EQ(QuantizeGgml(GgmlType::kQ8_0, FloatRows{ElemType::kF32, in, 2, 64}, {}, out, nullptr)
                .code(),
            StatusCode::kInvalidArgument);
  // imatrix of the wrong length, or with a NaN.
  EXPECT_EQ(QuantizeGgml(GgmlType::kQ8_0, FloatRows{ElemType::kF32, in, 1, 64},
                         std::span(imatrix, 32), out, nullptr)
                .code(),
            StatusCode::kInvalidArgument);
  float bad_imatrix[64] = {};
  bad_imatrix[9] = NAN;
  const Status s = QuantizeGgml(GgmlType::kQ4_0, FloatRows{ElemType::kF32, in, 1, 64},
                                std::span(bad_imatrix, 64), std::span(out.data(), 36), nullptr);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("imatrix[9]"), std::string::npos) << s.ToString();
  // A type without an encoder (Q8_K, ggml's internal one), and a K-quant
  // with an imatrix.
  EXPECT_FALSE(CanQuantizeGgml(GgmlType::kQ8_K));
  EXPECT_EQ(QuantizeGgml(GgmlType::kQ8_K, FloatRows{ElemType::kF32, in, 1, 64}, {}, out,
                         nullptr)
                .code(),
            StatusCode::kUnsupported);
  EXPECT_TRUE(CanQuantizeGgml(GgmlType::kQ6_K));
  const std::vector<std::byte> in256 = AsBytes(Values(0, 256, 1), ElemType::kF32, 0);
  std::vector<std::byte> q6k(210);
  const std::vector<float> ones(256, 1.0f);
  // The K-quants take one now, routed to their family: ggml's bytes where
  // the oracle is present.
  ASSERT_TRUE(QuantizeGgml(GgmlType::kQ6_K, FloatRows{ElemType::kF32, in256, 1, 256}, ones, q6k,
                           nullptr)
                  .ok());
  if (const GgmlOracle* ggml = GgmlOracle::Get(); ggml != nullptr) {
    const std::vector<float> x = Values(0, 256, 1);
    const std::vector<uint8_t> want = ggml->Quantize(14, x, 256, ones.data());
    EXPECT_EQ(std::memcmp(want.data(), q6k.data(), want.size()), 0);
  }
  for (GgmlType type : kTypes) EXPECT_TRUE(CanQuantizeGgml(type));
}

AMN_INSTANTIATE_PER_TARGET(GgmlEncodeTarget);

}  // namespace
}  // namespace amn::test
