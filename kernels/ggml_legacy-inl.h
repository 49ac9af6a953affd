// Per-target dequantization of the ggml legacy 32-element block quants
// (Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 Q8_1 IQ4_NL MXFP4) and of the newer one-scale
// types NVFP4 (64), Q1_0 (128), Q2_0 (64) (layouts in kernels/ggml_blocks.h)
// to F32/F16/BF16, bit-exact with kernels/ref/ggml_legacy_ref.cc on every
// target: codes become exact F32 integers, then one Mul (and for Q4_1/Q5_1
// one Add) per element in ggml's order, never fused; narrowing uses the
// integer encoders of kernels/float_convert-inl.h. NaN results follow the
// reference's rule (kernels/ref/ggml_legacy_ref.h); blocks whose d or m is
// Inf/NaN take a chunk variant that makes them canonical (chosen per block).
// On x86 the 4-bit types' 16-bit outputs may instead go through a byte
// table of the block's 16 possible results, Q5_0/Q5_1's through two for
// their 32 (GgmlUsesByteTables). The decoders (a block's scales, a chunk's
// F32 results) are in ggml_legacy_decoders-inl.h; this file turns them into
// outputs.
//
// A block is decoded in chunks of N = Lanes(CappedTag<u32, 16>) elements: N
// is a power of two <= 16 (SVE counts lanes with SV_POW2), so a chunk never
// straddles the low/high nibble halves of a 32-element block (NVFP4's 16-lane
// chunks go through a 16-byte copy) and all loads stay inside the block.
// Only per-block scalars (f16 scales) are read outside vectors; there are no
// per-element branches. Stores are StoreU of exactly N outputs, so any output
// alignment works and nothing past n_blocks * 32 outputs is written.
#if defined(AMN_KERNELS_GGML_LEGACY_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef AMN_KERNELS_GGML_LEGACY_INL_H_
#undef AMN_KERNELS_GGML_LEGACY_INL_H_
#else
#define AMN_KERNELS_GGML_LEGACY_INL_H_
#endif

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "amn/ggml_type.h"
#include "hwy/highway.h"
#include "kernels/float_convert-inl.h"
#include "kernels/ggml_blocks.h"
#include "kernels/ggml_legacy_decoders-inl.h"
#include "kernels/int4_byte_table-inl.h"
#include "kernels/int5_dword_codes-inl.h"
#include "kernels/kernel_args.h"

HWY_BEFORE_NAMESPACE();
namespace amn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// ---- Output encoders: N F32 results to N outputs at `out`.

struct GgmlStoreF32 {
  using T = float;
  using Finite = GgmlStoreF32;
  HWY_INLINE void operator()(hn::Vec<hn::RebindToFloat<GgmlDU>> v, float* out) const {
    hn::StoreU(v, hn::RebindToFloat<GgmlDU>(), out);
  }
  HWY_INLINE void Pair(hn::Vec<hn::RebindToFloat<GgmlDU>> lo, hn::Vec<hn::RebindToFloat<GgmlDU>> hi,
                       float* out) const {
    const hn::RebindToFloat<GgmlDU> df;
    hn::StoreU(lo, df, out);
    hn::StoreU(hi, df, out + hn::Lanes(df));
  }
};

template <class Encode>
struct GgmlStore16 {
  using T = uint16_t;
  using Encoder = Encode;
  // The store for a block that is not special (float_convert-inl.h: BF16
  // and, without F16C, F16 without the NaN rule).
  using Finite = GgmlStore16<typename Encode::Finite>;
  HWY_INLINE void operator()(hn::Vec<hn::RebindToFloat<GgmlDU>> v, uint16_t* out) const {
    const GgmlDU du;
    const hn::RebindToSigned<GgmlDU> di;
    const hn::Rebind<uint16_t, GgmlDU> d16;
    auto bits = Encode()(du, hn::BitCast(du, v));
    if (Encode::kUpperHalf) bits = hn::ShiftRight<16>(bits);
    // Lanes hold 0..0xFFFF, so the saturating i32 -> u16 demotion is exact.
    hn::StoreU(hn::DemoteTo(d16, hn::BitCast(di, bits)), d16, out);
  }
  // 2N outputs: outside SCALAR the encoder's StorePair (float_convert-inl.h:
  // one full-width ConcatOdd store for BF16, vcvtps2ph stores for F16 where
  // F16C is exact).
  HWY_INLINE void Pair(hn::Vec<hn::RebindToFloat<GgmlDU>> lo, hn::Vec<hn::RebindToFloat<GgmlDU>> hi,
                       uint16_t* out) const {
#if HWY_TARGET == HWY_SCALAR
    (*this)(lo, out);
    (*this)(hi, out + 1);
#else
    const GgmlDU du;
    Encode::StorePair(du, hn::BitCast(du, lo), hn::BitCast(du, hi), out);
#endif
  }
};
using GgmlStoreBf16 = GgmlStore16<ToBf16Upper>;
using GgmlStoreF16 = GgmlStore16<ToF16Lower>;

// ---- Per-block byte tables for the 4- and 5-bit types' 16-bit outputs.

