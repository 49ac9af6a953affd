// Per-target bitsandbytes dequantization (amn/bnb_dequant.h), Highway 1.0.3:
// NF4/FP4 (plain and double quant) and LLM.int8() row-wise INT8 to
// F32/BF16/F16, bit-exact with kernels/ref/bnb_ref.cc on every target. The
// SCALAR target (one-lane vectors, no 16-byte table lookup) runs that
// reference.
//
// 4-bit: the 16 codebook entries (with the FP4 sign-of-zero rule) are split
// once per call into four 16-byte planes (byte p of each f32); a nibble picks
// its entry with four TableLookupBytes, so the codebook never leaves
// registers. One u32 lane per packed byte: its high nibble is an even element
// (vector A), its low nibble the next odd one (vector B). Then one Mul by the
// block's absmax (never fused), the NaN rule only in blocks that can make a
// NaN, and float_convert-inl.h's rounding; BF16/F16 results are put back in
// element order with one OddEven (fp8_dequant-inl.h's layout), F32 results
// are computed from nibbles already in element order.
//
// INT8: weights widened exactly to F32, two Muls in bitsandbytes' order.
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

// F32 bits -> BF16 bits in the upper half of each lane, for lanes known not
// to be NaN (F32BitsToBf16Upper without its NaN select).
HWY_INLINE hn::Vec<BnbDU> BnbNonNanBf16Upper(BnbDU du, hn::Vec<BnbDU> x) {
  const auto lsb = hn::And(hn::ShiftRight<16>(x), hn::Set(du, 1u));
  return hn::Add(hn::Add(x, hn::Set(du, 0x7FFFu)), lsb);
}

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
      return kMayBeNan ? F32BitsToBf16Upper(du, x) : BnbNonNanBf16Upper(du, x);
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

// The codebook as four byte planes (plane p = byte p of the 16 entries'
// F32 bits), each repeated in every 128-bit block for TableLookupBytes.
struct BnbPlanes {
  HWY_ALIGN uint8_t bytes[4][bnb::kCodebookSize];
  bool finite;  // no entry is Inf or NaN
};

HWY_INLINE void BnbMakePlanes(const uint8_t* quant_map, BnbPlanes& planes) {
  planes.finite = true;
  for (unsigned k = 0; k < bnb::kCodebookSize; ++k) {
    const uint32_t bits = bnb::CodebookBits(quant_map, k);
    planes.finite = planes.finite && bnb::IsFiniteBits(bits);
    for (int p = 0; p < 4; ++p) planes.bytes[p][k] = static_cast<uint8_t>(bits >> (8 * p));
  }
}

// Codebook entries for nibble indices `nib` (u32 lanes, 0..15): each lane's
// index repeated in its four bytes selects byte p from plane p.
// (Four vector arguments, not an array: SVE vectors are sizeless.)
using BnbPlaneVec = hn::Vec<hn::Repartition<uint8_t, BnbDU>>;
HWY_INLINE hn::Vec<BnbDU> BnbLookup(BnbDU du, hn::Vec<BnbDU> nib, BnbPlaneVec p0, BnbPlaneVec p1,
                                    BnbPlaneVec p2, BnbPlaneVec p3) {
  const hn::Repartition<uint8_t, BnbDU> d8;
  const hn::Repartition<uint16_t, BnbDU> d16;
  const auto twice = hn::Or(nib, hn::ShiftLeft<8>(nib));
  const auto idx = hn::BitCast(d8, hn::Or(twice, hn::ShiftLeft<16>(twice)));
  const auto b0 = hn::TableLookupBytes(p0, idx);
  const auto b1 = hn::TableLookupBytes(p1, idx);
  const auto b2 = hn::TableLookupBytes(p2, idx);
  const auto b3 = hn::TableLookupBytes(p3, idx);
  const auto low = hn::BitCast(d16, hn::OddEven(b1, b0));
  const auto high = hn::BitCast(d16, hn::OddEven(b3, b2));
  return hn::BitCast(du, hn::OddEven(high, low));
}

