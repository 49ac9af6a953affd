// Per-target scale searches of Q2_K, Q4_K, Q5_K (ggml's make_qkx2_quants)
// and Q6_K (make_qx_quants), kernels/ref/ggml_quant_search.h, for all the
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

// make_qkx2_quants for lanes g .. g + Lanes(df) - 1 of a transposed tile of
// kSubs sub-blocks of kLen elements: xt[i * kSubs + s] is element i
// of sub-block s. Weights: wt_given (transposed like xt: the imatrix
// weights, where make_qkx3_quants is this search) when not null, else
// av_x + |x| (Q4_K/Q5_K, kAvWeights) or |x| (Q2_K); error: w * d^2 or
// w * |d| (kMad). Writes scale and -min per sub-block and the chosen codes
// transposed (lt[i * kSubs + s]).
template <size_t kSubs, size_t kLen, bool kAvWeights, bool kMad, class DF>
HWY_INLINE void Qkx2Lanes(DF df, const float* HWY_RESTRICT xt, size_t g, int nmax, float rmin,
                          float rdelta, int nstep, const float* HWY_RESTRICT wt_given,
                          float* HWY_RESTRICT scale_out, float* HWY_RESTRICT min_out,
                          int32_t* HWY_RESTRICT lt) {
  using V = hn::Vec<DF>;
  const hn::RebindToSigned<DF> di;
  const auto zero = hn::Zero(df);
  const auto zero_i = hn::Zero(di);
  const auto nmax_i = hn::Set(di, nmax);
  auto X = [&](size_t i) { return hn::LoadU(df, xt + i * kSubs + g); };

  // Weights av_x + |x|, av_x = sqrt(sum x^2 / 32) summed in element order;
  // or |x|.
  HWY_ALIGN float wt[kLen * kSubs];
  const size_t n = hn::Lanes(df);
  if (wt_given != nullptr) {
    for (size_t i = 0; i < kLen; ++i) {
      hn::Store(hn::LoadU(df, wt_given + i * kSubs + g), df, wt + i * n);
    }
  } else if (kAvWeights) {
    V sum_x2 = zero;
    for (size_t i = 0; i < kLen; ++i) sum_x2 = hn::Add(sum_x2, hn::Mul(X(i), X(i)));
    const V av_x = hn::Sqrt(hn::Div(sum_x2, hn::Set(df, static_cast<float>(kLen))));
    for (size_t i = 0; i < kLen; ++i) hn::Store(hn::Add(av_x, hn::Abs(X(i))), df, wt + i * n);
  } else {
    for (size_t i = 0; i < kLen; ++i) hn::Store(hn::Abs(X(i)), df, wt + i * n);
  }
  auto Err = [&](V w, V diff) { return hn::Mul(w, kMad ? hn::Abs(diff) : hn::Mul(diff, diff)); };
  auto W = [&](size_t i) { return hn::Load(df, wt + i * n); };

  V min = X(0), max = X(0);
  V sum_w = W(0);
  V sum_x = hn::Mul(sum_w, X(0));
  for (size_t i = 1; i < kLen; ++i) {
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
  HWY_ALIGN int32_t lbest[kLen * kSubs];
  for (size_t i = 0; i < kLen; ++i) {
    const V x = X(i);
    const auto l = hn::Min(nmax_i, hn::Max(zero_i, NearestIntVec(df, hn::Mul(iscale, hn::Sub(x, min)))));
    hn::Store(l, di, lbest + i * n);
    const V diff = hn::Sub(hn::Add(hn::Mul(scale, hn::ConvertTo(df, l)), min), x);
    best_error = hn::Add(best_error, Err(W(i), diff));
  }
  HWY_ALIGN float laux[kLen * kSubs];
  for (int is = 0; is <= nstep; ++is) {
    // (rmin + rdelta * is + nmax) in scalar float, as the reference; over
    // max - min with the min of the best candidate so far (ggml updates
    // min when a candidate wins, and later candidates use it).
    const float num = rmin + rdelta * static_cast<float>(is) + static_cast<float>(nmax);
    iscale = hn::Div(hn::Set(df, num), hn::Sub(max, min));
    V sum_l = zero, sum_l2 = zero, sum_xl = zero;
    for (size_t i = 0; i < kLen; ++i) {
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
    for (size_t i = 0; i < kLen; ++i) {
      const V diff = hn::Sub(hn::Add(hn::Mul(this_scale, hn::Load(df, laux + i * n)), this_min), X(i));
      cur_error = hn::Add(cur_error, Err(W(i), diff));
    }
    const auto better = hn::And(solvable, hn::Lt(cur_error, best_error));
    if (hn::AllFalse(df, better)) continue;
    const auto better_i = hn::RebindMask(di, better);
    for (size_t i = 0; i < kLen; ++i) {
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
  for (size_t i = 0; i < kLen; ++i) {
    hn::StoreU(hn::IfThenZeroElse(flat_i, hn::Load(di, lbest + i * n)), di, lt + i * kSubs + g);
  }
}

// make_qx_quants(16, kNmax, x, rmse_type 1, qw) for lanes g .. g +
// Lanes(df) - 1 of a transposed tile of 16 sub-blocks of 16 (Q6_K: kNmax
// 32; Q3_K with imatrix: 4): codes (offset by kNmax) and scale per
// sub-block. Weights: qwt (transposed like xt) when not null, else x^2.
template <int kNmax, class DF>
HWY_INLINE void QxLanes(DF df, const float* HWY_RESTRICT xt, size_t g,
                        const float* HWY_RESTRICT qwt, float* HWY_RESTRICT scale_out,
                        int32_t* HWY_RESTRICT lt) {
  using V = hn::Vec<DF>;
  constexpr size_t kSubs = 16, kLen = 16;
  const hn::RebindToSigned<DF> di;
  const size_t n = hn::Lanes(df);
  const V zero = hn::Zero(df);
  const auto lo = hn::Set(di, -kNmax), hi = hn::Set(di, kNmax - 1), off = hn::Set(di, kNmax);
  auto X = [&](size_t i) { return hn::LoadU(df, xt + i * kSubs + g); };
  // The x of largest |x|, the first one on ties (strict >).
  V amax = zero, max = zero;
  for (size_t i = 0; i < kLen; ++i) {
    const auto gt = hn::Gt(hn::Abs(X(i)), amax);
    amax = hn::IfThenElse(gt, hn::Abs(X(i)), amax);
    max = hn::IfThenElse(gt, X(i), max);
  }
  const auto all_zero = hn::Lt(amax, hn::Set(df, 1e-15f));  // ggml GROUP_MAX_EPS
  HWY_ALIGN int32_t lbest[kLen * kSubs];
  HWY_ALIGN int32_t lcand[kLen * kSubs];
  // Codes for iscale, and the ordered sums sum (w * x) * l, sum (w * l) * l
  // with w = x * x.
  auto Sums = [&](V iscale, int32_t* codes, V& sumlx, V& suml2) {
    sumlx = suml2 = zero;
    for (size_t i = 0; i < kLen; ++i) {
      const V x = X(i);
      const auto l = hn::Min(hi, hn::Max(lo, NearestIntVec(df, hn::Mul(iscale, x))));
      hn::Store(hn::Add(l, off), di, codes + i * n);
      const V w = qwt != nullptr ? hn::LoadU(df, qwt + i * kSubs + g) : hn::Mul(x, x);
      const V lf = hn::ConvertTo(df, l);
      sumlx = hn::Add(sumlx, hn::Mul(hn::Mul(w, x), lf));
      suml2 = hn::Add(suml2, hn::Mul(hn::Mul(w, lf), lf));
    }
  };
  V sumlx, suml2;
  Sums(hn::Div(hn::Set(df, static_cast<float>(-kNmax)), max), lbest, sumlx, suml2);
  V scale = hn::IfThenElseZero(hn::Ne(suml2, zero), hn::Div(sumlx, suml2));
  V best = hn::Mul(scale, sumlx);
  for (int is = -9; is <= 9; ++is) {
    if (is == 0) continue;
    const float num = -(static_cast<float>(kNmax) + 0.1f * static_cast<float>(is));
    Sums(hn::Div(hn::Set(df, num), max), lcand, sumlx, suml2);
    const auto better =
        hn::And(hn::Gt(suml2, zero), hn::Gt(hn::Mul(sumlx, sumlx), hn::Mul(best, suml2)));
    if (hn::AllFalse(df, better)) continue;
    const auto better_i = hn::RebindMask(di, better);
    for (size_t i = 0; i < kLen; ++i) {
      hn::Store(hn::IfThenElse(better_i, hn::Load(di, lcand + i * n), hn::Load(di, lbest + i * n)),
                di, lbest + i * n);
    }
    scale = hn::IfThenElse(better, hn::Div(sumlx, suml2), scale);
    best = hn::IfThenElse(better, hn::Mul(scale, sumlx), best);
  }
  hn::StoreU(hn::IfThenZeroElse(all_zero, scale), df, scale_out + g);
  const auto all_zero_i = hn::RebindMask(di, all_zero);
  for (size_t i = 0; i < kLen; ++i) {
    hn::StoreU(hn::IfThenZeroElse(all_zero_i, hn::Load(di, lbest + i * n)), di, lt + i * kSubs + g);
  }
}

// Super-blocks whose Q3_K searches run together (Q3Search): its
// coordinate descent is a chain of dependent operations per element (about
// 60 cycles of latency for a few cycles of work), so one super-block's one
// or two vectors of lanes leave the core idle; four super-blocks give four
// to sixteen independent chains whose steps interleave.
inline constexpr size_t kQ3Batch = 4;

// make_q3_quants(16, 4, x, do_rmse) for every sub-block of a transposed
// tile of kSubs sub-blocks of 16 (xt[i * kSubs + s]: element i of sub-block
// s), one lane per sub-block: codes (offset by 4; 0 for an all-zero
// sub-block, lt laid out like xt) and scale per sub-block. Each lane does
// the scalar recurrence, its sums updated in place in element order. The
// sweeps visit element i of every vector of lanes before element i + 1
// (the vectors are independent, so their chains overlap); a vector leaves
// the sweeps once a sweep changed none of its lanes, as does a converged
// lane within a vector: a sweep without change changes nothing the next
// time either, so that is the reference's early stop.
template <size_t kSubs, class DF>
HWY_INLINE void Q3Search(DF df, const float* HWY_RESTRICT xt, float* HWY_RESTRICT scale_out,
                         int32_t* HWY_RESTRICT lt) {
  using V = hn::Vec<DF>;
  constexpr size_t kLen = 16;
  constexpr int kNmax = 4;
  const hn::RebindToSigned<DF> di;
  const size_t n = hn::Lanes(df);
  const V zero = hn::Zero(df);
  const auto lo = hn::Set(di, -kNmax), hi = hn::Set(di, kNmax - 1);
  // w = x * x and w * x per element, the products the reference forms.
  HWY_ALIGN float wt[kLen * kSubs];
  HWY_ALIGN float wxt[kLen * kSubs];
  HWY_ALIGN float sumlx_s[kSubs];
  HWY_ALIGN float suml2_s[kSubs];
  HWY_ALIGN int32_t changed_s[kSubs];
  size_t active[kSubs];
  size_t n_active = 0;
  for (size_t g = 0; g < kSubs; g += n) {
    auto X = [&](size_t i) { return hn::Load(df, xt + i * kSubs + g); };
    V amax = zero, max = zero;
    for (size_t i = 0; i < kLen; ++i) {
      const auto gt = hn::Gt(hn::Abs(X(i)), amax);
      amax = hn::IfThenElse(gt, hn::Abs(X(i)), amax);
      max = hn::IfThenElse(gt, X(i), max);
    }
    const V iscale = hn::Div(hn::Set(df, static_cast<float>(-kNmax)), max);
    V sumlx = zero, suml2 = zero;
    for (size_t i = 0; i < kLen; ++i) {
      const V x = X(i);
      const auto l = hn::Min(hi, hn::Max(lo, NearestIntVec(df, hn::Mul(iscale, x))));
      hn::Store(l, di, lt + i * kSubs + g);
      const V w = hn::Mul(x, x);
      const V wx = hn::Mul(w, x);
      hn::Store(w, df, wt + i * kSubs + g);
      hn::Store(wx, df, wxt + i * kSubs + g);
      const V lf = hn::ConvertTo(df, l);
      sumlx = hn::Add(sumlx, hn::Mul(wx, lf));
      suml2 = hn::Add(suml2, hn::Mul(hn::Mul(w, lf), lf));
    }
    hn::Store(sumlx, df, sumlx_s + g);
    hn::Store(suml2, df, suml2_s + g);
    active[n_active++] = g;
  }
  for (int itry = 0; itry < 5 && n_active > 0; ++itry) {
    for (size_t a = 0; a < n_active; ++a) hn::Store(hn::Zero(di), di, changed_s + active[a]);
    for (size_t i = 0; i < kLen; ++i) {
      for (size_t a = 0; a < n_active; ++a) {
        const size_t g = active[a];
        const size_t k = i * kSubs + g;
        const V x = hn::Load(df, xt + k);
        const V w = hn::Load(df, wt + k);
        const V wx = hn::Load(df, wxt + k);
        const V sumlx = hn::Load(df, sumlx_s + g);
        const V suml2 = hn::Load(df, suml2_s + g);
        const auto li = hn::Load(di, lt + k);
        const V lif = hn::ConvertTo(df, li);
        V slx = hn::Sub(sumlx, hn::Mul(wx, lif));
        const auto positive = hn::Gt(slx, zero);
        V sl2 = hn::Sub(suml2, hn::Mul(hn::Mul(w, lif), lif));
        const auto new_l =
            hn::Min(hi, hn::Max(lo, NearestIntVec(df, hn::Div(hn::Mul(x, sl2), slx))));
        const auto differs = hn::RebindMask(df, hn::Ne(new_l, li));
        const V nlf = hn::ConvertTo(df, new_l);
        slx = hn::Add(slx, hn::Mul(wx, nlf));
        sl2 = hn::Add(sl2, hn::Mul(hn::Mul(w, nlf), nlf));
        const auto gain =
            hn::Gt(hn::Mul(hn::Mul(slx, slx), suml2), hn::Mul(hn::Mul(sumlx, sumlx), sl2));
        const auto take = hn::And(hn::And(positive, differs), hn::And(hn::Gt(sl2, zero), gain));
        const auto take_i = hn::RebindMask(di, take);
        hn::Store(hn::IfThenElse(take_i, new_l, li), di, lt + k);
        hn::Store(hn::IfThenElse(take, slx, sumlx), df, sumlx_s + g);
        hn::Store(hn::IfThenElse(take, sl2, suml2), df, suml2_s + g);
        hn::Store(hn::Or(hn::Load(di, changed_s + g), hn::VecFromMask(di, take_i)), di,
                  changed_s + g);
      }
    }
    size_t still = 0;
    for (size_t a = 0; a < n_active; ++a) {
      const size_t g = active[a];
      if (!hn::AllTrue(di, hn::Eq(hn::Load(di, changed_s + g), hn::Zero(di)))) active[still++] = g;
    }
    n_active = still;
  }
  const auto off = hn::Set(di, kNmax);
  for (size_t g = 0; g < kSubs; g += n) {
    V amax = zero;
    for (size_t i = 0; i < kLen; ++i) {
      amax = hn::Max(amax, hn::Abs(hn::Load(df, xt + i * kSubs + g)));
    }
    const auto all_zero = hn::Lt(amax, hn::Set(df, 1e-15f));  // ggml GROUP_MAX_EPS
    const V sumlx = hn::Load(df, sumlx_s + g), suml2 = hn::Load(df, suml2_s + g);
    const V scale = hn::IfThenElseZero(hn::Gt(suml2, zero), hn::Div(sumlx, suml2));
    hn::StoreU(hn::IfThenZeroElse(all_zero, scale), df, scale_out + g);
    const auto all_zero_i = hn::RebindMask(di, all_zero);
    for (size_t i = 0; i < kLen; ++i) {
      const auto l = hn::Add(hn::Load(di, lt + i * kSubs + g), off);
      hn::Store(hn::IfThenZeroElse(all_zero_i, l), di, lt + i * kSubs + g);
    }
  }
}

// The tile transposed for the lanes: xt[i * kSubs + s] = x[s * kLen + i].
template <size_t kSubs, size_t kLen>
HWY_INLINE void TransposeTile(const float* HWY_RESTRICT x, float* HWY_RESTRICT xt) {
  for (size_t s = 0; s < kSubs; ++s) {
    for (size_t i = 0; i < kLen; ++i) xt[i * kSubs + s] = x[s * kLen + i];
  }
}
template <size_t kSubs, size_t kLen>
HWY_INLINE void UntransposeCodes(const int32_t* HWY_RESTRICT lt, uint8_t* HWY_RESTRICT codes) {
  for (size_t s = 0; s < kSubs; ++s) {
    for (size_t i = 0; i < kLen; ++i) codes[s * kLen + i] = static_cast<uint8_t>(lt[i * kSubs + s]);
  }
}

// Stage 1 of Q4_K (nmax 15, rmin -1, 20 steps) / Q5_K (31, -0.5, 15): the
// eight searches in lanes, then the reference's super-block part.
HWY_INLINE void SearchQ45KLanes(const float* HWY_RESTRICT x, uint8_t* HWY_RESTRICT block,
                                uint8_t* HWY_RESTRICT codes, ref::KQuantSub& sub, int nmax,
                                float rmin, int nstep) {
  const hn::CappedTag<float, 8> df;
  HWY_ALIGN float xt[256];
  TransposeTile<8, 32>(x, xt);
  float scales[8], mins[8];
  HWY_ALIGN int32_t lt[256];
  for (size_t g = 0; g < 8; g += hn::Lanes(df)) {
    Qkx2Lanes<8, 32, true, false>(df, xt, g, nmax, rmin, 0.1f, nstep, nullptr, scales, mins, lt);
  }
  UntransposeCodes<8, 32>(lt, codes);
  ref::FinishQ45K(scales, mins, nmax, block, sub);
}

// Stage 1 of Q2_K: sixteen 16-element searches (nmax 3, rmin -0.5, 15
// steps, weights |x|, error w * |d|) in lanes, then the reference's
// super-block part.
HWY_INLINE void SearchQ2KLanes(const float* HWY_RESTRICT x, uint8_t* HWY_RESTRICT block,
                               uint8_t* HWY_RESTRICT codes, ref::KQuantSub& sub) {
  const hn::CappedTag<float, 16> df;
  HWY_ALIGN float xt[256];
  TransposeTile<16, 16>(x, xt);
  float scales[16], mins[16];
  HWY_ALIGN int32_t lt[256];
  for (size_t g = 0; g < 16; g += hn::Lanes(df)) {
    Qkx2Lanes<16, 16, false, true>(df, xt, g, 3, -0.5f, 0.1f, 15, nullptr, scales, mins, lt);
  }
  UntransposeCodes<16, 16>(lt, codes);
  ref::FinishQ2K(scales, mins, block, sub);
}

// Stage 1 of Q3_K for kQ3Batch super-blocks (xs[b]: super-block b's 256
// elements): the 16 * kQ3Batch make_q3_quants in lanes (Q3Search), then
// the reference's super-block part of each; codes[b], sub[b] as
// SearchQ2KLanes's.
HWY_INLINE void SearchQ3KBatch(const float* const* HWY_RESTRICT xs,
                               uint8_t* const* HWY_RESTRICT blocks,
                               uint8_t (*HWY_RESTRICT codes)[256],
                               ref::KQuantSub* HWY_RESTRICT sub) {
  constexpr size_t kSubs = 16 * kQ3Batch;
  const hn::CappedTag<float, 16> df;
  HWY_ALIGN float xt[16 * kSubs];
  for (size_t b = 0; b < kQ3Batch; ++b) {
    for (size_t j = 0; j < 16; ++j) {
      for (size_t i = 0; i < 16; ++i) xt[i * kSubs + 16 * b + j] = xs[b][16 * j + i];
    }
  }
  float scales[kSubs];
  HWY_ALIGN int32_t lt[16 * kSubs];
  Q3Search<kSubs>(df, xt, scales, lt);
  for (size_t b = 0; b < kQ3Batch; ++b) {
    if (blocks[b] == nullptr) continue;
    for (size_t j = 0; j < 16; ++j) {
      for (size_t i = 0; i < 16; ++i) {
        codes[b][16 * j + i] = static_cast<uint8_t>(lt[i * kSubs + 16 * b + j]);
      }
    }
    ref::FinishQ3K(scales + 16 * b, blocks[b], sub[b]);
  }
}

// Stage 1 of Q6_K: sixteen make_qx_quants in lanes, then the reference's
// super-block part.
HWY_INLINE void SearchQ6KLanes(const float* HWY_RESTRICT x, uint8_t* HWY_RESTRICT block,
                               uint8_t* HWY_RESTRICT codes, ref::KQuantSub& sub) {
  const hn::CappedTag<float, 16> df;
  HWY_ALIGN float xt[256];
  TransposeTile<16, 16>(x, xt);
  float scales[16];
  HWY_ALIGN int32_t lt[256];
  for (size_t g = 0; g < 16; g += hn::Lanes(df)) QxLanes<32>(df, xt, g, nullptr, scales, lt);
  UntransposeCodes<16, 16>(lt, codes);
  ref::FinishQ6K(scales, block, codes, sub);
}

// Stage 1 with an importance matrix (qw: the super-block's 256 values).
// The weights and their sub-block sums are the reference's scalar loops
// (ref::ImatrixWeights, one sqrt per element); the searches run in lanes
// with those weights (Q4_K, Q5_K, Q2_K: make_qkx3_quants = Qkx2Lanes with
// rmin -0.9, rdelta 0.05, 36 steps, squared error; Q3_K, Q6_K:
// make_qx_quants with weights), then the reference's weighted super-block
// parts.
HWY_INLINE void SearchQ45KLanesW(const float* HWY_RESTRICT x, const float* HWY_RESTRICT qw,
                                 uint8_t* HWY_RESTRICT block, uint8_t* HWY_RESTRICT codes,
                                 ref::KQuantSub& sub, int nmax) {
  const hn::CappedTag<float, 8> df;
  HWY_ALIGN float xt[256];
  HWY_ALIGN float wt[256];
  float weights[256], sw[8];
  ref::ImatrixWeights(nmax == 15 ? GgmlType::kQ4_K : GgmlType::kQ5_K, x, qw, weights, sw);
  TransposeTile<8, 32>(x, xt);
  TransposeTile<8, 32>(weights, wt);
  float scales[8], mins[8];
  HWY_ALIGN int32_t lt[256];
  for (size_t g = 0; g < 8; g += hn::Lanes(df)) {
    Qkx2Lanes<8, 32, false, false>(df, xt, g, nmax, -0.9f, 0.05f, 36, wt, scales, mins, lt);
  }
  UntransposeCodes<8, 32>(lt, codes);
  ref::FinishQ45KW(scales, mins, sw, nmax, block, sub);
}

HWY_INLINE void SearchQ2KLanesW(const float* HWY_RESTRICT x, const float* HWY_RESTRICT qw,
                                uint8_t* HWY_RESTRICT block, uint8_t* HWY_RESTRICT codes,
                                ref::KQuantSub& sub) {
  const hn::CappedTag<float, 16> df;
  HWY_ALIGN float xt[256];
  HWY_ALIGN float wt[256];
  float weights[256], sw[16];
  ref::ImatrixWeights(GgmlType::kQ2_K, x, qw, weights, sw);
  TransposeTile<16, 16>(x, xt);
  TransposeTile<16, 16>(weights, wt);
  float scales[16], mins[16];
  HWY_ALIGN int32_t lt[256];
  for (size_t g = 0; g < 16; g += hn::Lanes(df)) {
    Qkx2Lanes<16, 16, false, false>(df, xt, g, 3, -0.9f, 0.05f, 36, wt, scales, mins, lt);
  }
  UntransposeCodes<16, 16>(lt, codes);
  ref::FinishQ2KW(scales, mins, sw, block, sub);
}

HWY_INLINE void SearchQ3KLanesW(const float* HWY_RESTRICT x, const float* HWY_RESTRICT qw,
                                uint8_t* HWY_RESTRICT block, uint8_t* HWY_RESTRICT codes,
                                ref::KQuantSub& sub) {
  const hn::CappedTag<float, 16> df;
  HWY_ALIGN float xt[256];
  HWY_ALIGN float wt[256];
  float weights[256], sw[16];
  ref::ImatrixWeights(GgmlType::kQ3_K, x, qw, weights, sw);
  TransposeTile<16, 16>(x, xt);
  TransposeTile<16, 16>(weights, wt);
  float scales[16];
  HWY_ALIGN int32_t lt[256];
  for (size_t g = 0; g < 16; g += hn::Lanes(df)) QxLanes<4>(df, xt, g, wt, scales, lt);
  UntransposeCodes<16, 16>(lt, codes);
  ref::FinishQ3KW(scales, sw, block, sub);
}

// Q6_K weighs with the importance values alone.
HWY_INLINE void SearchQ6KLanesW(const float* HWY_RESTRICT x, const float* HWY_RESTRICT qw,
                                uint8_t* HWY_RESTRICT block, uint8_t* HWY_RESTRICT codes,
                                ref::KQuantSub& sub) {
  const hn::CappedTag<float, 16> df;
  HWY_ALIGN float xt[256];
  HWY_ALIGN float qwt[256];
  TransposeTile<16, 16>(x, xt);
  TransposeTile<16, 16>(qw, qwt);
  float scales[16];
  HWY_ALIGN int32_t lt[256];
  for (size_t g = 0; g < 16; g += hn::Lanes(df)) QxLanes<32>(df, xt, g, qwt, scales, lt);
  UntransposeCodes<16, 16>(lt, codes);
  ref::FinishQ6K(scales, block, codes, sub);
}

#endif  // HWY_TARGET != HWY_SCALAR

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace amn
HWY_AFTER_NAMESPACE();

#endif  // AMN_KERNELS_GGML_KQUANT_SEARCH_INL_H_
