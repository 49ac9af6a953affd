// Lookup tables for the OFP8 cast kernels: the 16-bit results of the codes the
// bit-field rebias cannot produce (subnormals, E5M2 Inf/NaN). Each table is
// 8 little-endian u16 entries = one 128-bit block for TableLookupBytes.
// Values follow from the OCP 8-bit float spec; the exhaustive 256-code tests
// pin every entry against kernels/ref/fp8_ref.cc.
#ifndef AMN_KERNELS_FP8_TABLES_H_
#define AMN_KERNELS_FP8_TABLES_H_

#include <cstdint>

namespace amn {

struct Fp8Table8 {
  alignas(16) uint8_t bytes[16];
};

constexpr Fp8Table8 MakeFp8Table8(const uint16_t (&entries)[8]) {
  Fp8Table8 table{};
  for (int i = 0; i < 8; ++i) {
    table.bytes[2 * i] = static_cast<uint8_t>(entries[i] & 0xFF);
    table.bytes[2 * i + 1] = static_cast<uint8_t>(entries[i] >> 8);
  }
  return table;
}

// E4M3FN subnormals m * 2^-9, m = 0..7, as BF16 and as F16 (normal there).
inline constexpr Fp8Table8 kE4m3SubnormalBf16 =
    MakeFp8Table8({0x0000, 0x3B00, 0x3B80, 0x3BC0, 0x3C00, 0x3C20, 0x3C40, 0x3C60});
inline constexpr Fp8Table8 kE4m3SubnormalF16 =
    MakeFp8Table8({0x0000, 0x1800, 0x1C00, 0x1E00, 0x2000, 0x2100, 0x2200, 0x2300});
// E4M3FN NaN (S.1111.111): quiet, payload 0b111 on top of the mantissa.
inline constexpr uint16_t kE4m3NanBf16 = 0x7FF0;
inline constexpr uint16_t kE4m3NanF16 = 0x7F80;

// E5M2 as BF16, index (|code| & 3) | (|code| >= 0x7C ? 4 : 0):
// subnormals m * 2^-16 (m = 0..3), then +Inf and the quieted NaNs m = 1..3.
inline constexpr Fp8Table8 kE5m2SpecialBf16 =
    MakeFp8Table8({0x0000, 0x3780, 0x3800, 0x3840, 0x7F80, 0x7FE0, 0x7FC0, 0x7FE0});

}  // namespace amn

#endif  // AMN_KERNELS_FP8_TABLES_H_
