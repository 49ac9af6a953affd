// Scalar reference for OFP8 E4M3FN / E5M2 casts, from the OCP 8-bit floating
// point specification v1.0 (the encodings PyTorch calls float8_e4m3fn and
// float8_e5m2).
#include "kernels/ref/fp8_ref.h"

#include <bit>
#include <cstring>

#include "kernels/float_formats.h"
#include "kernels/ref/float_convert_ref.h"

namespace amn::ref {

uint32_t E4m3ToF32Bits(uint8_t e4m3) {
  const uint32_t sign = static_cast<uint32_t>(e4m3 & 0x80u) << 24;
  const uint32_t biased_exp = (e4m3 >> 3) & 0xFu;
  const uint32_t mantissa = e4m3 & 0x7u;
  if ((e4m3 & 0x7Fu) == fmt::kE4m3NanAbs) {
    return sign | fmt::kF32ExpMask | fmt::kF32QuietBit | (mantissa << 20);
  }
  if (biased_exp == 0) {
    if (mantissa == 0) return sign;
    // mantissa * 2^-9 = 2^(top - 9) * (mantissa / 2^top).
    const int top = std::bit_width(mantissa) - 1;
    const uint32_t fraction = (mantissa ^ (1u << top)) << (23 - top);
    return sign | (static_cast<uint32_t>(top - 9 + 127) << 23) | fraction;
  }
  return sign | ((biased_exp - fmt::kE4m3Bias + 127) << 23) | (mantissa << 20);
}

// E5M2 is defined as the upper byte of an IEEE binary16.
uint32_t E5m2ToF32Bits(uint8_t e5m2) {
  return F16ToF32Bits(static_cast<uint16_t>(e5m2 << 8));
}

namespace {

template <uint32_t (*ToF32Bits)(uint8_t)>
void ToF32Row(const uint8_t* in, size_t n_elems, float* out) {
  for (size_t i = 0; i < n_elems; ++i) {
    const uint32_t bits = ToF32Bits(in[i]);
    std::memcpy(out + i, &bits, sizeof(bits));
  }
}

template <uint32_t (*ToF32Bits)(uint8_t)>
void ToBf16Row(const uint8_t* in, size_t n_elems, uint16_t* out) {
  for (size_t i = 0; i < n_elems; ++i) out[i] = F32BitsToBf16(ToF32Bits(in[i]));
}

template <uint32_t (*ToF32Bits)(uint8_t)>
void ToF16Row(const uint8_t* in, size_t n_elems, uint16_t* out) {
  for (size_t i = 0; i < n_elems; ++i) out[i] = F32BitsToF16(ToF32Bits(in[i]));
}

}  // namespace

void ConvertE4m3ToF32(const uint8_t* in, size_t n, float* out) { ToF32Row<E4m3ToF32Bits>(in, n, out); }
void ConvertE4m3ToBf16(const uint8_t* in, size_t n, uint16_t* out) { ToBf16Row<E4m3ToF32Bits>(in, n, out); }
void ConvertE4m3ToF16(const uint8_t* in, size_t n, uint16_t* out) { ToF16Row<E4m3ToF32Bits>(in, n, out); }
void ConvertE5m2ToF32(const uint8_t* in, size_t n, float* out) { ToF32Row<E5m2ToF32Bits>(in, n, out); }
void ConvertE5m2ToBf16(const uint8_t* in, size_t n, uint16_t* out) { ToBf16Row<E5m2ToF32Bits>(in, n, out); }
void ConvertE5m2ToF16(const uint8_t* in, size_t n, uint16_t* out) { ToF16Row<E5m2ToF32Bits>(in, n, out); }

}  // namespace amn::ref
