// Per-target compressed-tensors pack-quantized int4/int8 dequantization
// (amn/packed_int_dequant.h), Highway 1.0.3. Same bytes as
// kernels/ref/packed_int_ref.cc on every target; SCALAR runs the reference.
//
// A chunk is 2n elements of one row (n = u32 lanes). The codes are unpacked
// in element order into u16 lanes (int4: n bytes widened to u32 lanes,
// x | x << 12 puts the low nibble in the even u16 lane and the high nibble
// in the odd one; int8: 2n bytes widened to u16), the zero (or the
// 2^(bits-1) offset) subtracted as i16, and the difference split into two
// F32 vectors A and B in the layout of fp8_dequant-inl.h's StoreOut
// (LaneOf): elements [0, n) and [n, 2n) for F32 output (and F16 output
// where F16C converts, kElementOrder), even and odd elements for BF16 (and
// the other F16) output. Each takes one multiply by its scale, then
// the rounding to the scale dtype (compressed-tensors computes in it), then
// the output rounding; when the output type is the scale type the second
// rounding is the identity and is skipped. A group with a finite BF16
// scale in SplitBf16Product's range takes the product and the rounding to
// BF16 together, in floating point (PackedIntGroupChunks).
#if defined(AMN_KERNELS_PACKED_INT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef AMN_KERNELS_PACKED_INT_INL_H_
#undef AMN_KERNELS_PACKED_INT_INL_H_
#else
#define AMN_KERNELS_PACKED_INT_INL_H_
#endif

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "amn/elem_type.h"
#include "hwy/highway.h"
#include "kernels/kernel_args.h"
#include "kernels/int4_byte_table-inl.h"
#include "kernels/packed_int_store-inl.h"
#include "kernels/ref/packed_int_ref.h"
#include "kernels/ref/packed_words.h"

HWY_BEFORE_NAMESPACE();
namespace amn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR

// 2n unsigned codes at `bytes`, in element order, as u16 lanes.
template <uint32_t kBits, class DU>
HWY_INLINE hn::Vec<hn::Repartition<uint16_t, DU>> UnpackCodes(DU du,
                                                             const uint8_t* HWY_RESTRICT bytes) {
  const hn::Repartition<uint16_t, DU> d16;
  if constexpr (kBits == 4) {
    const auto x = hn::PromoteTo(du, hn::LoadU(hn::Rebind<uint8_t, DU>(), bytes));
    return hn::BitCast(d16, hn::And(hn::Or(x, hn::ShiftLeft<12>(x)), hn::Set(du, 0x000F000Fu)));
  } else {
    return hn::PromoteTo(d16, hn::LoadU(hn::Rebind<uint8_t, decltype(d16)>(), bytes));
  }
}

// F32 bits of a product rounded to the scale dtype and widened back.
template <ElemType kScale, bool kMayBeNan, class DU>
HWY_INLINE hn::Vec<DU> RoundToScaleLanes(DU du, hn::Vec<DU> x) {
  if constexpr (kScale == ElemType::kBf16) {
    const auto upper = kMayBeNan ? F32BitsToBf16Upper(du, x) : NonNanToBf16Upper(du, x);
    return hn::And(upper, hn::Set(du, 0xFFFF0000u));
  } else if constexpr (kScale == ElemType::kF16) {
    return F16BitsToF32Lanes(du, F32BitsToF16Lanes(du, x));
  } else {
    return x;
  }
}

template <DequantOut kOut, ElemType kScale>
constexpr bool kOutIsScaleType = (kOut == DequantOut::kBf16 && kScale == ElemType::kBf16) ||
                                 (kOut == DequantOut::kF16 && kScale == ElemType::kF16);

// F16 output where vcvtps2ph is exact (float_convert-inl.h): A and B hold
// elements [0, n) and [n, 2n) as for F32, and StoreF16Pair converts each
// straight to memory. The even/odd layout would cost a widening, a shift
// and a blend per chunk to put the two halves back together.
template <DequantOut kOut>
constexpr bool kElementOrder =
    kOut == DequantOut::kF32 || (kOut == DequantOut::kF16 && AMN_F16_HARDWARE_DEMOTE);

// F16 output stored by ToF16LowerInRange for a group of 8-bit codes that
// PackedIntF16InRange accepts: the targets without F16C where the integer
// rounding exists. Those chunks take the element order too (the store is
// one packssdw of A and B).
template <DequantOut kOut, uint32_t kBits>
constexpr bool kPackedF16InRange = kOut == DequantOut::kF16 && kBits == 8 && kF16InRangeStore;

