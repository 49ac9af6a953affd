// Small helpers the IQ2 and IQ1 encoder references share (ggml-quants.c's
// MAX, sqrtf prologue, f16 stores). Header-only, scalar.
#ifndef AMN_KERNELS_REF_GGML_IQ_ENCODE_COMMON_H_
#define AMN_KERNELS_REF_GGML_IQ_ENCODE_COMMON_H_

#include <algorithm>
#include <bit>
#include <cstdint>

#include "kernels/ref/float_convert_ref.h"

namespace amn::ref::iqe {

inline constexpr int kQK = 256;

// ggml's MAX(a, b) macro: a > b ? a : b (b on ties, unlike std::max).
inline float CMax(float a, float b) { return a > b ? a : b; }

inline int Clamp(int v, int lo, int hi) { return std::max(lo, std::min(hi, v)); }

// sum x_i^2 over the super-block, in element order.
inline float SumSquares(const float* x) {
  float s = 0.0f;
  for (int i = 0; i < kQK; ++i) s += x[i] * x[i];
  return s;
}

inline uint16_t ToF16(float v) { return F32BitsToF16(std::bit_cast<uint32_t>(v)); }

inline void StoreLe16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
}

}  // namespace amn::ref::iqe

#endif  // AMN_KERNELS_REF_GGML_IQ_ENCODE_COMMON_H_