// Which (4- or 5-bit type, 16-bit output, target) combinations take
// GgmlByteTableBlock instead of rounding every element: the one place that
// chooses, from best-of-3 interleaved timings (docs/performance/f16-on-sse4.md,
// "Per-block tables for 4-bit GGUF types"). SSSE3/SSE4: every type and
// both outputs (F16 is rounded in software there); NEON the same (untimed:
// 1.2-2.0x fewer instructions per element under emulation than without,
// docs/performance/arm.md). AVX2: BF16, and F16 but
// for Q4_1 (vcvtps2ph per element was as fast). AVX-512: BF16 of the
// codebook types only; its per-element F16 (vcvtps2ph) and Q4_0/Q4_1 BF16
// were faster than or as fast as the tables.
template <class Decoder, class Store>
constexpr bool GgmlUsesByteTables() {
  if constexpr (!requires { Decoder::kQsOffset; } || sizeof(typename Store::T) != 2) {
    return false;
  } else if constexpr (requires { Decoder::kQhOffset; }) {
    // Q5_0/Q5_1 (two table sets, Int5ByteTables; docs/performance/gguf-legacy.md, "Q5_0
    // and Q5_1 16-bit outputs through per-block tables"): SSSE3/SSE4 both
    // types and outputs (Q5_0 1.6-1.75x, Q5_1 1.06-1.24x); AVX2 Q5_0's BF16
    // only (1.19-1.22x: its finite blocks round 16 entries, Int5OddTables;
    // Q5_1's BF16 was 1.00-1.02x, the F16s 0.74-0.97x against vcvtps2ph);
    // AVX-512 took 1.5-2.4x the time with the tables.
    constexpr bool kBf16 = Store::Encoder::kUpperHalf;
    if (kByteTables128) return true;
    return HWY_TARGET == HWY_AVX2 && kBf16 && std::is_same_v<Decoder, GgmlQ5_0>;
  } else {
    constexpr bool kBf16 = Store::Encoder::kUpperHalf;
    constexpr bool kCodebook =
        std::is_same_v<Decoder, GgmlIq4Nl> || std::is_same_v<Decoder, GgmlMxfp4>;
    if (kByteTables128) return true;
    if (HWY_TARGET == HWY_AVX2) return kBf16 || !std::is_same_v<Decoder, GgmlQ4_1>;
    if (HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL) return kBf16 && kCodebook;
    return false;
  }
}

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_SSSE3
// A finite Q5 block through GgmlQ5CodeDwords: chunk c is byte c of every
// lane, moved by one byte shuffle to the lane's low byte (Q5_1: the code,
// then Values) or, Q5_0, to its top byte with the others zero: the signed
// code times 2^24 as an i32, converted exactly (at most 16 * 2^24) and
// multiplied by d * 2^-24. That product is exactly the reference's
// (q - 16) * d rounded once: the real product is the same, and d * 2^-24
// is exact (d is 0 or at least 2^-24, the smallest f16 subnormal, so
// d * 2^-24 >= 2^-48 is a normal F32); kSpecial blocks (Inf/NaN d) do not
// come here.
template <class Decoder, class Store>
HWY_INLINE void GgmlQ5DwordsBlock(const uint8_t* HWY_RESTRICT x, const GgmlBlockScales& s,
                                  typename Store::T* HWY_RESTRICT y) {
  const GgmlDU du;
  const hn::RebindToSigned<GgmlDU> di;
  const hn::RebindToFloat<GgmlDU> df;
  const hn::Repartition<uint8_t, GgmlDU> d8;
  constexpr bool kSigned = Decoder::kSignedCodes;
  static constexpr GgmlQ5Placement kPlace = MakeGgmlQ5Placement(kSigned ? 3 : 0);
  const size_t lanes = hn::Lanes(du);
  const uint32_t qh = ggml::LoadLe32(x + Decoder::kQhOffset);
  const auto d_top = hn::Mul(GgmlScalar(s.d), hn::Set(df, 0x1p-24f));
  const auto chunk = [&](hn::Vec<GgmlDU> codes, size_t c) {
    const auto placed = hn::BitCast(
        du, hn::TableLookupBytes(hn::BitCast(d8, codes), hn::Load(d8, kPlace.chunk[c])));
    if constexpr (kSigned) {
      return hn::Mul(hn::ConvertTo(df, hn::BitCast(di, placed)), d_top);
    } else {
      return Decoder::template Values<false>(placed, s);
    }
  };
  for (size_t h = 0; h < ggml::kQK; h += 4 * lanes) {
    const auto codes = GgmlQ5CodeDwords<kSigned>(du, x + Decoder::kQsOffset, qh, h);
    Store().Pair(chunk(codes, 0), chunk(codes, 1), y + h);
    Store().Pair(chunk(codes, 2), chunk(codes, 3), y + h + 2 * lanes);
  }
}
#endif  // HWY_ARCH_X86 && HWY_TARGET <= HWY_SSSE3

