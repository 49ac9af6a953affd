// Per-target ggml encoders of the simple block types (family
// GgmlLegacyQuant: Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 IQ4_NL MXFP4 TQ1_0 TQ2_0, and
// the newer NVFP4 Q1_0 Q2_0),
// Highway 1.0.3, bit-exact with kernels/ref/ggml_encode_ref.cc (formulas,
// ggml's evaluation order and its x86 conversion semantics there).
//
// The input is widened to F32 a tile at a time (encode_common-inl.h); each
// block's scale is computed in F32 exactly as the reference does (for
// Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 in vector lanes, one lane per block of a tile's
// eight: the same IEEE divisions and F16 roundings, in parallel), and the
// per-element work is vectorised where it is the same IEEE
// operation in the same order: max |x| and min/max (order-free: the sign of
// a zero result and, when both signs reach max |x|, Q4_0/Q5_0's signed max
// are then recovered from the first matching element, as ggml's
// strict-compare loop keeps it), x * id
// (+ bias), truncation (C casts; in range whenever 1/d is finite),
// roundf/lroundf as Trunc(2q) - Trunc(q) (half away from zero; Highway's
// Round is half to even; SSSE3 compares the fraction with 0.5), and MXFP4's 16
// candidate errors with a strict `<`. A block whose 1/d overflows (largest
// magnitude below ~1e-36) or whose max - min overflows goes through the
// reference, where out-of-range casts follow x86. IQ4_NL's scale search
// (16 trial scales, each two sequential F32 sums) keeps its sums scalar and
// in element order (reordering them would change the bytes); the code
// choice (best_index_int8) and the products are per element, in vectors.
// With an importance matrix the reference runs on every target.
//
// Errors (when asked): x' from the codes just computed (in registers for
// the five batched types), with ggml's
// dequantize_row_* formula ((code - bias) * d (+ m), d * K[code], M[code] *
// scale) on the stored scale, or by the reference decoders where that scale
// is not finite; summed with AddEncodeErrors. NaN/Inf input: the flat index of the
// first such element is returned. SCALAR runs the reference.
#if defined(AMN_KERNELS_GGML_LEGACY_ENCODE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef AMN_KERNELS_GGML_LEGACY_ENCODE_INL_H_
#undef AMN_KERNELS_GGML_LEGACY_ENCODE_INL_H_
#else
#define AMN_KERNELS_GGML_LEGACY_ENCODE_INL_H_
#endif

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "hwy/highway.h"
#include "kernels/encode_args.h"
#include "kernels/encode_common-inl.h"
#include "kernels/encode_common.h"
#include "kernels/ggml_blocks.h"
#include "kernels/ggml_iq4_index-inl.h"
#include "kernels/ggml_kquant_blocks.h"
#include "kernels/ref/float_convert_ref.h"
#include "kernels/ref/ggml_encode_ref.h"

HWY_BEFORE_NAMESPACE();
namespace amn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR

// At most 16 lanes, so a vector never spans two 32-element halves.
using GeDF = hn::CappedTag<float, 16>;
using GeDI = hn::RebindToSigned<GeDF>;
using GeD8 = hn::Rebind<uint8_t, GeDI>;
using GeDB = hn::CappedTag<uint8_t, 16>;

HWY_INLINE void StoreF16Le(float f, uint8_t* p) {
  const uint16_t h = ref::F32BitsToF16(std::bit_cast<uint32_t>(f));
  p[0] = static_cast<uint8_t>(h);
  p[1] = static_cast<uint8_t>(h >> 8);
}

HWY_INLINE float BlockAbsMax(const float* HWY_RESTRICT x, size_t n) {
  const GeDF df;
  auto m = hn::Zero(df);
  for (size_t k = 0; k < n; k += hn::Lanes(df)) m = hn::Max(m, hn::Abs(hn::LoadU(df, x + k)));
  return hn::GetLane(hn::MaxOfLanes(df, m));
}

// The first element whose value equals v (== : -0.0 matches 0.0): ggml's
// strict-compare loops keep that element, so its sign is the one stored.
HWY_INLINE float FirstEqual(const float* x, size_t n, float v) {
  for (size_t k = 0; k < n; ++k) {
    if (x[k] == v) return x[k];
  }
  return v;  // not reached
}

// Q4_0 / Q5_0's max: the first element of largest magnitude, or +0.0.
// From the block's vector max and min: only when both +amax and -amax
// occur (or the block is all zeros) does the first one need a scan.
HWY_INLINE float BlockSignedMax(const float* HWY_RESTRICT x, size_t n) {
  const GeDF df;
  auto lo = hn::LoadU(df, x), hi = lo;
  for (size_t k = hn::Lanes(df); k < n; k += hn::Lanes(df)) {
    const auto v = hn::LoadU(df, x + k);
    lo = hn::Min(lo, v);
    hi = hn::Max(hi, v);
  }
  const auto vmax = hn::MaxOfLanes(df, hi), vmin = hn::MinOfLanes(df, lo);
  // A vector select (GCC branches on a scalar `?:`): which sign wins is a
  // coin toss on weights.
  const float larger = hn::GetLane(hn::IfThenElse(hn::Gt(vmax, hn::Neg(vmin)), vmax, vmin));
  const float max = hn::GetLane(vmax), neg_min = -hn::GetLane(vmin);
  if (max != neg_min) return larger;
  if (max == 0.0f) return 0.0f;
  for (size_t k = 0; k < n; ++k) {
    if (std::fabs(x[k]) == max) return x[k];
  }
  return 0.0f;  // not reached
}

