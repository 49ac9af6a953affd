// OFP8 cast kernels on every supported target against the scalar reference:
// all 256 codes, in many lengths and alignments.
#include <gtest/gtest.h>

#include <vector>

#include "amn/convert.h"
#include "amn/kernel_registry.h"
#include "tests/kernel_check.h"
#include "tests/target_param.h"

namespace amn::test {
namespace {

class Fp8ConvertTest : public PerTarget {};

std::vector<uint8_t> AllCodes(size_t repeats) {
  std::vector<uint8_t> codes;
  for (size_t r = 0; r < repeats; ++r) {
    for (int code = 0; code < 256; ++code) codes.push_back(static_cast<uint8_t>(code ^ r));
  }
  return codes;
}

TEST_P(Fp8ConvertTest, ProbeReportsForcedTarget) {
  EXPECT_EQ(TargetName(Fp8ConvertTarget()), TargetName(GetParam()));
}

TEST_P(Fp8ConvertTest, EveryCode) {
  for (const KernelInfo& kernel : Kernels()) {
    if (kernel.family != "fp8_convert") continue;
    EXPECT_TRUE(MatchesReference(kernel, AllCodes(3)));
  }
}

TEST_P(Fp8ConvertTest, SizesAndAlignments) {
  const std::vector<uint8_t> codes = AllCodes(1);
  for (const KernelInfo& kernel : Kernels()) {
    if (kernel.family != "fp8_convert") continue;
    for (size_t n : {0, 1, 2, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 129, 255}) {
      const std::vector<uint8_t> input(codes.begin(), codes.begin() + n);
      for (size_t offset : {0, 1, 7, 63}) {
        EXPECT_TRUE(MatchesReference(kernel, input, offset, (offset * 3) % 64))
            << "n=" << n << " offset=" << offset;
      }
    }
  }
}

// Every length from 0 to two of the widest vectors (64 bytes) plus one, at
// unaligned input and output starts: the whole vectors and the zero-padded
// tail of the byte-vector paths (MapCodesToWords), with every code in play.
TEST_P(Fp8ConvertTest, EveryLengthToTwoVectorsPlusOne) {
  const std::vector<uint8_t> codes = AllCodes(1);
  for (const KernelInfo& kernel : Kernels()) {
    if (kernel.family != "fp8_convert") continue;
    for (size_t n = 0; n <= 2 * 64 + 1; ++n) {
      for (size_t start : {size_t{0}, size_t{3}, size_t{127}}) {
        const std::vector<uint8_t> input(codes.begin() + start, codes.begin() + start + n);
        for (size_t offset : {0, 1, 5}) {
          EXPECT_TRUE(MatchesReference(kernel, input, offset, (offset * 7) % 64))
              << "n=" << n << " start=" << start << " offset=" << offset;
        }
      }
    }
  }
}

AMN_INSTANTIATE_PER_TARGET(Fp8ConvertTest);

}  // namespace
}  // namespace amn::test
