// Per-target bitsandbytes dequantization (amn/bnb_dequant.h), Highway 1.0.3:
// NF4/FP4 (plain and double quant) and LLM.int8() row-wise INT8 to
// F32/BF16/F16, bit-exact with kernels/ref/bnb_ref.cc on every target.
//
// 4-bit: a block has only 16 possible outputs, Round(cb[k] * absmax). Each
// block computes them once (one Mul per entry, never fused; the NaN rule only
// in blocks that can make a NaN; float_convert-inl.h's rounding), then every
// element is a table lookup by its nibble. Nibbles are put in element order
// as u16 lanes (one u32 lane per packed byte: high nibble low, low nibble
// high), so BF16/F16 outputs need no shuffle and F32 one widening. The table:
//   * AVX3/AVX3_DL: one 16-lane u32 register, looked up with TableLookupLanes;
//   * AVX2 F32: two 8-lane u32 registers (entries 0-7, 8-15), both looked
//     up with TableLookupLanes, code bit 3 choosing;
//   * AVX2 BF16/F16, SSE4, SSSE3: 16-byte planes (byte p of every output in
//     plane p; 2 for BF16/F16, 4 for F32) built in registers, looked up with
//     TableLookupBytes; SSE4/SSSE3 F32 zips the low and high 16 bits;
//   * other targets: the same planes through a small stack table, broadcast
//     with LoadDup128.
// SCALAR runs a plain C++ loop over the same per-block table.
//
// INT8: weights widened exactly to F32, two Muls in bitsandbytes' order
// (SCALAR: a plain C++ loop, the reference for rows with a non-finite SCB).
//
// Nothing outside the spans is touched: partial chunks go through
// zero-padded copies (Highway 1.0.3 has no LoadN; masked loads may fault).
#if defined(AMN_KERNELS_BNB_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef AMN_KERNELS_BNB_INL_H_
#undef AMN_KERNELS_BNB_INL_H_
#else
#define AMN_KERNELS_BNB_INL_H_
#endif

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "hwy/highway.h"
#include "kernels/kernel_args.h"
#include "kernels/bnb_layout.h"
#include "kernels/float_convert-inl.h"
#include "kernels/ref/bnb_ref.h"

HWY_BEFORE_NAMESPACE();
namespace amn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// What a bnb kernel writes: F32 values, or BF16 / F16 bit patterns.
enum class BnbOut { kF32, kBf16, kF16 };

#if HWY_TARGET != HWY_SCALAR

using BnbDU = hn::ScalableTag<uint32_t>;

// Stores results A and B (u32 lanes of F32 bits) as 2N outputs. For BF16/F16
// A holds the even elements and B the odd ones; for F32, A is elements
// [0, N) and B [N, 2N).
template <BnbOut kOut, bool kMayBeNan, typename TOut>
HWY_INLINE void BnbStore(hn::Vec<BnbDU> a, hn::Vec<BnbDU> b, TOut* HWY_RESTRICT out) {
  const BnbDU du;
  const hn::Repartition<uint16_t, BnbDU> d16;
  if constexpr (kOut == BnbOut::kF32) {
    const hn::RebindToFloat<BnbDU> df;
    hn::StoreU(hn::BitCast(df, a), df, out);
    hn::StoreU(hn::BitCast(df, b), df, out + hn::Lanes(du));
  } else if constexpr (kOut == BnbOut::kBf16) {
    const auto encode = [du](hn::Vec<BnbDU> x) {
      return kMayBeNan ? F32BitsToBf16Upper(du, x) : NonNanToBf16Upper(du, x);
    };
    hn::StoreU(
        hn::OddEven(hn::BitCast(d16, encode(b)), hn::BitCast(d16, hn::ShiftRight<16>(encode(a)))),
        d16, out);
  } else {
    hn::StoreU(hn::OddEven(hn::BitCast(d16, hn::ShiftLeft<16>(F32BitsToF16Lanes(du, b))),
                           hn::BitCast(d16, F32BitsToF16Lanes(du, a))),
               d16, out);
  }
}

// The codebook of one call: 16 entries as F32 bits with the FP4
// sign-of-zero rule (bnb::CodebookBits), and whether all are finite.
struct BnbCodebook {
  HWY_ALIGN uint32_t bits[bnb::kCodebookSize];
  bool finite;
};

HWY_INLINE void BnbMakeCodebook(const uint8_t* quant_map, BnbCodebook& cb) {
  cb.finite = true;
  for (unsigned k = 0; k < bnb::kCodebookSize; ++k) {
    cb.bits[k] = bnb::CodebookBits(quant_map, k);
    cb.finite = cb.finite && bnb::IsFiniteBits(cb.bits[k]);
  }
}

// A block's 16 possible outputs, Round(cb[k] * absmax), split into byte
// planes: plane p holds byte p of each output (2 planes for BF16/F16, 4 for
// F32), for TableLookupBytes. Built with at most 16-lane vectors: one
// AVX-512 vector for the whole codebook.
struct BnbTable {
  HWY_ALIGN uint8_t planes[4][bnb::kCodebookSize];
};

// cb * absmax in the lanes of `d`, with the NaN rule of bnb::MulBits when the
// block can make a NaN: the entry's NaN quieted, else `absmax_nan` (absmax's
// NaN quieted, or the invalid-operation NaN).
template <bool kMayBeNan, class DU>
HWY_INLINE hn::Vec<DU> BnbScale(DU du, hn::Vec<DU> cb, hn::Vec<DU> absmax, hn::Vec<DU> absmax_nan) {
  const hn::RebindToFloat<DU> df;
  const auto p = hn::BitCast(du, hn::Mul(hn::BitCast(df, cb), hn::BitCast(df, absmax)));
  if constexpr (!kMayBeNan) return p;
  const auto nan = hn::IfThenElse(hn::RebindMask(du, hn::IsNaN(hn::BitCast(df, cb))),
                                  hn::Or(cb, hn::Set(du, bnb::kQuietBit)), absmax_nan);
  return hn::IfThenElse(hn::RebindMask(du, hn::IsNaN(hn::BitCast(df, p))), nan, p);
}