// Q4_1 / Q5_1's min and max as ggml's loop leaves them (from FLT_MAX and
// -FLT_MAX with strict compares): the values are the vector Min/Max, a zero
// takes the sign of the first zero.
HWY_INLINE void BlockMinMax(const float* HWY_RESTRICT x, size_t n, float* min, float* max) {
  const GeDF df;
  auto lo = hn::Set(df, FLT_MAX), hi = hn::Set(df, -FLT_MAX);
  for (size_t k = 0; k < n; k += hn::Lanes(df)) {
    const auto v = hn::LoadU(df, x + k);
    lo = hn::Min(lo, v);
    hi = hn::Max(hi, v);
  }
  *min = hn::GetLane(hn::MinOfLanes(df, lo));
  *max = hn::GetLane(hn::MaxOfLanes(df, hi));
  if (*min == 0.0f) *min = FirstEqual(x, n, 0.0f);
  if (*max == 0.0f) *max = FirstEqual(x, n, 0.0f);
}

// roundf: half away from zero (q + 0.5 would round first), for |q| < 2^24
// (the callers' q are at most 128). With t = Trunc(q) and the exact
// fraction f: Trunc(2q) = 2t + Trunc(2f) (2q is exact, 2t an integer of
// the same sign) and Trunc(2f) is ±1 exactly when |f| >= 0.5, so
// Trunc(2q) - t = t + Trunc(2f) is the rounded value (an exact integer
// subtraction). SSSE3 has no roundps and Highway emulates Trunc, so there
// one Trunc and a compare of |f| with 0.5 cost less. A zero result may be
// -0.0 (SSSE3): callers convert it.
HWY_INLINE hn::Vec<GeDF> RoundHalfAway(hn::Vec<GeDF> q) {
#if HWY_TARGET == HWY_SSSE3
  const GeDF df;
  const auto t = hn::Trunc(q);
  const auto up = hn::Ge(hn::Abs(hn::Sub(q, t)), hn::Set(df, 0.5f));
  return hn::IfThenElse(up, hn::Add(t, hn::CopySign(hn::Set(df, 1.0f), q)), t);
#else
  return hn::Sub(hn::Trunc(hn::Add(q, q)), hn::Trunc(q));
#endif
}

// 16 bytes: codes[j] | codes[j + 16] << 4 (the legacy nibble order).
HWY_INLINE void PackNibbles(const uint8_t* HWY_RESTRICT codes, uint8_t* HWY_RESTRICT out) {
  const GeDB db;
  const auto mask = hn::Set(db, uint8_t{0x0F});
  for (size_t j = 0; j < 16; j += hn::Lanes(db)) {
    const auto lo = hn::And(hn::LoadU(db, codes + j), mask);
    const auto hi = hn::ShiftLeft<4>(hn::And(hn::LoadU(db, codes + 16 + j), mask));
    hn::StoreU(hn::Or(lo, hi), db, out + j);
  }
}

// Bit 4 of each of 32 codes, bit j of the little-endian u32 qh: StoreMaskBits
// writes lane i of a mask to bit i (byte i / 8), N / 8 bytes per vector of
// N >= 16 u8 lanes (capped at 16), so the vectors' bytes follow each other.
HWY_INLINE void StoreHighBits(const uint8_t* HWY_RESTRICT codes, uint8_t* HWY_RESTRICT out) {
  const GeDB db;
  const size_t n = hn::Lanes(db);
  const auto bit4 = hn::Set(db, uint8_t{0x10});
  for (size_t j = 0; j < 32; j += n) {
    hn::StoreMaskBits(db, hn::TestBit(hn::LoadU(db, codes + j), bit4), out + j / 8);
  }
}

HWY_INLINE bool Finite(float f) { return std::isfinite(f); }

// The stored F16 scale as the decoders widen it.
HWY_INLINE float StoredF16(const uint8_t* p) {
  return std::bit_cast<float>(ref::F16ToF32Bits(static_cast<uint16_t>(p[0] | p[1] << 8)));
}

// x' of n codes as ggml's dequantize_row_* computes them from the stored
// block: f32((code & mask) - bias) * d, one rounding (TQ1_0, TQ2_0, Q2_0;
// the five batched types take theirs from registers in TruncCodes and
// EncodeQ8_0Scaled). Only for a finite d: then nothing is NaN and the
// decoders' NaN rules do not come into it.
HWY_INLINE void DecodeCodes(const uint8_t* HWY_RESTRICT codes, size_t n, int32_t mask,
                            int32_t bias, float d, float* HWY_RESTRICT xq) {
  const GeDF df;
  const GeDI di;
  const GeD8 d8;
  const auto vd = hn::Set(df, d);
  const auto vmask = hn::Set(di, mask), vbias = hn::Set(di, bias);
  for (size_t k = 0; k < n; k += hn::Lanes(df)) {
    const auto c = hn::Sub(hn::And(hn::PromoteTo(di, hn::LoadU(d8, codes + k)), vmask), vbias);
    hn::StoreU(hn::Mul(hn::ConvertTo(df, c), vd), df, xq + k);
  }
}

// Up to kScaleBatch blocks' scalars computed in vector lanes, one lane per
// block: one vector division each for d and 1/d and one vector F16
// rounding and widening (float_convert-inl.h, the reference's RNE) instead
// of scalar ones per block. Div is the same IEEE operation as the scalar
// `/`, so every lane equals the reference's scalar.
inline constexpr size_t kScaleBatch = kEncodeTile / 32;
using GeDS = hn::CappedTag<float, kScaleBatch>;