// Which Q5_0/Q5_1 (output, target) combinations not taking the byte tables
// decode their finite blocks through GgmlQ5DwordsBlock instead of per
// chunk (GgmlQ5Codes): the x86 targets without mask registers, where it
// measured faster (docs/performance/gguf-legacy.md, "Q5_0 and Q5_1 codes
// four to a lane on AVX2 and SSE4").
template <class Decoder, class Store>
constexpr bool GgmlUsesQ5CodeDwords() {
  if constexpr (!requires { Decoder::kQhOffset; }) {
    return false;
  } else {
    // Q5_1's BF16 on AVX2 gained nothing with it (0.96-1.00x, two versions).
    if constexpr (sizeof(typename Store::T) == 2 && !Decoder::kSignedCodes) {
      if (Store::Encoder::kUpperHalf) return false;
    }
    return HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_SSE4 || HWY_TARGET == HWY_SSSE3;
  }
}

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_SSSE3
// Q4_0 and Q4_1 -> F32 of a finite block with each code in the top byte of
// its lane. Q4_0: the 16 qs bytes, xor 0x88, hold every nibble n as n ^ 8,
// which as the top nibble of an i32 (the rest zero) is (n - 8) * 2^28,
// exactly the reference's q = n - 8 times 2^28. Q4_1: the nibble n as the
// low nibble of the top byte is n * 2^24. So a chunk is one byte shuffle of
// the block's low or high nibbles (kept in place in their bytes), a
// conversion (exact: a small integer times a power of two) and a multiply
// by d * 2^-28 (d * 2^-24), plus m for Q4_1, where the generic chunk also
// widens and masks (and subtracts). d * 2^-28 is exact (d is 0 or at least
// 2^-24, the smallest f16 subnormal, so it is at least 2^-52, a normal
// F32), so the product is the reference's q * d rounded once, and the sum
// with m its sum. Blocks with an Inf/NaN d or m keep the chunks and their
// NaN rule.
template <size_t kLanes>
struct GgmlQ4TopPlacement {
  // chunk c: lane i's top byte from byte (c * kLanes + i) % 16 of the
  // nibble vector (both 128-bit halves hold all 16), 0x80 (zero) elsewhere.
  alignas(64) uint8_t chunk[32 / kLanes][4 * kLanes];
};
template <size_t kLanes>
constexpr GgmlQ4TopPlacement<kLanes> MakeGgmlQ4TopPlacement() {
  GgmlQ4TopPlacement<kLanes> t{};
  for (size_t c = 0; c < 32 / kLanes; ++c) {
    for (size_t b = 0; b < 4 * kLanes; ++b) {
      t.chunk[c][b] = b % 4 == 3 ? static_cast<uint8_t>((c * kLanes + b / 4) % 16) : 0x80;
    }
  }
  return t;
}

template <class Decoder, class Store>
HWY_INLINE void GgmlQ4TopBlock(const uint8_t* HWY_RESTRICT x, const GgmlBlockScales& s,
                               float* HWY_RESTRICT y) {
  const GgmlDU du;
  const hn::RebindToSigned<GgmlDU> di;
  const hn::RebindToFloat<GgmlDU> df;
  const hn::Repartition<uint8_t, GgmlDU> d8;
  const hn::Repartition<uint16_t, GgmlDU> d16;
  constexpr size_t kLanes = hn::MaxLanes(du);
  constexpr bool kWithMin = std::is_same_v<Decoder, GgmlQ4_1>;
  static constexpr GgmlQ4TopPlacement<kLanes> kPlace = MakeGgmlQ4TopPlacement<kLanes>();
  const auto qs = hn::LoadDup128(d8, x + Decoder::kQsOffset);
  // Q4_0: the nibbles, flipped, in the high half of their bytes; Q4_1: in
  // the low half.
  const auto nibbles = hn::Set(d8, uint8_t{kWithMin ? 0x0F : 0xF0});
  const auto codes = kWithMin ? qs : hn::Xor(qs, hn::Set(d8, uint8_t{0x88}));
  const auto other = kWithMin ? hn::ShiftRight<4>(hn::BitCast(d16, codes))
                              : hn::ShiftLeft<4>(hn::BitCast(d16, codes));
  const auto low = hn::And(kWithMin ? codes : hn::BitCast(d8, other), nibbles);
  const auto high = hn::And(kWithMin ? hn::BitCast(d8, other) : codes, nibbles);
  const auto d_top = hn::Mul(GgmlScalar(s.d), hn::Set(df, kWithMin ? 0x1p-24f : 0x1p-28f));
  const auto chunk = [&](size_t c) {
    const auto placed =
        hn::TableLookupBytes(c * kLanes < 16 ? low : high, hn::Load(d8, kPlace.chunk[c]));
    const auto product = hn::Mul(hn::ConvertTo(df, hn::BitCast(di, placed)), d_top);
    if constexpr (kWithMin) return hn::Add(product, GgmlScalar(s.m));
    return product;
  };
  for (size_t c = 0; c < 32 / kLanes; c += 2) {
    Store().Pair(chunk(c), chunk(c + 1), y + c * kLanes);
  }
}
#endif  // HWY_ARCH_X86 && HWY_TARGET <= HWY_SSSE3

// Which targets decode Q4_0's finite blocks to F32 through
// GgmlQ4TopBlock: the x86 targets without AVX-512, where it measured
// faster (SSSE3 1.36x, SSE4 and AVX2 1.04-1.05x; AVX3_DL took 1.2x the
// time; docs/performance/gguf-legacy.md, "Q4_0 codes at the top of the
// lane"). Q4_1's: SSSE3 only (1.19x; 0.80-1.01x on SSE4, AVX2 and AVX-512,
// where the generic chunk's widening load is one instruction).
template <class Decoder, class Store>
constexpr bool GgmlUsesQ4Top() {
  if constexpr (sizeof(typename Store::T) != 4) {
    return false;
  } else if constexpr (std::is_same_v<Decoder, GgmlQ4_0>) {
    return HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_SSE4 || HWY_TARGET == HWY_SSSE3;
  } else if constexpr (std::is_same_v<Decoder, GgmlQ4_1>) {
    return HWY_TARGET == HWY_SSSE3;
  } else {
    return false;
  }
}