// Codebook entries [k, k + Lanes(du)) times the block's absmax (BnbScale).
template <bool kMayBeNan, class DU>
HWY_INLINE hn::Vec<DU> BnbProducts(DU du, const BnbCodebook& cb, size_t k, uint32_t absmax_bits) {
  const auto absmax_nan =
      hn::Set(du, bnb::IsNanBits(absmax_bits) ? (absmax_bits | bnb::kQuietBit) : bnb::kInvalidNan);
  return BnbScale<kMayBeNan>(du, hn::Load(du, cb.bits + k), hn::Set(du, absmax_bits), absmax_nan);
}

// Products `p` as outputs, in the low bytes of each lane: F32 bits as they
// are, BF16/F16 bits in the low 16 bits.
template <BnbOut kOut, bool kMayBeNan, class DU>
HWY_INLINE hn::Vec<DU> BnbEncodeLanes(DU du, hn::Vec<DU> p) {
  if constexpr (kOut == BnbOut::kF32) {
    return p;
  } else if constexpr (kOut == BnbOut::kBf16) {
    return hn::ShiftRight<16>(kMayBeNan ? F32BitsToBf16Upper(du, p) : NonNanToBf16Upper(du, p));
  } else {
    return F32BitsToF16Lanes(du, p);
  }
}

template <BnbOut kOut, bool kMayBeNan>
HWY_INLINE void BnbMakeTable(const BnbCodebook& cb, uint32_t absmax_bits, BnbTable& table) {
  const hn::CappedTag<uint32_t, bnb::kCodebookSize> du;
  const hn::RebindToSigned<decltype(du)> di;
  const hn::Rebind<uint8_t, decltype(du)> d8;
  const auto low_byte = hn::Set(du, 0xFFu);
  for (size_t k = 0; k < bnb::kCodebookSize; k += hn::Lanes(du)) {
    // Byte planes by saturating demotion of lanes already masked to 0..255.
    const auto v = BnbEncodeLanes<kOut, kMayBeNan>(du, BnbProducts<kMayBeNan>(du, cb, k, absmax_bits));
    hn::StoreU(hn::DemoteTo(d8, hn::BitCast(di, hn::And(v, low_byte))), d8, table.planes[0] + k);
    hn::StoreU(hn::DemoteTo(d8, hn::BitCast(di, hn::And(hn::ShiftRight<8>(v), low_byte))), d8,
               table.planes[1] + k);
    if constexpr (kOut == BnbOut::kF32) {
      hn::StoreU(hn::DemoteTo(d8, hn::BitCast(di, hn::And(hn::ShiftRight<16>(v), low_byte))), d8,
                 table.planes[2] + k);
      hn::StoreU(hn::DemoteTo(d8, hn::BitCast(di, hn::ShiftRight<24>(v))), d8, table.planes[3] + k);
    }
  }
}

// (Vector arguments one by one, never in arrays or structs: SVE vectors are
// sizeless.)
using BnbPlaneVec = hn::Vec<hn::Repartition<uint8_t, BnbDU>>;

// The F32 outputs for nibble indices `nib` (u32 lanes): the index repeated
// in all four bytes of its lane picks byte p from plane p.
HWY_INLINE hn::Vec<BnbDU> BnbLookup4(hn::Vec<BnbDU> nib, BnbPlaneVec p0, BnbPlaneVec p1,
                                     BnbPlaneVec p2, BnbPlaneVec p3) {
  const BnbDU du;
  const hn::Repartition<uint8_t, BnbDU> d8;
  const hn::Repartition<uint16_t, BnbDU> d16;
  const auto twice = hn::Or(nib, hn::ShiftLeft<8>(nib));
  const auto idx = hn::BitCast(d8, hn::Or(twice, hn::ShiftLeft<16>(twice)));
  const auto b01 =
      hn::BitCast(d16, hn::OddEven(hn::TableLookupBytes(p1, idx), hn::TableLookupBytes(p0, idx)));
  const auto b23 =
      hn::BitCast(d16, hn::OddEven(hn::TableLookupBytes(p3, idx), hn::TableLookupBytes(p2, idx)));
  return hn::BitCast(du, hn::OddEven(b23, b01));
}

// The 2N codes of N packed bytes in element order as u16 lanes: the high
// nibble (even element) in the low half of each u32 lane, the low nibble in
// the high half.
HWY_INLINE hn::Vec<BnbDU> BnbCodePairs(const uint8_t* HWY_RESTRICT packed) {
  const BnbDU du;
  const hn::Rebind<uint8_t, BnbDU> d8q;
  const auto bytes = hn::PromoteTo(du, hn::LoadU(d8q, packed));
  return hn::Or(hn::ShiftRight<4>(bytes), hn::ShiftLeft<16>(hn::And(bytes, hn::Set(du, 15u))));
}