struct BlockScales {
  HWY_ALIGN float num[kScaleBatch];   // d's numerator: max |x|, signed max or max - min
  HWY_ALIGN float min[kScaleBatch];   // Q4_1 / Q5_1's min
  HWY_ALIGN float id[kScaleBatch];    // d != 0 ? 1 / d : 0
  HWY_ALIGN float ds[kScaleBatch];    // the stored F16 d, widened
  HWY_ALIGN float ms[kScaleBatch];    // the stored F16 min, widened
  HWY_ALIGN uint32_t h[kScaleBatch];  // the F16 bits of d
  HWY_ALIGN uint32_t hm[kScaleBatch];  // the F16 bits of min
};

// The F16 bits of v's lanes to h, and their value as the decoders widen it to w.
HWY_INLINE void F16RoundTrip(hn::Vec<GeDS> v, uint32_t* HWY_RESTRICT h, float* HWY_RESTRICT w) {
  const GeDS df;
  const hn::RebindToUnsigned<GeDS> du;
  const auto bits = F32BitsToF16Lanes(du, hn::BitCast(du, v));
  hn::Store(bits, du, h);
  hn::Store(hn::BitCast(df, F16BitsToF32Lanes(du, bits)), df, w);
}

// d = num / div for every lane (num and, with kMin, min fully written).
template <bool kMin>
HWY_INLINE void ScalesFromNumerators(float div, BlockScales& s) {
  const GeDS df;
  for (size_t b = 0; b < kScaleBatch; b += hn::Lanes(df)) {
    const auto d = hn::Div(hn::Load(df, s.num + b), hn::Set(df, div));
    const auto id = hn::IfThenZeroElse(hn::Eq(d, hn::Zero(df)), hn::Div(hn::Set(df, 1.0f), d));
    hn::Store(id, df, s.id + b);
    F16RoundTrip(d, s.h + b, s.ds + b);
    if constexpr (kMin) F16RoundTrip(hn::Load(df, s.min + b), s.hm + b, s.ms + b);
  }
}

HWY_INLINE void StoreF16BitsLe(uint32_t h, uint8_t* p) {
  p[0] = static_cast<uint8_t>(h);
  p[1] = static_cast<uint8_t>(h >> 8);
}

// Each block encoder below writes x' to xq (when not null) and returns
// true, or returns false when the block went through the reference or its
// stored scale is not finite: the caller then decodes it with the reference.

// Q8_0 block b of a batch. |x * id| is at most 127 plus a few ulp, so the
// rounded r is an integer in [-127, 127]: r + 1.5 * 2^23 is exact, and its
// bits minus those of 1.5 * 2^23 are r as an int32 (one integer
// subtraction instead of ConvertTo's truncation and overflow fix-ups;
// Highway 1.0.3's TruncateTo u32 -> u8 is wrong on AVX3_DL, so the code
// bytes come from DemoteTo). The float minus 1.5 * 2^23 is f32(code), zero
// as +0.0, so x' = that * ds is the decoder's product, from registers.
HWY_INLINE bool EncodeQ8_0Scaled(const float* HWY_RESTRICT x, const BlockScales& s, size_t b,
                                 uint8_t* HWY_RESTRICT out, float* HWY_RESTRICT xq) {
  if (!Finite(s.id[b])) {
    ref::QuantizeRowQ8_0(x, 32, out);
    return false;
  }
  StoreF16BitsLe(s.h[b], out);
  const GeDF df;
  const GeDI di;
  const hn::Rebind<int8_t, GeDI> d8;
  const auto vid = hn::Set(df, s.id[b]);
  const auto magic = hn::Set(df, 12582912.0f);
  const auto magic_bits = hn::BitCast(di, magic);
  const bool decode = xq != nullptr && Finite(s.ds[b]);
  const auto vd = hn::Set(df, s.ds[b]);
  for (size_t k = 0; k < 32; k += hn::Lanes(df)) {
    const auto biased = hn::Add(RoundHalfAway(hn::Mul(hn::LoadU(df, x + k), vid)), magic);
    const auto c = hn::Sub(hn::BitCast(di, biased), magic_bits);
    hn::StoreU(hn::DemoteTo(d8, c), d8, reinterpret_cast<int8_t*>(out + 2 + k));
    if (decode) hn::StoreU(hn::Mul(hn::Sub(biased, magic), vd), df, xq + k);
  }
  return xq == nullptr || decode;
}

// The 4- and 5-bit types: d = num / kDivisor, code = min(kCap,
// trunc((x - min) * id + kBias)), x' = f32((code & kMask) - kCodeBias) * d
// (+ m); the nibbles at kQs, bit 4 of each code at kQh. Q5_1 has no clamp
// in ggml: its largest code is 31 anyway, so the cap of 255 only restates
// the u8 cast.
template <GgmlType kT>
struct LegacyParams;
template <>
struct LegacyParams<GgmlType::kQ4_0> {
  static constexpr bool kMin = false, kHighBits = false;
  static constexpr float kDivisor = -8.0f, kBias = 8.5f;
  static constexpr int32_t kCap = 15, kMask = 0x0F, kCodeBias = 8;
  static constexpr size_t kQh = 0, kQs = 2, kBytes = ggml::kQ4_0Bytes;
};
template <>
struct LegacyParams<GgmlType::kQ5_0> {
  static constexpr bool kMin = false, kHighBits = true;
  static constexpr float kDivisor = -16.0f, kBias = 16.5f;
  static constexpr int32_t kCap = 31, kMask = 0x1F, kCodeBias = 16;
  static constexpr size_t kQh = 2, kQs = 6, kBytes = ggml::kQ5_0Bytes;
};
template <>
struct LegacyParams<GgmlType::kQ4_1> {
  static constexpr bool kMin = true, kHighBits = false;
  static constexpr float kDivisor = 15.0f, kBias = 0.5f;
  static constexpr int32_t kCap = 15, kMask = 0x0F, kCodeBias = 0;
  static constexpr size_t kQh = 0, kQs = 4, kBytes = ggml::kQ4_1Bytes;
};
template <>
struct LegacyParams<GgmlType::kQ5_1> {
  static constexpr bool kMin = true, kHighBits = true;
  static constexpr float kDivisor = 31.0f, kBias = 0.5f;
  static constexpr int32_t kCap = 255, kMask = 0x1F, kCodeBias = 0;
  static constexpr size_t kQh = 4, kQs = 8, kBytes = ggml::kQ5_1Bytes;
};
template <>
struct LegacyParams<GgmlType::kQ8_0> {
  static constexpr bool kMin = false;
  static constexpr float kDivisor = 127.0f;
  static constexpr size_t kBytes = ggml::kQ8_0Bytes;
};

