// Real FP8 checkpoints (../shared/fixtures/fp8_reference) on every target:
// out = bf16(f32(e4m3(w)) * f32(scale)), compared with PyTorch's bytes. Once
// through the cast kernels with the multiply written out here (anchors E4M3
// decoding and F32->BF16 rounding on the canonical library), and once through
// amn::DequantFp8Rows, driven for each scale layout the way
// amn/fp8_dequant.h describes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <span>
#include <vector>

#include "amn/convert.h"
#include "amn/fp8_dequant.h"
#include "tests/fixtures.h"
#include "tests/target_param.h"

namespace amn::test {
namespace {

// One fixture file, its header fields checked against its size.
struct Fp8Fixture {
  uint32_t scheme = 0, scale_dtype = 0, rows = 0, cols = 0;
  std::span<const uint8_t> weight, scales, expected;
};

testing::AssertionResult ParseFixture(const std::vector<uint8_t>& file, Fp8Fixture& f) {
  if (file.size() < 28) return testing::AssertionFailure() << "shorter than its header";
  f.scheme = LoadLe32(&file[0]);
  f.scale_dtype = LoadLe32(&file[4]);
  f.rows = LoadLe32(&file[8]);
  f.cols = LoadLe32(&file[12]);
  const uint64_t weight_len = LoadLe32(&file[16]), scale_len = LoadLe32(&file[20]);
  const uint64_t expected_len = LoadLe32(&file[24]);
  if (weight_len != uint64_t{f.rows} * f.cols || expected_len != 2 * weight_len ||
      file.size() != 28 + weight_len + scale_len + expected_len || f.scale_dtype > 2) {
    return testing::AssertionFailure() << "inconsistent header";
  }
  f.weight = {&file[28], weight_len};
  f.scales = {f.weight.data() + weight_len, scale_len};
  f.expected = {f.scales.data() + scale_len, expected_len};
  return testing::AssertionSuccess();
}

// Every scale as F32: F32 read as is, BF16/F16 widened exactly by the
// library's own conversions.
std::vector<float> ScalesToF32(const Fp8Fixture& f) {
  if (f.scale_dtype == 0) {
    std::vector<float> scales(f.scales.size() / 4);
    for (size_t i = 0; i < scales.size(); ++i) {
      const uint32_t bits = LoadLe32(&f.scales[4 * i]);
      std::memcpy(&scales[i], &bits, sizeof(bits));
    }
    return scales;
  }
  std::vector<uint16_t> halves(f.scales.size() / 2);
  for (size_t i = 0; i < halves.size(); ++i) {
    halves[i] = static_cast<uint16_t>(f.scales[2 * i] | f.scales[2 * i + 1] << 8);
  }
  std::vector<float> scales(halves.size());
  const Status status =
      f.scale_dtype == 1 ? ConvertBf16ToF32(halves, scales) : ConvertF16ToF32(halves, scales);
  EXPECT_TRUE(status.ok()) << status.ToString();
  return scales;
}

class Fp8FixtureTest : public PerTarget {};

TEST_P(Fp8FixtureTest, MatchesPyTorchBytes) {
  const auto files = FixtureFiles("fp8_reference", ".bin");
  AMN_SKIP_WITHOUT_FIXTURES(files, "fp8_reference");
  for (const auto& path : files) {
    SCOPED_TRACE(path.string());
    const std::vector<uint8_t> file = ReadBytes(path);
    Fp8Fixture f;
    ASSERT_TRUE(ParseFixture(file, f));
    const std::vector<float> scales = ScalesToF32(f);
    const size_t blocks_per_row = (f.cols + 127) / 128;

    std::vector<float> values(f.weight.size());
    ASSERT_TRUE(ConvertE4m3ToF32(f.weight, values).ok());
    for (size_t r = 0; r < f.rows; ++r) {
      for (size_t c = 0; c < f.cols; ++c) {
        const size_t s = f.scheme == 0   ? (r / 128) * blocks_per_row + c / 128
                         : f.scheme == 1 ? 0
                                         : r;
        ASSERT_LT(s, scales.size());
        values[r * f.cols + c] *= scales[s];
      }
    }
    std::vector<uint16_t> got(f.weight.size());
    ASSERT_TRUE(ConvertF32ToBf16(values, got).ok());
    EXPECT_EQ(std::memcmp(got.data(), f.expected.data(), f.expected.size()), 0);
  }
}

// Through the scaled kernel: scheme 0 (128 x 128 blocks) one call per row
// block with that block row's scales and block_cols = 128; scheme 1 one call
// for the whole tensor; scheme 2 one call per row with its own scale.
TEST_P(Fp8FixtureTest, DequantFp8RowsMatchesPyTorchBytes) {
  ASSERT_EQ(Fp8DequantTarget(), GetParam());
  const auto files = FixtureFiles("fp8_reference", ".bin");
  AMN_SKIP_WITHOUT_FIXTURES(files, "fp8_reference");
  constexpr size_t kBlock = 128;
  for (const auto& path : files) {
    SCOPED_TRACE(path.string());
    const std::vector<uint8_t> file = ReadBytes(path);
    Fp8Fixture f;
    ASSERT_TRUE(ParseFixture(file, f));
    const std::vector<float> scales = ScalesToF32(f);
    std::vector<uint16_t> got(f.weight.size(), 0xDEAD);
    const auto run = [&](size_t first_row, size_t n_rows, std::span<const float> row_scales,
                         size_t block_cols) {
      const size_t begin = first_row * f.cols, n = n_rows * f.cols;
      const Status status = DequantFp8Rows(
          ElemType::kF8E4m3, f.weight.subspan(begin, n), f.cols, row_scales, block_cols,
          ElemType::kBf16, std::as_writable_bytes(std::span(got).subspan(begin, n)));
      ASSERT_TRUE(status.ok()) << status.ToString();
    };
    switch (f.scheme) {
      case 0: {
        const size_t blocks_per_row = (f.cols + kBlock - 1) / kBlock;
        const size_t row_blocks = (f.rows + kBlock - 1) / kBlock;
        ASSERT_EQ(scales.size(), row_blocks * blocks_per_row);
        for (size_t rb = 0; rb < row_blocks; ++rb) {
          const size_t first = rb * kBlock;
          const size_t n_rows = std::min<size_t>(kBlock, f.rows - first);
          run(first, n_rows, std::span(scales).subspan(rb * blocks_per_row, blocks_per_row),
              kBlock);
        }
        break;
      }
      case 1:
        ASSERT_EQ(scales.size(), 1u);
        run(0, f.rows, scales, f.cols);
        break;
      case 2:
        ASSERT_EQ(scales.size(), f.rows);
        for (size_t r = 0; r < f.rows; ++r) run(r, 1, std::span(scales).subspan(r, 1), f.cols);
        break;
      default:
        FAIL() << "unknown scheme " << f.scheme;
    }
    EXPECT_EQ(std::memcmp(got.data(), f.expected.data(), f.expected.size()), 0);
  }
}

AMN_INSTANTIATE_PER_TARGET(Fp8FixtureTest);

}  // namespace
}  // namespace amn::test