// The byte index of N packed bytes for TableLookupBytes: the code of each
// of the 2N elements, as u16 lanes in element order, in both bytes of its
// lane (so that it picks byte 0 of its output from one plane and byte 1
// from another).
HWY_INLINE BnbPlaneVec BnbByteIndex(const uint8_t* HWY_RESTRICT packed) {
  const hn::Repartition<uint8_t, BnbDU> d8;
#if HWY_TARGET == HWY_SSE4 || HWY_TARGET == HWY_SSSE3 || HWY_TARGET == HWY_NEON
  // 128-bit x86 and NEON, straight from the 4 bytes: byte i to bytes
  // 4i..4i+3 (one byte shuffle), the u16 lanes of even elements shifted right
  // by 4 (high nibble), then every byte masked to its code.
  const hn::Repartition<uint16_t, BnbDU> d16;
  alignas(16) static constexpr uint8_t kSpread[16] = {0, 0, 0, 0, 1, 1, 1, 1,
                                                       2, 2, 2, 2, 3, 3, 3, 3};
#if HWY_TARGET == HWY_NEON
  // (1.0.3's NEON looks up no 16 indices in a 4-byte table: the 4 bytes
  // broadcast as a u32 instead.)
  uint32_t word;
  std::memcpy(&word, packed, sizeof(word));
  const auto four = hn::BitCast(d8, hn::Set(hn::Repartition<uint32_t, decltype(d8)>(), word));
#else
  const auto four = hn::LoadU(hn::Full32<uint8_t>(), packed);
#endif
  const auto spread = hn::BitCast(d16, hn::TableLookupBytes(four, hn::Load(d8, kSpread)));
  const auto codes = hn::OddEven(spread, hn::ShiftRight<4>(spread));
  return hn::And(hn::BitCast(d8, codes), hn::Set(d8, uint8_t{15}));
#else
  const auto pairs = BnbCodePairs(packed);
  return hn::BitCast(d8, hn::Or(pairs, hn::ShiftLeft<8>(pairs)));
#endif
}

// One chunk: 2N elements from N packed bytes at `packed` (N = Lanes(BnbDU)),
// starting at an even element, through the block's table planes p0..p3
// (p2, p3 unused for BF16/F16).
template <BnbOut kOut, typename TOut>
HWY_INLINE void Bnb4Chunk(const uint8_t* HWY_RESTRICT packed, BnbPlaneVec p0, BnbPlaneVec p1,
                          BnbPlaneVec p2, BnbPlaneVec p3, TOut* HWY_RESTRICT out) {
  const BnbDU du;
  const hn::Repartition<uint16_t, BnbDU> d16;
  const hn::RebindToFloat<BnbDU> df;
  if constexpr (kOut != BnbOut::kF32) {
    const auto idx = BnbByteIndex(packed);
    const auto bytes01 = hn::OddEven(hn::TableLookupBytes(p1, idx), hn::TableLookupBytes(p0, idx));
    hn::StoreU(hn::BitCast(d16, bytes01), d16, out);
  } else if constexpr (HWY_TARGET == HWY_SSE4 || HWY_TARGET == HWY_SSSE3 ||
                       HWY_TARGET == HWY_NEON) {
    // One 128-bit block: the low and the high halves of the outputs, each in
    // element order, zip into F32 lanes.
    const auto idx = BnbByteIndex(packed);
    const auto low = hn::BitCast(
        d16, hn::OddEven(hn::TableLookupBytes(p1, idx), hn::TableLookupBytes(p0, idx)));
    const auto high = hn::BitCast(
        d16, hn::OddEven(hn::TableLookupBytes(p3, idx), hn::TableLookupBytes(p2, idx)));
    hn::StoreU(hn::BitCast(df, hn::InterleaveLower(d16, low, high)), df, out);
    hn::StoreU(hn::BitCast(df, hn::InterleaveUpper(d16, low, high)), df, out + hn::Lanes(du));
  } else {
    const hn::Half<decltype(d16)> dh;
    const auto pairs16 = hn::BitCast(d16, BnbCodePairs(packed));
    hn::StoreU(
        hn::BitCast(df, BnbLookup4(hn::PromoteTo(du, hn::LowerHalf(dh, pairs16)), p0, p1, p2, p3)),
        df, out);
    hn::StoreU(
        hn::BitCast(df, BnbLookup4(hn::PromoteTo(du, hn::UpperHalf(dh, pairs16)), p0, p1, p2, p3)),
        df, out + hn::Lanes(du));
  }
}

// Elements [e, stop) of one block (e < stop): `chunk(bytes, out)` writes the
// 2N elements of N packed bytes. Whole chunks are read in place; a chunk that
// would start at an odd element or run past `stop` goes through zero-padded
// copies.
template <typename TOut, class Chunk>
HWY_INLINE void Bnb4BlockRun(const uint8_t* HWY_RESTRICT packed, size_t e, size_t stop,
                             TOut* HWY_RESTRICT out, const Chunk& chunk_fn) {
  const size_t chunk = 2 * hn::Lanes(BnbDU());
  constexpr size_t kMaxChunk = 2 * HWY_MAX_BYTES / sizeof(uint32_t);
  if (e % 2 == 0 && (stop - e) % chunk == 0) {  // the usual case: whole chunks in place
    for (; e < stop; e += chunk, out += chunk) chunk_fn(packed + e / 2, out);
    return;
  }
  while (e < stop) {
    const size_t start = e & ~size_t{1};
    if (e == start && start + chunk <= stop) {
      for (; e + chunk <= stop; e += chunk) {
        chunk_fn(packed + e / 2, out);
        out += chunk;
      }
      continue;
    }
    const size_t n = std::min(stop, start + chunk) - start;
    HWY_ALIGN uint8_t byte_tail[kMaxChunk / 2] = {};
    HWY_ALIGN TOut out_tail[kMaxChunk];
    std::memcpy(byte_tail, packed + start / 2, (n + 1) / 2);
    chunk_fn(byte_tail, out_tail);
    std::memcpy(out, out_tail + (e - start), (n - (e - start)) * sizeof(TOut));
    out += n - (e - start);
    e = start + n;
  }
}

