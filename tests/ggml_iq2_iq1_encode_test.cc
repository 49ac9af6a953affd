// The IQ2/IQ1 encoders' scalar reference (kernels/ref/ggml_iq2_encode_ref.h,
// ggml_iq1_encode_ref.h) against ggml itself (tests/ggml_oracle.h:
// ggml_quantize_chunk with the same quant_weights, or none where ggml
// allows it): the blocks must be the same bytes. Rows: the shared
// quantizer cases (tests/ggml_kquant_inputs.h: Gaussian over seeds and
// scales, outliers, all-zero, ±0, all-equal, sparse, subnormal) cut to
// rows of 256 to 1024 columns; importance vectors: ImatrixCases. A control
// test shows the comparison catches a wrong importance order. The kernel
// table's registry kernels of the family (f32_to_iq2_xxs ...) are checked
// against ggml too, with the sample's fixed importance matrix.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "amn/amn.h"
#include "amn/ggml_type.h"
#include "amn/kernel_registry.h"
#include "amn/quantize.h"
#include "kernels/ref/ggml_iq2_grid_index.h"
#include "kernels/ref/ggml_iq2_iq1_encode_ref.h"
#include "tests/ggml_kquant_inputs.h"
#include "tests/ggml_oracle.h"

namespace amn::test {
namespace {

constexpr GgmlType kTypes[] = {GgmlType::kIQ2_XXS, GgmlType::kIQ2_XS, GgmlType::kIQ2_S,
                               GgmlType::kIQ1_S, GgmlType::kIQ1_M};

std::string Name(GgmlType t) {
  switch (t) {
    case GgmlType::kIQ2_XXS: return "IQ2_XXS";
    case GgmlType::kIQ2_XS: return "IQ2_XS";
    case GgmlType::kIQ2_S: return "IQ2_S";
    case GgmlType::kIQ1_S: return "IQ1_S";
    case GgmlType::kIQ1_M: return "IQ1_M";
    default: return "?";
  }
}

// The shared cases, with every |x| >= 1e18 replaced by ±1e6: ggml's IQ
// searches square the inputs, and an infinite square makes them abort
// (GGML_ASSERT) or read out of bounds, which no test can compare.
std::vector<KQuantCase> Cases() {
  std::vector<KQuantCase> cases = KQuantCases();
  for (KQuantCase& c : cases) {
    for (float& v : c.x) {
      if (std::fabs(v) >= 1e18f) v = v < 0 ? -1e6f : 1e6f;
    }
  }
  return cases;
}

std::vector<uint8_t> Ours(GgmlType type, const std::vector<float>& x, size_t n_per_row,
                          const float* imatrix) {
  const size_t block_bytes = ref::Iq2Iq1EncodeBlockBytes(type);
  const size_t blocks = x.size() / 256;
  std::vector<uint8_t> got(blocks * block_bytes + 16, 0xA5);  // canary after the blocks
  for (size_t b = 0; b < blocks; ++b) {
    const float* qw = imatrix != nullptr ? imatrix + (256 * b) % n_per_row : nullptr;
    ref::QuantizeIq2Iq1Block(type, x.data() + 256 * b, qw, got.data() + b * block_bytes);
  }
  for (size_t k = 0; k < 16; ++k) EXPECT_EQ(got[blocks * block_bytes + k], 0xA5) << "overrun";
  got.resize(blocks * block_bytes);
  return got;
}

long FirstDifferentBlock(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b,
                         size_t block_bytes) {
  for (size_t k = 0; k < a.size() && k < b.size(); ++k) {
    if (a[k] != b[k]) return static_cast<long>(k / block_bytes);
  }
  return a.size() == b.size() ? -1 : 0;
}

void ExpectSameAsGgml(const GgmlOracle& ggml, GgmlType type, const std::vector<float>& x,
                      size_t n_per_row, const float* imatrix, const std::string& what) {
  const std::vector<uint8_t> want =
      ggml.Quantize(static_cast<int>(type), x, static_cast<int64_t>(n_per_row), imatrix);
  const size_t block_bytes = ref::Iq2Iq1EncodeBlockBytes(type);
  ASSERT_EQ(want.size(), x.size() / 256 * block_bytes) << what;
  const std::vector<uint8_t> got = Ours(type, x, n_per_row, imatrix);
  const long b = FirstDifferentBlock(got, want, block_bytes);
  if (b >= 0) {
    size_t k = 0;
    while (got[b * block_bytes + k] == want[b * block_bytes + k]) ++k;
    ADD_FAILURE() << Name(type) << " " << what << ": block " << b << " differs first at byte "
                  << k << " (ours " << int(got[b * block_bytes + k]) << ", ggml "
                  << int(want[b * block_bytes + k]) << ")";
  }
}

size_t RowLength(size_t n) { return n % 1024 == 0 ? 1024 : n % 512 == 0 ? 512 : 256; }

TEST(GgmlIq2Iq1EncodeRef, TypesAndImatrixRuleMatchGgml) {
  const auto* ggml = AMN_GGML_ORACLE_OR_SKIP();
  for (GgmlType type : kTypes) {
    EXPECT_EQ(ref::Iq2Iq1EncodeBlockBytes(type),
              ggml->RowSize(static_cast<int>(type), 256)) << Name(type);
    EXPECT_EQ(ref::Iq2Iq1RequiresImatrix(type), ggml->RequiresImatrix(static_cast<int>(type)))
        << Name(type);
  }
}

// The neighbour lists are what ggml searches; a key on the grid has none,
// an off-grid key's list is non-empty and sorted by distance.
TEST(GgmlIq2Iq1EncodeRef, GridIndexIsConsistent) {
  using ref::iq2::GridKind;
  for (GridKind kind : {GridKind::kIq2Xxs, GridKind::kIq2Xs, GridKind::kIq2S, GridKind::kIq1}) {
    const ref::iq2::GridIndex& g = ref::iq2::GetGridIndex(kind);
    int on_grid = 0;
    for (uint32_t u = 0; u <= 0xAAAA; ++u) {
      bool valid = true;
      for (int i = 0; i < 8; ++i) valid = valid && ((u >> (2 * i)) & 3) != 3;
      if (!valid) continue;
      if (g.Map(u) >= 0) {
        ++on_grid;
        continue;
      }
      const auto list = g.Neighbours(u);
      ASSERT_FALSE(list.empty()) << u;
      int prev = -1;
      for (uint16_t n : list) {
        int d2 = 0;
        for (int i = 0; i < 8; ++i) {
          const int diff = int(g.Point(n)[i]) - (2 * int((u >> (2 * i)) & 3) + 1);
          d2 += diff * diff;
        }
        ASSERT_GE(d2, prev) << u;
        prev = d2;
      }
    }
    EXPECT_EQ(on_grid, g.Size());
  }
}

TEST(GgmlIq2Iq1EncodeRef, ImatrixRowsMatchGgml) {
  const auto* ggml = AMN_GGML_ORACLE_OR_SKIP();
  for (const KQuantCase& c : Cases()) {
    const size_t n_per_row = RowLength(c.x.size());
    const std::vector<ImatrixCase> ws = ImatrixCases(n_per_row);
    for (const ImatrixCase& w : ws) {
      for (GgmlType type : kTypes) {
        ExpectSameAsGgml(*ggml, type, c.x, n_per_row, w.w.data(),
                         c.name + " / imatrix " + w.name);
      }
    }
  }
}

TEST(GgmlIq2Iq1EncodeRef, RowsWithoutImatrixMatchGgml) {
  const auto* ggml = AMN_GGML_ORACLE_OR_SKIP();
  for (const KQuantCase& c : Cases()) {
    for (GgmlType type : kTypes) {
      if (ggml->RequiresImatrix(static_cast<int>(type))) continue;
      ExpectSameAsGgml(*ggml, type, c.x, RowLength(c.x.size()), nullptr, c.name);
    }
  }
}

// Several row lengths (multiples of 256) with one importance vector each.
TEST(GgmlIq2Iq1EncodeRef, RowLengthsMatchGgml) {
  const auto* ggml = AMN_GGML_ORACLE_OR_SKIP();
  for (size_t n_per_row : {256u, 768u, 1280u, 3072u}) {
    const std::vector<float> x = GaussianRow(static_cast<uint32_t>(n_per_row), 3 * n_per_row, 0.5f);
    const std::vector<float> w = ImatrixCases(n_per_row)[1].w;
    for (GgmlType type : kTypes) {
      ExpectSameAsGgml(*ggml, type, x, n_per_row, w.data(),
                       "rows of " + std::to_string(n_per_row));
    }
  }
}

// The comparison can fail: the importance values reversed within each
// 16-column group must change some block of every type.
TEST(GgmlIq2Iq1EncodeRef, PermutedImportanceIsCaught) {
  const auto* ggml = AMN_GGML_ORACLE_OR_SKIP();
  const std::vector<float> x = GaussianRow(77, 4096, 1.0f);
  const std::vector<float> w = ImatrixCases(1024)[0].w;
  std::vector<float> permuted = w;
  for (size_t i = 0; i < permuted.size(); i += 16) {
    std::reverse(permuted.begin() + i, permuted.begin() + i + 16);
  }
  for (GgmlType type : kTypes) {
    const std::vector<uint8_t> want = ggml->Quantize(static_cast<int>(type), x, 1024, w.data());
    const std::vector<uint8_t> wrong = Ours(type, x, 1024, permuted.data());
    EXPECT_GE(FirstDifferentBlock(wrong, want, ref::Iq2Iq1EncodeBlockBytes(type)), 0)
        << Name(type);
  }
}

// The public entries: amn::QuantizeGgml (BF16/F16/F32 rows, several rows
// sharing the per-column importance values) and the C ABI give ggml's
// bytes, and refuse a missing importance matrix where ggml does, naming
// the type.
TEST(GgmlIq2Iq1Encode, QuantizeGgmlAndCAbiMatchGgml) {
  const auto* ggml = AMN_GGML_ORACLE_OR_SKIP();
  const size_t cols = 512, rows = 3;
  std::vector<float> x = GaussianRow(5, rows * cols, 0.3f);
  x[7] = 40.0f;  // an outlier
  const std::vector<float> w = ImatrixCases(cols)[0].w;
  const std::span<const std::byte> in(reinterpret_cast<const std::byte*>(x.data()),
                                      x.size() * sizeof(float));
  for (GgmlType type : kTypes) {
    EXPECT_TRUE(CanQuantizeGgml(type)) << Name(type);
    EXPECT_EQ(GgmlQuantizeNeedsImatrix(type), ggml->RequiresImatrix(static_cast<int>(type)));
    const std::vector<uint8_t> want =
        ggml->Quantize(static_cast<int>(type), x, static_cast<int64_t>(cols), w.data());
    std::vector<std::byte> out(want.size());
    QuantError err;
    const Status s = QuantizeGgml(type, FloatRows{ElemType::kF32, in, rows, cols}, w, out, &err);
    ASSERT_TRUE(s.ok()) << Name(type) << ": " << s.ToString();
    EXPECT_EQ(std::memcmp(out.data(), want.data(), want.size()), 0) << Name(type);
    EXPECT_EQ(err.elements, rows * cols);
    // The decoded blocks are near the input, not equal to it.
    EXPECT_GT(err.sum_sq_err, 0.0);
    EXPECT_LT(err.sum_sq_err, err.sum_sq_ref) << Name(type);
    // C ABI, one row.
    std::vector<uint8_t> row(want.size() / rows);
    ASSERT_EQ(amn_quantize_ggml(static_cast<int>(type), x.data(), cols, w.data(), row.data(),
                                row.size()),
              AMN_OK)
        << Name(type);
    EXPECT_EQ(std::memcmp(row.data(), want.data(), row.size()), 0) << Name(type);
    if (GgmlQuantizeNeedsImatrix(type)) {
      const Status refused =
          QuantizeGgml(type, FloatRows{ElemType::kF32, in, rows, cols}, {}, out, nullptr);
      EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument) << Name(type);
      EXPECT_NE(refused.message().find(Name(type)), std::string::npos) << refused.ToString();
      EXPECT_NE(refused.message().find("importance matrix"), std::string::npos);
      EXPECT_EQ(amn_quantize_ggml(static_cast<int>(type), x.data(), cols, nullptr, row.data(),
                                  row.size()),
                AMN_ERR_INVALID_ARGUMENT);
    } else {
      const std::vector<uint8_t> plain =
          ggml->Quantize(static_cast<int>(type), x, static_cast<int64_t>(cols), nullptr);
      ASSERT_TRUE(
          QuantizeGgml(type, FloatRows{ElemType::kF32, in, rows, cols}, {}, out, nullptr).ok());
      EXPECT_EQ(std::memcmp(out.data(), plain.data(), plain.size()), 0) << Name(type);
    }
    // A NaN is refused by index.
    std::vector<float> bad = x;
    bad[300] = NAN;
    const std::span<const std::byte> bad_in(reinterpret_cast<const std::byte*>(bad.data()),
                                            bad.size() * sizeof(float));
    const Status nan =
        QuantizeGgml(type, FloatRows{ElemType::kF32, bad_in, rows, cols}, w, out, nullptr);
    EXPECT_EQ(nan.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(nan.message().find("element 300"), std::string::npos) << nan.ToString();
  }
}

// The registry kernels "<in>_to_<type>" (dispatch/kernel_table.h, family
// GgmlIq2Iq1Quant; amn bench, kernel_table_test and c_api_test run them)
// encode each 256-element unit as ggml does with the fixed sample
// importance matrix that docs/kernels.md gives (0.25 + (i * 37 % 64) / 16
// for column i), on F32 and BF16 inputs; ggml given another matrix writes
// other bytes, so the sample does apply it.
TEST(GgmlIq2Iq1Encode, RegistryKernelsMatchGgmlWithTheSampleImatrix) {
  const auto* ggml = AMN_GGML_ORACLE_OR_SKIP();
  std::vector<float> w(256), reversed(256);
  for (size_t i = 0; i < 256; ++i) w[i] = 0.25f + static_cast<float>(i * 37 % 64) / 16.0f;
  std::reverse_copy(w.begin(), w.end(), reversed.begin());
  // BF16-exact values, so one input serves both element types.
  std::vector<float> x = GaussianRow(11, 2 * 256, 0.5f);
  for (float& v : x) v = std::bit_cast<float>(std::bit_cast<uint32_t>(v) & 0xFFFF0000u);
  std::vector<uint16_t> x_bf16(x.size());
  for (size_t i = 0; i < x.size(); ++i) x_bf16[i] = std::bit_cast<uint32_t>(x[i]) >> 16;
  for (GgmlType type : kTypes) {
    std::string stem = Name(type);
    std::transform(stem.begin(), stem.end(), stem.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    const std::vector<uint8_t> want =
        ggml->Quantize(static_cast<int>(type), x, 256, w.data());
    const std::vector<uint8_t> other =
        ggml->Quantize(static_cast<int>(type), x, 256, reversed.data());
    EXPECT_NE(want, other) << Name(type) << ": the importance matrix changes nothing";
    for (const std::string in : {"f32", "bf16"}) {
      const std::string name = in + "_to_" + stem;
      const KernelInfo* kernel = nullptr;
      for (const KernelInfo& k : Kernels()) {
        if (k.name == name) kernel = &k;
      }
      ASSERT_NE(kernel, nullptr) << name << " is not in the kernel table";
      EXPECT_EQ(kernel->family, "ggml_iq2_iq1_encode");
      ASSERT_EQ(kernel->block_elems, 256u) << name;
      ASSERT_EQ(kernel->out_unit_bytes, ref::Iq2Iq1EncodeBlockBytes(type)) << name;
      std::vector<uint8_t> got(want.size());
      const void* src = in == "f32" ? static_cast<const void*>(x.data()) : x_bf16.data();
      kernel->run(src, x.size(), got.data());
      EXPECT_EQ(got, want) << name;
      kernel->run_reference(src, x.size(), got.data());
      EXPECT_EQ(got, want) << name << " (reference)";
    }
  }
}

}  // namespace
}  // namespace amn::test