// Whether every result of a group with unsigned zero `zero` and a finite
// `scale` (kScale's value, widened) is ±0 or has a magnitude in
// [2^-14, 2^16): the product fl((u - zero) * scale) with u in
// 0 .. 2^kBits - 1, an exact integer difference of magnitude at most
// max(|zero|, |2^kBits - 1 - zero|), passes F16InRangeProducts; a BF16
// scale then rounds it to BF16, monotonically, which keeps |scale| (itself
// a BF16) as the lower bound and keeps a product of at most 65280 (the
// largest BF16 below 2^16) below 2^16. (An F16 scale's rounding is the F16
// output's own, which the store does once.)
template <ElemType kScale, uint32_t kBits>
HWY_INLINE bool PackedIntF16InRange(int16_t zero, float scale) {
  constexpr int32_t kMaxCode = (1 << kBits) - 1;
  const auto max_abs_diff = static_cast<float>(
      std::max(std::abs(int32_t{zero}), std::abs(kMaxCode - int32_t{zero})));
  if (!F16InRangeProducts(scale, max_abs_diff)) return false;
  return kScale != ElemType::kBf16 || max_abs_diff * std::fabs(scale) <= 65280.0f;
}

// Lane of A ++ B that holds element k of a chunk.
template <DequantOut kOut>
HWY_INLINE size_t ChunkLaneOf(size_t k, size_t n) {
  return kElementOrder<kOut> ? k : LaneOf<kOut>(k, n);
}

// The i32 differences code - zero of a chunk's elements: [0, n) and [n, 2n)
// when kOrder (kElementOrder, or an in-range F16 chunk), else the even and
// odd elements.
template <bool kOrder, uint32_t kBits, class DI>
HWY_INLINE void ChunkDiffs(DI di, const uint8_t* HWY_RESTRICT bytes,
                           hn::Vec<hn::Repartition<int16_t, DI>> zero, hn::Vec<DI>& a,
                           hn::Vec<DI>& b) {
  const hn::RebindToUnsigned<DI> du;
  const hn::Repartition<int16_t, DI> di16;
  if constexpr (kBits == 8 && kOrder) {
    // Each half widened straight from memory (vpmovzxbd on AVX2), not
    // widened to u16, subtracted and split (one instruction fewer per chunk).
    const hn::Rebind<uint8_t, DI> d8;
    const auto zero32 = hn::PromoteTo(di, hn::LowerHalf(hn::Half<decltype(di16)>(), zero));
    a = hn::Sub(hn::BitCast(di, hn::PromoteTo(du, hn::LoadU(d8, bytes))), zero32);
    b = hn::Sub(hn::BitCast(di, hn::PromoteTo(du, hn::LoadU(d8, bytes + hn::Lanes(di)))),
                hn::PromoteTo(di, hn::UpperHalf(hn::Half<decltype(di16)>(), zero)));
    return;
  }
  const auto diff = hn::Sub(hn::BitCast(di16, UnpackCodes<kBits>(du, bytes)), zero);
  if constexpr (kOrder) {
    const hn::Half<decltype(di16)> dh;
    a = hn::PromoteTo(di, hn::LowerHalf(dh, diff));
    b = hn::PromoteTo(di, hn::UpperHalf(dh, diff));
  } else {
    const auto pairs = hn::BitCast(di, diff);
    a = hn::ShiftRight<16>(hn::ShiftLeft<16>(pairs));  // even elements, sign-extended
    b = hn::ShiftRight<16>(pairs);                     // odd elements
  }
}

// A BF16 scale whose exponent field is at most kSplitMaxExponent lets
// SplitBf16Product round diff * scale to BF16 with floating-point
// arithmetic (4 instructions per vector, against a multiply and 5 integer
// instructions for NonNanToBf16Upper and the mask). Above it diff * scale *
// 65537 overflows for some |diff| <= 255; up to it the result is the
// reference's round to nearest even for every |diff| <= 255 and every such
// scale, ties and subnormal products included (exhaustive test
// PackedIntTest.Bf16SplitRoundingExhaustive).
inline constexpr uint32_t kSplitMaxExponent = 230;

inline bool Bf16SplitSafe(float scale) {
  return ((std::bit_cast<uint32_t>(scale) >> 23) & 0xFF) <= kSplitMaxExponent;
}

// diff * scale rounded to 8 significant bits (Veltkamp's split with
// 2^16 + 1): scale_split = scale * 65537 is exact in F32 (8 + 17 bits), so
// c = diff * scale_split is fl(x * 65537) for the exact x = diff * scale,
// and c - (c - x) is x's upper 8 bits, rounded. Never fused
// (-ffp-contract=off), never reassociated (no -ffast-math).
template <class V>
HWY_INLINE V SplitBf16Product(V diff, V scale, V scale_split) {
  const auto x = hn::Mul(diff, scale);
  const auto c = hn::Mul(diff, scale_split);
  return hn::Sub(c, hn::Sub(c, x));
}

// Stores A and B, F32 bits of values that are exact BF16 (SplitBf16Product),
// as for a BF16 scale: BF16 output is their upper halves (no rounding), F16
// and F32 output as kOutIsScaleType's store (kInRange: ToF16LowerInRange's).
template <DequantOut kOut, bool kInRange, class DU, typename TOut>
HWY_INLINE void StoreBf16Exact(DU du, hn::Vec<DU> a, hn::Vec<DU> b, TOut* HWY_RESTRICT out) {
  if constexpr (kInRange) {
    ToF16LowerInRange::StorePair(du, a, b, out);
  } else if constexpr (kOut == DequantOut::kBf16) {
    const hn::Repartition<uint16_t, DU> d16;
    hn::StoreU(hn::OddEven(hn::BitCast(d16, b), hn::BitCast(d16, hn::ShiftRight<16>(a))), d16,
               out);
  } else if constexpr (kOut == DequantOut::kF16 && kElementOrder<kOut>) {
    StoreF16Pair(du, a, b, out);
  } else {
    StoreOut<kOut, false>(du, a, b, out);
  }
}