#if AMN_BYTE_TABLES
// One block of a 4-bit type as 16-bit outputs: its 16 possible results
// (Values on codes 0..15, the arithmetic of Chunk, then Encode) rounded once
// into byte tables, and its 32 nibbles looked up. The tables hold exactly
// what Chunk + Encode give each code, so the outputs are the same bits.
// Q5_0/Q5_1 the same way with two table sets, Values on codes 0..15 and on
// 16..31 (Int5ByteTables), the fifth bits (qh) choosing per output; a
// finite Q5_0 block computes only codes 17..31 and 32 (16 * d) and
// mirrors them (Int5OddTables, GgmlQ5_0::kOddAroundCode16).
template <class Decoder, class Encode, bool kSpecial>
HWY_INLINE void GgmlByteTableBlock(const uint8_t* HWY_RESTRICT x, const GgmlBlockScales& s,
                                   uint16_t* HWY_RESTRICT out) {
  using D8 = hn::ScalableTag<uint8_t>;
  const D8 d8;
  // The tables of codes first .. first + 15.
  const auto tables_from = [&s, d8](uint32_t first) {
    return MakeInt4ByteTables<Encode::kUpperHalf>(d8, [&s, first](auto du, auto codes) {
      const auto values =
          Decoder::template Values<kSpecial>(hn::Add(hn::BitCast(du, codes), hn::Set(du, first)), s);
      return Encode()(du, hn::BitCast(du, values));
    });
  };
  // Element j: the low nibble of qs[j], element j + 16 its high nibble.
  const Int4Lookup32Tag d32;
  const auto qs = hn::LoadDup128(d32, x + Decoder::kQsOffset);
  if constexpr (requires { Decoder::kQhOffset; }) {
    const auto tables = [&] {
      if constexpr (requires { Decoder::kOddAroundCode16; }) {
        if constexpr (!kSpecial) {
          // Entry k: Values on code 16 + k, on code 32 for k = 0.
          return Int5OddTables(
              d8, MakeInt4ByteTables<Encode::kUpperHalf>(d8, [&s](auto du, auto codes) {
                const auto odd = hn::Add(hn::And(hn::Add(hn::BitCast(du, codes), hn::Set(du, 15u)),
                                                 hn::Set(du, 15u)),
                                         hn::Set(du, 17u));
                return Encode()(du, hn::BitCast(du, Decoder::template Values<false>(odd, s)));
              }));
        }
      }
      return Int5ByteTables<D8>{tables_from(0), tables_from(16)};
    }();
    StoreInt5ByteLookups32(Int4Tables32(tables), Int4Nibbles<0>(d32, qs), Int4Nibbles<1>(d32, qs),
                           ggml::LoadLe32(x + Decoder::kQhOffset), out);
  } else {
    StoreInt4ByteLookups32(Int4Tables32(tables_from(0)), Int4Nibbles<0>(d32, qs),
                           Int4Nibbles<1>(d32, qs), out);
  }
}
#endif  // AMN_BYTE_TABLES

// One block's kElems outputs at y with Store (kSpecial: the NaN rule).
template <class Decoder, class Store, bool kSpecial>
HWY_INLINE void GgmlBlock(const uint8_t* HWY_RESTRICT x, const GgmlBlockScales& scales,
                          typename Store::T* HWY_RESTRICT y) {
#if AMN_BYTE_TABLES
  if constexpr (GgmlUsesByteTables<Decoder, Store>()) {
    GgmlByteTableBlock<Decoder, typename Store::Encoder, kSpecial>(x, scales, y);
    return;
  }
#endif
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_SSSE3
  if constexpr (GgmlUsesQ5CodeDwords<Decoder, Store>()) {
    if constexpr (!kSpecial) {
      GgmlQ5DwordsBlock<Decoder, Store>(x, scales, y);
      return;
    }
  }
  if constexpr (GgmlUsesQ4Top<Decoder, Store>() && !kSpecial) {
    GgmlQ4TopBlock<Decoder, Store>(x, scales, y);
    return;
  }
#endif
  // Two chunks per store: 2N <= 32 divides the block.
  const size_t lanes = hn::Lanes(GgmlDU());
  for (size_t j0 = 0; j0 < GgmlBlockElems<Decoder>(); j0 += 2 * lanes) {
    Store().Pair(Decoder::template Chunk<kSpecial>(x, j0, scales),
                 Decoder::template Chunk<kSpecial>(x, j0 + lanes, scales), y + j0);
  }
}

// Whether a block of Decoder stored with Store tests GgmlF16InRange and
// takes ToF16LowerInRange when it passes: F16 outputs on the targets
// without F16C where the integer rounding exists (kF16InRangeStore), for
// the types rounding per element with q * d results (kMaxAbsCode);
// the 4-bit types round 16 table entries per block instead.
template <class Decoder, class Store>
constexpr bool GgmlUsesF16InRange() {
  if constexpr (!requires { Decoder::kMaxAbsCode; } || sizeof(typename Store::T) != 2) {
    return false;
  } else {
    return kF16InRangeStore && !Store::Encoder::kUpperHalf;
  }
}