// The codes of one block (every value in int32 range: the caller checked
// id is finite) to codes[32]; with xq, also x' from the codes in registers,
// with ggml's dequantize_row_* formula (one rounding each, never fused) on
// the finite stored d (ds) and m (ms).
template <class P>
HWY_INLINE void TruncCodes(const float* HWY_RESTRICT x, float min, float id, float ds, float ms,
                           uint8_t* HWY_RESTRICT codes, float* HWY_RESTRICT xq) {
  const GeDF df;
  const GeDI di;
  const GeD8 d8;
  const auto vid = hn::Set(df, id), vb = hn::Set(df, P::kBias), vmin = hn::Set(df, min);
  const auto vcap = hn::Set(di, P::kCap);
  const auto vd = hn::Set(df, ds), vm = hn::Set(df, ms);
  const auto vmask = hn::Set(di, P::kMask), vcb = hn::Set(di, P::kCodeBias);
  for (size_t k = 0; k < 32; k += hn::Lanes(df)) {
    auto v = hn::LoadU(df, x + k);
    if constexpr (P::kMin) v = hn::Sub(v, vmin);
    const auto c = hn::Min(hn::ConvertTo(di, hn::Add(hn::Mul(v, vid), vb)), vcap);
    hn::StoreU(hn::DemoteTo(d8, c), d8, codes + k);
    if (xq == nullptr) continue;
    auto y = hn::Mul(hn::ConvertTo(df, hn::Sub(hn::And(c, vmask), vcb)), vd);
    if constexpr (P::kMin) y = hn::Add(y, vm);
    hn::StoreU(y, df, xq + k);
  }
}

// Q4_0 / Q5_0 / Q4_1 / Q5_1 block b of a batch. A block whose 1/d (or, with
// a min, max - min) overflows goes through the reference.
template <GgmlType kT>
HWY_INLINE bool EncodeLegacyScaled(const float* HWY_RESTRICT x, const BlockScales& s, size_t b,
                                   uint8_t* HWY_RESTRICT out, float* HWY_RESTRICT xq) {
  using P = LegacyParams<kT>;
  if (!Finite(s.id[b]) || (P::kMin && !Finite(s.num[b]))) {
    ref::QuantizeGgmlRow(kT, x, 32, out);
    return false;
  }
  StoreF16BitsLe(s.h[b], out);
  if constexpr (P::kMin) StoreF16BitsLe(s.hm[b], out + 2);
  const bool decode = xq != nullptr && Finite(s.ds[b]) && (!P::kMin || Finite(s.ms[b]));
  HWY_ALIGN uint8_t codes[32];
  TruncCodes<P>(x, P::kMin ? s.min[b] : 0.0f, s.id[b], s.ds[b], P::kMin ? s.ms[b] : 0.0f, codes,
                decode ? xq : nullptr);
  if constexpr (P::kHighBits) StoreHighBits(codes, out + P::kQh);
  PackNibbles(codes, out + P::kQs);
  return xq == nullptr || decode;
}

// Block b's numerator of d (and min): Q8_0 max |x|, Q4_0 / Q5_0 the signed
// max, Q4_1 / Q5_1 max - min (as ggml's scalar subtraction).
template <GgmlType kT>
HWY_INLINE void BlockNumerator(const float* HWY_RESTRICT x, BlockScales& s, size_t b) {
  if constexpr (kT == GgmlType::kQ8_0) {
    s.num[b] = BlockAbsMax(x, 32);
  } else if constexpr (LegacyParams<kT>::kMin) {
    float max;
    BlockMinMax(x, 32, &s.min[b], &max);
    s.num[b] = max - s.min[b];
  } else {
    s.num[b] = BlockSignedMax(x, 32);
  }
}

// Q8_0 / Q4_0 / Q5_0 / Q4_1 / Q5_1, kScaleBatch blocks at a time. Returns
// whether some x' may be NaN (a stored scale or min that is not finite).
template <GgmlType kT>
HWY_INLINE bool EncodeLegacyBlocks(const float* HWY_RESTRICT x, size_t n_blocks,
                                   uint8_t* HWY_RESTRICT out, float* HWY_RESTRICT xq) {
  using P = LegacyParams<kT>;
  bool maybe_nan = false;
  for (size_t b0 = 0; b0 < n_blocks; b0 += kScaleBatch) {
    const size_t nb = std::min(kScaleBatch, n_blocks - b0);
    BlockScales s;
    // The lanes of a partial batch's missing blocks: any finite value.
    std::fill(s.num + nb, s.num + kScaleBatch, 0.0f);
    std::fill(s.min + nb, s.min + kScaleBatch, 0.0f);
    for (size_t b = 0; b < nb; ++b) BlockNumerator<kT>(x + 32 * (b0 + b), s, b);
    ScalesFromNumerators<P::kMin>(P::kDivisor, s);
    for (size_t b = 0; b < nb; ++b) {
      maybe_nan = maybe_nan || !Finite(s.ds[b]) || (P::kMin && !Finite(s.ms[b]));
      const float* xb = x + 32 * (b0 + b);
      uint8_t* ob = out + P::kBytes * (b0 + b);
      float* qb = xq == nullptr ? nullptr : xq + 32 * (b0 + b);
      bool decoded;
      if constexpr (kT == GgmlType::kQ8_0) {
        decoded = EncodeQ8_0Scaled(xb, s, b, ob, qb);
      } else {
        decoded = EncodeLegacyScaled<kT>(xb, s, b, ob, qb);
      }
      if (!decoded && qb != nullptr) ref::DequantGgmlEncodedBlocks(kT, ob, 1, qb);
    }
  }
  return maybe_nan;
}

