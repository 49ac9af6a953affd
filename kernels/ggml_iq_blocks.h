// ggml I-quant super-block layouts (ggml-common.h block_iq2_xxs …
// block_iq1_m): byte offsets of each field and sizes. No Highway. Multi-byte
// fields are read with kq::LoadLe16/LoadLe32, never through a struct cast.
#ifndef AMN_KERNELS_GGML_IQ_BLOCKS_H_
#define AMN_KERNELS_GGML_IQ_BLOCKS_H_

#include <cstddef>
#include <cstdint>

#include "kernels/ggml_iq_grids.h"
#include "kernels/ggml_kquant_blocks.h"

namespace amn::iq {

inline constexpr size_t kQK = kq::kSuperBlockElems;

// GGUF type ids of the family.
enum : uint32_t { kIq2XxsId = 16, kIq2XsId = 17, kIq3XxsId = 18, kIq1SId = 19, kIq3SId = 21,
                  kIq2SId = 22, kIq1MId = 29 };

// IQ2_XXS: d, then per 32 elements two u32: grid indices (one byte per 8
// elements) and 4×7 sign bits + a 4-bit scale.
namespace iq2xxs {
inline constexpr size_t kD = 0, kQs = 2, kBytes = 66;
static_assert(kBytes == 2 + kQK / 4);  // 2.0625 bpw
}  // namespace iq2xxs

// IQ2_XS: d, qs[32] u16 (9-bit grid index, 7 sign bits), scales[8] (two
// 4-bit scales per 32 elements).
namespace iq2xs {
inline constexpr size_t kD = 0, kQs = 2, kScales = 66, kBytes = 74;
static_assert(kBytes == 2 + kQK / 4 + kQK / 32);  // 2.3125 bpw
}  // namespace iq2xs

// IQ2_S: d, qs[32] (grid index low bits), signs[32], qh[8] (2 high index
// bits per 8 elements), scales[8].
namespace iq2s {
inline constexpr size_t kD = 0, kQs = 2, kSigns = 34, kQh = 66, kScales = 74, kBytes = 82;
static_assert(kBytes == 2 + kQK / 4 + kQK / 16);  // 2.5625 bpw
}  // namespace iq2s

// IQ3_XXS: d, qs[64] (grid index per 4 elements), then per 32 elements a u32
// of 4×7 sign bits + a 4-bit scale.
namespace iq3xxs {
inline constexpr size_t kD = 0, kQs = 2, kSignsScales = 66, kBytes = 98;
static_assert(kBytes == 2 + 3 * kQK / 8);  // 3.0625 bpw
}  // namespace iq3xxs

// IQ3_S: d, qs[64] (grid index low bits), qh[8] (ninth bits), signs[32],
// scales[4] (4-bit scale per 32 elements).
namespace iq3s {
inline constexpr size_t kD = 0, kQs = 2, kQh = 66, kSigns = 74, kScales = 106, kBytes = 110;
static_assert(kBytes == 2 + 13 * kQK / 32 + kQK / 64);  // 3.4375 bpw
}  // namespace iq3s

// IQ1_S: d, qs[32] (grid index low bits), qh[8] u16 per 32 elements: 3
// high index bits per 8 elements, a 3-bit scale, the delta's sign (bit 15).
namespace iq1s {
inline constexpr size_t kD = 0, kQs = 2, kQh = 34, kBytes = 50;
static_assert(kBytes == 2 + kQK / 8 + kQK / 16);  // 1.5625 bpw
}  // namespace iq1s

// IQ1_M: qs[32], qh[16] (3 index bits + delta sign per 8 elements), four
// u16 holding 3-bit scales per 16 elements and, in their top nibbles, d.
namespace iq1m {
inline constexpr size_t kQs = 0, kQh = 32, kScales = 48, kBytes = 56;
static_assert(kBytes == kQK / 8 + kQK / 16 + kQK / 32);  // 1.75 bpw
}  // namespace iq1m

// ggml's IQ1S_DELTA / IQ1M_DELTA.
inline constexpr float kIq1Delta = 0.125f;

// IQ1_M's f16 super scale, scattered over the top nibbles of its scales.
inline uint16_t Iq1MScaleBits(const uint8_t* block) {
  const uint8_t* sc = block + iq1m::kScales;
  return static_cast<uint16_t>((kq::LoadLe16(sc) >> 12) | ((kq::LoadLe16(sc + 2) >> 8) & 0x00f0) |
                               ((kq::LoadLe16(sc + 4) >> 4) & 0x0f00) |
                               (kq::LoadLe16(sc + 6) & 0xf000));
}

}  // namespace amn::iq

#endif  // AMN_KERNELS_GGML_IQ_BLOCKS_H_
