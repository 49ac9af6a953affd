// Vector pieces shared by the GPTQ kernels (kernels/gptq-inl.h), Highway
// 1.0.3: bit-field unpacking of the LSB-first int32 streams, the
// (f32(q) - z) * s step with the NaN rule of kernels/ref/gptq_ref.h, and
// in-order BF16/F16/F32 stores (float_convert-inl.h's encoders).
#if defined(AMN_KERNELS_GPTQ_COMMON_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef AMN_KERNELS_GPTQ_COMMON_INL_H_
#undef AMN_KERNELS_GPTQ_COMMON_INL_H_
#else
#define AMN_KERNELS_GPTQ_COMMON_INL_H_
#endif

#include <cstddef>
#include <cstdint>

#include "hwy/highway.h"
#include "kernels/float_convert-inl.h"
#include "kernels/fp8_dequant-inl.h"
#include "kernels/gptq_layout.h"

HWY_BEFORE_NAMESPACE();
namespace amn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// SCALAR runs the reference (kernels/gptq-inl.h).
#if HWY_TARGET != HWY_SCALAR

// Most lanes of a u32 vector on any target, and the padding every stack
// buffer carries past its data so whole-vector loads stay inside it.
inline constexpr size_t kGptqMaxLanes = HWY_MAX_BYTES / sizeof(uint32_t);
// Zero words after the data of a stream buffer: UnpackFields reads L words
// from the word of its first field, and the last vector of a chunk starts
// up to 2L - 1 fields (at most L / 4 words) past the data.
inline constexpr size_t kStreamPadWords = 2 * kGptqMaxLanes + 2;

// Lanes l = 0..L-1 get the kBits-wide field at bit `bit` + l * kBits
// (bit < 32) of the LSB-first stream whose word 0 is at `words`; reads L
// words (8 bits: L bytes from byte bit / 8). Each lane picks its word with
// a table lookup and shifts it by its own amount; a 3-bit field that
// straddles a word takes its high bits from the next one:
// (hi << 1) << (31 - shift), defined for every shift.
template <uint32_t kBits, class DU>
HWY_INLINE hn::Vec<DU> UnpackFieldsAt(DU du, const uint32_t* HWY_RESTRICT words, uint32_t bit,
                                      hn::Vec<DU> lane_bits) {
  if constexpr (kBits == 8) {  // one byte per field: a widening load
    (void)lane_bits;
    const hn::Rebind<uint8_t, DU> d8;
    return hn::PromoteTo(du, hn::LoadU(d8, reinterpret_cast<const uint8_t*>(words) + bit / 8));
  }
  const hn::RebindToSigned<DU> di;
  const auto v = hn::LoadU(du, words);
  const auto offset = hn::Add(lane_bits, hn::Set(du, bit));
  const auto index = hn::ShiftRight<5>(offset);
  const auto shift = hn::And(offset, hn::Set(du, 31u));
  auto field = hn::Shr(hn::TableLookupLanes(v, hn::IndicesFromVec(du, hn::BitCast(di, index))),
                       shift);
  if constexpr (32 % kBits != 0) {
    const auto last = hn::Set(du, static_cast<uint32_t>(hn::Lanes(du) - 1));
    const auto next = hn::Min(hn::Add(index, hn::Set(du, 1u)), last);
    const auto hi = hn::TableLookupLanes(v, hn::IndicesFromVec(du, hn::BitCast(di, next)));
    field = hn::Or(field, hn::Shl(hn::ShiftLeft<1>(hi), hn::Sub(hn::Set(du, 31u), shift)));
  }
  return hn::And(field, hn::Set(du, (1u << kBits) - 1));
}

