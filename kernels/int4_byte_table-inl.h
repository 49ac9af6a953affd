// x86 (SSSE3 and up) and NEON lookups of 16-bit outputs that are a function
// of a 4-bit code with one set of parameters per group or block, Highway
// 1.0.3: a 16-bit output is two bytes, and TableLookupBytes (pshufb, TBL)
// looks up 16 byte entries per 128-bit block at once, so the 16 possible
// results become a table of their low bytes and one of their high bytes (in
// every block).
// Codebook16 (every target) maps such a code through a 16-entry codebook.
// Used by the compressed-tensors int4 kernels (packed_int-inl.h) and the
// GGUF 4-bit block types (ggml_legacy-inl.h, Q4_K/IQ4_XS in
// ggml_kquant-inl.h), which differ only in where each code's nibble sits,
// by Q5_0/Q5_1 (ggml_legacy-inl.h), whose 5-bit codes index two table sets
// (Int5ByteTables: the low nibble the entry, the fifth bit the set),
// by Q2_K/Q3_K/TQ2_0 (ggml_kquant-inl.h), whose 2- and 3-bit codes of
// several factor groups share one 16-entry table, and by the IQ2/IQ3
// lattice types (ggml_iquant-inl.h), whose few signed codes map to 3- or
// 4-bit table indices.
#if defined(AMN_KERNELS_INT4_BYTE_TABLE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef AMN_KERNELS_INT4_BYTE_TABLE_INL_H_
#undef AMN_KERNELS_INT4_BYTE_TABLE_INL_H_
#else
#define AMN_KERNELS_INT4_BYTE_TABLE_INL_H_
#endif

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace amn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// table16[code] sign-extended to i32, in each 32-bit lane of `codes` (code
// 0..15 in byte 0, bytes 1..3 zero): one byte lookup of the table repeated
// in every 128-bit block, whose bytes 1..3 (entry 0) are shifted out. Every
// target: the GGUF codebooks (IQ4_NL, MXFP4, IQ4_XS).
template <class D32>
HWY_INLINE hn::Vec<hn::RebindToSigned<D32>> Codebook16(D32 d, hn::Vec<D32> codes,
                                                        const int8_t* table16) {
  const hn::RebindToSigned<D32> di;
#if HWY_TARGET == HWY_SCALAR
  (void)d;
  return hn::Set(di, static_cast<int32_t>(table16[hn::GetLane(codes)]));
#else
  const hn::Repartition<int8_t, D32> d8;
  const auto looked_up = hn::TableLookupBytes(hn::LoadDup128(d8, table16), hn::BitCast(d8, codes));
  (void)d;
  return hn::ShiftRight<24>(hn::ShiftLeft<24>(hn::BitCast(di, looked_up)));
#endif
}

// The targets with the byte tables below: x86 from SSSE3 (pshufb) and NEON
// (TBL), whose 128-bit paths are the same code. Not SVE (its TBL lookups
// span the whole vector, which the tables' per-block layout does not fit).
#undef AMN_BYTE_TABLES
#if (HWY_ARCH_X86 && HWY_TARGET <= HWY_SSSE3) || HWY_TARGET == HWY_NEON
#define AMN_BYTE_TABLES 1
#else
#define AMN_BYTE_TABLES 0
#endif

// Of the AMN_BYTE_TABLES targets, the 128-bit ones, which take the tables
// for every type and output where wider x86 targets choose per type (SSSE3
// and SSE4 by timing, F16 rounded in software there; NEON as they, untimed:
// fewer instructions per element under emulation, docs/performance/arm.md).
inline constexpr bool kByteTables128 =
    HWY_TARGET == HWY_SSE4 || HWY_TARGET == HWY_SSSE3 || HWY_TARGET == HWY_NEON;

#if AMN_BYTE_TABLES

template <class D8>
struct Int4ByteTables {
  // Constructors written out, so they get the target's attributes: GCC for
  // NEON (whose target adds +crypto) would not inline the vectors'
  // constructors into the implicit one of an array of tables (AWQ's).
  HWY_INLINE Int4ByteTables() {}
  HWY_INLINE Int4ByteTables(hn::Vec<D8> low_bytes, hn::Vec<D8> high_bytes)
      : low(low_bytes), high(high_bytes) {}
  hn::Vec<D8> low;   // byte u: low byte of entry u, in every block
  hn::Vec<D8> high;  // byte u: high byte of entry u, in every block
};

