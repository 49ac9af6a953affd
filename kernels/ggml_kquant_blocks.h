// ggml K-quant super-block layouts (ggml-common.h block_q2_K … block_tq2_0):
// byte offsets of each field, sizes, and the IQ4 codebook. No Highway. Every
// multi-byte field is read with the explicit little-endian loads below, never
// by casting the caller's bytes to a struct.
#ifndef AMN_KERNELS_GGML_KQUANT_BLOCKS_H_
#define AMN_KERNELS_GGML_KQUANT_BLOCKS_H_

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/ggml_blocks.h"

namespace amn::kq {

inline constexpr size_t kSuperBlockElems = 256;  // QK_K

inline uint16_t LoadLe16(const uint8_t* p) {
  return static_cast<uint16_t>(p[0] | (static_cast<uint16_t>(p[1]) << 8));
}
inline uint32_t LoadLe32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}
inline float LoadLeF32(const uint8_t* p) {
  const uint32_t bits = LoadLe32(p);
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

// Q2_K: scales[16] (lo nibble scale, hi nibble min), qs[64] (2-bit), d, dmin.
namespace q2k {
inline constexpr size_t kScales = 0, kQs = 16, kD = 80, kDmin = 82, kBytes = 84;
static_assert(kBytes == 2 * 2 + kSuperBlockElems / 16 + kSuperBlockElems / 4);  // 2.625 bpw
}  // namespace q2k

// Q3_K: hmask[32] (high bit), qs[64] (low 2 bits), scales[12] (6-bit), d.
namespace q3k {
inline constexpr size_t kHmask = 0, kQs = 32, kScales = 96, kD = 108, kBytes = 110;
static_assert(kBytes == 2 + kSuperBlockElems / 4 + kSuperBlockElems / 8 + 12);  // 3.4375 bpw
}  // namespace q3k

// Q4_K: d, dmin, scales[12] (6-bit scales and mins, get_scale_min_k4), qs[128].
namespace q4k {
inline constexpr size_t kD = 0, kDmin = 2, kScales = 4, kQs = 16, kBytes = 144;
static_assert(kBytes == 2 * 2 + 12 + kSuperBlockElems / 2);  // 4.5 bpw
}  // namespace q4k

// Q5_K: d, dmin, scales[12], qh[32] (fifth bit), qs[128].
namespace q5k {
inline constexpr size_t kD = 0, kDmin = 2, kScales = 4, kQh = 16, kQs = 48, kBytes = 176;
static_assert(kBytes == 2 * 2 + 12 + kSuperBlockElems / 8 + kSuperBlockElems / 2);  // 5.5 bpw
}  // namespace q5k

// Q6_K: ql[128] (low 4 bits), qh[64] (high 2 bits), scales[16] (i8), d.
namespace q6k {
inline constexpr size_t kQl = 0, kQh = 128, kScales = 192, kD = 208, kBytes = 210;
static_assert(kBytes == kSuperBlockElems / 2 + kSuperBlockElems / 4 + 16 + 2);  // 6.5625 bpw
}  // namespace q6k

// Q8_K: d (f32), qs[256] (i8), bsums[16] (i16, unused by dequantization).
namespace q8k {
inline constexpr size_t kD = 0, kQs = 4, kBsums = 260, kBytes = 292;
static_assert(kBytes == 4 + kSuperBlockElems + 16 * 2);  // 9.125 bpw
}  // namespace q8k

// IQ4_XS: d, scales_h (u16), scales_l[4], qs[128] (codebook indices).
namespace iq4xs {
inline constexpr size_t kD = 0, kScalesH = 2, kScalesL = 4, kQs = 8, kBytes = 136;
static_assert(kBytes == 2 + 2 + kSuperBlockElems / 64 + kSuperBlockElems / 2);  // 4.25 bpw
}  // namespace iq4xs

// TQ1_0: qs[48] (5 base-3 digits per byte), qh[4] (4 digits per byte), d.
namespace tq1 {
inline constexpr size_t kQs = 0, kQh = 48, kD = 52, kBytes = 54;
static_assert(kBytes == (kSuperBlockElems - 4 * 4) / 5 + 4 + 2);  // 1.6875 bpw
}  // namespace tq1

// TQ2_0: qs[64] (2-bit), d.
namespace tq2 {
inline constexpr size_t kQs = 0, kD = 64, kBytes = 66;
static_assert(kBytes == kSuperBlockElems / 4 + 2);  // 2.0625 bpw
}  // namespace tq2

// IQ4_XS uses the IQ4_NL codebook (ggml kvalues_iq4nl).
inline constexpr const std::array<int8_t, 16>& kIq4Values = ggml::kIq4NlValues;

// Q4_K/Q5_K 6-bit scale and min of sub-block j (ggml get_scale_min_k4).
inline void ScaleMinK4(int j, const uint8_t* q, uint8_t* sc, uint8_t* m) {
  if (j < 4) {
    *sc = q[j] & 63;
    *m = q[j + 4] & 63;
  } else {
    *sc = static_cast<uint8_t>((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
    *m = static_cast<uint8_t>((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
  }
}

// Q3_K 6-bit scale s (0..15), minus 32.
inline int Q3KScale(int s, const uint8_t* sc) {
  const int lo = (sc[s % 8] >> (4 * (s / 8))) & 15;
  const int hi = (sc[8 + s % 4] >> (2 * (s / 4))) & 3;
  return (lo | (hi << 4)) - 32;
}

}  // namespace amn::kq

#endif  // AMN_KERNELS_GGML_KQUANT_BLOCKS_H_
