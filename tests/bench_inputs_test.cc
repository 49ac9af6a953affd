// The GGUF inputs `amn bench` times (perf/gguf_sample_blocks.h): for every
// GGUF decoder kernel whose type amn can encode, FillKernelInput writes
// blocks that decode (with the scalar reference) to finite, weight-like
// values, none through an Inf/NaN scale, tiled so any size holds the same
// sample; the types amn cannot encode keep random blocks. Nothing is timed.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "amn/ggml_dequant.h"
#include "amn/kernel_registry.h"
#include "amn/quantize.h"
#include "perf/gguf_sample_blocks.h"
#include "perf/measure.h"

namespace amn::perf {
namespace {

bool IsGgufDecoder(const KernelInfo& kernel) {
  return kernel.family == "ggml_legacy" || kernel.family == "ggml_kquant" ||
         kernel.family == "ggml_iquant";
}

TEST(BenchInputs, GgufBlocksDecodeToFiniteWeightLikeValues) {
  size_t checked = 0;
  for (const KernelInfo& kernel : Kernels()) {
    if (!IsGgufDecoder(kernel) || kernel.out != ElemType::kF32) continue;
    const std::string name(kernel.name);
    const size_t n = 2 * kSampleElems;
    std::vector<unsigned char> in(KernelInBytes(kernel, n));
    FillKernelInput(kernel, n, in.data());
    if (GgufSampleBlocks(kernel).empty()) continue;  // Q8_1, Q8_K: no encoder
    ++checked;
    const size_t half = in.size() / 2;
    EXPECT_EQ(std::memcmp(in.data(), in.data() + half, half), 0) << name << ": not tiled";
    std::vector<float> out(n);
    kernel.run_reference(in.data(), n, out.data());
    size_t nonzero = 0;
    double sum_sq = 0;
    for (float v : out) {
      ASSERT_TRUE(std::isfinite(v)) << name;
      ASSERT_LT(std::fabs(v), 1.0f) << name;  // weights of |x| < 0.07 and their codes
      nonzero += v != 0.0f;
      sum_sq += double{v} * v;
    }
    // The encoder's values have a standard deviation of about 0.02; every
    // type keeps roughly that spread, and the ternary ones (TQ1_0, TQ2_0,
    // Q2_0) at least a sixth of them non-zero.
    EXPECT_GT(nonzero, n / 6) << name;
    const double rms = std::sqrt(sum_sq / static_cast<double>(n));
    EXPECT_GT(rms, 0.01) << name;
    EXPECT_LT(rms, 0.04) << name;
  }
  // Every encodable GGUF type has an F32 decoder: Q4_0 ... Q2_0 but Q8_1/Q8_K.
  EXPECT_GE(checked, 25u);
}

TEST(BenchInputs, NonGgufKernelsHaveNoSample) {
  for (const KernelInfo& kernel : Kernels()) {
    if (!IsGgufDecoder(kernel)) {
      EXPECT_TRUE(GgufSampleBlocks(kernel).empty()) << kernel.name;
    }
  }
}

}  // namespace
}  // namespace amn::perf
