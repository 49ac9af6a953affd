// The ggml oracle itself (tests/ggml_oracle.h): opened, and giving what
// ggml's documented Q8_0 formula says (d = amax / 127 as F16, q = round(x/d)),
// so the encoder tests that lean on it compare against ggml, not a stub.
#include "tests/ggml_oracle.h"

#include <gtest/gtest.h>

#include <vector>

namespace amn::test {
namespace {

TEST(GgmlOracle, Q8_0IsGgmlsFormula) {
  const auto* ggml = AMN_GGML_ORACLE_OR_SKIP();
  std::vector<float> row(32, 0.0f);
  row[0] = 127.0f;
  row[1] = -127.0f;
  row[2] = 63.5f;   // a tie: roundf goes away from zero
  row[3] = -0.49f;
  EXPECT_EQ(ggml->RowSize(8, 32), 34u);
  const std::vector<uint8_t> block = ggml->Quantize(8, row, 32);
  ASSERT_EQ(block.size(), 34u);
  EXPECT_EQ(block[0] | block[1] << 8, 0x3C00);  // d = 1.0 in F16
  EXPECT_EQ(static_cast<int8_t>(block[2]), 127);
  EXPECT_EQ(static_cast<int8_t>(block[3]), -127);
  EXPECT_EQ(static_cast<int8_t>(block[4]), 64);
  EXPECT_EQ(static_cast<int8_t>(block[5]), 0);
}

}  // namespace
}  // namespace amn::test