// codes[k] = the first c minimising |value[c] - x[k]| (ggml's
// best_index_mxfp4, strict `<`), for n (a multiple of the lanes) elements.
HWY_INLINE void Fp4Codes(const float* HWY_RESTRICT x, size_t n, const float* value,
                         uint8_t* HWY_RESTRICT codes) {
  const GeDF df;
  const GeDI di;
  const GeD8 d8;
  for (size_t k = 0; k < n; k += hn::Lanes(df)) {
    const auto v = hn::LoadU(df, x + k);
    auto best_err = hn::Abs(hn::Sub(hn::Set(df, value[0]), v));
    auto best = hn::Zero(di);
    for (int c = 1; c < 16; ++c) {
      const auto err = hn::Abs(hn::Sub(hn::Set(df, value[c]), v));
      const auto better = hn::Lt(err, best_err);
      best_err = hn::IfThenElse(better, err, best_err);
      best = hn::IfThenElse(hn::RebindMask(di, better), hn::Set(di, c), best);
    }
    hn::StoreU(hn::DemoteTo(d8, best), d8, codes + k);
  }
}

HWY_INLINE bool EncodeMxfp4Block(const float* HWY_RESTRICT x, uint8_t* HWY_RESTRICT out,
                                 float* HWY_RESTRICT xq) {
  const float amax = BlockAbsMax(x, 32);
  // The exponent exactly as the reference computes it (C library log2f).
  const uint8_t e = amax > 0.0f ? static_cast<uint8_t>(ref::TruncToInt32X86(
                                      std::floor(std::log2(amax)) - 2.0f + 127.0f))
                                : uint8_t{0};
  const float half = std::bit_cast<float>(ggml::Mxfp4HalfScaleBits(e));
  out[0] = e;
  float value[16];
  for (size_t c = 0; c < 16; ++c) value[c] = static_cast<float>(ggml::kMxfp4Values[c]) * half;
  HWY_ALIGN uint8_t codes[32];
  Fp4Codes(x, 32, value, codes);
  PackNibbles(codes, out + 1);
  // x' = M[code] * scale: the table values above are those products for
  // any finite scale (e < 254); the reference decodes the rest.
  if (xq == nullptr || !Finite(value[15])) return xq == nullptr;
  for (size_t k = 0; k < 32; ++k) xq[k] = value[codes[k]];
  return true;
}

// ggml's best_index_int8 over the IQ4_NL codebook per lane (the index, and
// the entry in *q): kernels/ggml_iq4_index-inl.h.
HWY_INLINE hn::Vec<GeDI> Iq4NlIndex(hn::Vec<GeDF> x, hn::Vec<GeDF>* q) {
  return BestIndexIq4(GeDF(), x, *q);
}

// One trial scale of the IQ4_NL search: sumqx = sum (w*q)*x, sumq2 = sum
// (w*q)*q over the block in element order. The products are per element
// (vector, exact); only the two additions are sequential, as in ggml.
HWY_INLINE void Iq4NlTrial(const float* HWY_RESTRICT x, const float* HWY_RESTRICT w, float id,
                           float* sumqx, float* sumq2) {
  const GeDF df;
  HWY_ALIGN float px[32], p2[32];
  const auto vid = hn::Set(df, id);
  for (size_t j = 0; j < 32; j += hn::Lanes(df)) {
    const auto xv = hn::LoadU(df, x + j);
    hn::Vec<GeDF> q;
    (void)Iq4NlIndex(hn::Mul(vid, xv), &q);
    const auto wq = hn::Mul(hn::LoadU(df, w + j), q);
    hn::Store(hn::Mul(wq, xv), df, px + j);
    hn::Store(hn::Mul(wq, q), df, p2 + j);
  }
  float a = 0.0f, b = 0.0f;
  for (size_t j = 0; j < 32; ++j) {
    a += px[j];
    b += p2[j];
  }
  *sumqx = a;
  *sumq2 = b;
}