// The byte shuffle that puts, in each 128-bit block of u32 lanes of 16-bit
// outputs (in bytes 2, 3 with kUpperHalf, BF16, else 0, 1), its four
// outputs' low bytes in u32 lane 0 and their high bytes in lane 1 (lanes
// 2, 3 repeat them).
template <bool kUpperHalf, class D8>
HWY_INLINE hn::Vec<D8> EntryByteSplit(D8 d8) {
  constexpr uint8_t b = kUpperHalf ? 2 : 0;
  alignas(16) static constexpr uint8_t kSplit[16] = {
      b, b + 4, b + 8, b + 12, b + 1, b + 5, b + 9, b + 13,
      b, b + 4, b + 8, b + 12, b + 1, b + 5, b + 9, b + 13};
  return hn::LoadDup128(d8, kSplit);
}

// The 16 byte tables, for D8 the target's full vector, from `entries`, a
// functor (du, i32 codes 0..15) -> u32 lanes whose bytes 2, 3 (kUpperHalf:
// BF16) or 0, 1 (F16) are each code's 16-bit output. A TableLookupBytes
// gathers, in each 128-bit block of entries (4 of them), their low bytes
// into u32 lane 0 and their high bytes into lane 1; lane permutes or
// unpacks then put the four blocks' lane 0s together (low) and their lane
// 1s (high), in every block. 3 instructions after the entries on
// AVX-512, 6 on AVX2, 8 on SSSE3/SSE4.
template <bool kUpperHalf, class D8, class Entries>
HWY_INLINE Int4ByteTables<D8> MakeInt4ByteTables(D8 d8, const Entries& entries) {
  const hn::Repartition<uint32_t, D8> du;
  const hn::RebindToSigned<decltype(du)> di;
  const auto split = EntryByteSplit<kUpperHalf>(d8);
  const auto gather = [&](hn::Vec<decltype(du)> v) {
    return hn::BitCast(du, hn::TableLookupBytes(hn::BitCast(d8, v), split));
  };
#if HWY_TARGET <= HWY_AVX3
  const auto p = gather(entries(du, hn::Iota(di, 0)));  // block q: entries 4q..4q+3
  alignas(64) static constexpr int32_t kLow[16] = {0, 4, 8, 12, 0, 4, 8, 12,
                                                   0, 4, 8, 12, 0, 4, 8, 12};
  alignas(64) static constexpr int32_t kHigh[16] = {1, 5, 9, 13, 1, 5, 9, 13,
                                                    1, 5, 9, 13, 1, 5, 9, 13};
  return {hn::BitCast(d8, hn::TableLookupLanes(p, hn::SetTableIndices(du, kLow))),
          hn::BitCast(d8, hn::TableLookupLanes(p, hn::SetTableIndices(du, kHigh)))};
#else
#if HWY_TARGET == HWY_AVX2
  // [low 0..3, low 4..7, high 0..3, high 4..7] in both blocks, and the same
  // for entries 8..15.
  alignas(32) static constexpr int32_t kPairs[8] = {0, 4, 1, 5, 0, 4, 1, 5};
  const auto pairs = hn::SetTableIndices(du, kPairs);
  const auto first = hn::TableLookupLanes(gather(entries(du, hn::Iota(di, 0))), pairs);
  const auto second = hn::TableLookupLanes(gather(entries(du, hn::Iota(di, 8))), pairs);
#else
  const auto first = hn::InterleaveLower(du, gather(entries(du, hn::Iota(di, 0))),
                                         gather(entries(du, hn::Iota(di, 4))));
  const auto second = hn::InterleaveLower(du, gather(entries(du, hn::Iota(di, 8))),
                                          gather(entries(du, hn::Iota(di, 12))));
#endif
  const hn::Repartition<uint64_t, D8> d64;
  return {hn::BitCast(d8, hn::InterleaveLower(d64, hn::BitCast(d64, first),
                                              hn::BitCast(d64, second))),
          hn::BitCast(d8, hn::InterleaveUpper(d64, hn::BitCast(d64, first),
                                              hn::BitCast(d64, second)))};
#endif
}