// One chunk of 2n elements: codes at `bytes`, zeros (element order) in
// `zero`, scales in the ChunkLaneOf layout (scale_a, scale_b). kSplit: a
// finite BF16 scale that Bf16SplitSafe accepts, with split_a, split_b its
// scale * 65537 (SplitBf16Product); unused otherwise. kInRange: a group
// that PackedIntF16InRange accepted, in element order, stored by
// ToF16LowerInRange. (Separate parameters: SVE vectors are sizeless and
// cannot be members of a struct.)
template <DequantOut kOut, ElemType kScale, uint32_t kBits, bool kMayBeNan, bool kSplit = false,
          bool kInRange = false, class DF, typename TOut>
HWY_INLINE void PackedIntChunk(DF df, const uint8_t* HWY_RESTRICT bytes,
                               hn::Vec<hn::Repartition<int16_t, DF>> zero, hn::Vec<DF> scale_a,
                               hn::Vec<DF> scale_b, hn::Vec<DF> split_a, hn::Vec<DF> split_b,
                               TOut* HWY_RESTRICT out) {
  const hn::RebindToUnsigned<DF> du;
  const hn::RebindToSigned<DF> di;
  static_assert(!kInRange || (kPackedF16InRange<kOut, kBits> && !kMayBeNan));
  hn::Vec<decltype(di)> a, b;
  ChunkDiffs<kElementOrder<kOut> || kInRange, kBits>(di, bytes, zero, a, b);
  if constexpr (kSplit) {
    static_assert(kScale == ElemType::kBf16 && !kMayBeNan);
    StoreBf16Exact<kOut, kInRange>(
        du, hn::BitCast(du, SplitBf16Product(hn::ConvertTo(df, a), scale_a, split_a)),
        hn::BitCast(du, SplitBf16Product(hn::ConvertTo(df, b), scale_b, split_b)), out);
    return;
  }
  const auto pa = hn::BitCast(du, ScaledProduct<kMayBeNan>(df, hn::ConvertTo(df, a), scale_a));
  const auto pb = hn::BitCast(du, ScaledProduct<kMayBeNan>(df, hn::ConvertTo(df, b), scale_b));
  if constexpr (kInRange && kOutIsScaleType<kOut, kScale>) {
    ToF16LowerInRange::StorePair(du, pa, pb, out);
  } else if constexpr (kInRange) {
    ToF16LowerInRange::StorePair(du, RoundToScaleLanes<kScale, false>(du, pa),
                                 RoundToScaleLanes<kScale, false>(du, pb), out);
  } else if constexpr (kOut == DequantOut::kF16 && kElementOrder<kOut>) {
    if constexpr (kOutIsScaleType<kOut, kScale>) {
      StoreF16Pair(du, pa, pb, out);
    } else {
      StoreF16Pair(du, RoundToScaleLanes<kScale, kMayBeNan>(du, pa),
                   RoundToScaleLanes<kScale, kMayBeNan>(du, pb), out);
    }
  } else if constexpr (kOutIsScaleType<kOut, kScale>) {
    StoreOut<kOut, kMayBeNan>(du, pa, pb, out);
  } else {
    StoreOut<kOut, kMayBeNan>(du, RoundToScaleLanes<kScale, kMayBeNan>(du, pa),
                              RoundToScaleLanes<kScale, kMayBeNan>(du, pb), out);
  }
}

// The byte of element e's code (a whole-byte offset without e * kBits / 8,
// whose multiply could overflow and which GCC keeps as a shift and a mask).
template <uint32_t kBits>
HWY_INLINE const uint8_t* CodesAt(const uint8_t* codes, size_t e) {
  return codes + e / (8 / kBits);
}

// Where one row finds its scales and zeros.
struct PackedIntRowParams {
  const uint8_t* codes;  // the row's packed words
  size_t cols;
  size_t group_size;
  const float* group_scale;   // [groups] widened scales of this row
  const int16_t* group_zero;  // [groups] unsigned zero points (or the offset),
                              // -128 .. 383 (an i8 zero point plus the offset)
};

