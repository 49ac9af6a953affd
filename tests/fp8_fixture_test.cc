// Real FP8 checkpoints (../shared/fixtures/fp8_reference) through the cast
// kernels on every target: out = bf16(f32(e4m3(w)) * f32(scale)), compared
// with PyTorch's bytes. Anchors E4M3 decoding and F32->BF16 rounding on the
// canonical library; the scale multiply here is the one-line formula the
// fixture README gives (issue 3 moves it into a kernel).
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "amn/convert.h"
#include "tests/fixtures.h"
#include "tests/target_param.h"

namespace amn::test {
namespace {

// Scale dtype codes: 0 = F32, 1 = BF16, 2 = F16 (little-endian).
float ScaleToF32(const uint8_t* p, uint32_t dtype) {
  float f = 0;
  if (dtype == 0) {
    const uint32_t bits = LoadLe32(p);
    std::memcpy(&f, &bits, sizeof(f));
    return f;
  }
  const uint16_t half = static_cast<uint16_t>(p[0] | p[1] << 8);
  const Status status = dtype == 1 ? ConvertBf16ToF32({&half, 1}, {&f, 1})
                                   : ConvertF16ToF32({&half, 1}, {&f, 1});
  EXPECT_TRUE(status.ok());
  return f;
}

class Fp8FixtureTest : public PerTarget {};

TEST_P(Fp8FixtureTest, MatchesPyTorchBytes) {
  const auto files = FixtureFiles("fp8_reference", ".bin");
  AMN_SKIP_WITHOUT_FIXTURES(files, "fp8_reference");
  for (const auto& path : files) {
    SCOPED_TRACE(path.string());
    const std::vector<uint8_t> file = ReadBytes(path);
    ASSERT_GE(file.size(), 28u);
    const uint32_t scheme = LoadLe32(&file[0]), scale_dtype = LoadLe32(&file[4]);
    const uint32_t rows = LoadLe32(&file[8]), cols = LoadLe32(&file[12]);
    const uint32_t weight_len = LoadLe32(&file[16]), scale_len = LoadLe32(&file[20]);
    const uint32_t expected_len = LoadLe32(&file[24]);
    ASSERT_EQ(weight_len, rows * cols);
    ASSERT_EQ(file.size(), 28u + weight_len + scale_len + expected_len);
    const uint8_t* weight = &file[28];
    const uint8_t* scales = weight + weight_len;
    const uint8_t* expected = scales + scale_len;
    const size_t scale_bytes = scale_dtype == 0 ? 4 : 2;
    const uint32_t block_cols = (cols + 127) / 128;

    std::vector<float> values(weight_len);
    ASSERT_TRUE(ConvertE4m3ToF32({weight, weight_len}, values).ok());
    for (uint32_t r = 0; r < rows; ++r) {
      for (uint32_t c = 0; c < cols; ++c) {
        const size_t s = scheme == 0 ? (r / 128) * block_cols + c / 128 : scheme == 1 ? 0 : r;
        ASSERT_LT((s + 1) * scale_bytes, scale_len + 1);
        values[r * cols + c] *= ScaleToF32(scales + s * scale_bytes, scale_dtype);
      }
    }
    std::vector<uint16_t> got(weight_len);
    ASSERT_TRUE(ConvertF32ToBf16(values, got).ok());
    EXPECT_EQ(std::memcmp(got.data(), expected, expected_len), 0);
  }
}

AMN_INSTANTIATE_PER_TARGET(Fp8FixtureTest);

}  // namespace
}  // namespace amn::test