// Tables of 5-bit codes (GGUF Q5_0/Q5_1): the entries of codes 0..15 in
// `lower`, those of codes 16..31 in `upper`, each a MakeInt4ByteTables.
// A code's low nibble indexes both; its fifth bit picks the table.
template <class D8>
struct Int5ByteTables {
  Int4ByteTables<D8> lower;
  Int4ByteTables<D8> upper;
};

// The tables of 5-bit codes whose 16-bit results are odd around code 16,
// r(16 - k) = -r(16 + k) as bits r ^ 0x8000 (Q5_0's (q - 16) * d with a
// finite d, rounded symmetrically), from `t`, the tables of r(16 + k) at
// entry k for k = 1..15 and of r(32) = r(16 + 16) at entry 0: the 15
// results of codes 17..31 and the code-0 result's negation computed once.
// Code 16's result is +0 or -0 with r(32)'s sign (0 * d has d's sign, as
// 16 * d has). Five byte operations instead of a second MakeInt4ByteTables.
template <class D8>
HWY_INLINE Int5ByteTables<D8> Int5OddTables(D8 d8, const Int4ByteTables<D8>& t) {
  // Lower entry c is t's entry (16 - c) % 16 negated.
  alignas(16) static constexpr uint8_t kMirror[16] = {0, 15, 14, 13, 12, 11, 10, 9,
                                                      8, 7,  6,  5,  4,  3,  2,  1};
  // Upper entry 0 (code 16): no low byte and only the high byte's sign.
  alignas(16) static constexpr uint8_t kZeroLow[16] = {0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
                                                       0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
                                                       0xFF, 0xFF, 0xFF, 0xFF};
  alignas(16) static constexpr uint8_t kZeroHigh[16] = {0x80, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
                                                        0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
                                                        0xFF, 0xFF, 0xFF, 0xFF};
  const auto mirror = hn::LoadDup128(d8, kMirror);
  return {{hn::TableLookupBytes(t.low, mirror),
           hn::Xor(hn::TableLookupBytes(t.high, mirror), hn::Set(d8, uint8_t{0x80}))},
          {hn::And(t.low, hn::LoadDup128(d8, kZeroLow)),
           hn::And(t.high, hn::LoadDup128(d8, kZeroHigh))}};
}

// Stores the 16-bit outputs whose low bytes are `low` and high bytes
// `high` (one per byte, element order within each 128-bit block): the
// blocks' lower 8 outputs, then their upper 8.
template <class D8>
HWY_INLINE void StoreEntryBytes(D8 d8, hn::Vec<D8> low, hn::Vec<D8> high,
                                uint16_t* HWY_RESTRICT out) {
  const hn::Repartition<uint16_t, D8> d16;
  hn::StoreU(hn::BitCast(d16, hn::InterleaveLower(d8, low, high)), d16, out);
  hn::StoreU(hn::BitCast(d16, hn::InterleaveUpper(d8, low, high)), d16, out + hn::Lanes(d16));
}

// Looks up codes (one per byte, element order within each 128-bit block)
// and stores the outputs of the blocks' lower 8 codes, then those of their
// upper 8 codes.
template <class D8>
HWY_INLINE void StoreInt4ByteLookups(D8 d8, const Int4ByteTables<D8>& tables, hn::Vec<D8> codes,
                                     uint16_t* HWY_RESTRICT out) {
  StoreEntryBytes(d8, hn::TableLookupBytes(tables.low, codes),
                  hn::TableLookupBytes(tables.high, codes), out);
}

