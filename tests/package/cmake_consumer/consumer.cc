// An out-of-tree C++ consumer of the installed libamn, found with
// find_package(anamnesis). It dequantizes a GGUF Q4_0 block and an FP8 E5M2
// tensor with per-row scales through the C ABI, and compares the bit
// patterns with values derived here from the formats' definitions.
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>

#include "amn/amn.h"
#include "amn/version.h"

namespace {

int failures = 0;

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "FAIL: %s (%s)\n", what, amn_last_error());
    ++failures;
  }
}

void CompareF32(const float* got, const float* want, int n, const char* what) {
  for (int i = 0; i < n; ++i) {
    if (std::bit_cast<uint32_t>(got[i]) != std::bit_cast<uint32_t>(want[i])) {
      std::fprintf(stderr, "%s element %d: got 0x%08x, want 0x%08x\n", what, i,
                   std::bit_cast<uint32_t>(got[i]), std::bit_cast<uint32_t>(want[i]));
      Check(false, what);
    }
  }
}

// ggml Q4_0: F16 scale d, then 16 bytes; element j is (low nibble of byte j)
// - 8, element 16 + j is (high nibble of byte j) - 8, each times d. Here
// d = 0.25 (F16 0x3400) and byte j = j | (15 - j) << 4.
void Q4_0Row() {
  std::array<uint8_t, 18> block{};
  block[0] = 0x00;
  block[1] = 0x34;
  for (int j = 0; j < 16; ++j) block[2 + j] = static_cast<uint8_t>(j | (15 - j) << 4);
  std::array<float, 32> want{};
  for (int j = 0; j < 16; ++j) {
    want[j] = 0.25f * static_cast<float>(j - 8);
    want[16 + j] = 0.25f * static_cast<float>(7 - j);
  }
  std::array<float, 32> out{};
  Check(amn_dequantize_ggml(2, block.data(), block.size(), AMN_F32, out.data(), out.size()) ==
            AMN_OK,
        "amn_dequantize_ggml Q4_0");
  CompareF32(out.data(), want.data(), 32, "Q4_0");
}

// FP8 E5M2 (bias 15), 2 x 4, per-row F32 scales 1.0 and 0.5. By hand:
// 0x3C = 1.0, 0x3D = 1.25, 0x40 = 2.0, 0xBE = -1.5; 0x7B = 57344 (largest
// finite) -> 28672, 0x01 = 2^-16 (subnormal) -> 2^-17, 0x7C = +inf, 0x00 = 0.
void E5m2Rows() {
  const std::array<uint8_t, 8> codes{0x3C, 0x3D, 0x40, 0xBE, 0x7B, 0x01, 0x7C, 0x00};
  const std::array<float, 2> scales{1.0f, 0.5f};
  const std::array<float, 8> want{1.0f, 1.25f, 2.0f, -1.5f, 28672.0f, 0x1p-17f,
                                  std::numeric_limits<float>::infinity(), 0.0f};
  amn_fp8_params p;
  std::memset(&p, 0, sizeof p);
  p.code_type = AMN_E5M2;
  p.rows = 2;
  p.cols = 4;
  p.codes = codes.data();
  p.codes_bytes = codes.size();
  p.scale_kind = AMN_FP8_SCALE_ROW;
  p.scale_type = AMN_F32;
  p.scales = scales.data();
  p.scales_bytes = sizeof scales;
  std::array<float, 8> out{};
  Check(amn_dequantize_fp8(&p, 0, 2, AMN_F32, out.data(), sizeof out) == AMN_OK,
        "amn_dequantize_fp8 E5M2");
  CompareF32(out.data(), want.data(), 8, "E5M2");
}

}  // namespace

int main() {
  Check(std::strcmp(amn_version(), AMN_VERSION_STRING) == 0, "amn_version matches version.h");
  Q4_0Row();
  E5m2Rows();
  std::printf("C++ consumer: libamn %s, target %s: %s\n", amn_version(), amn_active_target(),
              failures == 0 ? "ok" : "FAILED");
  return failures == 0 ? 0 : 1;
}