// A chunk whose elements [e, e + 2n) span more than one group (or run past
// the row: those lanes take the last group) gets per-lane zeros and scales.
template <DequantOut kOut, ElemType kScale, uint32_t kBits, bool kMayBeNan, typename TOut>
HWY_INLINE void PackedIntChunkLanes(const PackedIntRowParams& row, const uint8_t* bytes, size_t e,
                                    TOut* HWY_RESTRICT out) {
  const hn::ScalableTag<float> df;
  const hn::Repartition<int16_t, decltype(df)> di16;
  const size_t n = hn::Lanes(df);
  constexpr size_t kMaxChunk = HWY_MAX_BYTES / sizeof(uint16_t);
  HWY_ALIGN float lane_scale[kMaxChunk];
  HWY_ALIGN int16_t lane_zero[kMaxChunk];
  const size_t last_group = (row.cols - 1) / row.group_size;
  for (size_t k = 0; k < 2 * n; ++k) {
    const size_t g = std::min((e + k) / row.group_size, last_group);
    lane_scale[ChunkLaneOf<kOut>(k, n)] = row.group_scale[g];
    lane_zero[k] = row.group_zero[g];
  }
  const auto scale_a = hn::Load(df, lane_scale);
  const auto scale_b = hn::Load(df, lane_scale + n);
  PackedIntChunk<kOut, kScale, kBits, kMayBeNan>(df, bytes, hn::Load(di16, lane_zero), scale_a,
                                                 scale_b, scale_a, scale_b, out);
}

// x86 from SSSE3 up, and NEON (byte tables only): an int4 group has only 16
// possible outputs, so they are computed once per group (the same vector
// formula as PackedIntChunk, on codes 0..15) and each chunk of codes is
// looked up: with byte tables (Int4ByteTableRow) for BF16/F16 output and
// for F32 output of a BF16 scale (AMN_INT4_F32_BYTE_TABLES), with lane
// permutes (CodeTable16, AVX2/AVX-512 only) for the other F32 outputs and
// for groups the byte tables skip.
#if AMN_BYTE_TABLES

// Entry u: the output bits for code u (BF16 in the upper half of the lane,
// F16 in the lower half, F32 whole).
template <DequantOut kOut, ElemType kScale, bool kMayBeNan>
struct Int4Entries {
  int16_t zero;
  float scale;
  template <class DU>
  HWY_INLINE hn::Vec<DU> operator()(DU du, hn::Vec<hn::RebindToSigned<DU>> codes) const {
    const hn::RebindToSigned<DU> di;
    const hn::RebindToFloat<DU> df;
    const auto diff = hn::Sub(codes, hn::Set(di, zero));
    auto value = hn::BitCast(
        du, ScaledProduct<kMayBeNan>(df, hn::ConvertTo(df, diff), hn::Set(df, scale)));
    if constexpr (!kOutIsScaleType<kOut, kScale>) {
      value = RoundToScaleLanes<kScale, kMayBeNan>(du, value);
    }
    return EncodeOutLanes<kOut, kMayBeNan>(du, value);
  }
};

#if HWY_TARGET <= HWY_AVX2
template <DequantOut kOut, ElemType kScale, bool kMayBeNan, class DU>
HWY_INLINE CodeTable16<hn::Vec<DU>> Int4GroupTable(DU du, int16_t zero, float scale) {
  return MakeCodeTable16(du, Int4Entries<kOut, kScale, kMayBeNan>{zero, scale});
}

// 2n codes (n bytes) of one group through its table.
template <DequantOut kOut, class DU, typename TOut>
HWY_INLINE void Int4TableChunk(DU du, CodeTable16<hn::Vec<DU>> table,
                               const uint8_t* HWY_RESTRICT bytes, TOut* HWY_RESTRICT out) {
  const hn::Repartition<uint16_t, DU> d16;
  const auto x = hn::PromoteTo(du, hn::LoadU(hn::Rebind<uint8_t, DU>(), bytes));
  if constexpr (kOut == DequantOut::kF32) {
    // Codes in element order as u16 lanes, widened to two index vectors.
    const auto codes = hn::BitCast(
        d16, hn::And(hn::Or(x, hn::ShiftLeft<12>(x)), hn::Set(du, 0x000F000Fu)));
    const hn::Half<decltype(d16)> dh;
    const hn::RebindToFloat<DU> df;
    hn::StoreU(hn::BitCast(df, LookupCodeTable16(du, table, hn::PromoteTo(du, hn::LowerHalf(dh, codes)))),
               df, out);
    hn::StoreU(hn::BitCast(df, LookupCodeTable16(du, table, hn::PromoteTo(du, hn::UpperHalf(dh, codes)))),
               df, out + hn::Lanes(du));
  } else {
    // Even elements are the low nibbles, odd ones the high nibbles.
    const auto even = LookupCodeTable16(du, table, hn::And(x, hn::Set(du, 0xFu)));
    const auto odd = LookupCodeTable16(du, table, hn::ShiftRight<4>(x));
    if constexpr (kOut == DequantOut::kBf16) {
      hn::StoreU(hn::OddEven(hn::BitCast(d16, odd), hn::BitCast(d16, hn::ShiftRight<16>(even))),
                 d16, out);
    } else {
      hn::StoreU(hn::OddEven(hn::BitCast(d16, hn::ShiftLeft<16>(odd)), hn::BitCast(d16, even)),
                 d16, out);
    }
  }
}

