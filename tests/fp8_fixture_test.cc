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
#include "tests/quant_fixture_files.h"
#include "tests/target_param.h"

namespace amn::test {
namespace {

class Fp8FixtureTest : public PerTarget {};

TEST_P(Fp8FixtureTest, MatchesPyTorchBytes) {
  const auto files = FixtureFiles("fp8_reference", ".bin");
  AMN_SKIP_WITHOUT_FIXTURES(files, "fp8_reference");
  for (const auto& path : files) {
    SCOPED_TRACE(path.string());
    const auto fixture = ReadFp8Fixture(path);
    ASSERT_TRUE(fixture) << "malformed fixture";
    const Fp8Fixture& f = *fixture;
    const std::vector<float> scales = Fp8FixtureScales(f);
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
    const auto fixture = ReadFp8Fixture(path);
    ASSERT_TRUE(fixture) << "malformed fixture";
    const Fp8Fixture& f = *fixture;
    const std::vector<float> scales = Fp8FixtureScales(f);
    std::vector<uint16_t> got(f.weight.size(), 0xDEAD);
    const auto run = [&](size_t first_row, size_t n_rows, std::span<const float> row_scales,
                         size_t block_cols) {
      const size_t begin = first_row * f.cols, n = n_rows * f.cols;
      const Status status = DequantFp8Rows(
          ElemType::kF8E4m3, std::span(f.weight).subspan(begin, n), f.cols, row_scales, block_cols,
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