// IQ4_NL without an imatrix (quantize_iq4_nl, ntry 7, weights x^2): the
// reference's search with its per-element work in vectors.
HWY_INLINE bool EncodeIq4NlBlock(const float* HWY_RESTRICT x, uint8_t* HWY_RESTRICT out,
                                 float* HWY_RESTRICT xq) {
  const GeDF df;
  const GeD8 d8;
  const float amax = BlockAbsMax(x, 32);
  float d = 0.0f;
  if (!(amax < 1e-15f)) {
    const float max = BlockSignedMax(x, 32);
    HWY_ALIGN float w[32];
    for (size_t j = 0; j < 32; j += hn::Lanes(df)) {
      const auto v = hn::LoadU(df, x + j);
      hn::Store(hn::Mul(v, v), df, w + j);
    }
    const float k0 = static_cast<float>(ggml::kIq4NlValues[0]);
    d = -max / k0;
    float sumqx, sumq2;
    Iq4NlTrial(x, w, 1.0f / d, &sumqx, &sumq2);
    d = sumq2 > 0.0f ? sumqx / sumq2 : 0.0f;
    float best = d * sumqx;
    for (int itry = -7; itry <= 7; ++itry) {
      Iq4NlTrial(x, w, static_cast<float>(itry + ggml::kIq4NlValues[0]) / max, &sumqx, &sumq2);
      if (sumq2 > 0.0f && sumqx * sumqx > best * sumq2) {
        d = sumqx / sumq2;
        best = d * sumqx;
      }
    }
  }
  StoreF16Le(d, out);
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  HWY_ALIGN uint8_t codes[32];
  HWY_ALIGN float values[32];
  const auto vid = hn::Set(df, id);
  for (size_t j = 0; j < 32; j += hn::Lanes(df)) {
    hn::Vec<GeDF> q;
    const auto index = Iq4NlIndex(hn::Mul(vid, hn::LoadU(df, x + j)), &q);
    hn::StoreU(hn::DemoteTo(d8, index), d8, codes + j);
    hn::Store(q, df, values + j);
  }
  PackNibbles(codes, out + 2);
  // x' = d * K[code] on the stored scale (the decoder's product).
  const float ds = StoredF16(out);
  if (xq == nullptr || !Finite(ds)) return xq == nullptr;
  const auto vd = hn::Set(df, ds);
  for (size_t j = 0; j < 32; j += hn::Lanes(df)) {
    hn::StoreU(hn::Mul(vd, hn::Load(df, values + j)), df, xq + j);
  }
  return true;
}

// TQ1_0 / TQ2_0 trits + 1 (0, 1, 2) of 256 elements: lroundf(x * id) + 1.
HWY_INLINE void TernaryCodes(const float* HWY_RESTRICT x, float id, uint8_t* HWY_RESTRICT codes) {
  const GeDF df;
  const GeDI di;
  const GeD8 d8;
  const auto vid = hn::Set(df, id);
  const auto one = hn::Set(di, 1);
  for (size_t k = 0; k < 256; k += hn::Lanes(df)) {
    const auto q = RoundHalfAway(hn::Mul(hn::LoadU(df, x + k), vid));
    hn::StoreU(hn::DemoteTo(d8, hn::Add(hn::ConvertTo(di, q), one)), d8, codes + k);
  }
}

HWY_INLINE bool EncodeTq2_0Block(const float* HWY_RESTRICT x, uint8_t* HWY_RESTRICT out,
                                 float* HWY_RESTRICT xq) {
  const float d = BlockAbsMax(x, 256);
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  if (!Finite(id)) {
    ref::QuantizeRowTq2_0(x, 256, out);
    return false;
  }
  StoreF16Le(d, out + kq::tq2::kD);
  HWY_ALIGN uint8_t codes[256];
  TernaryCodes(x, id, codes);
  const GeDB db;
  // Byte 32 h + m: elements 128 h + m + 32 k in bits 2k.
  for (size_t h = 0; h < 2; ++h) {
    const uint8_t* c = codes + 128 * h;
    for (size_t m = 0; m < 32; m += hn::Lanes(db)) {
      auto q = hn::LoadU(db, c + m);
      q = hn::Or(q, hn::ShiftLeft<2>(hn::LoadU(db, c + 32 + m)));
      q = hn::Or(q, hn::ShiftLeft<4>(hn::LoadU(db, c + 64 + m)));
      q = hn::Or(q, hn::ShiftLeft<6>(hn::LoadU(db, c + 96 + m)));
      hn::StoreU(q, db, out + 32 * h + m);
    }
  }
  const float ds = StoredF16(out + kq::tq2::kD);
  if (xq == nullptr || !Finite(ds)) return xq == nullptr;
  DecodeCodes(codes, 256, 0xFF, 1, ds, xq);
  return true;
}

HWY_INLINE bool EncodeTq1_0Block(const float* HWY_RESTRICT x, uint8_t* HWY_RESTRICT out,
                                 float* HWY_RESTRICT xq) {
  const float d = BlockAbsMax(x, 256);
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  if (!Finite(id)) {
    ref::QuantizeRowTq1_0(x, 256, out);
    return false;
  }
  StoreF16Le(d, out + kq::tq1::kD);
  HWY_ALIGN uint8_t codes[256];
  TernaryCodes(x, id, codes);
  // Base-3 digits, first element most significant, then ceil(v * 256 / 243)
  // (v <= 242, so u16 arithmetic is exact); the same element order as the
  // reference.
  auto ceil243 = [](unsigned v) { return static_cast<uint8_t>((v * 256 + 242) / 243); };
  for (size_t m = 0; m < 32; ++m) {
    unsigned v = 0;
    for (size_t k = 0; k < 5; ++k) v = v * 3 + codes[m + 32 * k];
    out[m] = ceil243(v);
  }
  for (size_t m = 0; m < 16; ++m) {
    unsigned v = 0;
    for (size_t k = 0; k < 5; ++k) v = v * 3 + codes[160 + m + 16 * k];
    out[32 + m] = ceil243(v);
  }
  for (size_t j = 0; j < 4; ++j) {
    unsigned v = 0;
    for (size_t k = 0; k < 4; ++k) v = v * 3 + codes[240 + j + 4 * k];
    out[kq::tq1::kQh + j] = ceil243(v * 3);
  }
  // The base-3 packing is exact both ways: the decoder's digits are these.
  const float ds = StoredF16(out + kq::tq1::kD);
  if (xq == nullptr || !Finite(ds)) return xq == nullptr;
  DecodeCodes(codes, 256, 0xFF, 1, ds, xq);
  return true;
}