// The byte-plane lookup as a chunk function: planes are broadcast from the
// table in memory (vectors cannot be captured on SVE).
template <BnbOut kOut>
struct BnbPlaneChunk {
  const BnbTable* table;
  template <typename TOut>
  HWY_INLINE void operator()(const uint8_t* HWY_RESTRICT bytes, TOut* HWY_RESTRICT out) const {
    const hn::Repartition<uint8_t, BnbDU> d8;
    const auto p0 = hn::LoadDup128(d8, table->planes[0]);
    const auto p1 = hn::LoadDup128(d8, table->planes[1]);
    const auto p2 = kOut == BnbOut::kF32 ? hn::LoadDup128(d8, table->planes[2]) : p0;
    const auto p3 = kOut == BnbOut::kF32 ? hn::LoadDup128(d8, table->planes[3]) : p1;
    Bnb4Chunk<kOut>(bytes, p0, p1, p2, p3, out);
  }
};

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
// AVX-512: a u32 vector has exactly 16 lanes, so a block's 16 outputs stay in
// one register and a lane permute (vpermd) looks them up, with no byte
// planes and no round trip through memory. BF16/F16 outputs are held twice
// per lane (both halves) so that the even element (high nibble) can take the
// low half and the odd one the high half with one OddEven.
template <BnbOut kOut, bool kMayBeNan>
HWY_INLINE hn::Vec<BnbDU> BnbLaneTable(const BnbCodebook& cb, uint32_t absmax_bits) {
  const BnbDU du;
  const auto v = BnbEncodeLanes<kOut, kMayBeNan>(du, BnbProducts<kMayBeNan>(du, cb, 0, absmax_bits));
  if constexpr (kOut == BnbOut::kF32) return v;
  return hn::Or(v, hn::ShiftLeft<16>(v));
}

template <BnbOut kOut, typename TOut>
HWY_INLINE void Bnb4LaneChunk(const uint8_t* HWY_RESTRICT packed, hn::Vec<BnbDU> table,
                              TOut* HWY_RESTRICT out) {
  const BnbDU du;
  const hn::Rebind<uint8_t, BnbDU> d8q;
  const hn::Repartition<uint16_t, BnbDU> d16;
  const auto bytes = hn::PromoteTo(du, hn::LoadU(d8q, packed));
  const auto high = hn::ShiftRight<4>(bytes);
  const auto low = hn::And(bytes, hn::Set(du, 15u));
  if constexpr (kOut != BnbOut::kF32) {
    const auto even = hn::TableLookupLanes(table, hn::IndicesFromVec(du, high));
    const auto odd = hn::TableLookupLanes(table, hn::IndicesFromVec(du, low));
    hn::StoreU(hn::OddEven(hn::BitCast(d16, odd), hn::BitCast(d16, even)), d16, out);
  } else {
    const hn::Half<decltype(d16)> dh;
    const hn::RebindToFloat<BnbDU> df;
    const auto pairs = hn::BitCast(d16, hn::Or(high, hn::ShiftLeft<16>(low)));
    const auto first = hn::PromoteTo(du, hn::LowerHalf(dh, pairs));
    const auto second = hn::PromoteTo(du, hn::UpperHalf(dh, pairs));
    hn::StoreU(hn::BitCast(df, hn::TableLookupLanes(table, hn::IndicesFromVec(du, first))), df,
               out);
    hn::StoreU(hn::BitCast(df, hn::TableLookupLanes(table, hn::IndicesFromVec(du, second))), df,
               out + hn::Lanes(du));
  }
}

template <BnbOut kOut, bool kMayBeNan, typename TOut>
HWY_INLINE void Bnb4Block(const BnbCodebook& cb, uint32_t absmax, BnbTable& /*unused*/,
                          const uint8_t* HWY_RESTRICT packed, size_t e, size_t stop,
                          TOut* HWY_RESTRICT out) {
  const auto table = BnbLaneTable<kOut, kMayBeNan>(cb, absmax);
  const size_t chunk = 2 * hn::Lanes(BnbDU());
  if (e % 2 == 0 && (stop - e) % chunk == 0) {  // the usual case: whole chunks in place
    for (size_t i = e; i < stop; i += chunk) {
      Bnb4LaneChunk<kOut>(packed + i / 2, table, out + (i - e));
    }
    return;
  }
  Bnb4BlockRun(packed, e, stop, out,
               [table](const uint8_t* HWY_RESTRICT bytes, TOut* HWY_RESTRICT o) {
                 Bnb4LaneChunk<kOut>(bytes, table, o);
               });
}
#elif HWY_TARGET == HWY_AVX2
// AVX2, BF16/F16 output: the two byte planes are built in registers (two
// 8-lane products, a demotion to u16, even/odd bytes), which avoids the
// store-to-load round trip of the generic path: the 8-byte plane stores
// cannot forward to the 16-byte broadcast loads.
template <BnbOut kOut, bool kMayBeNan>
HWY_INLINE hn::Vec<hn::Full128<uint8_t>> BnbEncoded8(const BnbCodebook& cb, size_t k,
                                                     uint32_t absmax_bits) {
  const hn::Full256<uint32_t> du;
  const hn::RebindToSigned<decltype(du)> di;
  const hn::Rebind<uint16_t, decltype(du)> d16;
  const auto v = BnbEncodeLanes<kOut, kMayBeNan>(du, BnbProducts<kMayBeNan>(du, cb, k, absmax_bits));
  // Lanes hold 0..0xFFFF, so the saturating i32 -> u16 demotion is exact.
  return hn::BitCast(hn::Full128<uint8_t>(), hn::DemoteTo(d16, hn::BitCast(di, v)));
}

// AVX2, F32 output: the 16 outputs are the products themselves, entries 0-7
// in one u32 register and 8-15 in another. A code looks up both with a lane
// permute (vpermd) by its low 3 bits; its bit 3, moved to the sign bit,
// picks one (a blend); bits above bit 3 are ignored. This replaces four
// byte-plane lookups and three blends per 8 outputs, and the planes' round
// trip through memory.
HWY_INLINE hn::Vec<BnbDU> BnbLookupLanes16(hn::Vec<BnbDU> code, hn::Vec<BnbDU> low8,
                                           hn::Vec<BnbDU> high8) {
  const BnbDU du;
  const hn::RebindToSigned<BnbDU> di;
  const auto idx = hn::IndicesFromVec(du, hn::And(code, hn::Set(du, 7u)));
  return hn::BitCast(du, hn::IfNegativeThenElse(hn::BitCast(di, hn::ShiftLeft<28>(code)),
                                                hn::BitCast(di, hn::TableLookupLanes(high8, idx)),
                                                hn::BitCast(di, hn::TableLookupLanes(low8, idx))));
}

