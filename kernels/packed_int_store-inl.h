// Per-target helpers shared by the packed-integer dequant kernels (AWQ,
// compressed-tensors pack-quantized), Highway 1.0.3: the scale product with
// the NaN rule of kernels/ref/fp8_dequant_ref.h, the ScalarTail's output
// type, and the store of two F32 vectors as BF16/F16/F32.
#if defined(AMN_KERNELS_PACKED_INT_STORE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef AMN_KERNELS_PACKED_INT_STORE_INL_H_
#undef AMN_KERNELS_PACKED_INT_STORE_INL_H_
#else
#define AMN_KERNELS_PACKED_INT_STORE_INL_H_
#endif

#include <cstddef>
#include <cstdint>

#include "amn/elem_type.h"
#include "hwy/highway.h"
#include "kernels/float_convert-inl.h"
#include "kernels/fp8_dequant-inl.h"

HWY_BEFORE_NAMESPACE();
namespace amn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <DequantOut kOut>
constexpr ElemType OutElemType() {
  return kOut == DequantOut::kF32 ? ElemType::kF32
                                  : (kOut == DequantOut::kBf16 ? ElemType::kBf16 : ElemType::kF16);
}

// True when F32 bits are Inf or NaN: a table of such scales needs the NaN
// rule (an integer difference times a finite scale is never NaN).
inline bool IsNonFiniteBits(uint32_t bits) { return (bits & 0x7F800000u) == 0x7F800000u; }

#if HWY_TARGET != HWY_SCALAR

// diff * scale, one IEEE multiply (never fused). With kMayBeNan, a NaN
// product takes ProductNan's choice (the quieted scale, else 0xFFC00000),
// so it does not depend on the CPU's NaN propagation.
template <bool kMayBeNan, class DF>
HWY_INLINE hn::Vec<DF> ScaledProduct(DF df, hn::Vec<DF> diff, hn::Vec<DF> scale) {
  const auto product = hn::Mul(diff, scale);
  if constexpr (!kMayBeNan) {
    (void)df;
    return product;
  } else {
    return hn::IfThenElse(hn::IsNaN(product), ProductNan(df, scale), product);
  }
}

// Stores p0 (elements [0, n)) and p1 (elements [n, 2n)) as 2n outputs, with
// float_convert-inl.h's F32 -> BF16/F16 rounding: BF16 by
// StoreBf16RoundedPair, F16 by StoreF16Pair (vcvtps2ph stores where F16C is
// exact; without F16C, kMayBeNan = false drops the NaN select as for BF16).
template <DequantOut kOut, bool kMayBeNan, class DF, typename TOut>
HWY_INLINE void StorePair(DF df, hn::Vec<DF> p0, hn::Vec<DF> p1, TOut* HWY_RESTRICT out) {
  const hn::RebindToUnsigned<DF> du;
  if constexpr (kOut == DequantOut::kF32) {
    hn::StoreU(p0, df, out);
    hn::StoreU(p1, df, out + hn::Lanes(df));
  } else if constexpr (kOut == DequantOut::kBf16) {
    StoreBf16RoundedPair<kMayBeNan>(du, hn::BitCast(du, p0), hn::BitCast(du, p1), out);
  } else {
    StoreF16Pair<kMayBeNan>(du, hn::BitCast(du, p0), hn::BitCast(du, p1), out);
  }
}

// F32 bits (u32 lanes) as output bits in the lane: BF16 in the upper half,
// F16 in the lower half, F32 whole (the halves StorePair keeps).
template <DequantOut kOut, bool kMayBeNan, class DU>
HWY_INLINE hn::Vec<DU> EncodeOutLanes(DU du, hn::Vec<DU> bits) {
  if constexpr (kOut == DequantOut::kBf16) {
    return kMayBeNan ? F32BitsToBf16Upper(du, bits) : NonNanToBf16Upper(du, bits);
  } else if constexpr (kOut == DequantOut::kF16) {
    return F32BitsToF16Lanes(du, bits);
  } else {
    return bits;
  }
}

// Stores two vectors of EncodeOutLanes results (elements [0, n), [n, 2n)).
template <DequantOut kOut, class DU, typename TOut>
HWY_INLINE void StoreEncodedPair(DU du, hn::Vec<DU> e0, hn::Vec<DU> e1, TOut* HWY_RESTRICT out) {
  const hn::Repartition<uint16_t, DU> d16;
  if constexpr (kOut == DequantOut::kF32) {
    const hn::RebindToFloat<DU> df;
    hn::StoreU(hn::BitCast(df, e0), df, out);
    hn::StoreU(hn::BitCast(df, e1), df, out + hn::Lanes(du));
  } else if constexpr (kOut == DequantOut::kBf16) {
    hn::StoreU(hn::ConcatOdd(d16, hn::BitCast(d16, e1), hn::BitCast(d16, e0)), d16, out);
  } else {
    hn::StoreU(hn::ConcatEven(d16, hn::BitCast(d16, e1), hn::BitCast(d16, e0)), d16, out);
  }
}

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
// A 4-bit code has 16 values, so the 16 results of one (zero, scale) pair
// can be computed once with the vector formula and looked up with lane
// permutes (vpermd): one 16-lane vector on AVX-512, two 8-lane halves on
// AVX2 (entry u in lane u % 8 of lo or hi).
template <class V>
struct CodeTable16 {
  V lo;
  V hi;
};

// entries(du, codes) -> the encoded results for an i32 vector of codes (a
// functor with an HWY_INLINE operator()).
template <class DU, class Entries>
HWY_INLINE CodeTable16<hn::Vec<DU>> MakeCodeTable16(DU du, const Entries& entries) {
  const hn::RebindToSigned<DU> di;
#if HWY_TARGET <= HWY_AVX3
  const auto all = entries(du, hn::Iota(di, 0));
  return {all, all};
#else
  return {entries(du, hn::Iota(di, 0)), entries(du, hn::Iota(di, 8))};
#endif
}

// Entry codes[lane] (codes 0..15) of the table, per lane.
template <class DU, class V>
HWY_INLINE V LookupCodeTable16(DU du, CodeTable16<V> table, V codes) {
  const hn::RebindToSigned<DU> di;
  // One 16-lane vpermd on AVX-512; two 8-lane ones and a blend on AVX2.
#if HWY_TARGET <= HWY_AVX3
  return hn::TableLookupLanes(table.lo, hn::IndicesFromVec(du, hn::BitCast(di, codes)));
#else
  const auto index = hn::IndicesFromVec(du, hn::BitCast(di, hn::And(codes, hn::Set(du, 7u))));
  return hn::IfThenElse(hn::TestBit(codes, hn::Set(du, 8u)), hn::TableLookupLanes(table.hi, index),
                        hn::TableLookupLanes(table.lo, index));
#endif
}
#endif  // HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2

#endif  // HWY_TARGET != HWY_SCALAR

}  // namespace HWY_NAMESPACE
}  // namespace amn
HWY_AFTER_NAMESPACE();

#endif  // AMN_KERNELS_PACKED_INT_STORE_INL_H_
