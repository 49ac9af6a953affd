// Scalar FP8 encoders: see fp8_encode_ref.h for the formula.
#include "kernels/ref/fp8_encode_ref.h"

#include <algorithm>
#include <bit>
#include <cmath>

#include "kernels/ref/fp8_ref.h"

namespace amn::ref {

namespace {


// Round the finite, in-range F32 v to an FP8 format with mant_bits mantissa
// bits and exponent bias `bias`, to nearest, ties to even. The value is
// M * 2^(e - 23) with the 24-bit significand M; the FP8 ulp at v is
// 2^(max(e, 1 - bias) - mant_bits), so M shifts right by s >= 20 with RNE,
// giving k ulps. Code = ((max(e, 1 - bias) + bias - 1) << mant_bits) + k:
// for normals k >= 2^mant_bits carries the hidden bit into the exponent
// field, for subnormals the exponent part is 0 and k is the code, and a
// carry out of the mantissa lands on the next binade either way.
uint8_t F32ToFp8Rne(float v, int mant_bits, int bias) {
  const uint32_t bits = std::bit_cast<uint32_t>(v);
  const uint8_t sign = static_cast<uint8_t>((bits >> 24) & 0x80u);
  const uint32_t exp_field = (bits >> 23) & 0xFFu;
  // Zero and F32 subnormals (< 2^-126) are far below half an FP8 subnormal.
  if (exp_field == 0) return sign;
  const int e = static_cast<int>(exp_field) - 127;
  const uint32_t m = (bits & 0x7FFFFFu) | 0x800000u;
  const int e_ulp = std::max(e, 1 - bias);
  const int s = 23 - mant_bits + (e_ulp - e);
  if (s > 25) return sign;  // v < 2^-2 ulps: rounds to zero
  uint32_t k = m >> s;
  const uint32_t rem = m & ((1u << s) - 1u);
  const uint32_t half = 1u << (s - 1);
  if (rem > half || (rem == half && (k & 1u) != 0)) ++k;
  const uint32_t code = (static_cast<uint32_t>(e_ulp + bias - 1) << mant_bits) + k;
  return static_cast<uint8_t>(sign | code);
}

float Fp8ToF32(uint8_t code, bool e5m2) {
  return std::bit_cast<float>(e5m2 ? E5m2ToF32Bits(code) : E4m3ToF32Bits(code));
}

uint64_t CeilDiv(uint64_t a, uint64_t b) { return a == 0 ? 0 : (a - 1) / b + 1; }

}  // namespace

uint8_t F32ToE4m3Rne(float v) { return F32ToFp8Rne(v, 3, 7); }
uint8_t F32ToE5m2Rne(float v) { return F32ToFp8Rne(v, 2, 15); }

uint64_t AbsMaxGridRef(const uint8_t* in, ElemType type, uint64_t rows, uint64_t cols,
                       uint64_t group_rows, uint64_t group_cols, float* amax) {
  const uint64_t grid_cols = CeilDiv(cols, group_cols);
  std::fill(amax, amax + CeilDiv(rows, group_rows) * grid_cols, 0.0f);
  for (uint64_t r = 0; r < rows; ++r) {
    float* group_row = amax + (r / group_rows) * grid_cols;
    for (uint64_t c = 0; c < cols; ++c) {
      const uint64_t i = r * cols + c;
      const uint32_t bits = kernels::LoadInputBits(in, type, i);
      if (!kernels::IsFiniteF32Bits(bits)) return i;
      const float a = std::bit_cast<float>(bits & 0x7FFFFFFFu);
      float& g = group_row[c / group_cols];
      if (a > g) g = a;
    }
  }
  return kernels::kAllFinite;
}

uint64_t QuantizeFp8Ref(const uint8_t* in, ElemType type, uint64_t rows, uint64_t cols,
                        uint64_t group_rows, uint64_t group_cols, bool e5m2, const float* scales,
                        uint8_t* codes, kernels::ErrorSums* errors) {
  const uint64_t grid_cols = CeilDiv(cols, group_cols);
  const float max_finite = e5m2 ? 57344.0f : 448.0f;
  for (uint64_t r = 0; r < rows; ++r) {
    const float* scale_row = scales + (r / group_rows) * grid_cols;
    for (uint64_t c = 0; c < cols; ++c) {
      const uint64_t i = r * cols + c;
      const uint32_t bits = kernels::LoadInputBits(in, type, i);
      if (!kernels::IsFiniteF32Bits(bits)) return i;
      const float x = std::bit_cast<float>(bits);
      const float scale = scale_row[c / group_cols];
      const float q = std::clamp(x / scale, -max_finite, max_finite);
      const uint8_t code = e5m2 ? F32ToE5m2Rne(q) : F32ToE4m3Rne(q);
      codes[i] = code;
      if (errors != nullptr) kernels::AddError(*errors, i, x, Fp8ToF32(code, e5m2) * scale);
    }
  }
  return kernels::kAllFinite;
}

}  // namespace amn::ref