// The store of a finite block for a Decoder whose results are all exact
// in BF16 and normal F16 or ±0 (kExactIn16Bits), where that is cheaper:
// BF16 keeps the upper halves with no rounding; F16 takes the integer
// rounding of ToF16LowerInRange on the targets without F16C
// (kF16InRangeStore), elsewhere the usual one.
template <class Decoder, class Store>
constexpr bool GgmlUsesExactStore() {
  if constexpr (!requires { Decoder::kExactIn16Bits; } || sizeof(typename Store::T) != 2) {
    return false;
  } else {
    return Store::Encoder::kUpperHalf || kF16InRangeStore;
  }
}
template <class Store>
using GgmlExactStore = GgmlStore16<
    std::conditional_t<Store::Encoder::kUpperHalf, ToBf16UpperExact, ToF16LowerInRange>>;

#if AMN_BYTE_TABLES
// NVFP4 16-bit outputs through per-call scale-byte rows (x86, NEON): an output is
// a function of its sub-block's UE4M3 byte and its code alone, so the row
// of a byte (ScaleByteRows, int4_byte_table-inl.h) holds the 16 outputs
// that the block path (GgmlNvfp4::Chunk and the store GgmlBlock would use)
// gives a sub-block holding codes 0..15 under that byte: the same bits by
// construction. A sub-block is then its 8 code bytes split into 16 nibbles
// in ggml's order and two lookups. Taken for calls of at least
// kGgmlNvfp4RowMinBlocks blocks, so the rows' builds (one per distinct
// byte, each about one sub-block's work on the block path) are spread over
// many sub-blocks, on the targets where it measured faster
// (docs/performance/gguf-newer-types.md, "NVFP4 16-bit outputs through scale-byte tables"):
// SSSE3, SSE4 and AVX2 (AVX-512 measured no clear gain); NEON by
// instruction count (docs/performance/arm.md).
inline constexpr size_t kGgmlNvfp4RowMinBlocks = 64;
inline constexpr size_t kGgmlMxfp4RowMinBlocks = 128;

// F32 outputs through the same rows, built as BF16 and widened: every NVFP4
// result is exact in BF16 (kExactIn16Bits), every MXFP4 one is a code of
// at most 4 significant bits times a power of two (BF16 has F32's exponent
// range, subnormals included) or ±Inf, so its F32 bits are the BF16's << 16.
// On the targets where this measured faster than the F32 block path
// (docs/performance/gguf-newer-types.md, "NVFP4 and MXFP4 F32 through the
// BF16 scale-byte rows"); NEON by instruction count. Not AVX2: faster only
// cache-resident there, and its 128-bit stores streamed no faster.
inline constexpr bool kGgmlFp4F32ByRows =
    HWY_TARGET == HWY_SSSE3 || HWY_TARGET == HWY_SSE4 || HWY_TARGET == HWY_NEON;
// The store that builds the rows: BF16 for F32 outputs, else Store itself.
template <class Store>
using GgmlRowStore16 = std::conditional_t<sizeof(typename Store::T) == 4, GgmlStoreBf16, Store>;

// The 16 codes of each of two sub-blocks (16 code bytes at `in`) in ggml's
// order: the 8 low nibbles, then the 8 high ones.
HWY_INLINE void GgmlNvfp4SubBlockCodes(const uint8_t* HWY_RESTRICT in,
                                       hn::Vec<hn::Full128<uint8_t>>* HWY_RESTRICT first,
                                       hn::Vec<hn::Full128<uint8_t>>* HWY_RESTRICT second) {
  const hn::Full128<uint8_t> d8;
  const hn::Full128<uint64_t> d64;
  const auto bytes = hn::BitCast(d64, hn::LoadU(d8, in));
  const auto high = hn::ShiftRight<4>(bytes);
  const auto mask = hn::Set(d8, uint8_t{0x0F});
  *first = hn::And(hn::BitCast(d8, hn::InterleaveLower(d64, bytes, high)), mask);
  *second = hn::And(hn::BitCast(d8, hn::InterleaveUpper(d64, bytes, high)), mask);
}