// The outputs of `low` and `high` as F32: each 16-bit output (a BF16) in the
// upper half of its F32 lane, the lower half zero. Per 128-bit block its
// outputs 4i .. 4i + 3 go to out + 4 * (B * i + b) for block b of B, so with
// one block they are in element order.
template <class D8>
HWY_INLINE void StoreEntryBytesAsF32(D8 d8, hn::Vec<D8> low, hn::Vec<D8> high,
                                     float* HWY_RESTRICT out) {
  const hn::Repartition<uint16_t, D8> d16;
  const hn::Repartition<float, D8> df;
  const size_t n = hn::Lanes(df);
  const auto zero = hn::Zero(d16);
  const auto lower = hn::BitCast(d16, hn::InterleaveLower(d8, low, high));  // outputs 0..7
  const auto upper = hn::BitCast(d16, hn::InterleaveUpper(d8, low, high));  // outputs 8..15
  hn::StoreU(hn::BitCast(df, hn::InterleaveLower(d16, zero, lower)), df, out);
  hn::StoreU(hn::BitCast(df, hn::InterleaveUpper(d16, zero, lower)), df, out + n);
  hn::StoreU(hn::BitCast(df, hn::InterleaveLower(d16, zero, upper)), df, out + 2 * n);
  hn::StoreU(hn::BitCast(df, hn::InterleaveUpper(d16, zero, upper)), df, out + 3 * n);
}

// StoreInt4ByteLookups of tables of BF16 outputs, stored as F32
// (StoreEntryBytesAsF32's order).
template <class D8>
HWY_INLINE void StoreInt4ByteLookups(D8 d8, const Int4ByteTables<D8>& tables, hn::Vec<D8> codes,
                                     float* HWY_RESTRICT out) {
  StoreEntryBytesAsF32(d8, hn::TableLookupBytes(tables.low, codes),
                       hn::TableLookupBytes(tables.high, codes), out);
}

// The same for 5-bit codes: their low nibbles in `nibbles`, their fifth
// bits in `upper`. Both tables are looked up and the bytes blended (two
// pshufb and a blend per plane instead of one pshufb).
template <class D8>
HWY_INLINE void StoreInt5ByteLookups(D8 d8, const Int5ByteTables<D8>& tables,
                                     hn::Vec<D8> nibbles, hn::Mask<D8> upper,
                                     uint16_t* HWY_RESTRICT out) {
  const auto plane = [&](hn::Vec<D8> lower_table, hn::Vec<D8> upper_table) {
    return hn::IfThenElse(upper, hn::TableLookupBytes(upper_table, nibbles),
                          hn::TableLookupBytes(lower_table, nibbles));
  };
  StoreEntryBytes(d8, plane(tables.lower.low, tables.upper.low),
                  plane(tables.lower.high, tables.upper.high), out);
}

// Tables for 32 outputs at a time (a GGUF block or sub-block): at most 256
// bits (on AVX-512 the lower halves of the full-width tables).
using Int4Lookup32Tag = hn::CappedTag<uint8_t, 32>;

template <class D8>
HWY_INLINE Int4ByteTables<Int4Lookup32Tag> Int4Tables32(const Int4ByteTables<D8>& tables) {
  if constexpr (hn::MaxLanes(D8()) > 32) {
    const Int4Lookup32Tag dh;
    return {hn::LowerHalf(dh, tables.low), hn::LowerHalf(dh, tables.high)};
  } else {
    return tables;
  }
}
// The same for both sets of 5-bit tables.
template <class D8>
HWY_INLINE Int5ByteTables<Int4Lookup32Tag> Int4Tables32(const Int5ByteTables<D8>& tables) {
  return {Int4Tables32(tables.lower), Int4Tables32(tables.upper)};
}

// At 256 bits: c0's and c1's codes in the order StoreInt4ByteLookups
// stores, outputs 0..7, 16..23 in block 0 and 8..15, 24..31 in block 1.
HWY_INLINE hn::Vec<Int4Lookup32Tag> Int4Codes32At256(hn::Vec<Int4Lookup32Tag> c0,
                                                     hn::Vec<Int4Lookup32Tag> c1) {
  const hn::Repartition<uint64_t, Int4Lookup32Tag> d64;
  const auto lo = hn::BitCast(d64, c0);
  const auto hi = hn::BitCast(d64, c1);
  return hn::BitCast(Int4Lookup32Tag(), hn::ConcatUpperLower(d64, hn::InterleaveUpper(d64, lo, hi),
                                                             hn::InterleaveLower(d64, lo, hi)));
}