// cb * absmax for a vector of codebook entries, with the NaN rule of
// bnb::MulBits when the block can make a NaN (`absmax_nan` is that rule's
// choice when the entry is not NaN).
template <bool kMayBeNan>
HWY_INLINE hn::Vec<BnbDU> BnbScale(hn::Vec<BnbDU> cb, hn::Vec<BnbDU> absmax,
                                   hn::Vec<BnbDU> absmax_nan) {
  const BnbDU du;
  const hn::RebindToFloat<BnbDU> df;
  const auto p = hn::Mul(hn::BitCast(df, cb), hn::BitCast(df, absmax));
  if constexpr (!kMayBeNan) return hn::BitCast(du, p);
  const auto cb_f = hn::BitCast(df, cb);
  const auto nan = hn::IfThenElse(hn::RebindMask(du, hn::IsNaN(cb_f)),
                                  hn::Or(cb, hn::Set(du, bnb::kQuietBit)), absmax_nan);
  return hn::IfThenElse(hn::RebindMask(du, hn::IsNaN(p)), nan, hn::BitCast(du, p));
}

// One chunk: 2N elements from N packed bytes at `packed` (N = Lanes(BnbDU)),
// starting at an even element.
template <BnbOut kOut, bool kMayBeNan, typename TOut>
HWY_INLINE void Bnb4Chunk(const uint8_t* HWY_RESTRICT packed,
                          BnbPlaneVec p0, BnbPlaneVec p1, BnbPlaneVec p2, BnbPlaneVec p3,
                          hn::Vec<BnbDU> absmax, hn::Vec<BnbDU> absmax_nan,
                          TOut* HWY_RESTRICT out) {
  const BnbDU du;
  const hn::Rebind<uint8_t, BnbDU> d8;
  const auto bytes = hn::PromoteTo(du, hn::LoadU(d8, packed));
  hn::Vec<BnbDU> nib_a, nib_b;
  if constexpr (kOut == BnbOut::kF32) {
    // Nibbles in element order as u16 lanes, widened in two halves.
    const hn::Repartition<uint16_t, BnbDU> d16;
    const hn::Half<decltype(d16)> dh;
    const auto pairs = hn::BitCast(
        d16, hn::Or(hn::ShiftRight<4>(bytes), hn::ShiftLeft<16>(hn::And(bytes, hn::Set(du, 15u)))));
    nib_a = hn::PromoteTo(du, hn::LowerHalf(dh, pairs));
    nib_b = hn::PromoteTo(du, hn::UpperHalf(dh, pairs));
  } else {
    nib_a = hn::ShiftRight<4>(bytes);
    nib_b = hn::And(bytes, hn::Set(du, 15u));
  }
  const auto a = BnbScale<kMayBeNan>(BnbLookup(du, nib_a, p0, p1, p2, p3), absmax, absmax_nan);
  const auto b = BnbScale<kMayBeNan>(BnbLookup(du, nib_b, p0, p1, p2, p3), absmax, absmax_nan);
  BnbStore<kOut, kMayBeNan>(a, b, out);
}

// Elements [e, stop) of one block, e < stop, all sharing `absmax_bits`.
// Whole chunks are read in place; a chunk that would start at an odd
// element or run past `stop` goes through zero-padded copies.
template <BnbOut kOut, bool kMayBeNan, typename TOut>
HWY_INLINE void Bnb4BlockRun(const uint8_t* HWY_RESTRICT packed,
                             BnbPlaneVec p0, BnbPlaneVec p1, BnbPlaneVec p2,
                             BnbPlaneVec p3, uint32_t absmax_bits, size_t e, size_t stop,
                             TOut* HWY_RESTRICT out) {
  const BnbDU du;
  const size_t chunk = 2 * hn::Lanes(du);
  const auto absmax = hn::Set(du, absmax_bits);
  const auto absmax_nan = hn::Set(
      du, bnb::IsNanBits(absmax_bits) ? (absmax_bits | bnb::kQuietBit) : bnb::kInvalidNan);
  constexpr size_t kMaxChunk = 2 * HWY_MAX_BYTES / sizeof(uint32_t);
  while (e < stop) {
    const size_t start = e & ~size_t{1};
    if (e == start && start + chunk <= stop) {
      for (; e + chunk <= stop; e += chunk) {
        Bnb4Chunk<kOut, kMayBeNan>(packed + e / 2, p0, p1, p2, p3, absmax, absmax_nan, out);
        out += chunk;
      }
      continue;
    }
    const size_t n = std::min(stop, start + chunk) - start;
    HWY_ALIGN uint8_t byte_tail[kMaxChunk / 2] = {};
    HWY_ALIGN TOut out_tail[kMaxChunk];
    std::memcpy(byte_tail, packed + start / 2, (n + 1) / 2);
    Bnb4Chunk<kOut, kMayBeNan>(byte_tail, p0, p1, p2, p3, absmax, absmax_nan, out_tail);
    std::memcpy(out, out_tail + (e - start), (n - (e - start)) * sizeof(TOut));
    out += n - (e - start);
    e = start + n;
  }
}