template <class Store>
HWY_INLINE void GgmlNvfp4ByRows(const uint8_t* HWY_RESTRICT blocks, size_t n_blocks,
                                typename Store::T* HWY_RESTRICT out) {
  using Store16 = GgmlRowStore16<Store>;
  using RowStore = std::conditional_t<GgmlUsesExactStore<GgmlNvfp4, Store16>(),
                                      GgmlExactStore<Store16>, typename Store16::Finite>;
  ScaleByteRows rows;
  const auto build = [](uint8_t s, uint16_t* HWY_RESTRICT entries) {
    // Sub-block 0 (and 1) with element l the low nibble l of byte l and
    // element l + 8 the high nibble l + 8.
    HWY_ALIGN uint8_t x[ggml::kNvfp4Bytes] = {s,    s,    s,    s,    0x80, 0x91,
                                              0xA2, 0xB3, 0xC4, 0xD5, 0xE6, 0xF7,
                                              0x80, 0x91, 0xA2, 0xB3, 0xC4, 0xD5,
                                              0xE6, 0xF7};
    const GgmlBlockScales scales = GgmlNvfp4::Scales(x);
    const size_t lanes = hn::Lanes(GgmlDU());
    for (size_t j0 = 0; j0 < ggml::kNvfp4SubElems; j0 += 2 * lanes) {
      RowStore().Pair(GgmlNvfp4::Chunk<false>(x, j0, scales),
                      GgmlNvfp4::Chunk<false>(x, j0 + lanes, scales), entries + j0);
    }
  };
  for (size_t b = 0; b < n_blocks; ++b) {
    const uint8_t* x = blocks + b * ggml::kNvfp4Bytes;
    typename Store::T* y = out + b * ggml::kNvfp4Elems;
    for (size_t s = 0; s < 4; s += 2) {
      hn::Vec<hn::Full128<uint8_t>> first, second;
      GgmlNvfp4SubBlockCodes(x + 4 + s * 8, &first, &second);
      StoreScaleByteRow(rows.Row(x[s], build), first, y + s * 16);
      StoreScaleByteRow(rows.Row(x[s + 1], build), second, y + s * 16 + 16);
    }
  }
}

// MXFP4 the same way: a block's outputs are a function of its E8M0 byte and
// the code, so its row holds what GgmlBlock gives a block of codes 0..15
// (its per-block byte table where GgmlUsesByteTables, else the chunks).
// Taken for calls of at least kGgmlMxfp4RowMinBlocks blocks (each row
// costs about one block), where it measured faster (docs/performance/gguf-newer-types.md,
// "NVFP4 16-bit outputs through scale-byte tables"): every x86 target but
// AVX-512's BF16, whose per-block tables with 256-bit lookups were as fast;
// NEON by instruction count (docs/performance/arm.md).
template <class Store>
constexpr bool GgmlUsesMxfp4Rows() {
  if constexpr (sizeof(typename Store::T) != 2) {
    return kGgmlFp4F32ByRows;
  } else {
    constexpr bool kAvx512 = HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL;
    return !(kAvx512 && Store::Encoder::kUpperHalf);
  }
}