// Lanes l = 0..L-1 get field (first + l) of the stream `words`, which must
// hold L words from word (first * kBits) / 32.
template <uint32_t kBits, class DU>
HWY_INLINE hn::Vec<DU> UnpackFields(DU du, const uint32_t* HWY_RESTRICT words, size_t first,
                                    hn::Vec<DU> lane_bits) {
  const size_t bit0 = first * kBits;
  return UnpackFieldsAt<kBits>(du, words + bit0 / 32, static_cast<uint32_t>(bit0 % 32), lane_bits);
}

// lane l -> l * kBits, the bit offset of lane l's field.
// (Through memory: SSSE3 has no 32-bit lane multiply.)
template <uint32_t kBits, class DU>
HWY_INLINE hn::Vec<DU> LaneBitOffsets(DU du) {
  HWY_ALIGN uint32_t offsets[kGptqMaxLanes];
  for (size_t l = 0; l < hn::Lanes(du); ++l) offsets[l] = static_cast<uint32_t>(l * kBits);
  return hn::Load(du, offsets);
}

// Stores 2L results in element order: A is [0, L), B is [L, 2L). BF16 goes
// through StoreBf16RoundedPair, F16 through StoreF16Pair
// (float_convert-inl.h: vcvtps2ph stores where F16C is exact).
template <DequantOut kOut, bool kMayBeNan, class DU, typename TOut>
HWY_INLINE void StoreInOrder(DU du, hn::Vec<DU> a, hn::Vec<DU> b, TOut* HWY_RESTRICT out) {
  if constexpr (kOut == DequantOut::kF32) {
    const hn::RebindToFloat<DU> df;
    hn::StoreU(hn::BitCast(df, a), df, out);
    hn::StoreU(hn::BitCast(df, b), df, out + hn::Lanes(du));
  } else if constexpr (kOut == DequantOut::kBf16) {
    StoreBf16RoundedPair<kMayBeNan>(du, a, b, out);
  } else {
    StoreF16Pair(du, a, b, out);
  }
}

// 2L outputs from codes (u32), zeros and scales (F32) of A and B:
// (f32(q) - z) * s, the NaN rule of kernels/ref/gptq_ref.h, stored in order.
// Real layers never make a NaN product, so the rule runs only for vectors
// that have one.
// kMayBeNan = false: the caller knows every scale is finite, so no product
// is NaN ((q - z) is a small integer).
template <DequantOut kOut, bool kMayBeNan = true, class DF, typename TOut>
HWY_INLINE void DequantStep(DF df, hn::Vec<hn::RebindToUnsigned<DF>> qa,
                            hn::Vec<hn::RebindToUnsigned<DF>> qb, hn::Vec<DF> za, hn::Vec<DF> zb,
                            hn::Vec<DF> sa, hn::Vec<DF> sb, TOut* HWY_RESTRICT out) {
  const hn::RebindToUnsigned<DF> du;
  const hn::RebindToSigned<DF> di;
  const auto pa = hn::Mul(hn::Sub(hn::ConvertTo(df, hn::BitCast(di, qa)), za), sa);
  const auto pb = hn::Mul(hn::Sub(hn::ConvertTo(df, hn::BitCast(di, qb)), zb), sb);
  if (!kMayBeNan || HWY_LIKELY(hn::AllFalse(df, hn::Or(hn::IsNaN(pa), hn::IsNaN(pb))))) {
    StoreInOrder<kOut, false>(du, hn::BitCast(du, pa), hn::BitCast(du, pb), out);
  } else {
    const auto fa = hn::IfThenElse(hn::IsNaN(pa), ProductNan(df, sa), pa);
    const auto fb = hn::IfThenElse(hn::IsNaN(pb), ProductNan(df, sb), pb);
    StoreInOrder<kOut, true>(du, hn::BitCast(du, fa), hn::BitCast(du, fb), out);
  }
}

#endif  // HWY_TARGET != HWY_SCALAR

}  // namespace HWY_NAMESPACE
}  // namespace amn
HWY_AFTER_NAMESPACE();

#endif  // AMN_KERNELS_GPTQ_COMMON_INL_H_
