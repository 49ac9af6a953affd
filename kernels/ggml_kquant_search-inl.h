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
#include <type_traits>

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

// make_qkx2_quants for lanes g .. g + kVecs * Lanes(df) - 1 of a
// transposed tile of kSubs sub-blocks of kLen elements (xt[i * kSubs + s]:
// element i of sub-block s), as kVecs (1 or 2) vectors of lanes whose
// element loops interleave: a lane's sums are chains of dependent adds (32
// of them per candidate scale), so a single vector leaves the core waiting
// on latency; two independent ones fill that time. Weights: wt_given (transposed like xt:
// the imatrix weights, where make_qkx3_quants is this search) when not
// null, else av_x + |x| (Q4_K/Q5_K, kAvWeights) or |x| (Q2_K); error:
// w * d^2 or w * |d| (kMad). Writes scale and -min per sub-block and the
// chosen codes transposed (lt[i * kSubs + s]). g + kVecs * Lanes(df) <=
// kSubs.
template <size_t kVecs, size_t kSubs, size_t kLen, bool kAvWeights, bool kMad, class DF>
HWY_INLINE void Qkx2Lanes(DF df, const float* HWY_RESTRICT xt, size_t g, int nmax, float rmin,
                          float rdelta, int nstep, const float* HWY_RESTRICT wt_given,
                          float* HWY_RESTRICT scale_out, float* HWY_RESTRICT min_out,
                          int32_t* HWY_RESTRICT lt) {
  using V = hn::Vec<DF>;
  const hn::RebindToSigned<DF> di;
  const size_t n = hn::Lanes(df);
  const auto zero = hn::Zero(df);
  const auto zero_i = hn::Zero(di);
  const auto nmax_i = hn::Set(di, nmax);
  static_assert(kVecs == 1 || kVecs == 2, "one or two vectors");
  // Vector v (< kVecs) holds lanes g + v * n ...; scratch rows keep element
  // i of vector v at (kVecs * i + v) * n, per-vector state at v * n (the
  // hot element loops keep their sums in registers, SumPair and Acc).
  auto X = [&](size_t v, size_t i) { return hn::LoadU(df, xt + i * kSubs + g + v * n); };
  auto At = [&](size_t v, size_t i) { return (kVecs * i + v) * n; };
  auto Ld = [&](const float* state, size_t v) { return hn::Load(df, state + v * n); };
  auto St = [&](V value, float* state, size_t v) { hn::Store(value, df, state + v * n); };
  // s_v += term(v, i) for every element in order, all vectors per element.
  auto SumPair = [&](V& s0, V& s1, auto term) {
    for (size_t i = 0; i < kLen; ++i) {
      s0 = hn::Add(s0, term(0, i));
      if constexpr (kVecs == 2) s1 = hn::Add(s1, term(1, i));
    }
  };
  HWY_ALIGN float min_s[kSubs], min0_s[kSubs], max_s[kSubs], sum_w_s[kSubs], sum_x_s[kSubs];
  HWY_ALIGN float iscale_s[kSubs], scale_s[kSubs], best_s[kSubs];
  HWY_ALIGN float det_s[kSubs], this_scale_s[kSubs], this_min_s[kSubs];

  // Weights av_x + |x|, av_x = sqrt(sum x^2 / 32) summed in element order;
  // or |x|.
  HWY_ALIGN float wt[kLen * kSubs];
  if (wt_given != nullptr) {
    for (size_t i = 0; i < kLen; ++i) {
      for (size_t v = 0; v < kVecs; ++v) {
        hn::Store(hn::LoadU(df, wt_given + i * kSubs + g + v * n), df, wt + At(v, i));
      }
    }
  } else if (kAvWeights) {
    V sum_x2_0 = zero, sum_x2_1 = zero;
    SumPair(sum_x2_0, sum_x2_1, [&](size_t v, size_t i) { return hn::Mul(X(v, i), X(v, i)); });
    const V len = hn::Set(df, static_cast<float>(kLen));
    St(hn::Sqrt(hn::Div(sum_x2_0, len)), scale_s, 0);  // av_x, scale_s as scratch
    if constexpr (kVecs == 2) St(hn::Sqrt(hn::Div(sum_x2_1, len)), scale_s, 1);
    for (size_t i = 0; i < kLen; ++i) {
      for (size_t v = 0; v < kVecs; ++v) {
        hn::Store(hn::Add(Ld(scale_s, v), hn::Abs(X(v, i))), df, wt + At(v, i));
      }
    }
  } else {
    for (size_t i = 0; i < kLen; ++i) {
      for (size_t v = 0; v < kVecs; ++v) hn::Store(hn::Abs(X(v, i)), df, wt + At(v, i));
    }
  }
  auto W = [&](size_t v, size_t i) { return hn::Load(df, wt + At(v, i)); };
  auto Err = [&](V w, V diff) { return hn::Mul(w, kMad ? hn::Abs(diff) : hn::Mul(diff, diff)); };
  // clamp(nearest_int(iscale * (x - min)), 0, nmax) with vector v's state.
  auto Code = [&](size_t v, V x) {
    const V scaled = hn::Mul(Ld(iscale_s, v), hn::Sub(x, Ld(min_s, v)));
    return hn::Min(nmax_i, hn::Max(zero_i, NearestIntVec(df, scaled)));
  };

  for (size_t v = 0; v < kVecs; ++v) {
    V min = X(v, 0), max = X(v, 0);
    V sum_w = W(v, 0);
    V sum_x = hn::Mul(sum_w, X(v, 0));
    for (size_t i = 1; i < kLen; ++i) {
      const V x = X(v, i);
      min = hn::IfThenElse(hn::Lt(x, min), x, min);
      max = hn::IfThenElse(hn::Gt(x, max), x, max);
      sum_w = hn::Add(sum_w, W(v, i));
      sum_x = hn::Add(sum_x, hn::Mul(W(v, i), x));
    }
    min = hn::IfThenElse(hn::Gt(min, zero), zero, min);
    // max == min0: all codes 0, scale 0 (selected at the end; the lanes'
    // divisions by zero meanwhile are harmless IEEE values).
    St(min, min_s, v);
    St(min, min0_s, v);
    St(max, max_s, v);
    St(sum_w, sum_w_s, v);
    St(sum_x, sum_x_s, v);
    const V iscale = hn::Div(hn::Set(df, static_cast<float>(nmax)), hn::Sub(max, min));
    St(iscale, iscale_s, v);
    St(hn::Div(hn::Set(df, 1.0f), iscale), scale_s, v);
  }
  HWY_ALIGN int32_t lbest[kLen * kSubs];
  V best0 = zero, best1 = zero;
  SumPair(best0, best1, [&](size_t v, size_t i) {
    const V x = X(v, i);
    const auto l = Code(v, x);
    hn::Store(l, di, lbest + At(v, i));
    const V diff = hn::Sub(hn::Add(hn::Mul(Ld(scale_s, v), hn::ConvertTo(df, l)), Ld(min_s, v)), x);
    return Err(W(v, i), diff);
  });
  St(best0, best_s, 0);
  if constexpr (kVecs == 2) St(best1, best_s, 1);

  HWY_ALIGN float laux[kLen * kSubs];
  // Codes of the candidate for element i of vector v, and the ordered sums
  // sum w l, sum w l l, sum w l x.
  auto Acc = [&](size_t v, size_t i, V& sum_l, V& sum_l2, V& sum_xl) {
    const V x = X(v, i);
    const V lf = hn::ConvertTo(df, Code(v, x));
    hn::Store(lf, df, laux + At(v, i));
    const V wl = hn::Mul(W(v, i), lf);
    sum_l = hn::Add(sum_l, wl);
    sum_l2 = hn::Add(sum_l2, hn::Mul(wl, lf));
    sum_xl = hn::Add(sum_xl, hn::Mul(wl, x));
  };
  // The candidate's least-squares scale and min.
  auto Solve = [&](size_t v, V sum_l, V sum_l2, V sum_xl) {
    const V sum_w = Ld(sum_w_s, v), sum_x = Ld(sum_x_s, v);
    const V det = hn::Sub(hn::Mul(sum_w, sum_l2), hn::Mul(sum_l, sum_l));
    V this_scale = hn::Div(hn::Sub(hn::Mul(sum_w, sum_xl), hn::Mul(sum_x, sum_l)), det);
    V this_min = hn::Div(hn::Sub(hn::Mul(sum_l2, sum_x), hn::Mul(sum_l, sum_xl)), det);
    const auto clip = hn::Gt(this_min, zero);
    this_min = hn::IfThenElse(clip, zero, this_min);
    this_scale = hn::IfThenElse(clip, hn::Div(sum_xl, sum_l2), this_scale);
    St(det, det_s, v);
    St(this_scale, this_scale_s, v);
    St(this_min, this_min_s, v);
  };
  // The candidate replaces the best one where solvable (det > 0) and better.
  auto Take = [&](size_t v, V cur_error) {
    const auto better =
        hn::And(hn::Gt(Ld(det_s, v), zero), hn::Lt(cur_error, Ld(best_s, v)));
    if (hn::AllFalse(df, better)) return;
    const auto better_i = hn::RebindMask(di, better);
    for (size_t i = 0; i < kLen; ++i) {
      const auto l = hn::ConvertTo(di, hn::Load(df, laux + At(v, i)));
      hn::Store(hn::IfThenElse(better_i, l, hn::Load(di, lbest + At(v, i))), di, lbest + At(v, i));
    }
    St(hn::IfThenElse(better, cur_error, Ld(best_s, v)), best_s, v);
    St(hn::IfThenElse(better, Ld(this_scale_s, v), Ld(scale_s, v)), scale_s, v);
    St(hn::IfThenElse(better, Ld(this_min_s, v), Ld(min_s, v)), min_s, v);
  };
  for (int is = 0; is <= nstep; ++is) {
    // (rmin + rdelta * is + nmax) in scalar float, as the reference; over
    // max - min with the min of the best candidate so far (ggml updates
    // min when a candidate wins, and later candidates use it).
    const float num = rmin + rdelta * static_cast<float>(is) + static_cast<float>(nmax);
    for (size_t v = 0; v < kVecs; ++v) {
      St(hn::Div(hn::Set(df, num), hn::Sub(Ld(max_s, v), Ld(min_s, v))), iscale_s, v);
    }
    V sum_l0 = zero, sum_l2_0 = zero, sum_xl0 = zero;
    V sum_l1 = zero, sum_l2_1 = zero, sum_xl1 = zero;
    for (size_t i = 0; i < kLen; ++i) {
      Acc(0, i, sum_l0, sum_l2_0, sum_xl0);
      if constexpr (kVecs == 2) Acc(1, i, sum_l1, sum_l2_1, sum_xl1);
    }
    Solve(0, sum_l0, sum_l2_0, sum_xl0);
    if constexpr (kVecs == 2) Solve(1, sum_l1, sum_l2_1, sum_xl1);
    V cur0 = zero, cur1 = zero;
    SumPair(cur0, cur1, [&](size_t v, size_t i) {
      const V l = hn::Load(df, laux + At(v, i));
      const V diff = hn::Sub(hn::Add(hn::Mul(Ld(this_scale_s, v), l), Ld(this_min_s, v)), X(v, i));
      return Err(W(v, i), diff);
    });
    Take(0, cur0);
    if constexpr (kVecs == 2) Take(1, cur1);
  }
  for (size_t v = 0; v < kVecs; ++v) {
    const auto flat = hn::Eq(Ld(max_s, v), Ld(min0_s, v));
    const V min = hn::IfThenElse(flat, Ld(min0_s, v), Ld(min_s, v));
    hn::StoreU(hn::IfThenZeroElse(flat, Ld(scale_s, v)), df, scale_out + g + v * n);
    hn::StoreU(hn::Neg(min), df, min_out + g + v * n);
    const auto flat_i = hn::RebindMask(di, flat);
    for (size_t i = 0; i < kLen; ++i) {
      hn::StoreU(hn::IfThenZeroElse(flat_i, hn::Load(di, lbest + At(v, i))), di,
                 lt + i * kSubs + g + v * n);
    }
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
// The same for kBatch super-blocks of kPer sub-blocks (xs[b]: super-block
// b): sub-block j of super-block b is lane kPer * b + j. Only the first
// `present` super-blocks are read (a short batch's missing ones are not
// there); lanes kPer * present .. lanes_end - 1 become zeros.
template <size_t kBatch, size_t kPer, size_t kLen>
HWY_INLINE void TransposeBatch(const float* const* HWY_RESTRICT xs, size_t present,
                               size_t lanes_end, float* HWY_RESTRICT xt) {
  constexpr size_t kSubs = kBatch * kPer;
  for (size_t b = 0; b < present; ++b) {
    for (size_t j = 0; j < kPer; ++j) {
      for (size_t i = 0; i < kLen; ++i) xt[i * kSubs + kPer * b + j] = xs[b][kLen * j + i];
    }
  }
  for (size_t i = 0; i < kLen; ++i) {
    for (size_t s = kPer * present; s < lanes_end; ++s) xt[i * kSubs + s] = 0.0f;
  }
}
// The super-blocks present in a batch: blocks[b] is null from the first
// missing one on.
template <size_t kBatch>
HWY_INLINE size_t PresentBlocks(uint8_t* const* HWY_RESTRICT blocks) {
  size_t present = 0;
  while (present < kBatch && blocks[present] != nullptr) ++present;
  return present;
}
// Super-block b's codes from the batch's transposed ones.
template <size_t kBatch, size_t kPer, size_t kLen>
HWY_INLINE void UntransposeBatchCodes(const int32_t* HWY_RESTRICT lt, size_t b,
                                      uint8_t* HWY_RESTRICT codes) {
  for (size_t j = 0; j < kPer; ++j) {
    for (size_t i = 0; i < kLen; ++i) {
      codes[kLen * j + i] = static_cast<uint8_t>(lt[i * kBatch * kPer + kPer * b + j]);
    }
  }
}
template <size_t kSubs, size_t kLen>
HWY_INLINE void UntransposeCodes(const int32_t* HWY_RESTRICT lt, uint8_t* HWY_RESTRICT codes) {
  for (size_t s = 0; s < kSubs; ++s) {
    for (size_t i = 0; i < kLen; ++i) codes[s * kLen + i] = static_cast<uint8_t>(lt[i * kSubs + s]);
  }
}

// Sub-blocks whose make_qkx2_quants searches run together
// (SearchQkx2Batch): four super-blocks of Q4_K/Q5_K, two of Q2_K, so that
// AVX-512 fills its 16 lanes and every target has at least two independent
// vectors of lanes in flight (Qkx2Lanes).
inline constexpr size_t kQkx2BatchSubs = 32;
template <GgmlType kType>
inline constexpr size_t kQkx2Batch = kQkx2BatchSubs / (kType == GgmlType::kQ2_K ? 16 : 8);

// Stage 1 of Q2_K, Q4_K or Q5_K for kQkx2Batch<kType> super-blocks (xs[b]:
// super-block b's 256 elements): the sub-block searches in lanes, then the
// reference's super-block part of each (none where blocks[b] is null: a
// missing super-block of a short batch). Without importance values (qws
// null): make_qkx2_quants (Q4_K: nmax 15, rmin -1, 20 steps; Q5_K: 31,
// -0.5, 15; Q2_K: 3, -0.5, 15, weights |x|, error w * |d|). With them
// (qws[b]: super-block b's 256 values, null for a missing one):
// make_qkx3_quants (rmin -0.9, rdelta 0.05, 36 steps, squared error) with
// the reference's weights (ref::ImatrixWeights, one sqrt per element) and
// its weighted super-block part.
template <GgmlType kType>
HWY_INLINE void SearchQkx2Batch(const float* const* HWY_RESTRICT xs,
                                const float* const* HWY_RESTRICT qws,
                                uint8_t* const* HWY_RESTRICT blocks,
                                uint8_t (*HWY_RESTRICT codes)[256],
                                ref::KQuantSub* HWY_RESTRICT sub) {
  constexpr bool kQ2 = kType == GgmlType::kQ2_K;
  constexpr size_t kBatch = kQkx2Batch<kType>, kSubs = kQkx2BatchSubs;
  constexpr size_t kPer = kSubs / kBatch, kLen = 256 / kPer;
  constexpr int kNmax = kQ2 ? 3 : kType == GgmlType::kQ4_K ? 15 : 31;
  const hn::CappedTag<float, 16> df;
  const hn::CappedTag<float, 8> d8;
  const size_t present = PresentBlocks<kBatch>(blocks);
  // Pairs of vectors over the super-blocks present; the rest of a short
  // batch (the caller's last, or a one-row call of one super-block, as
  // `forget` and the registry samples make) in one vector, at most 8 lanes
  // wide where that covers it (one Q4_K/Q5_K super-block: AVX-512's
  // 256-bit vectors, as fast per lane as AVX2's and twice the 512-bit ones'
  // share of the ports). The search at g covers lanes g .. g + Width(g) - 1.
  const size_t n = hn::Lanes(df), n8 = hn::Lanes(d8), need = kPer * present;
  auto Width = [&](size_t g) { return need - g > n ? 2 * n : need - g > n8 ? n : n8; };
  size_t lanes_end = 0;
  while (lanes_end < need) lanes_end += Width(lanes_end);
  HWY_ALIGN float xt[kLen * kSubs];
  TransposeBatch<kBatch, kPer, kLen>(xs, present, lanes_end, xt);
  HWY_ALIGN float wt[kLen * kSubs];
  float sw[kBatch][kPer];
  if (qws != nullptr) {
    float weights[kBatch][256];
    const float* wp[kBatch];
    for (size_t b = 0; b < present; ++b) {
      ref::ImatrixWeights(kType, xs[b], qws[b], weights[b], sw[b]);
      wp[b] = weights[b];
    }
    TransposeBatch<kBatch, kPer, kLen>(wp, present, lanes_end, wt);
  }
  float scales[kSubs], mins[kSubs];
  HWY_ALIGN int32_t lt[kLen * kSubs];
  auto Search = [&](auto d, auto vecs, size_t g) {
    constexpr size_t kVecs = decltype(vecs)::value;
    if (qws != nullptr) {
      Qkx2Lanes<kVecs, kSubs, kLen, false, false>(d, xt, g, kNmax, -0.9f, 0.05f, 36, wt, scales,
                                                  mins, lt);
    } else {
      const float rmin = kType == GgmlType::kQ4_K ? -1.0f : -0.5f;
      const int nstep = kType == GgmlType::kQ4_K ? 20 : 15;
      Qkx2Lanes<kVecs, kSubs, kLen, !kQ2, kQ2>(d, xt, g, kNmax, rmin, 0.1f, nstep, nullptr,
                                                scales, mins, lt);
    }
  };
  using One = std::integral_constant<size_t, 1>;
  using Two = std::integral_constant<size_t, 2>;
  for (size_t g = 0; g < need; g += Width(g)) {
    if (Width(g) == 2 * n) {
      Search(df, Two(), g);
    } else if (Width(g) == n && n != n8) {
      Search(df, One(), g);
    } else {
      Search(d8, One(), g);
    }
  }
  for (size_t b = 0; b < kBatch; ++b) {
    if (blocks[b] == nullptr) continue;
    UntransposeBatchCodes<kBatch, kPer, kLen>(lt, b, codes[b]);
    const float* sc = scales + kPer * b;
    const float* mn = mins + kPer * b;
    if (kQ2) {
      if (qws != nullptr) {
        ref::FinishQ2KW(sc, mn, sw[b], blocks[b], sub[b]);
      } else {
        ref::FinishQ2K(sc, mn, blocks[b], sub[b]);
      }
    } else if (qws != nullptr) {
      ref::FinishQ45KW(sc, mn, sw[b], kNmax, blocks[b], sub[b]);
    } else {
      ref::FinishQ45K(sc, mn, kNmax, blocks[b], sub[b]);
    }
  }
}

// Stage 1 of Q3_K for kQ3Batch super-blocks (xs[b]: super-block b's 256
// elements, zeros for a missing one): the 16 * kQ3Batch make_q3_quants in lanes (Q3Search), then
// the reference's super-block part of each; codes[b], sub[b] as
// SearchQkx2Batch's.
HWY_INLINE void SearchQ3KBatch(const float* const* HWY_RESTRICT xs,
                               uint8_t* const* HWY_RESTRICT blocks,
                               uint8_t (*HWY_RESTRICT codes)[256],
                               ref::KQuantSub* HWY_RESTRICT sub) {
  constexpr size_t kSubs = 16 * kQ3Batch;
  const hn::CappedTag<float, 16> df;
  HWY_ALIGN float xt[16 * kSubs];
  TransposeBatch<kQ3Batch, 16, 16>(xs, kQ3Batch, kSubs, xt);
  float scales[kSubs];
  HWY_ALIGN int32_t lt[16 * kSubs];
  Q3Search<kSubs>(df, xt, scales, lt);
  for (size_t b = 0; b < kQ3Batch; ++b) {
    if (blocks[b] == nullptr) continue;
    UntransposeBatchCodes<kQ3Batch, 16, 16>(lt, b, codes[b]);
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
// with those weights (Q3_K, Q6_K: make_qx_quants with weights; Q2_K, Q4_K
// and Q5_K's make_qkx3_quants: SearchQkx2Batch), then the reference's
// weighted super-block parts.
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
