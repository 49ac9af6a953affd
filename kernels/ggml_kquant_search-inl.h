// Per-target scale search of Q4_K and Q5_K (Highway 1.0.3): ggml's
// make_qkx2_quants (kernels/ref/ggml_quant_search.h) for the eight 32-element
// sub-blocks of a super-block at once, one lane per sub-block. Each lane does
// exactly the scalar recurrence: the same IEEE operations (Mul, Add, Sub,
// Div, Sqrt, no MulAdd) on the same operands in the same element order, the
// scalar branches turned into per-lane selects with the same comparisons
// (x < min, x > max, D > 0, this_min > 0, cur_error < best_error). So every
// ordered sum is the reference's, bit for bit, at any vector width: lanes
// only ever hold different sub-blocks. Not compiled for HWY_SCALAR.
#if defined(AMN_KERNELS_GGML_KQUANT_SEARCH_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef AMN_KERNELS_GGML_KQUANT_SEARCH_INL_H_
#undef AMN_KERNELS_GGML_KQUANT_SEARCH_INL_H_
#else
#define AMN_KERNELS_GGML_KQUANT_SEARCH_INL_H_
#endif

#include <cstddef>
#include <cstdint>

#include "hwy/highway.h"
#include "kernels/ref/ggml_kquant_encode_ref.h"

HWY_BEFORE_NAMESPACE();
namespace amn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR

// ggml nearest_int per lane: v + 1.5 * 2^23 rounds v to an integer (RNE)
// in the low mantissa bits. Exact for |v| <= 4194303, as the scalar one.
template <class DF>
HWY_INLINE hn::Vec<hn::RebindToSigned<DF>> NearestIntVec(DF df, hn::Vec<DF> v) {
  const hn::RebindToSigned<DF> di;
  const auto bits = hn::BitCast(di, hn::Add(v, hn::Set(df, 12582912.0f)));
  return hn::Sub(hn::And(bits, hn::Set(di, 0x007fffff)), hn::Set(di, 0x00400000));
}

// Sub-blocks per super-block and elements per sub-block (Q4_K, Q5_K).
inline constexpr size_t kQ45Subs = 8, kQ45Len = 32;