// 2N F32 outputs from N packed bytes. Lanes 2i and 2i + 1 take byte i (a
// lane permute of the widened bytes), shifted right by 4 for the high nibble
// (even element) and by 0 for the low one: BnbLookupLanes16 reads only bits
// 0-3, so the bits above need no mask.
HWY_INLINE void Bnb4PermuteChunk(const uint8_t* HWY_RESTRICT packed, hn::Vec<BnbDU> low8,
                                 hn::Vec<BnbDU> high8, float* HWY_RESTRICT out) {
  const BnbDU du;
  const hn::RebindToFloat<BnbDU> df;
  const hn::Rebind<uint8_t, BnbDU> d8q;
  alignas(32) static constexpr int32_t kFirst[8] = {0, 0, 1, 1, 2, 2, 3, 3};
  alignas(32) static constexpr int32_t kSecond[8] = {4, 4, 5, 5, 6, 6, 7, 7};
  alignas(32) static constexpr uint32_t kShift[8] = {4, 0, 4, 0, 4, 0, 4, 0};
  const auto bytes = hn::PromoteTo(du, hn::LoadU(d8q, packed));
  const auto shift = hn::Load(du, kShift);
  const auto first = hn::TableLookupLanes(bytes, hn::SetTableIndices(du, kFirst)) >> shift;
  const auto second = hn::TableLookupLanes(bytes, hn::SetTableIndices(du, kSecond)) >> shift;
  hn::StoreU(hn::BitCast(df, BnbLookupLanes16(first, low8, high8)), df, out);
  hn::StoreU(hn::BitCast(df, BnbLookupLanes16(second, low8, high8)), df, out + hn::Lanes(du));
}

template <BnbOut kOut, bool kMayBeNan, typename TOut>
HWY_INLINE void Bnb4Block(const BnbCodebook& cb, uint32_t absmax, BnbTable& /*unused*/,
                          const uint8_t* HWY_RESTRICT packed, size_t e, size_t stop,
                          TOut* HWY_RESTRICT out) {
  if constexpr (kOut == BnbOut::kF32) {
    const BnbDU du;
    const auto low8 = BnbProducts<kMayBeNan>(du, cb, 0, absmax);
    const auto high8 = BnbProducts<kMayBeNan>(du, cb, 8, absmax);
    Bnb4BlockRun(packed, e, stop, out,
                 [low8, high8](const uint8_t* HWY_RESTRICT bytes, TOut* HWY_RESTRICT o) {
                   Bnb4PermuteChunk(bytes, low8, high8, o);
                 });
  } else {
    const hn::Full128<uint8_t> d8;
    const hn::Full256<uint8_t> d8x2;
    const auto first = BnbEncoded8<kOut, kMayBeNan>(cb, 0, absmax);
    const auto second = BnbEncoded8<kOut, kMayBeNan>(cb, 8, absmax);
    const auto low = hn::ConcatEven(d8, second, first);
    const auto high = hn::ConcatOdd(d8, second, first);
    const auto p0 = hn::Combine(d8x2, low, low);
    const auto p1 = hn::Combine(d8x2, high, high);
    const size_t chunk = 2 * hn::Lanes(BnbDU());
    if (e % 2 == 0 && (stop - e) % chunk == 0) {  // the usual case: whole chunks in place
      for (size_t i = e; i < stop; i += chunk) {
        Bnb4Chunk<kOut>(packed + i / 2, p0, p1, p0, p1, out + (i - e));
      }
      return;
    }
    Bnb4BlockRun(packed, e, stop, out,
                 [p0, p1](const uint8_t* HWY_RESTRICT bytes, TOut* HWY_RESTRICT o) {
                   Bnb4Chunk<kOut>(bytes, p0, p1, p0, p1, o);
                 });
  }
}
#elif HWY_TARGET == HWY_SSE4 || HWY_TARGET == HWY_SSSE3 || HWY_TARGET == HWY_NEON
// 128-bit x86 and NEON: the byte planes are built in registers, which avoids
// the generic path's store-to-load round trip (its 4-byte plane stores cannot
// forward to the 16-byte broadcast loads). NEON untimed: 1.3-1.8x fewer
// instructions per element under emulation (docs/performance/arm.md). One
// byte shuffle turns 4 outputs into [byte 0 of each, byte 1 of each, ...]
// as u32 lanes; a 4 x 4 u32 transpose of the 4 such vectors gives plane p in
// lane group p.
template <BnbOut kOut, bool kMayBeNan>
HWY_INLINE hn::Vec<BnbDU> BnbByteMajor4(const BnbCodebook& cb, size_t k, uint32_t absmax) {
  const BnbDU du;
  const hn::Repartition<uint8_t, BnbDU> d8;
  alignas(16) static constexpr uint8_t kByteMajor[16] = {0, 4, 8,  12, 1, 5, 9,  13,
                                                          2, 6, 10, 14, 3, 7, 11, 15};
  const auto v = BnbEncodeLanes<kOut, kMayBeNan>(du, BnbProducts<kMayBeNan>(du, cb, k, absmax));
  return hn::BitCast(du, hn::TableLookupBytes(hn::BitCast(d8, v), hn::Load(d8, kByteMajor)));
}