// NVFP4: per 16-element sub-block, the UE4M3 byte of amax / 6 (scalar, as
// the reference), then the codes against the codebook times that finite
// scale; x' = those products, as ggml's decoder gives them.
HWY_INLINE bool EncodeNvfp4Block(const float* HWY_RESTRICT x, uint8_t* HWY_RESTRICT out,
                                 float* HWY_RESTRICT xq) {
  constexpr size_t kSub = ggml::kNvfp4SubElems;
  for (size_t s = 0; s < ggml::kNvfp4Elems / kSub; ++s) {
    const float* xs = x + s * kSub;
    const uint8_t ue = ref::F32ToUe4m3(BlockAbsMax(xs, kSub) / 6.0f);
    out[s] = ue;
    const float d = std::bit_cast<float>(ggml::Ue4m3HalfBits(ue));
    float value[16];
    for (size_t c = 0; c < 16; ++c) value[c] = static_cast<float>(ggml::kMxfp4Values[c]) * d;
    HWY_ALIGN uint8_t codes[kSub];
    Fp4Codes(xs, kSub, value, codes);
    for (size_t l = 0; l < kSub / 2; ++l) {
      out[4 + s * kSub / 2 + l] = static_cast<uint8_t>(codes[l] | codes[l + kSub / 2] << 4);
    }
    if (xq != nullptr) {
      for (size_t k = 0; k < kSub; ++k) xq[s * kSub + k] = value[codes[k]];
    }
  }
  return true;
}

// Q1_0: d = (sum of |x| in element order: the sequential F32 sum fixes the
// rounding, so it stays scalar) / 128; bit j = x[j] >= 0 (-0.0 included),
// from vector compares via StoreMaskBits (lane i -> bit i). x' = ±d.
HWY_INLINE bool EncodeQ1_0Block(const float* HWY_RESTRICT x, uint8_t* HWY_RESTRICT out,
                                float* HWY_RESTRICT xq) {
  constexpr size_t kN = ggml::kQ1_0Elems;
  float sum_abs = 0.0f;
  for (size_t j = 0; j < kN; ++j) sum_abs += std::fabs(x[j]);
  StoreF16Le(sum_abs / static_cast<float>(kN), out);
  const GeDF df;
  const size_t lanes = hn::Lanes(df);
  const float ds = StoredF16(out);
  const auto pos = hn::Set(df, ds), neg = hn::Set(df, -ds);
  std::memset(out + 2, 0, kN / 8);
  for (size_t k = 0; k < kN; k += lanes) {
    const auto set = hn::Ge(hn::LoadU(df, x + k), hn::Zero(df));
    uint8_t bits[8] = {};
    hn::StoreMaskBits(df, set, bits);
    for (size_t i = 0; i < (lanes + 7) / 8; ++i) {
      out[2 + k / 8 + i] = static_cast<uint8_t>(out[2 + k / 8 + i] | bits[i] << (k % 8));
    }
    if (xq != nullptr) hn::StoreU(hn::IfThenElse(set, pos, neg), df, xq + k);
  }
  return true;
}

// Q2_0: d = max |x|, q = roundf(x * (1/d)) + 1 clamped to [0, 3] (half away
// from zero, in vectors); blocks whose 1/d overflows take the reference.
HWY_INLINE bool EncodeQ2_0Block(const float* HWY_RESTRICT x, uint8_t* HWY_RESTRICT out,
                                float* HWY_RESTRICT xq) {
  constexpr size_t kN = ggml::kQ2_0Elems;
  const float amax = BlockAbsMax(x, kN);
  const float id = amax > 0.0f ? 1.0f / amax : 0.0f;
  if (!Finite(id)) {
    ref::QuantizeRowQ2_0(x, kN, out);
    return false;
  }
  StoreF16Le(amax, out);
  const GeDF df;
  const GeDI di;
  const GeD8 d8;
  const auto vid = hn::Set(df, id);
  HWY_ALIGN uint8_t codes[kN];
  for (size_t k = 0; k < kN; k += hn::Lanes(df)) {
    const auto r = RoundHalfAway(hn::Mul(hn::LoadU(df, x + k), vid));
    const auto q = hn::Add(hn::ConvertTo(di, r), hn::Set(di, 1));
    hn::StoreU(hn::DemoteTo(d8, hn::Min(hn::Max(q, hn::Zero(di)), hn::Set(di, 3))), d8, codes + k);
  }
  for (size_t m = 0; m < kN / 4; ++m) {
    out[2 + m] = static_cast<uint8_t>(codes[4 * m] | codes[4 * m + 1] << 2 |
                                      codes[4 * m + 2] << 4 | codes[4 * m + 3] << 6);
  }
  const float ds = StoredF16(out);
  if (xq == nullptr || !Finite(ds)) return xq == nullptr;
  DecodeCodes(codes, kN, 0xFF, 1, ds, xq);
  return true;
}

