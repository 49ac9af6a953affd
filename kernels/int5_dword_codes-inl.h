// x86 (SSSE3 and up) unpacking of GGUF Q5_0/Q5_1 codes four to a u32 lane,
// Highway 1.0.3: a block's 5-bit codes (a low nibble in qs, a fifth bit in
// qh) laid out so that one byte shuffle per N codes moves them to their
// lanes, instead of a widening and a bit test per chunk. Used by
// GgmlQ5DwordsBlock (ggml_legacy-inl.h) on the targets without mask
// registers.
#if defined(AMN_KERNELS_INT5_DWORD_CODES_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef AMN_KERNELS_INT5_DWORD_CODES_INL_H_
#undef AMN_KERNELS_INT5_DWORD_CODES_INL_H_
#else
#define AMN_KERNELS_INT5_DWORD_CODES_INL_H_
#endif

#include <cstddef>
#include <cstdint>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace amn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_SSSE3
// Q5_0/Q5_1 codes four to a u32 lane: lane i's byte c holds the code of
// element h + c * N + i (N lanes), so 4N elements' codes come from one byte
// shuffle of the nibbles and one bit test of qh, and chunk c is byte c of
// every lane, one more byte shuffle away (GgmlQ5DwordsBlock). The AVX2
// Q5_0 -> F32 block loop went from 45 instructions with GgmlQ5Codes per
// chunk to 26 (docs/performance/gguf-legacy.md, "Q5_0 and Q5_1 codes four
// to a lane on AVX2 and SSE4"). The layout's
// constants, per byte b of the 4N (16 or 32) bytes from element h:
// which qs byte holds its nibble (both 128-bit halves hold qs; elements
// 16..31 take the high nibble), which qh byte (of the u32 in every lane)
// and bit hold its fifth bit.
struct GgmlQ5DwordLayout {
  alignas(32) uint8_t qs[32];
  alignas(32) uint8_t qh[32];
  alignas(32) uint8_t bit[32];
};
template <size_t kLanes>
constexpr GgmlQ5DwordLayout MakeGgmlQ5DwordLayout(size_t h) {
  GgmlQ5DwordLayout t{};
  for (size_t b = 0; b < 4 * kLanes; ++b) {
    const size_t e = h + (b % 4) * kLanes + b / 4;
    t.qs[b] = static_cast<uint8_t>(e % 16);
    t.qh[b] = static_cast<uint8_t>(e / 8);
    t.bit[b] = static_cast<uint8_t>(1u << (e % 8));
  }
  return t;
}

// The codes of elements h .. h + 4N - 1 of a Q5 block (qs its 16 nibble
// bytes, qh its fifth bits) in GgmlQ5DwordLayout: nibble | 16 * fifth bit.
template <bool kSigned, class DU>
HWY_INLINE hn::Vec<DU> GgmlQ5CodeDwords(DU du, const uint8_t* HWY_RESTRICT qs, uint32_t qh,
                                        size_t h) {
  constexpr size_t kLanes = hn::MaxLanes(DU());
  static_assert(kLanes == 4 || kLanes == 8, "16 or 32 bytes of codes per vector");
  static constexpr GgmlQ5DwordLayout kLayouts[2] = {MakeGgmlQ5DwordLayout<kLanes>(0),
                                                    MakeGgmlQ5DwordLayout<kLanes>(4 * kLanes)};
  const GgmlQ5DwordLayout& t = kLayouts[h / (4 * kLanes)];
  const hn::Repartition<uint8_t, DU> d8;
  const hn::Repartition<uint16_t, DU> d16;
  const auto bytes =
      hn::BitCast(d16, hn::TableLookupBytes(hn::LoadDup128(d8, qs), hn::Load(d8, t.qs)));
  const auto high = hn::ShiftRight<4>(bytes);
  // Elements below 16 take the low nibble: with 8 lanes bytes 0, 1 of
  // every lane (the even u16), else the whole first vector.
  const auto both = kLanes == 8 ? hn::OddEven(high, bytes) : h < 16 ? bytes : high;
  const auto nibbles = hn::And(hn::BitCast(d8, both), hn::Set(d8, uint8_t{0x0F}));
  auto fifth = hn::BitCast(d8, hn::Set(du, qh));
  if constexpr (kLanes != 8) fifth = hn::TableLookupBytes(fifth, hn::Load(d8, t.qh));
  const auto set = hn::TestBit(fifth, hn::Load(d8, t.bit));
  if constexpr (kSigned) {  // code - 16: the nibble where the bit is set, else nibble | 0xF0
    return hn::BitCast(du, hn::Or(nibbles, hn::IfThenZeroElse(set, hn::Set(d8, uint8_t{0xF0}))));
  } else {
    return hn::BitCast(du, hn::Or(nibbles, hn::IfThenElseZero(set, hn::Set(d8, uint8_t{0x10}))));
  }
}

// The byte shuffle of chunk c (32 bytes: in every 128-bit block the same
// 16, loaded whole, as a memory operand where the compiler can): byte c of
// each lane to byte `to` of the lane, 0x80 (zero) elsewhere.
struct GgmlQ5Placement {
  alignas(32) uint8_t chunk[4][32];
};
constexpr GgmlQ5Placement MakeGgmlQ5Placement(size_t to) {
  GgmlQ5Placement t{};
  for (size_t c = 0; c < 4; ++c) {
    for (size_t b = 0; b < 32; ++b) {
      t.chunk[c][b] = b % 4 == to ? static_cast<uint8_t>(b % 16 - to + c) : 0x80;
    }
  }
  return t;
}

#endif  // HWY_ARCH_X86 && HWY_TARGET <= HWY_SSSE3

}  // namespace HWY_NAMESPACE
}  // namespace amn
HWY_AFTER_NAMESPACE();

#endif  // AMN_KERNELS_INT5_DWORD_CODES_INL_H_