// Looks up 32 codes, those of outputs 0..15 in c0 and of 16..31 in c1 (the
// same 16 in every 128-bit block), and stores the 32 outputs in order. At
// 256 bits StoreInt4ByteLookups stores the lower 8 codes of both blocks,
// then their upper 8, so block 0 gets codes 0..7 and 16..23, block 1 codes
// 8..15 and 24..31 (two 64-bit unpacks and a blend).
HWY_INLINE void StoreInt4ByteLookups32(const Int4ByteTables<Int4Lookup32Tag>& tables,
                                       hn::Vec<Int4Lookup32Tag> c0, hn::Vec<Int4Lookup32Tag> c1,
                                       uint16_t* HWY_RESTRICT out) {
  const Int4Lookup32Tag d8;
  if constexpr (hn::MaxLanes(Int4Lookup32Tag()) == 16) {
    StoreInt4ByteLookups(d8, tables, c0, out);
    StoreInt4ByteLookups(d8, tables, c1, out + 16);
  } else {
    StoreInt4ByteLookups(d8, tables, Int4Codes32At256(c0, c1), out);
  }
}

// Per byte i, whether bit 8 * spread[i] + i % 8 of `bits` is set: the
// bytes of `bits` spread by one byte shuffle (spread: one index per byte,
// 16 or 32 of them as the tag has lanes), tested against each byte's bit.
HWY_INLINE hn::Mask<Int4Lookup32Tag> Int5FifthBits(uint32_t bits, const uint8_t* spread) {
  const Int4Lookup32Tag d8;
  const hn::Repartition<uint32_t, Int4Lookup32Tag> du;
  alignas(16) static constexpr uint8_t kBit[16] = {1, 2, 4, 8, 16, 32, 64, 128,
                                                   1, 2, 4, 8, 16, 32, 64, 128};
  const auto bytes = hn::TableLookupBytes(hn::BitCast(d8, hn::Set(du, bits)), hn::Load(d8, spread));
  return hn::TestBit(bytes, hn::LoadDup128(d8, kBit));
}

// 32 outputs of 5-bit codes: the low nibbles of outputs 0..15 in c0 and of
// 16..31 in c1 (as StoreInt4ByteLookups32), bit j of `fifth_bits` output
// j's fifth bit (GGUF's qh).
HWY_INLINE void StoreInt5ByteLookups32(const Int5ByteTables<Int4Lookup32Tag>& tables,
                                       hn::Vec<Int4Lookup32Tag> c0, hn::Vec<Int4Lookup32Tag> c1,
                                       uint32_t fifth_bits, uint16_t* HWY_RESTRICT out) {
  const Int4Lookup32Tag d8;
  if constexpr (hn::MaxLanes(Int4Lookup32Tag()) == 16) {
    alignas(16) static constexpr uint8_t kFirst[16] = {0, 0, 0, 0, 0, 0, 0, 0,
                                                       1, 1, 1, 1, 1, 1, 1, 1};
    alignas(16) static constexpr uint8_t kSecond[16] = {2, 2, 2, 2, 2, 2, 2, 2,
                                                        3, 3, 3, 3, 3, 3, 3, 3};
    StoreInt5ByteLookups(d8, tables, c0, Int5FifthBits(fifth_bits, kFirst), out);
    StoreInt5ByteLookups(d8, tables, c1, Int5FifthBits(fifth_bits, kSecond), out + 16);
  } else {
    // Int4Codes32At256's order: qh bytes 0 and 2 in block 0, 1 and 3 in 1.
    alignas(32) static constexpr uint8_t kSpread[32] = {
        0, 0, 0, 0, 0, 0, 0, 0, 2, 2, 2, 2, 2, 2, 2, 2,
        1, 1, 1, 1, 1, 1, 1, 1, 3, 3, 3, 3, 3, 3, 3, 3};
    StoreInt5ByteLookups(d8, tables, Int4Codes32At256(c0, c1), Int5FifthBits(fifth_bits, kSpread),
                         out);
  }
}