template <BnbOut kOut, typename TOut>
HWY_INLINE void Bnb4Vector(const bnb::Bnb4View& t, size_t begin, size_t end,
                           TOut* HWY_RESTRICT out) {
  const BnbDU du;
  const hn::Repartition<uint8_t, BnbDU> d8;
  BnbPlanes tables;
  BnbMakePlanes(t.quant_map, tables);
  const auto p0 = hn::LoadDup128(d8, tables.bytes[0]);
  const auto p1 = hn::LoadDup128(d8, tables.bytes[1]);
  const auto p2 = hn::LoadDup128(d8, tables.bytes[2]);
  const auto p3 = hn::LoadDup128(d8, tables.bytes[3]);
  (void)du;
  size_t e = begin;
  while (e < end) {
    const size_t block = e / t.block_size;
    const size_t stop = std::min(end, (block + 1) * t.block_size);
    const uint32_t absmax = bnb::AbsmaxBits(t, block);
    // A finite codebook times a finite absmax never makes a NaN.
    if (HWY_LIKELY(tables.finite && bnb::IsFiniteBits(absmax))) {
      Bnb4BlockRun<kOut, false>(t.packed, p0, p1, p2, p3, absmax, e, stop, out + (e - begin));
    } else {
      Bnb4BlockRun<kOut, true>(t.packed, p0, p1, p2, p3, absmax, e, stop, out + (e - begin));
    }
    e = stop;
  }
}

// ---- INT8 ----

// 2N elements from 2N int8 weights, scaled by `scb` then by f32(1/127), each
// one Mul in bitsandbytes' order. BF16/F16 read the weights as i16 pairs
// (even element = low half of a u32 lane, odd = high half) to match
// BnbStore's layout; F32 widens two runs of N.
template <BnbOut kOut, bool kMayBeNan, typename TOut>
HWY_INLINE void Int8Chunk(const uint8_t* HWY_RESTRICT weight, hn::Vec<BnbDU> scb,
                          hn::Vec<BnbDU> nan, TOut* HWY_RESTRICT out) {
  const BnbDU du;
  const hn::RebindToSigned<BnbDU> di;
  const hn::RebindToFloat<BnbDU> df;
  const auto* w = reinterpret_cast<const int8_t*>(weight);
  hn::Vec<decltype(di)> wa, wb;
  if constexpr (kOut == BnbOut::kF32) {
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
  const auto scale = hn::BitCast(df, scb);
  const auto inv127 = hn::BitCast(df, hn::Set(du, bnb::kInv127Bits));
  const auto value = [&](hn::Vec<decltype(di)> q) {
    const auto r = hn::BitCast(du, hn::Mul(hn::Mul(hn::ConvertTo(df, q), scale), inv127));
    if constexpr (!kMayBeNan) return r;
    return hn::IfThenElse(hn::RebindMask(du, hn::IsNaN(hn::BitCast(df, r))), nan, r);
  };
  BnbStore<kOut, kMayBeNan>(value(wa), value(wb), out);
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
    const auto nan = hn::Set(
        du, bnb::IsNanBits(scb_bits) ? (scb_bits | bnb::kQuietBit) : bnb::kInvalidNan);
    const bool finite = bnb::IsFiniteBits(scb_bits);
    size_t c = 0;
    if (HWY_LIKELY(finite)) {
      for (; c + chunk <= cols; c += chunk) Int8Chunk<kOut, false>(w + c, scale, nan, o + c);
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

// Elements [begin, end) of a validated 4-bit tensor into out[0, end - begin).
template <BnbOut kOut, typename TOut>
HWY_INLINE void DequantBnb4Kernel(void (*reference)(const bnb::Bnb4View&, size_t, size_t, TOut*),
                                  const bnb::Bnb4View& t, size_t begin, size_t end, TOut* out) {
#if HWY_TARGET == HWY_SCALAR
  reference(t, begin, end, out);
#else
  (void)reference;
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
  reference(weight, scb, rows, cols, out);
#else
  (void)reference;
  Int8Vector<kOut>(weight, scb, rows, cols, out);
#endif
}

}  // namespace HWY_NAMESPACE
}  // namespace amn
HWY_AFTER_NAMESPACE();

#endif  // AMN_KERNELS_BNB_INL_H_