// Lanes g .. g + Lanes(df) - 1 of the transposed tile: xt[i * 8 + s] is
// element i of sub-block s. Writes scale and -min per sub-block, and the
// chosen codes transposed (lt[i * 8 + s]).
template <class DF>
HWY_INLINE void Qkx2Lanes(DF df, const float* HWY_RESTRICT xt, size_t g, int nmax, float rmin,
                          int nstep, float* HWY_RESTRICT scale_out, float* HWY_RESTRICT min_out,
                          int32_t* HWY_RESTRICT lt) {
  using V = hn::Vec<DF>;
  const hn::RebindToSigned<DF> di;
  const auto zero = hn::Zero(df);
  const auto zero_i = hn::Zero(di);
  const auto nmax_i = hn::Set(di, nmax);
  auto X = [&](size_t i) { return hn::LoadU(df, xt + i * kQ45Subs + g); };

  // Weights av_x + |x|, av_x = sqrt(sum x^2 / 32) summed in element order.
  V sum_x2 = zero;
  for (size_t i = 0; i < kQ45Len; ++i) sum_x2 = hn::Add(sum_x2, hn::Mul(X(i), X(i)));
  const V av_x = hn::Sqrt(hn::Div(sum_x2, hn::Set(df, 32.0f)));
  HWY_ALIGN float wt[kQ45Len * kQ45Subs];
  const size_t n = hn::Lanes(df);
  for (size_t i = 0; i < kQ45Len; ++i) hn::Store(hn::Add(av_x, hn::Abs(X(i))), df, wt + i * n);
  auto W = [&](size_t i) { return hn::Load(df, wt + i * n); };

  V min = X(0), max = X(0);
  V sum_w = W(0);
  V sum_x = hn::Mul(sum_w, X(0));
  for (size_t i = 1; i < kQ45Len; ++i) {
    const V x = X(i);
    min = hn::IfThenElse(hn::Lt(x, min), x, min);
    max = hn::IfThenElse(hn::Gt(x, max), x, max);
    sum_w = hn::Add(sum_w, W(i));
    sum_x = hn::Add(sum_x, hn::Mul(W(i), x));
  }
  min = hn::IfThenElse(hn::Gt(min, zero), zero, min);
  // max == min: all codes 0, scale 0 (selected at the end; the lanes'
  // divisions by zero meanwhile are harmless IEEE values).
  const auto flat = hn::Eq(max, min);
  const V min0 = min;  // what a flat lane reports

  V iscale = hn::Div(hn::Set(df, static_cast<float>(nmax)), hn::Sub(max, min));
  V scale = hn::Div(hn::Set(df, 1.0f), iscale);
  V best_error = zero;
  HWY_ALIGN int32_t lbest[kQ45Len * kQ45Subs];
  for (size_t i = 0; i < kQ45Len; ++i) {
    const V x = X(i);
    const auto l = hn::Min(nmax_i, hn::Max(zero_i, NearestIntVec(df, hn::Mul(iscale, hn::Sub(x, min)))));
    hn::Store(l, di, lbest + i * n);
    const V diff = hn::Sub(hn::Add(hn::Mul(scale, hn::ConvertTo(df, l)), min), x);
    best_error = hn::Add(best_error, hn::Mul(W(i), hn::Mul(diff, diff)));
  }
  HWY_ALIGN float laux[kQ45Len * kQ45Subs];
  for (int is = 0; is <= nstep; ++is) {
    // (rmin + rdelta * is + nmax) in scalar float, as the reference; over
    // max - min with the min of the best candidate so far (ggml updates
    // min when a candidate wins, and later candidates use it).
    const float num = rmin + 0.1f * static_cast<float>(is) + static_cast<float>(nmax);
    iscale = hn::Div(hn::Set(df, num), hn::Sub(max, min));
    V sum_l = zero, sum_l2 = zero, sum_xl = zero;
    for (size_t i = 0; i < kQ45Len; ++i) {
      const V x = X(i);
      const V lf = hn::ConvertTo(
          df, hn::Min(nmax_i, hn::Max(zero_i, NearestIntVec(df, hn::Mul(iscale, hn::Sub(x, min))))));
      hn::Store(lf, df, laux + i * n);
      const V wl = hn::Mul(W(i), lf);
      sum_l = hn::Add(sum_l, wl);
      sum_l2 = hn::Add(sum_l2, hn::Mul(wl, lf));
      sum_xl = hn::Add(sum_xl, hn::Mul(wl, x));
    }
    const V det = hn::Sub(hn::Mul(sum_w, sum_l2), hn::Mul(sum_l, sum_l));
    const auto solvable = hn::Gt(det, zero);
    V this_scale = hn::Div(hn::Sub(hn::Mul(sum_w, sum_xl), hn::Mul(sum_x, sum_l)), det);
    V this_min = hn::Div(hn::Sub(hn::Mul(sum_l2, sum_x), hn::Mul(sum_l, sum_xl)), det);
    const auto clip = hn::Gt(this_min, zero);
    this_min = hn::IfThenElse(clip, zero, this_min);
    this_scale = hn::IfThenElse(clip, hn::Div(sum_xl, sum_l2), this_scale);
    V cur_error = zero;
    for (size_t i = 0; i < kQ45Len; ++i) {
      const V diff = hn::Sub(hn::Add(hn::Mul(this_scale, hn::Load(df, laux + i * n)), this_min), X(i));
      cur_error = hn::Add(cur_error, hn::Mul(W(i), hn::Mul(diff, diff)));
    }
    const auto better = hn::And(solvable, hn::Lt(cur_error, best_error));
    if (hn::AllFalse(df, better)) continue;
    const auto better_i = hn::RebindMask(di, better);
    for (size_t i = 0; i < kQ45Len; ++i) {
      const auto l = hn::ConvertTo(di, hn::Load(df, laux + i * n));
      hn::Store(hn::IfThenElse(better_i, l, hn::Load(di, lbest + i * n)), di, lbest + i * n);
    }
    best_error = hn::IfThenElse(better, cur_error, best_error);
    scale = hn::IfThenElse(better, this_scale, scale);
    min = hn::IfThenElse(better, this_min, min);
  }
  scale = hn::IfThenElse(flat, zero, scale);
  min = hn::IfThenElse(flat, min0, min);
  hn::StoreU(scale, df, scale_out + g);
  hn::StoreU(hn::Neg(min), df, min_out + g);
  const auto flat_i = hn::RebindMask(di, flat);
  for (size_t i = 0; i < kQ45Len; ++i) {
    hn::StoreU(hn::IfThenZeroElse(flat_i, hn::Load(di, lbest + i * n)), di, lt + i * kQ45Subs + g);
  }
}

// Stage 1 of Q4_K (nmax 15, rmin -1, 20 steps) / Q5_K (31, -0.5, 15): the
// eight searches in lanes, then the reference's super-block part.
HWY_INLINE void SearchQ45KLanes(const float* HWY_RESTRICT x, uint8_t* HWY_RESTRICT block,
                                uint8_t* HWY_RESTRICT codes, ref::KQuantSub& sub, int nmax,
                                float rmin, int nstep) {
  const hn::CappedTag<float, kQ45Subs> df;
  HWY_ALIGN float xt[kQ45Len * kQ45Subs];
  for (size_t s = 0; s < kQ45Subs; ++s) {
    for (size_t i = 0; i < kQ45Len; ++i) xt[i * kQ45Subs + s] = x[s * kQ45Len + i];
  }
  float scales[kQ45Subs], mins[kQ45Subs];
  HWY_ALIGN int32_t lt[kQ45Len * kQ45Subs];
  for (size_t g = 0; g < kQ45Subs; g += hn::Lanes(df)) {
    Qkx2Lanes(df, xt, g, nmax, rmin, nstep, scales, mins, lt);
  }
  for (size_t s = 0; s < kQ45Subs; ++s) {
    for (size_t i = 0; i < kQ45Len; ++i) {
      codes[s * kQ45Len + i] = static_cast<uint8_t>(lt[i * kQ45Subs + s]);
    }
  }
  ref::FinishQ45K(scales, mins, nmax, block, sub);
}

#endif  // HWY_TARGET != HWY_SCALAR

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace amn
HWY_AFTER_NAMESPACE();

#endif  // AMN_KERNELS_GGML_KQUANT_SEARCH_INL_H_