// Whole chunks of a row whose groups are whole chunks; returns the elements
// done (the rest goes through PackedIntRow's general path).
template <DequantOut kOut, ElemType kScale, bool kMayBeNan, typename TOut>
HWY_INLINE size_t Int4TableRow(const PackedIntRowParams& row, TOut* HWY_RESTRICT out) {
  const hn::ScalableTag<uint32_t> du;
  const size_t chunk = 2 * hn::Lanes(du);
  if (row.group_size % chunk != 0) return 0;
  const size_t done = row.cols / chunk * chunk;
  for (size_t g0 = 0, g = 0; g0 < done; g0 += row.group_size, ++g) {
    const auto table =
        Int4GroupTable<kOut, kScale, kMayBeNan>(du, row.group_zero[g], row.group_scale[g]);
    const size_t g1 = std::min(done, g0 + row.group_size);
    for (size_t e = g0; e < g1; e += chunk) {
      Int4TableChunk<kOut>(du, table, row.codes + e / 2, out + e);
    }
  }
  return done;
}
#endif  // HWY_TARGET <= HWY_AVX2

// BF16/F16 output: the group's 16 results as byte tables
// (kernels/int4_byte_table-inl.h) replace, per output, the whole formula on
// SSSE3/SSE4 (with the software F16 rounding: no F16C there) and the
// CodeTable16 permutes on AVX2 (two vpermd, a test and a blend per 8
// outputs) and AVX-512 (a vpermd per 16). A chunk of codes takes the
// nibble split (3 instructions), one unpack to element order, two lookups
// and two unpacks back to 16-bit lanes.

// Codes per Int4ByteTableChunk: 32 on SSSE3/SSE4 and AVX2, 64 on AVX-512.
inline constexpr size_t kInt4ByteChunk = HWY_MAX(32, HWY_MAX_BYTES);

// kInt4ByteChunk codes (kInt4ByteChunk / 2 bytes) of one group through its
// byte tables.
template <class D8>
HWY_INLINE void Int4ByteTableChunk(D8 d8, const Int4ByteTables<D8>& tables,
                                   const uint8_t* HWY_RESTRICT bytes, uint16_t* HWY_RESTRICT out) {
  const hn::Repartition<uint16_t, D8> d16;
  const auto mask = hn::Set(d8, uint8_t{0x0F});
#if HWY_TARGET <= HWY_AVX2
  // Words w0.. (8 codes each) placed so that block j holds w_j in its
  // first 4 bytes and w_{B+j} in the next 4 (B blocks): the in-block unpack
  // below then gives block j the codes of outputs 8j..8j+7 and
  // 8(B+j)..8(B+j)+7, so the first store gets outputs 0..8B-1 and the
  // second the rest, in order.
  const hn::Repartition<uint32_t, D8> du;
  const hn::Half<decltype(du)> dh;
#if HWY_TARGET <= HWY_AVX3
  alignas(64) static constexpr int32_t kWords[16] = {0, 4, 0, 0, 1, 5, 0, 0,
                                                     2, 6, 0, 0, 3, 7, 0, 0};
#else
  alignas(32) static constexpr int32_t kWords[8] = {0, 2, 0, 0, 1, 3, 0, 0};
#endif
  const auto loaded = hn::BitCast(dh, hn::LoadU(hn::Repartition<uint8_t, decltype(dh)>(), bytes));
  const auto x = hn::BitCast(d8, hn::TableLookupLanes(hn::ZeroExtendVector(du, loaded),
                                                      hn::SetTableIndices(du, kWords)));
  const auto low_nibbles = hn::And(x, mask);
  const auto high_nibbles = hn::And(hn::BitCast(d8, hn::ShiftRight<4>(hn::BitCast(d16, x))), mask);
  StoreInt4ByteLookups(d8, tables, hn::InterleaveLower(d8, low_nibbles, high_nibbles), out);
#else
  // One block: 16 bytes are 32 codes, unpacked into two vectors of 16.
  const auto x = hn::LoadU(d8, bytes);
  const auto low_nibbles = hn::And(x, mask);
  const auto high_nibbles = hn::And(hn::BitCast(d8, hn::ShiftRight<4>(hn::BitCast(d16, x))), mask);
  StoreInt4ByteLookups(d8, tables, hn::InterleaveLower(d8, low_nibbles, high_nibbles), out);
  StoreInt4ByteLookups(d8, tables, hn::InterleaveUpper(d8, low_nibbles, high_nibbles), out + 16);
#endif
}

// F32 output of int4 groups with a BF16 scale: every result is a BF16
// widened (Int4Entries rounds it to BF16 and clears the low half,
// RoundToScaleLanes), so the groups take the BF16 byte tables and each
// output's two bytes go to the upper half of its F32 lane, the lower half
// zero. On AVX2 that replaces CodeTable16's two permutes, test and blend per
// 8 outputs, on SSSE3/SSE4 and NEON the formula's multiply and software BF16
// rounding per element: 1.7x faster cache-resident on AVX2, 1.9-2.3x on
// SSE4/SSSE3 (docs/schemes/compressed-tensors-int.md, "F32 output through
// the BF16 byte tables"). AVX-512 keeps CodeTable16 (one permute per 16
// outputs; its 64-code chunks would need a 16-bit permute across blocks).
#undef AMN_INT4_F32_BYTE_TABLES
#if HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_SSE4 || HWY_TARGET == HWY_SSSE3 || \
    HWY_TARGET == HWY_NEON