template <BnbOut kOut, bool kMayBeNan, typename TOut>
HWY_INLINE void Bnb4Block(const BnbCodebook& cb, uint32_t absmax, BnbTable& /*unused*/,
                          const uint8_t* HWY_RESTRICT packed, size_t e, size_t stop,
                          TOut* HWY_RESTRICT out) {
  const BnbDU du;
  const hn::Repartition<uint8_t, BnbDU> d8;
  const hn::Repartition<uint64_t, BnbDU> d64;
  const auto t0 = BnbByteMajor4<kOut, kMayBeNan>(cb, 0, absmax);
  const auto t1 = BnbByteMajor4<kOut, kMayBeNan>(cb, 4, absmax);
  const auto t2 = BnbByteMajor4<kOut, kMayBeNan>(cb, 8, absmax);
  const auto t3 = BnbByteMajor4<kOut, kMayBeNan>(cb, 12, absmax);
  // u64 lane j of bytes01_* holds byte j of 8 outputs (entries 0-7 / 8-15).
  const auto bytes01_lo = hn::BitCast(d64, hn::InterleaveLower(du, t0, t1));
  const auto bytes01_hi = hn::BitCast(d64, hn::InterleaveLower(du, t2, t3));
  const auto bytes23_lo = hn::BitCast(d64, hn::InterleaveUpper(du, t0, t1));
  const auto bytes23_hi = hn::BitCast(d64, hn::InterleaveUpper(du, t2, t3));
  const auto p0 = hn::BitCast(d8, hn::InterleaveLower(d64, bytes01_lo, bytes01_hi));
  const auto p1 = hn::BitCast(d8, hn::InterleaveUpper(d64, bytes01_lo, bytes01_hi));
  const auto p2 = hn::BitCast(d8, hn::InterleaveLower(d64, bytes23_lo, bytes23_hi));
  const auto p3 = hn::BitCast(d8, hn::InterleaveUpper(d64, bytes23_lo, bytes23_hi));
  Bnb4BlockRun(packed, e, stop, out,
               [p0, p1, p2, p3](const uint8_t* HWY_RESTRICT bytes, TOut* HWY_RESTRICT o) {
                 Bnb4Chunk<kOut>(bytes, p0, p1, p2, p3, o);
               });
}
#else
// Other targets: byte planes through memory.
template <BnbOut kOut, bool kMayBeNan, typename TOut>
HWY_INLINE void Bnb4Block(const BnbCodebook& cb, uint32_t absmax, BnbTable& table,
                          const uint8_t* HWY_RESTRICT packed, size_t e, size_t stop,
                          TOut* HWY_RESTRICT out) {
  BnbMakeTable<kOut, kMayBeNan>(cb, absmax, table);
  Bnb4BlockRun(packed, e, stop, out, BnbPlaneChunk<kOut>{&table});
}
#endif  // HWY_TARGET

template <BnbOut kOut, typename TOut>
HWY_INLINE void Bnb4Vector(const bnb::Bnb4View& t, size_t begin, size_t end,
                           TOut* HWY_RESTRICT out) {
  BnbCodebook cb;
  BnbMakeCodebook(t.quant_map, cb);
  BnbTable table;
  // Block and nested-block indices advance by counting: no division per
  // block (it would sit on the loop-carried path).
  size_t block = begin / t.block_size;
  size_t nested = t.double_quant ? block / t.nested_block_size : 0;
  size_t nested_left = t.double_quant ? t.nested_block_size - block % t.nested_block_size : 0;
  uint32_t nested_scale = t.double_quant ? bnb::LoadLe32(t.nested_absmax + 4 * nested) : 0;
  size_t e = begin;
  while (e < end) {
    const size_t stop = std::min(end, (block + 1) * t.block_size);
    uint32_t absmax;
    if (!t.double_quant) {
      absmax = bnb::LoadLe32(t.absmax + 4 * block);
    } else {
      if (nested_left == 0) {
        nested_scale = bnb::LoadLe32(t.nested_absmax + 4 * ++nested);
        nested_left = t.nested_block_size;
      }
      --nested_left;
      // bnb::AbsmaxBits' recovery: code * nested scale, then + offset.
      const uint32_t code = bnb::LoadLe32(t.nested_quant_map + 4 * size_t{t.absmax[block]});
      absmax = bnb::AddBits(bnb::MulBits(code, nested_scale), t.nested_offset_bits);
    }
    // A finite codebook times a finite absmax never makes a NaN.
    if (HWY_LIKELY(cb.finite && bnb::IsFiniteBits(absmax))) {
      Bnb4Block<kOut, false>(cb, absmax, table, t.packed, e, stop, out + (e - begin));
    } else {
      Bnb4Block<kOut, true>(cb, absmax, table, t.packed, e, stop, out + (e - begin));
    }
    e = stop;
    ++block;
  }
}

// ---- INT8 ----

// (f32(w) * scb) * f32(1/127), two Muls in bitsandbytes' order (never
// fused); a NaN result takes `nan` (the row's choice: SCB's NaN quieted, or
// the invalid-operation NaN of 0 * Inf).
template <bool kMayBeNan>
HWY_INLINE hn::Vec<BnbDU> Int8Scaled(hn::Vec<hn::RebindToSigned<BnbDU>> w, hn::Vec<BnbDU> scb,
                                     hn::Vec<BnbDU> nan) {
  const BnbDU du;
  const hn::RebindToFloat<BnbDU> df;
  const auto inv127 = hn::BitCast(df, hn::Set(du, bnb::kInv127Bits));
  const auto r =
      hn::BitCast(du, hn::Mul(hn::Mul(hn::ConvertTo(df, w), hn::BitCast(df, scb)), inv127));
  if constexpr (!kMayBeNan) return r;
  return hn::IfThenElse(hn::RebindMask(du, hn::IsNaN(hn::BitCast(df, r))), nan, r);
}