// A scale that overflowed F16 (|d| > 65504) decodes to ±Inf and, times a
// zero code, NaN. The vector error sums keep a NaN lane out of max_abs
// differently from the reference's `a > max` (a NaN in a lane hides an Inf
// beside it), so a tile with a NaN x' is summed one element at a time.
HWY_INLINE void AddTileErrors(const float* HWY_RESTRICT xs, const float* HWY_RESTRICT xq,
                              uint64_t index, size_t count, kernels::ErrorSums& sums) {
  const GeDF df;
  auto nan = hn::Zero(df);
  size_t k = 0;
  for (; k + hn::Lanes(df) <= count; k += hn::Lanes(df)) {
    const auto v = hn::LoadU(df, xq + k);
    // Not(Eq): Ne is ordered on AVX2/AVX3 (false for NaN), unordered on SSE.
    nan = hn::Or(nan, hn::VecFromMask(df, hn::Not(hn::Eq(v, v))));
  }
  bool any_nan = !hn::AllTrue(df, hn::Eq(nan, hn::Zero(df)));
  for (; k < count; ++k) any_nan = any_nan || std::isnan(xq[k]);
  if (!any_nan) return AddEncodeErrors(xs, xq, index, count, sums);
  for (k = 0; k < count; ++k) kernels::AddError(sums, index + k, xs[k], xq[k]);
}

// n_blocks blocks of x to out; x' to xq when xq is not null. Returns
// whether some x' may be NaN (then AddTileErrors checks).
HWY_INLINE bool EncodeGgmlBlocks(GgmlType type, const float* HWY_RESTRICT x, size_t n_blocks,
                                 uint8_t* HWY_RESTRICT out, float* HWY_RESTRICT xq) {
  switch (type) {
    case GgmlType::kQ4_0: return EncodeLegacyBlocks<GgmlType::kQ4_0>(x, n_blocks, out, xq);
    case GgmlType::kQ4_1: return EncodeLegacyBlocks<GgmlType::kQ4_1>(x, n_blocks, out, xq);
    case GgmlType::kQ5_0: return EncodeLegacyBlocks<GgmlType::kQ5_0>(x, n_blocks, out, xq);
    case GgmlType::kQ5_1: return EncodeLegacyBlocks<GgmlType::kQ5_1>(x, n_blocks, out, xq);
    case GgmlType::kQ8_0: return EncodeLegacyBlocks<GgmlType::kQ8_0>(x, n_blocks, out, xq);
    default: break;
  }
  const size_t be = ref::GgmlEncodeBlockElems(type);
  const size_t bb = ref::GgmlEncodeBlockBytes(type);
  for (size_t b = 0; b < n_blocks; ++b) {
    const float* xb = x + b * be;
    uint8_t* ob = out + b * bb;
    float* qb = xq == nullptr ? nullptr : xq + b * be;
    bool decoded;
    switch (type) {
      case GgmlType::kMXFP4: decoded = EncodeMxfp4Block(xb, ob, qb); break;
      case GgmlType::kTQ1_0: decoded = EncodeTq1_0Block(xb, ob, qb); break;
      case GgmlType::kTQ2_0: decoded = EncodeTq2_0Block(xb, ob, qb); break;
      case GgmlType::kIQ4_NL: decoded = EncodeIq4NlBlock(xb, ob, qb); break;
      case GgmlType::kNVFP4: decoded = EncodeNvfp4Block(xb, ob, qb); break;
      case GgmlType::kQ1_0: decoded = EncodeQ1_0Block(xb, ob, qb); break;
      case GgmlType::kQ2_0: decoded = EncodeQ2_0Block(xb, ob, qb); break;
      default:
        ref::QuantizeGgmlRow(type, xb, be, ob);
        decoded = false;
        break;
    }
    if (!decoded && qb != nullptr) ref::DequantGgmlEncodedBlocks(type, ob, 1, qb);
  }
  return true;
}

#endif  // HWY_TARGET != HWY_SCALAR

// The kernel table's entry point (kernels/encode_args.h): the rows' blocks
// are contiguous in the input and the output, so the call is one run of
// rows * cols / block_elems blocks, a tile of kEncodeTile elements (whole
// blocks: 256 is a multiple of 32 and of 256) at a time.
inline uint64_t EncodeGgmlLegacyQuant(const kernels::GgmlQuantArgs& a,
                                      kernels::ErrorSums* errors) {
#if HWY_TARGET == HWY_SCALAR
  return ref::EncodeGgmlLegacyQuant(a, errors);
#else
  // With an importance matrix ggml's search is sequential F32 sums per
  // block (and a per-row sum): the reference on every target.
  if (a.imatrix != nullptr && ref::GgmlImatrixChangesBytes(a.type)) {
    return ref::EncodeGgmlLegacyQuant(a, errors);
  }
  const size_t be = ref::GgmlEncodeBlockElems(a.type);
  const size_t bb = ref::GgmlEncodeBlockBytes(a.type);
  if (be == 0) return kernels::kAllFinite;
  const uint64_t n = a.x.rows * a.x.cols;
  HWY_ALIGN float xs[kEncodeTile + kEncodePad];
  HWY_ALIGN float xq[kEncodeTile + kEncodePad];
  for (uint64_t i0 = 0; i0 < n; i0 += kEncodeTile) {
    const size_t t = static_cast<size_t>(std::min<uint64_t>(kEncodeTile, n - i0));
    if (!LoadEncodeTile(a.x.in, a.x.type, i0, t, xs)) {
      return FirstNonFinite(a.x.in, a.x.type, i0, t);
    }
    const bool maybe_nan =
        EncodeGgmlBlocks(a.type, xs, t / be, a.out + i0 / be * bb, errors != nullptr ? xq : nullptr);
    if (errors == nullptr) continue;
    if (maybe_nan) {
      AddTileErrors(xs, xq, i0, t, *errors);
    } else {
      AddEncodeErrors(xs, xq, i0, t, *errors);
    }
  }
  return kernels::kAllFinite;
#endif
}

}  // namespace HWY_NAMESPACE
}  // namespace amn
HWY_AFTER_NAMESPACE();

#endif  // include guard