#define AMN_INT4_F32_BYTE_TABLES 1
#else
#define AMN_INT4_F32_BYTE_TABLES 0
#endif

#if AMN_INT4_F32_BYTE_TABLES
// kInt4ByteChunk (32) codes, 16 bytes, of one group as F32 (the F32
// counterpart of Int4ByteTableChunk).
template <class D8>
HWY_INLINE void Int4ByteTableChunk(D8 d8, const Int4ByteTables<D8>& tables,
                                   const uint8_t* HWY_RESTRICT bytes, float* HWY_RESTRICT out) {
  static_assert(kInt4ByteChunk == 32);
  const hn::Repartition<uint16_t, D8> d16;
#if HWY_TARGET == HWY_AVX2
  // Block 0 needs outputs 0-3, 8-11, 16-19, 24-27 (the bytes 0, 1, 4, 5, 8,
  // 9, 12, 13, two codes each), block 1 the other four quads: one byte
  // shuffle of the 16 bytes repeated in both blocks; one store call.
  alignas(32) static constexpr uint8_t kPick[32] = {
      0, 1, 4, 5, 8,  9,  12, 13, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
      2, 3, 6, 7, 10, 11, 14, 15, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80};
  const auto x = hn::TableLookupBytes(hn::LoadDup128(d8, bytes), hn::Load(d8, kPick));
#else
  // One block: the codes of bytes 0..7, then those of bytes 8..15, in order.
  const auto x = hn::LoadU(d8, bytes);
#endif
  const auto mask = hn::Set(d8, uint8_t{0x0F});
  const auto low = hn::And(x, mask);
  const auto high = hn::And(hn::BitCast(d8, hn::ShiftRight<4>(hn::BitCast(d16, x))), mask);
  StoreInt4ByteLookups(d8, tables, hn::InterleaveLower(d8, low, high), out);
#if HWY_TARGET != HWY_AVX2
  StoreInt4ByteLookups(d8, tables, hn::InterleaveUpper(d8, low, high), out + 16);
#endif
}
#endif  // AMN_INT4_F32_BYTE_TABLES

// Which outputs take Int4ByteTableRow: BF16 and F16, and F32 of a BF16
// scale where AMN_INT4_F32_BYTE_TABLES.
template <DequantOut kOut, ElemType kScale>
constexpr bool kInt4ByteTableOut = kOut != DequantOut::kF32 ||
                                   (AMN_INT4_F32_BYTE_TABLES && kScale == ElemType::kBf16);

// Whole chunks of a row whose groups are whole chunks; returns the elements
// done (0 when the groups are not multiples of kInt4ByteChunk).
template <DequantOut kOut, ElemType kScale, bool kMayBeNan, typename TOut>
HWY_INLINE size_t Int4ByteTableRow(const PackedIntRowParams& row, TOut* HWY_RESTRICT out) {
  static_assert(kInt4ByteTableOut<kOut, kScale>);
  const hn::ScalableTag<uint8_t> d8;
  if (row.group_size % kInt4ByteChunk != 0) return 0;
  const size_t done = row.cols / kInt4ByteChunk * kInt4ByteChunk;
  for (size_t g0 = 0, g = 0; g0 < done; g0 += row.group_size, ++g) {
    // F32 of a BF16 scale: the BF16 results, widened when stored.
    const auto tables = MakeInt4ByteTables<kOut != DequantOut::kF16>(
        d8, Int4Entries<kOut, kScale, kMayBeNan>{row.group_zero[g], row.group_scale[g]});
    const size_t g1 = std::min(done, g0 + row.group_size);
    for (size_t e = g0; e < g1; e += kInt4ByteChunk) {
      Int4ByteTableChunk(d8, tables, row.codes + e / 2, out + e);
    }
  }
  return done;
}
#endif  // AMN_BYTE_TABLES

// Whether PackedIntGroupChunks runs two chunks per loop iteration: the loop
// control is 4 of about 22 instructions per chunk on AVX2. Three sets of
// interleaved rounds on 2026-11-26 (docs/performance/bounds.md, "`ct_int8` on
// AVX2"): AVX2 int8 BF16 7-10 % faster, F16 and F32 1-3 %, in every set;
// on AVX3/AVX3_DL/SSE4/SSSE3 the sets disagreed (-5 % to +6 %), so those
// keep one chunk per iteration.
inline constexpr bool kTwoChunksPerIteration = HWY_TARGET == HWY_AVX2;

// The whole chunks of group g from element e up to group_end, with its
// broadcast zero and scale; returns the element after the last chunk.
template <DequantOut kOut, ElemType kScale, uint32_t kBits, bool kMayBeNan, bool kSplit,
          bool kInRange = false, typename TOut>