// Whether every result fl(fl(w * SCB) * f32(1/127)) of a row with a finite
// SCB (|w| <= 128) is ±0 or has a magnitude in [2^-14, 2^16), so
// ToF16LowerInRange may store it. Both multiplies round monotonically, and
// the result's magnitude is the same computation on |w| and |SCB|: w = 0
// gives ±0, |w| = 1 the smallest other magnitude fl(|SCB| * f32(1/127)),
// |w| = 128 the largest (an intermediate overflow to Inf fails the test).
HWY_INLINE bool Int8RowF16InRange(uint32_t scb_bits) {
  const uint32_t abs_bits = scb_bits & 0x7FFFFFFFu;
  if (abs_bits == 0) return true;
  const float abs_scb = bnb::FromBits(abs_bits);
  const float inv127 = bnb::FromBits(bnb::kInv127Bits);
  return abs_scb * inv127 >= 0x1p-14f && (128.0f * abs_scb) * inv127 < 65536.0f;
}

// Rows whose F16 output takes ToF16LowerInRange after Int8RowF16InRange:
// the targets without F16C where the integer rounding exists.
template <BnbOut kOut>
constexpr bool kInt8F16InRange = kOut == BnbOut::kF16 && kF16InRangeStore;

// 2N elements from 2N int8 weights, scaled by `scb` then by f32(1/127), each
// one Mul in bitsandbytes' order. BF16/F16 read the weights as i16 pairs
// (even element = low half of a u32 lane, odd = high half) to match
// BnbStore's layout; F32, and F16 stored by ToF16LowerInRange (kInRange: a
// row that passed Int8RowF16InRange), widen two runs of N.
template <BnbOut kOut, bool kMayBeNan, bool kInRange = false, typename TOut>
HWY_INLINE void Int8Chunk(const uint8_t* HWY_RESTRICT weight, hn::Vec<BnbDU> scb,
                          hn::Vec<BnbDU> nan, TOut* HWY_RESTRICT out) {
  static_assert(!kInRange || (kInt8F16InRange<kOut> && !kMayBeNan));
  const hn::RebindToSigned<BnbDU> di;
  const auto* w = reinterpret_cast<const int8_t*>(weight);
  hn::Vec<decltype(di)> wa, wb;
  if constexpr (kOut == BnbOut::kF32 || kInRange) {
    const hn::Rebind<int8_t, decltype(di)> d8;
    wa = hn::PromoteTo(di, hn::LoadU(d8, w));
    wb = hn::PromoteTo(di, hn::LoadU(d8, w + hn::Lanes(di)));
  } else {
    const hn::Repartition<int16_t, BnbDU> d16;
    const hn::Rebind<int8_t, decltype(d16)> d8;
    const auto pairs = hn::BitCast(di, hn::PromoteTo(d16, hn::LoadU(d8, w)));
    wa = hn::ShiftRight<16>(hn::ShiftLeft<16>(pairs));  // arithmetic: sign kept
    wb = hn::ShiftRight<16>(pairs);
  }
  const auto a = Int8Scaled<kMayBeNan>(wa, scb, nan);
  const auto b = Int8Scaled<kMayBeNan>(wb, scb, nan);
  if constexpr (kInRange) {
    ToF16LowerInRange::StorePair(BnbDU(), a, b, out);
  } else {
    BnbStore<kOut, kMayBeNan>(a, b, out);
  }
}

template <BnbOut kOut, typename TOut>
HWY_INLINE void Int8Vector(const uint8_t* weight, const uint8_t* scb, size_t rows, size_t cols,
                           TOut* HWY_RESTRICT out) {
  const BnbDU du;
  const size_t chunk = 2 * hn::Lanes(du);
  constexpr size_t kMaxChunk = 2 * HWY_MAX_BYTES / sizeof(uint32_t);
  for (size_t r = 0; r < rows; ++r) {
    const uint32_t scb_bits = bnb::LoadLe32(scb + 4 * r);
    const uint8_t* w = weight + r * cols;
    TOut* o = out + r * cols;
    const auto scale = hn::Set(du, scb_bits);
    // A NaN result needs a NaN or infinite SCB: w * SCB is NaN only then
    // (quieted SCB, or 0 * Inf), and a finite product times f32(1/127) is
    // never NaN.
    const auto nan =
        hn::Set(du, bnb::IsNanBits(scb_bits) ? (scb_bits | bnb::kQuietBit) : bnb::kInvalidNan);
    const bool finite = bnb::IsFiniteBits(scb_bits);
    size_t c = 0;
    if (HWY_LIKELY(finite)) {
      if (kInt8F16InRange<kOut> && Int8RowF16InRange(scb_bits)) {
        for (; c + chunk <= cols; c += chunk) {
          Int8Chunk<kOut, false, kInt8F16InRange<kOut>>(w + c, scale, nan, o + c);
        }
      } else {
        for (; c + chunk <= cols; c += chunk) Int8Chunk<kOut, false>(w + c, scale, nan, o + c);
      }
    } else {
      for (; c + chunk <= cols; c += chunk) Int8Chunk<kOut, true>(w + c, scale, nan, o + c);
    }
    if (c == cols) continue;
    HWY_ALIGN uint8_t w_tail[kMaxChunk] = {};
    HWY_ALIGN TOut o_tail[kMaxChunk];
    std::memcpy(w_tail, w + c, cols - c);
    Int8Chunk<kOut, true>(w_tail, scale, nan, o_tail);
    std::memcpy(o + c, o_tail, (cols - c) * sizeof(TOut));
  }
}

#endif  // HWY_TARGET != HWY_SCALAR

#if HWY_TARGET == HWY_SCALAR
// One F32 result (bits) as the output type, through float_convert-inl.h's
// lane encoders on a one-lane vector (inline, unlike ref::F32BitsToBf16).
template <BnbOut kOut, typename TOut>
HWY_INLINE TOut BnbEncodeOne(uint32_t bits) {
  const hn::ScalableTag<uint32_t> du;  // one lane on SCALAR
  if constexpr (kOut == BnbOut::kF32) {
    TOut value;
    std::memcpy(&value, &bits, sizeof(bits));
    return value;
  } else if constexpr (kOut == BnbOut::kBf16) {
    return static_cast<TOut>(hn::GetLane(F32BitsToBf16Upper(du, hn::Set(du, bits))) >> 16);
  } else {
    return static_cast<TOut>(hn::GetLane(F32BitsToF16Lanes(du, hn::Set(du, bits))));
  }
}

