// Scalar reference for F32/F16/BF16 conversions, from IEEE 754-2008 §3.6
// (binary16/binary32 layouts) and §4.3.1 (roundTiesToEven).
#include "kernels/ref/float_convert_ref.h"

#include <bit>
#include <cstring>

#include "kernels/float_formats.h"

namespace amn::ref {
namespace {

uint32_t LoadF32Bits(const float* p) {
  uint32_t bits;
  std::memcpy(&bits, p, sizeof(bits));
  return bits;
}

void StoreF32Bits(uint32_t bits, float* p) { std::memcpy(p, &bits, sizeof(bits)); }

// Inputs may sit at any address (the C ABI promises it), so 16-bit inputs
// are loaded bytewise too.
uint16_t LoadU16(const uint16_t* p) {
  uint16_t bits;
  std::memcpy(&bits, p, sizeof(bits));
  return bits;
}

bool IsF32Nan(uint32_t bits) { return (bits & fmt::kF32AbsMask) > fmt::kF32ExpMask; }

// Rounds `value >> shift` to nearest, ties to even. shift in [1, 31].
uint32_t ShiftRightRoundEven(uint32_t value, int shift) {
  const uint32_t kept = value >> shift;
  const uint32_t rest = value & ((1u << shift) - 1);
  const uint32_t half = 1u << (shift - 1);
  const bool round_up = rest > half || (rest == half && (kept & 1u) != 0);
  return kept + (round_up ? 1u : 0u);
}

}  // namespace

uint16_t F32BitsToBf16(uint32_t f32_bits) {
  if (IsF32Nan(f32_bits)) {
    return static_cast<uint16_t>((f32_bits | fmt::kF32QuietBit) >> 16);
  }
  // BF16 keeps the top 16 bits; the carry of a round-up may run into the
  // exponent, which is right (it also makes the largest floats round to Inf).
  return static_cast<uint16_t>(ShiftRightRoundEven(f32_bits, 16));
}

uint16_t F32BitsToF16(uint32_t f32_bits) {
  const uint16_t sign = static_cast<uint16_t>((f32_bits >> 16) & fmt::kF16SignMask);
  const uint32_t abs = f32_bits & fmt::kF32AbsMask;
  if (abs > fmt::kF32ExpMask) {  // NaN: quiet, top 10 payload bits kept
    return sign | fmt::kF16ExpMask | fmt::kF16QuietBit | ((abs >> 13) & 0x3FFu);
  }
  if (abs == fmt::kF32ExpMask) return sign | fmt::kF16ExpMask;
  const int biased_exp = static_cast<int>(abs >> 23);
  if (biased_exp == 0) return sign;  // F32 subnormal: far below half an F16 ulp
  const int exp = biased_exp - 127;
  const uint32_t significand = (abs & 0x7FFFFFu) | 0x800000u;  // 24 bits
  uint32_t magnitude;
  if (exp >= -14) {
    // Normal F16: keep 11 significant bits. A round-up carry may bump the
    // exponent; past the largest exponent the result is Inf.
    const uint32_t rounded = ShiftRightRoundEven(significand, 13);  // in [2^10, 2^11]
    const uint32_t biased = static_cast<uint32_t>(exp + 15);
    magnitude = (biased << 10) + (rounded - 0x400u);
    if (biased >= 31 || magnitude >= fmt::kF16ExpMask) magnitude = fmt::kF16ExpMask;
  } else {
    // Subnormal F16: count units of 2^-24. value = significand * 2^(exp - 23),
    // so units = significand * 2^(exp + 1), a right shift by -(exp + 1) >= 14.
    const int shift = -(exp + 1);
    magnitude = shift > 24 ? 0u : ShiftRightRoundEven(significand, shift);
  }
  return static_cast<uint16_t>(sign | magnitude);
}

uint32_t Bf16ToF32Bits(uint16_t bf16) { return static_cast<uint32_t>(bf16) << 16; }

uint32_t F16ToF32Bits(uint16_t f16) {
  const uint32_t sign = static_cast<uint32_t>(f16 & fmt::kF16SignMask) << 16;
  const uint32_t biased_exp = (f16 >> 10) & 0x1Fu;
  const uint32_t mantissa = f16 & 0x3FFu;
  if (biased_exp == 0x1F) {
    if (mantissa == 0) return sign | fmt::kF32ExpMask;
    return sign | fmt::kF32ExpMask | fmt::kF32QuietBit | (mantissa << 13);
  }
  if (biased_exp == 0) {
    if (mantissa == 0) return sign;
    // mantissa * 2^-24 = 2^(top - 24) * (mantissa / 2^top), top = highest bit.
    const int top = std::bit_width(mantissa) - 1;
    const uint32_t fraction = (mantissa ^ (1u << top)) << (23 - top);
    return sign | (static_cast<uint32_t>(top - 24 + 127) << 23) | fraction;
  }
  return sign | ((biased_exp - 15 + 127) << 23) | (mantissa << 13);
}

void ConvertF32ToBf16(const float* in, size_t n_elems, uint16_t* out) {
  for (size_t i = 0; i < n_elems; ++i) out[i] = F32BitsToBf16(LoadF32Bits(in + i));
}

void ConvertF32ToF16(const float* in, size_t n_elems, uint16_t* out) {
  for (size_t i = 0; i < n_elems; ++i) out[i] = F32BitsToF16(LoadF32Bits(in + i));
}

void ConvertBf16ToF32(const uint16_t* in, size_t n_elems, float* out) {
  for (size_t i = 0; i < n_elems; ++i) StoreF32Bits(Bf16ToF32Bits(LoadU16(in + i)), out + i);
}

void ConvertF16ToF32(const uint16_t* in, size_t n_elems, float* out) {
  for (size_t i = 0; i < n_elems; ++i) StoreF32Bits(F16ToF32Bits(LoadU16(in + i)), out + i);
}

void ConvertF16ToBf16(const uint16_t* in, size_t n_elems, uint16_t* out) {
  for (size_t i = 0; i < n_elems; ++i) out[i] = F32BitsToBf16(F16ToF32Bits(LoadU16(in + i)));
}

void ConvertBf16ToF16(const uint16_t* in, size_t n_elems, uint16_t* out) {
  for (size_t i = 0; i < n_elems; ++i) out[i] = F32BitsToF16(Bf16ToF32Bits(LoadU16(in + i)));
}

}  // namespace amn::ref