HWY_INLINE size_t PackedIntGroupChunks(const PackedIntRowParams& row, size_t g, size_t e,
                                       size_t group_end, TOut* HWY_RESTRICT out) {
  const hn::ScalableTag<float> df;
  const hn::Repartition<int16_t, decltype(df)> di16;
  const size_t chunk = 2 * hn::Lanes(df);
  const auto scale = hn::Set(df, row.group_scale[g]);
  const auto split = hn::Set(df, kSplit ? row.group_scale[g] * 65537.0f : 0.0f);
  const auto zero = hn::Set(di16, row.group_zero[g]);
  const auto one_chunk = [&](size_t at) {
    PackedIntChunk<kOut, kScale, kBits, kMayBeNan, kSplit, kInRange>(
        df, CodesAt<kBits>(row.codes, at), zero, scale, scale, split, split, out + at);
  };
  if constexpr (kTwoChunksPerIteration) {
    for (; e + 2 * chunk <= group_end; e += 2 * chunk) {
      one_chunk(e);
      one_chunk(e + chunk);
    }
  }
  for (; e + chunk <= group_end; e += chunk) one_chunk(e);
  return e;
}

// One row of `cols` outputs; the last partial chunk from zero-padded copies.
template <DequantOut kOut, ElemType kScale, uint32_t kBits, bool kMayBeNan, typename TOut>
HWY_INLINE void PackedIntRow(const PackedIntRowParams& row, TOut* HWY_RESTRICT out) {
  const hn::ScalableTag<float> df;
  const size_t chunk = 2 * hn::Lanes(df);
  size_t e = 0;
#if AMN_BYTE_TABLES
  if constexpr (kBits == 4 && kInt4ByteTableOut<kOut, kScale>) {
    e = Int4ByteTableRow<kOut, kScale, kMayBeNan>(row, out);
  }
#endif
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
  if constexpr (kBits == 4) {
    if (e == 0) e = Int4TableRow<kOut, kScale, kMayBeNan>(row, out);
  }
#endif
  // One division per group, not per chunk (a 64-bit div costs more than a
  // whole chunk): the whole chunks inside group g run with its broadcast
  // zero and scale, a chunk across a group boundary takes per-lane ones.
  while (e + chunk <= row.cols) {
    const size_t g = e / row.group_size;
    const size_t group_end = std::min(row.cols, (g + 1) * row.group_size);
    if (e + chunk <= group_end) {
      if constexpr (kPackedF16InRange<kOut, kBits> && !kMayBeNan) {
        if (PackedIntF16InRange<kScale, kBits>(row.group_zero[g], row.group_scale[g])) {
          if constexpr (kScale == ElemType::kBf16) {
            if (Bf16SplitSafe(row.group_scale[g])) {
              e = PackedIntGroupChunks<kOut, kScale, kBits, false, true, true>(row, g, e,
                                                                               group_end, out);
              continue;
            }
          }
          e = PackedIntGroupChunks<kOut, kScale, kBits, false, false, true>(row, g, e, group_end,
                                                                            out);
          continue;
        }
      }
      if constexpr (kScale == ElemType::kBf16 && !kMayBeNan) {
        if (Bf16SplitSafe(row.group_scale[g])) {
          e = PackedIntGroupChunks<kOut, kScale, kBits, kMayBeNan, true>(row, g, e, group_end, out);
          continue;
        }
      }
      e = PackedIntGroupChunks<kOut, kScale, kBits, kMayBeNan, false>(row, g, e, group_end, out);
    } else {
      PackedIntChunkLanes<kOut, kScale, kBits, kMayBeNan>(row, CodesAt<kBits>(row.codes, e), e,
                                                          out + e);
      e += chunk;
    }
  }
  if (e == row.cols) return;
  const size_t rest = row.cols - e;
  constexpr size_t kMaxChunk = HWY_MAX_BYTES / sizeof(uint16_t);
  HWY_ALIGN uint8_t bytes_tail[kMaxChunk] = {};
  HWY_ALIGN TOut out_tail[kMaxChunk];
  std::memcpy(bytes_tail, CodesAt<kBits>(row.codes, e), (rest * kBits + 7) / 8);
  PackedIntChunkLanes<kOut, kScale, kBits, kMayBeNan>(row, bytes_tail, e, out_tail);
  std::memcpy(out + e, out_tail, rest * sizeof(TOut));
}

// Most groups a row may have for the stack tables; rows with more groups
// (group_size < cols / kMaxRowGroups) take the reference.
inline constexpr size_t kMaxRowGroups = 1024;

// F32 bits of scale `index` (ref::ScaleF32Bits with the type fixed, so the
// per-group loop has no switch and, for BF16, no out-of-line call).
template <ElemType kScale>
HWY_INLINE uint32_t ScaleBits(const uint8_t* scales, size_t index) {
  if constexpr (kScale == ElemType::kF32) {
    return ref::LoadLe32(scales + 4 * index);
  } else if constexpr (kScale == ElemType::kBf16) {
    return static_cast<uint32_t>(ref::LoadLe16(scales + 2 * index)) << 16;  // exact widening
  } else {
    return ref::F16ToF32Bits(ref::LoadLe16(scales + 2 * index));
  }
}