// SCALAR (one-lane vectors, no table lookups): plain C++ with the same idea,
// a block's 16 outputs computed once (bnb::MulBits, then the output
// encoders of float_convert-inl.h on one lane), then one table read per
// element.
template <BnbOut kOut, typename TOut>
HWY_INLINE void Bnb4ScalarTable(const bnb::Bnb4View& t, size_t begin, size_t end, TOut* out) {
  uint32_t cb[bnb::kCodebookSize];
  for (unsigned k = 0; k < bnb::kCodebookSize; ++k) cb[k] = bnb::CodebookBits(t.quant_map, k);
  TOut table[bnb::kCodebookSize];
  auto* out_bytes = reinterpret_cast<unsigned char*>(out);
  size_t e = begin;
  while (e < end) {
    const size_t block = e / t.block_size;
    const size_t stop = std::min(end, (block + 1) * t.block_size);
    const uint32_t absmax = bnb::AbsmaxBits(t, block);
    for (unsigned k = 0; k < bnb::kCodebookSize; ++k) {
      table[k] = BnbEncodeOne<kOut, TOut>(bnb::MulBits(cb[k], absmax));
    }
    for (; e < stop; ++e) {
      const uint8_t byte = t.packed[e / 2];
      const unsigned nibble = (e % 2 == 0) ? byte >> 4 : byte & 15u;
      std::memcpy(out_bytes + (e - begin) * sizeof(TOut), &table[nibble], sizeof(TOut));
    }
  }
}
#endif

// Elements [begin, end) of a validated 4-bit tensor into out[0, end - begin).
template <BnbOut kOut, typename TOut>
HWY_INLINE void DequantBnb4Kernel(const bnb::Bnb4View& t, size_t begin, size_t end, TOut* out) {
#if HWY_TARGET == HWY_SCALAR
  Bnb4ScalarTable<kOut>(t, begin, end, out);
#else
  Bnb4Vector<kOut>(t, begin, end, out);
#endif
}

// rows x cols int8 weights, SCB f32 LE [rows] -> rows * cols outputs.
template <BnbOut kOut, typename TOut>
HWY_INLINE void DequantBnbInt8Kernel(void (*reference)(const uint8_t*, const uint8_t*, size_t,
                                                       size_t, TOut*),
                                     const uint8_t* weight, const uint8_t* scb, size_t rows,
                                     size_t cols, TOut* out) {
#if HWY_TARGET == HWY_SCALAR
  // Plain C++ for rows with a finite SCB (which cannot make a NaN: the two
  // multiplies are the reference's, one rounding each, never fused); the
  // reference for the others.
  const float inv127 = bnb::FromBits(bnb::kInv127Bits);
  auto* out_bytes = reinterpret_cast<unsigned char*>(out);
  for (size_t r = 0; r < rows; ++r) {
    const uint32_t scb_bits = bnb::LoadLe32(scb + 4 * r);
    const uint8_t* w = weight + r * cols;
    unsigned char* o = out_bytes + r * cols * sizeof(TOut);
    if (!bnb::IsFiniteBits(scb_bits)) {
      reference(w, scb + 4 * r, 1, cols, reinterpret_cast<TOut*>(o));
      continue;
    }
    const float scale = bnb::FromBits(scb_bits);
    for (size_t c = 0; c < cols; ++c) {
      const float product = static_cast<float>(static_cast<int8_t>(w[c])) * scale;
      const TOut encoded = BnbEncodeOne<kOut, TOut>(bnb::ToBits(product * inv127));
      std::memcpy(o + c * sizeof(TOut), &encoded, sizeof(TOut));
    }
  }
#else
  (void)reference;
  Int8Vector<kOut>(weight, scb, rows, cols, out);
#endif
}

// The Bnb4 family (kernels/kernel_args.h): elements [begin, end).
HWY_INLINE void DecodeBnb4(const kernels::Bnb4Args& a, size_t begin, size_t end, ElemType out_type,
                           void* out) {
  switch (out_type) {
    case ElemType::kF32: DequantBnb4Kernel<BnbOut::kF32>(a, begin, end, static_cast<float*>(out)); break;
    case ElemType::kBf16: DequantBnb4Kernel<BnbOut::kBf16>(a, begin, end, static_cast<uint16_t*>(out)); break;
    case ElemType::kF16: DequantBnb4Kernel<BnbOut::kF16>(a, begin, end, static_cast<uint16_t*>(out)); break;
    default: break;
  }
}

// The BnbInt8 family (kernels/kernel_args.h): rows [begin, end).
HWY_INLINE void DecodeBnbInt8(const kernels::BnbInt8Args& a, size_t begin, size_t end,
                              ElemType out_type, void* out) {
  const uint8_t* weight = a.weight + begin * a.cols;
  const uint8_t* scb = a.scb + begin * 4;
  const size_t rows = end - begin;
  switch (out_type) {
    case ElemType::kF32:
      DequantBnbInt8Kernel<BnbOut::kF32>(ref::DequantBnbInt8ToF32, weight, scb, rows, a.cols,
                                         static_cast<float*>(out));
      break;
    case ElemType::kBf16:
      DequantBnbInt8Kernel<BnbOut::kBf16>(ref::DequantBnbInt8ToBf16, weight, scb, rows, a.cols,
                                          static_cast<uint16_t*>(out));
      break;
    case ElemType::kF16:
      DequantBnbInt8Kernel<BnbOut::kF16>(ref::DequantBnbInt8ToF16, weight, scb, rows, a.cols,
                                         static_cast<uint16_t*>(out));
      break;
    default:
      break;
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace amn
HWY_AFTER_NAMESPACE();

#endif  // AMN_KERNELS_BNB_INL_H_
