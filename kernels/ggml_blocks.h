// ggml block layouts of the "legacy" 32-element quant types (ggml-common.h)
// and their codebooks, as documentation and constants. No Highway. Kernels
// read these bytes with explicit little-endian loads at the offsets below,
// never by casting untrusted memory to a struct.
#ifndef AMN_KERNELS_GGML_BLOCKS_H_
#define AMN_KERNELS_GGML_BLOCKS_H_

#include <array>
#include <cstddef>
#include <cstdint>

#include "kernels/ref/float_convert_ref.h"

namespace amn::ggml {

inline constexpr size_t kQK = 32;  // elements per legacy block

// Nibble order of the 4-bit types: byte l of qs holds element l (low nibble)
// and element l + 16 (high nibble).

// Q4_0 (18 bytes, 4.5 bits/weight): d:f16 @0, qs[16] @2.
//   y[l] = d * (lo(qs[l]) - 8), y[l+16] = d * (hi(qs[l]) - 8)
inline constexpr size_t kQ4_0Bytes = 2 + kQK / 2;
static_assert(kQ4_0Bytes * 8 * 2 == kQK * 9, "Q4_0: 4.5 bits per weight");
// Q4_1 (20 bytes, 5 bits/weight): d:f16 @0, m:f16 @2, qs[16] @4.
//   y = (d * q) + m, q the plain nibble.
inline constexpr size_t kQ4_1Bytes = 4 + kQK / 2;
static_assert(kQ4_1Bytes * 8 == kQK * 5, "Q4_1: 5 bits per weight");
// Q5_0 (22 bytes, 5.5 bits/weight): d:f16 @0, qh:u32 @2, qs[16] @6.
//   q = nibble | ((qh >> y) & 1) << 4; y = d * (q - 16)
inline constexpr size_t kQ5_0Bytes = 2 + 4 + kQK / 2;
static_assert(kQ5_0Bytes * 8 * 2 == kQK * 11, "Q5_0: 5.5 bits per weight");
// Q5_1 (24 bytes, 6 bits/weight): d:f16 @0, m:f16 @2, qh:u32 @4, qs[16] @8.
//   y = (d * q) + m
inline constexpr size_t kQ5_1Bytes = 4 + 4 + kQK / 2;
static_assert(kQ5_1Bytes * 8 == kQK * 6, "Q5_1: 6 bits per weight");
// Q8_0 (34 bytes, 8.5 bits/weight): d:f16 @0, qs[32]:i8 @2.  y = qs * d
inline constexpr size_t kQ8_0Bytes = 2 + kQK;
static_assert(kQ8_0Bytes * 8 * 2 == kQK * 17, "Q8_0: 8.5 bits per weight");
// Q8_1 (36 bytes, 9 bits/weight): d:f16 @0, s:f16 @2 (d * sum(qs), unused
// here), qs[32]:i8 @4.  y = d * qs
inline constexpr size_t kQ8_1Bytes = 4 + kQK;
static_assert(kQ8_1Bytes * 8 == kQK * 9, "Q8_1: 9 bits per weight");
// IQ4_NL (18 bytes, 4.5 bits/weight): d:f16 @0, qs[16] @2 (Q4_0 order).
//   y = d * kIq4NlValues[nibble]
inline constexpr size_t kIq4NlBytes = 2 + kQK / 2;
static_assert(kIq4NlBytes * 8 * 2 == kQK * 9, "IQ4_NL: 4.5 bits per weight");
// MXFP4 (17 bytes, 4.25 bits/weight): e:u8 (E8M0) @0, qs[16] @1 (Q4_0 order).
//   y = kMxfp4Values[nibble] * s, s = 2^(e - 128) as F32 bits
//   (e < 2 ? 0x00200000 << e : (e - 1) << 23); e = 255 is not NaN.
inline constexpr size_t kMxfp4Bytes = 1 + kQK / 2;
static_assert(kMxfp4Bytes * 8 * 4 == kQK * 17, "MXFP4: 4.25 bits per weight");

// The newer types, with their own block lengths.
// NVFP4 (36 bytes per 64, 4.5 bits/weight): d[4]:UE4M3 @0 (one per
//   16-element sub-block s), qs[32] @4; sub-block s owns qs[8s .. 8s+8): byte
//   l holds its element l (low nibble) and l + 8 (high nibble).
//   y = kMxfp4Values[nibble] * Ue4m3HalfBits(d[s])
inline constexpr size_t kNvfp4Elems = 64;
inline constexpr size_t kNvfp4SubElems = 16;
inline constexpr size_t kNvfp4Bytes = 4 + kNvfp4Elems / 2;
static_assert(kNvfp4Bytes * 8 * 2 == kNvfp4Elems * 9, "NVFP4: 4.5 bits per weight");
// Q1_0 (18 bytes per 128, 1.125 bits/weight): d:f16 @0, qs[16] @2; bit j%8
//   of qs[j/8] set: y = d, clear: y = -d (a sign flip, also of a NaN d).
inline constexpr size_t kQ1_0Elems = 128;
inline constexpr size_t kQ1_0Bytes = 2 + kQ1_0Elems / 8;
static_assert(kQ1_0Bytes * 8 * 8 == kQ1_0Elems * 9, "Q1_0: 1.125 bits per weight");
// Q2_0 (18 bytes per 64, 2.25 bits/weight): d:f16 @0, qs[16] @2; bits
//   2(j%4)..2(j%4)+1 of qs[j/4] are q: y = (q - 1) * d.
inline constexpr size_t kQ2_0Elems = 64;
inline constexpr size_t kQ2_0Bytes = 2 + kQ2_0Elems / 4;
static_assert(kQ2_0Bytes * 8 * 4 == kQ2_0Elems * 9, "Q2_0: 2.25 bits per weight");

// ggml kvalues_iq4nl.
// 16-byte aligned: the kernels load them whole for TableLookupBytes.
alignas(16) inline constexpr std::array<int8_t, 16> kIq4NlValues = {-127, -104, -83, -65, -49, -35, -22, -10,
                                                        1,    13,   25,  38,  53,  69,  89,  113};
// ggml kvalues_mxfp4: E2M1 values doubled (hence the halved scale).
alignas(16) inline constexpr std::array<int8_t, 16> kMxfp4Values = {0, 1,  2,  3,  4,  6,  8,  12,
                                                        0, -1, -2, -3, -4, -6, -8, -12};

// The NaN that an invalid operation (±Inf * 0, Inf - Inf) gives in these
// kernels, whatever the CPU's default NaN: x86's, as numpy gives there.
inline constexpr uint32_t kInvalidNan = 0xFFC00000u;

// The E8M0 scale of an MXFP4 block, halved, as F32 bits.
constexpr uint32_t Mxfp4HalfScaleBits(uint8_t e) {
  return e < 2 ? 0x00200000u << e : static_cast<uint32_t>(e - 1) << 23;
}

// ggml_ue4m3_to_fp32: an NVFP4 sub-block scale, halved (the E2M1 codebook
// is doubled), as F32 bits. Bit 7 is ignored, 0x7F (E4M3's NaN) reads as 0,
// and every other byte is finite: exponent e = bits 3..6, mantissa m = bits
// 0..2; e = 0: m * 2^-10, else (8 + m) * 2^(e - 11). All exact in F32.
constexpr uint32_t Ue4m3HalfBits(uint8_t x) {
  if ((x & 0x7Fu) == 0 || x == 0x7F) return 0;
  const uint32_t e = (x >> 3) & 0xFu, m = x & 7u;
  if (e == 0) {  // m * 2^-10: a normal F32 with the leading bit of m implicit
    const uint32_t top = m >= 4 ? 2 : (m >= 2 ? 1 : 0);
    return ((127 - 10 + top) << 23) | ((m << (23 - top)) & 0x7FFFFFu);
  }
  return ((e - 11 + 3 + 127) << 23) | (m << 20);  // (1 + m/8) * 2^(e - 8)
}
// The same for every byte, as a table for the decoders.
inline constexpr std::array<uint32_t, 256> kUe4m3HalfBits = [] {
  std::array<uint32_t, 256> t{};
  for (size_t i = 0; i < 256; ++i) t[i] = Ue4m3HalfBits(static_cast<uint8_t>(i));
  return t;
}();

inline uint16_t LoadLe16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | p[1] << 8); }

// A block's f16 scale (bits h) as f32 bits, exact (= ref::F16ToF32Bits). Inline,
// with normal numbers handled first by one predictable branch: per block this
// is the kernels' largest fixed cost, and a vector widening of one broadcast
// lane cost as much as Q8_0's whole 32-element body.
inline uint32_t F16ScaleBits(uint16_t h) {
  const uint32_t magnitude = h & 0x7FFFu;
  if (magnitude - 0x0400u < 0x7800u) {  // exponent 1..30
    return (static_cast<uint32_t>(h & 0x8000u) << 16) | ((magnitude << 13) + 0x38000000u);
  }
  return ref::F16ToF32Bits(h);  // ±0, subnormal, Inf, NaN
}
inline uint32_t LoadLe32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}

}  // namespace amn::ggml

#endif  // AMN_KERNELS_GGML_BLOCKS_H_