// Row r's unsigned zero points, as ref::PackedIntUnsignedZero but with its
// divisions (groups, r / per_word, r % per_word: up to three 64-bit divs
// per group, more than the group's lookups on AVX-512) done once per row.
template <uint32_t kBits>
HWY_INLINE void RowZeros(const ref::PackedIntMatrix& m, size_t r, size_t groups,
                         int16_t* HWY_RESTRICT zero) {
  constexpr int16_t kOffset = 1 << (kBits - 1);
  if (m.zero_points == nullptr) {
    std::fill(zero, zero + groups, kOffset);
  } else if (m.zero_points_i8) {
    const uint8_t* row = m.zero_points + r * groups;
    for (size_t g = 0; g < groups; ++g) {
      zero[g] = static_cast<int16_t>(static_cast<int8_t>(row[g]) + kOffset);
    }
  } else {
    constexpr uint32_t kPerWord = 32 / kBits;
    constexpr uint32_t kMask = (1u << kBits) - 1;
    const uint8_t* words = m.zero_points + 4 * (r / kPerWord) * groups;
    const uint32_t shift = kBits * (r % kPerWord);
    for (size_t g = 0; g < groups; ++g) {
      zero[g] = static_cast<int16_t>((ref::LoadLe32(words + 4 * g) >> shift) & kMask);
    }
  }
}

template <DequantOut kOut, ElemType kScale, uint32_t kBits, typename TOut>
HWY_INLINE void PackedIntRows(const ref::PackedIntMatrix& m, size_t rb, size_t re,
                              TOut* HWY_RESTRICT out) {
  constexpr uint32_t kPerWord = 32 / kBits;
  const size_t words = (m.cols + kPerWord - 1) / kPerWord;
  const size_t groups = m.cols / m.group_size;
  float group_scale[kMaxRowGroups];
  int16_t group_zero[kMaxRowGroups];
  for (size_t r = rb; r < re; ++r) {
    bool finite = true;
    for (size_t g = 0; g < groups; ++g) {
      const uint32_t bits = ScaleBits<kScale>(m.scales, m.tensor_scale ? 0 : r * groups + g);
      finite = finite && !IsNonFiniteBits(bits);
      group_scale[g] = std::bit_cast<float>(bits);
    }
    RowZeros<kBits>(m, r, groups, group_zero);
    const PackedIntRowParams row{m.weight_packed + 4 * r * words, m.cols, m.group_size,
                                 group_scale, group_zero};
    TOut* row_out = out + (r - rb) * m.cols;
    if (finite) {
      PackedIntRow<kOut, kScale, kBits, false>(row, row_out);
    } else {
      PackedIntRow<kOut, kScale, kBits, true>(row, row_out);
    }
  }
}

template <DequantOut kOut, ElemType kScale, typename TOut>
HWY_INLINE void PackedIntRowsForBits(const ref::PackedIntMatrix& m, size_t rb, size_t re,
                                     TOut* out) {
  if (m.bits == 4) {
    PackedIntRows<kOut, kScale, 4>(m, rb, re, out);
  } else {
    PackedIntRows<kOut, kScale, 8>(m, rb, re, out);
  }
}

#endif  // HWY_TARGET != HWY_SCALAR

// Rows [row_begin, row_end) of the [rows, cols] weight, as
// ref::DequantPackedIntRows (layout, formula, NaN rule:
// kernels/ref/packed_int_ref.h).
template <DequantOut kOut, typename TOut>
HWY_INLINE void DequantPackedIntKernel(const ref::PackedIntMatrix& m, size_t row_begin,
                                       size_t row_end, TOut* out) {
#if HWY_TARGET == HWY_SCALAR
  ref::DequantPackedIntRows(m, row_begin, row_end, OutElemType<kOut>(), out);
#else
  if (row_begin >= row_end || m.cols == 0) return;
  if (m.cols / m.group_size > kMaxRowGroups) {
    ref::DequantPackedIntRows(m, row_begin, row_end, OutElemType<kOut>(), out);
    return;
  }
  switch (m.scale_type) {
    case ElemType::kBf16:
      PackedIntRowsForBits<kOut, ElemType::kBf16>(m, row_begin, row_end, out);
      break;
    case ElemType::kF16:
      PackedIntRowsForBits<kOut, ElemType::kF16>(m, row_begin, row_end, out);
      break;
    default:
      PackedIntRowsForBits<kOut, ElemType::kF32>(m, row_begin, row_end, out);
      break;
  }
#endif
}

// The PackedInt family (kernels/kernel_args.h): rows [begin, end).
HWY_INLINE void DecodePackedInt(const kernels::PackedIntArgs& a, size_t begin, size_t end,
                                ElemType out_type, void* out) {
  switch (out_type) {
    case ElemType::kF32:
      DequantPackedIntKernel<DequantOut::kF32>(a, begin, end, static_cast<float*>(out));
      break;
    case ElemType::kBf16:
      DequantPackedIntKernel<DequantOut::kBf16>(a, begin, end, static_cast<uint16_t*>(out));
      break;
    case ElemType::kF16:
      DequantPackedIntKernel<DequantOut::kF16>(a, begin, end, static_cast<uint16_t*>(out));
      break;
    default:
      break;
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace amn
HWY_AFTER_NAMESPACE();

#endif  // AMN_KERNELS_PACKED_INT_INL_H_