template <class Store>
HWY_INLINE void GgmlMxfp4ByRows(const uint8_t* HWY_RESTRICT blocks, size_t n_blocks,
                                typename Store::T* HWY_RESTRICT out) {
  ScaleByteRows rows;
  const auto build = [](uint8_t e, uint16_t* HWY_RESTRICT entries) {
    // Element j < 16 is the low nibble of qs[j]: code j.
    HWY_ALIGN uint8_t x[ggml::kMxfp4Bytes] = {e, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    HWY_ALIGN uint16_t block[ggml::kQK];
    GgmlBlock<GgmlMxfp4, typename GgmlRowStore16<Store>::Finite, false>(x, GgmlMxfp4::Scales(x),
                                                                        block);
    std::memcpy(entries, block, 16 * sizeof(uint16_t));
  };
  const hn::Full128<uint8_t> d8;
  const hn::Full128<uint16_t> d16;
  const auto mask = hn::Set(d8, uint8_t{0x0F});
  for (size_t b = 0; b < n_blocks; ++b) {
    const uint8_t* x = blocks + b * ggml::kMxfp4Bytes;
    typename Store::T* y = out + b * ggml::kQK;
    const uint8_t* row = rows.Row(x[0], build);
    // Element j: the low nibble of qs[j], element j + 16 its high nibble.
    const auto bytes = hn::LoadU(d8, x + 1);
    StoreScaleByteRow(row, hn::And(bytes, mask), y);
    StoreScaleByteRow(
        row, hn::And(hn::BitCast(d8, hn::ShiftRight<4>(hn::BitCast(d16, bytes))), mask), y + 16);
  }
}
#endif  // AMN_BYTE_TABLES

// One block at x of any scales to its kElems outputs at y.
template <class Decoder, class Store>
HWY_INLINE void GgmlLegacyBlock(const uint8_t* HWY_RESTRICT x, typename Store::T* HWY_RESTRICT y) {
  const GgmlBlockScales scales = Decoder::Scales(x);
  // Why the finite path may store with Store::Finite (BF16, and F16 on the
  // targets without F16C, without the NaN rule): scales.special is false
  // only when d and m are both finite, for every bit pattern
  // (GgmlMakeScales tests the exponent field, and an Inf
  // or NaN f16 scale widens to an all-ones F32 exponent; MXFP4's E8M0
  // scale is always finite, at most 2^127: Mxfp4HalfScaleBits). Every
  // Chunk<false> result is then q * d or (q * d) + m with q an exact F32
  // integer (|q| <= 128) and d, m finite, or ±d (Q1_0), or an NVFP4
  // codebook value times a UE4M3 scale (always finite: Ue4m3HalfBits).
  // finite * finite is finite or ±Inf (MXFP4: 12 * 2^127 overflows), never
  // NaN (that needs Inf * 0 or a NaN operand); ±Inf + finite m is ±Inf,
  // never NaN (that needs Inf - Inf). So no finite-path lane is NaN, and
  // the NaN-free rounding gives the reference's bits, Inf included.
  if (HWY_UNLIKELY(scales.special)) {  // per block, never per element
    GgmlBlock<Decoder, Store, true>(x, scales, y);
    return;
  }
  if constexpr (GgmlUsesExactStore<Decoder, Store>()) {
    GgmlBlock<Decoder, GgmlExactStore<Store>, false>(x, scales, y);
    return;
  }
  if constexpr (GgmlUsesF16InRange<Decoder, Store>()) {
    if (GgmlF16InRange(scales.d, Decoder::kMaxAbsCode)) {
      GgmlBlock<Decoder, GgmlStore16<ToF16LowerInRange>, false>(x, scales, y);
      return;
    }
  }
  GgmlBlock<Decoder, typename Store::Finite, false>(x, scales, y);
}

#if AMN_F16_HARDWARE_DEMOTE
// F32 and BF16 outputs of the types whose f16 scales (d, or d and m) open
// the block (kF16Scales), on the F16C targets: the scales of Lanes(GgmlDU)
// blocks are tested for Inf/NaN together (GgmlF16BlockScales's test) and
// widened with one vcvtph2ps per 16 scales, instead of a test and a
// widening per block and a round trip of the results through general
// registers. vcvtph2ps is exact for every finite f16 (FromF16,
// float_convert-inl.h). A group with an Inf/NaN scale goes block by block
// (GgmlLegacyBlock, whose widening keeps NaN payloads): real files have
// none, and a per-block test inside the group loop cost BF16 up to 1.28x.
// Measured against per-block scales on real blocks
// (docs/performance/gguf-legacy.md, "F16 scales widened per group of
// blocks"): F32 and BF16 faster; F16 outputs (vcvtps2ph) and Q8_0's BF16
// gained nothing or lost up to 1.1x.
template <class Decoder, class Store>
constexpr bool GgmlUsesScaleGroups() {
  if constexpr (!requires { Decoder::kF16Scales; }) {
    return false;
  } else if constexpr (sizeof(typename Store::T) == 4) {
    return true;
  } else {
    return Store::Encoder::kUpperHalf && !std::is_same_v<Decoder, GgmlQ8_0> &&
           !std::is_same_v<Decoder, GgmlQ8_1>;
  }
}

// The blocks of whole groups from the start; returns how many it wrote.
// Not inlined: inside the dispatch function its unrolled groups made GCC
// rematerialize loop constants in the other outputs' block loops (F16
// 1.06-1.13x the time, measured; the same docs section).
template <class Decoder, class Store>
HWY_NOINLINE size_t GgmlScaleGroups(const uint8_t* HWY_RESTRICT blocks, size_t n_blocks,
                                    typename Store::T* HWY_RESTRICT out) {
  // GgmlLegacyBlock's per-block store choices, which a group skips.
  static_assert(!GgmlUsesExactStore<Decoder, Store>() && !GgmlUsesF16InRange<Decoder, Store>());
  constexpr size_t kElems = GgmlBlockElems<Decoder>();
  const GgmlDU du;
  const size_t group = hn::Lanes(du);
  const hn::Repartition<uint16_t, GgmlDU> d16;  // d (and m) of each block
  const hn::Half<decltype(d16)> d16_half;
  const hn::Rebind<hwy::float16_t, decltype(d16_half)> dh_half;
  const hn::Rebind<float, decltype(dh_half)> df;
  const hn::RebindToUnsigned<decltype(df)> du_half;
  HWY_ALIGN uint32_t words[16];  // d | m << 16 (m 0 without kMin)
  HWY_ALIGN uint32_t wide[32];   // F32 bits: d0, m0, d1, m1, ...
  size_t b = 0;
  for (; b + group <= n_blocks; b += group) {
    const uint8_t* x = blocks + b * Decoder::kBytes;
    typename Store::T* y = out + b * kElems;
    for (size_t i = 0; i < group; ++i) {
      const uint8_t* xi = x + i * Decoder::kBytes;
      words[i] = Decoder::kF16Scales == 2 ? ggml::LoadLe32(xi) : ggml::LoadLe16(xi);
    }
    const auto w = hn::Load(du, words);
    const auto carries = hn::And(
        hn::Add(hn::And(w, hn::Set(du, kF16PairExponents)), hn::Set(du, kF16PairExponentUnit)),
        hn::Set(du, kF16PairCarries));
    if (HWY_UNLIKELY(!hn::AllTrue(du, hn::Eq(carries, hn::Zero(du))))) {
      for (size_t i = 0; i < group; ++i) {
        GgmlLegacyBlock<Decoder, Store>(x + i * Decoder::kBytes, y + i * kElems);
      }
      continue;
    }
    // FromF16's widening on the words already in a register (FromF16 itself
    // loads from memory: storing the words as u16 for it measured 1.06-1.42x
    // slower). Halved as u16 lanes: 1.0.3 has no f16 halves on NEON.
    const auto halves = hn::BitCast(d16, w);
    hn::Store(hn::BitCast(du_half,
                          hn::PromoteTo(df, hn::BitCast(dh_half, hn::LowerHalf(d16_half, halves)))),
              du_half, wide);
    hn::Store(hn::BitCast(du_half,
                          hn::PromoteTo(df, hn::BitCast(dh_half, hn::UpperHalf(d16_half, halves)))),
              du_half, wide + group);
    for (size_t i = 0; i < group; ++i) {
      const GgmlBlockScales scales{wide[2 * i], wide[2 * i + 1], 0, 0, false};
      GgmlBlock<Decoder, typename Store::Finite, false>(x + i * Decoder::kBytes, scales,
                                                        y + i * kElems);
    }
  }
  return b;
}
#endif  // AMN_F16_HARDWARE_DEMOTE

// n_blocks whole blocks -> n_blocks * kElems outputs; no overlap.
template <class Decoder, class Store>
HWY_INLINE void DequantGgmlLegacyKernel(const uint8_t* HWY_RESTRICT blocks, size_t n_blocks,
                                        typename Store::T* HWY_RESTRICT out) {
  constexpr size_t kElems = GgmlBlockElems<Decoder>();
#if AMN_BYTE_TABLES
  if constexpr (std::is_same_v<Decoder, GgmlNvfp4> && kNvfp4UsesScaleByteRows &&
                (sizeof(typename Store::T) == 2 || kGgmlFp4F32ByRows)) {
    if (n_blocks >= kGgmlNvfp4RowMinBlocks) {
      GgmlNvfp4ByRows<Store>(blocks, n_blocks, out);
      return;
    }
  }
  if constexpr (std::is_same_v<Decoder, GgmlMxfp4> && GgmlUsesMxfp4Rows<Store>()) {
    if (n_blocks >= kGgmlMxfp4RowMinBlocks) {
      GgmlMxfp4ByRows<Store>(blocks, n_blocks, out);
      return;
    }
  }
#endif
  size_t b = 0;
#if AMN_F16_HARDWARE_DEMOTE
  if constexpr (GgmlUsesScaleGroups<Decoder, Store>()) {
    b = GgmlScaleGroups<Decoder, Store>(blocks, n_blocks, out);
  }
#endif
  for (; b < n_blocks; ++b) {
    GgmlLegacyBlock<Decoder, Store>(blocks + b * Decoder::kBytes, out + b * kElems);
  }
}

template <class Decoder>
HWY_INLINE void GgmlLegacyOut(const uint8_t* blocks, size_t n_blocks, ElemType out_type,
                              void* out) {
  switch (out_type) {
    case ElemType::kF32:
      DequantGgmlLegacyKernel<Decoder, GgmlStoreF32>(blocks, n_blocks, static_cast<float*>(out));
      break;
    case ElemType::kBf16:
      DequantGgmlLegacyKernel<Decoder, GgmlStoreBf16>(blocks, n_blocks,
                                                      static_cast<uint16_t*>(out));
      break;
    case ElemType::kF16:
      DequantGgmlLegacyKernel<Decoder, GgmlStoreF16>(blocks, n_blocks,
                                                     static_cast<uint16_t*>(out));
      break;
    default:
      break;
  }
}

// The GgmlLegacy family (kernels/kernel_args.h): blocks [begin, end) of a
// ggml type of this family (Q4_0 … Q8_1, IQ4_NL, MXFP4, NVFP4, Q1_0, Q2_0);
// other types are ignored.
HWY_INLINE void DecodeGgmlLegacy(const kernels::GgmlArgs& a, size_t begin, size_t end,
                                 ElemType out_type, void* out) {
  const size_t n = end - begin;
  switch (static_cast<GgmlType>(a.type)) {
    case GgmlType::kQ4_0: GgmlLegacyOut<GgmlQ4_0>(a.blocks + begin * GgmlQ4_0::kBytes, n, out_type, out); break;
    case GgmlType::kQ4_1: GgmlLegacyOut<GgmlQ4_1>(a.blocks + begin * GgmlQ4_1::kBytes, n, out_type, out); break;
    case GgmlType::kQ5_0: GgmlLegacyOut<GgmlQ5_0>(a.blocks + begin * GgmlQ5_0::kBytes, n, out_type, out); break;
    case GgmlType::kQ5_1: GgmlLegacyOut<GgmlQ5_1>(a.blocks + begin * GgmlQ5_1::kBytes, n, out_type, out); break;
    case GgmlType::kQ8_0: GgmlLegacyOut<GgmlQ8_0>(a.blocks + begin * GgmlQ8_0::kBytes, n, out_type, out); break;
    case GgmlType::kQ8_1: GgmlLegacyOut<GgmlQ8_1>(a.blocks + begin * GgmlQ8_1::kBytes, n, out_type, out); break;
    case GgmlType::kIQ4_NL: GgmlLegacyOut<GgmlIq4Nl>(a.blocks + begin * GgmlIq4Nl::kBytes, n, out_type, out); break;
    case GgmlType::kMXFP4: GgmlLegacyOut<GgmlMxfp4>(a.blocks + begin * GgmlMxfp4::kBytes, n, out_type, out); break;
    case GgmlType::kNVFP4: GgmlLegacyOut<GgmlNvfp4>(a.blocks + begin * GgmlNvfp4::kBytes, n, out_type, out); break;
    case GgmlType::kQ1_0: GgmlLegacyOut<GgmlQ1_0>(a.blocks + begin * GgmlQ1_0::kBytes, n, out_type, out); break;
    case GgmlType::kQ2_0: GgmlLegacyOut<GgmlQ2_0>(a.blocks + begin * GgmlQ2_0::kBytes, n, out_type, out); break;
    default: break;
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace amn
HWY_AFTER_NAMESPACE();

#endif  // AMN_KERNELS_GGML_LEGACY_INL_H_