// Nibble kHigh (0: bits 0..3, 1: bits 4..7) of every byte of x.
template <int kHigh, class D8>
HWY_INLINE hn::Vec<D8> Int4Nibbles(D8 d8, hn::Vec<D8> x) {
  const hn::Repartition<uint16_t, D8> d16;
  if constexpr (kHigh) x = hn::BitCast(d8, hn::ShiftRight<4>(hn::BitCast(d16, x)));
  return hn::And(x, hn::Set(d8, uint8_t{0x0F}));
}

// Per-call rows of 16-bit outputs keyed by a scale byte (NVFP4's E4M3 /
// UE4M3 group scales): when every output is a function of (scale byte,
// 4-bit code) alone, a call keeps one row of the 16 results per scale byte
// it meets, built on first use by the caller's exact vector path, so each
// group of 16 outputs is two pshufb of its row and no arithmetic. A row is
// its entries' 16 low bytes, then their 16 high bytes. 8.25 KiB, on the
// caller's stack; only `built` is initialised per call.
class ScaleByteRows {
 public:
  ScaleByteRows() { std::memset(built_, 0, sizeof(built_)); }
  ScaleByteRows(const ScaleByteRows&) = delete;
  ScaleByteRows& operator=(const ScaleByteRows&) = delete;

  // The row of scale byte s; `build(s, entries)` writes its 16 outputs
  // (entries[code], u16) the first time s is seen. `entries` has room for
  // 64 (a wide target's whole chunk).
  template <class Build>
  HWY_INLINE const uint8_t* Row(uint8_t s, const Build& build) {
    if (HWY_UNLIKELY(!built_[s])) {
      HWY_ALIGN uint16_t entries[64];
      build(s, entries);
      Set(s, entries);
    }
    return rows_[s];
  }

 private:
  // Splits 16 u16 entries into the row's low and high bytes.
  HWY_INLINE void Set(uint8_t s, const uint16_t* HWY_RESTRICT entries) {
    const hn::Full128<uint8_t> d8;
    const hn::Full128<uint64_t> d64;
    alignas(16) static constexpr uint8_t kSplit[16] = {0, 2, 4, 6, 8, 10, 12, 14,
                                                       1, 3, 5, 7, 9, 11, 13, 15};
    const auto split = hn::Load(d8, kSplit);
    const auto* bytes = reinterpret_cast<const uint8_t*>(entries);
    // Entries 0..7 (8..15) as [their low bytes, their high bytes].
    const auto first = hn::BitCast(d64, hn::TableLookupBytes(hn::Load(d8, bytes), split));
    const auto second = hn::BitCast(d64, hn::TableLookupBytes(hn::Load(d8, bytes + 16), split));
    hn::Store(hn::BitCast(d8, hn::InterleaveLower(d64, first, second)), d8, rows_[s]);
    hn::Store(hn::BitCast(d8, hn::InterleaveUpper(d64, first, second)), d8, rows_[s] + 16);
    built_[s] = 1;
  }

  HWY_ALIGN uint8_t rows_[256][32];
  uint8_t built_[256];
};

// Where NVFP4's 16-bit outputs take ScaleByteRows (both layouts): the
// targets where it measured faster (docs/performance/gguf-newer-types.md, "NVFP4 16-bit
// outputs through scale-byte tables"); AVX-512 measured no clear gain.
inline constexpr bool kNvfp4UsesScaleByteRows = HWY_TARGET == HWY_SSSE3 || HWY_TARGET == HWY_SSE4 ||
                                                HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_NEON;

// 16 outputs from their codes (one per byte, in output order) and a row of
// ScaleByteRows; as F32 (TOut float) the row's entries are BF16s, widened.
template <typename TOut>
HWY_INLINE void StoreScaleByteRow(const uint8_t* HWY_RESTRICT row,
                                  hn::Vec<hn::Full128<uint8_t>> codes, TOut* HWY_RESTRICT out) {
  const hn::Full128<uint8_t> d8;
  StoreInt4ByteLookups(d8, Int4ByteTables<hn::Full128<uint8_t>>{hn::Load(d8, row),
                                                                 hn::Load(d8, row + 16)},
                       codes, out);
}

#endif  // AMN_BYTE_TABLES

}  // namespace HWY_NAMESPACE
}  // namespace amn
HWY_AFTER_NAMESPACE();

#endif  // AMN_KERNELS_INT4_BYTE_TABLE_INL_H_
