// Per-target IQ4_XS search and requantization (Highway 1.0.3): ggml's
// quantize_row_iq4_nl_impl without importance matrix (kernels/ref/
// ggml_kquant_encode_ref.h SearchIq4Xs / RequantIq4Xs). The eight 32-element
// sub-block searches run one lane per sub-block, each lane the scalar
// recurrence (same operations, same element order, branches as selects on
// the same comparisons); best_index_int8 is per element and computed without
// a search. Not compiled for HWY_SCALAR.
#if defined(AMN_KERNELS_GGML_IQ4XS_SEARCH_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef AMN_KERNELS_GGML_IQ4XS_SEARCH_INL_H_
#undef AMN_KERNELS_GGML_IQ4XS_SEARCH_INL_H_
#else
#define AMN_KERNELS_GGML_IQ4XS_SEARCH_INL_H_
#endif

#include <cstddef>
#include <cstdint>

#include "hwy/highway.h"
#include "kernels/ggml_iq4_index-inl.h"
#include "kernels/ggml_kquant_blocks.h"
#include "kernels/ggml_kquant_search-inl.h"
#include "kernels/ref/ggml_kquant_encode_ref.h"

HWY_BEFORE_NAMESPACE();
namespace amn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR

// The IQ4_XS sub-block scale search (ntry 7) for lanes g .. g + Lanes(df) - 1
// of the transposed tile (8 sub-blocks of 32). Weights: wt (transposed like
// xt: the imatrix weights) when not null, else x^2.
template <class DF>
HWY_INLINE void Iq4Lanes(DF df, const float* HWY_RESTRICT xt, size_t g,
                         const float* HWY_RESTRICT wt, float* HWY_RESTRICT scale_out) {
  using V = hn::Vec<DF>;
  constexpr size_t kSubs = 8, kLen = 32;
  const V zero = hn::Zero(df);
  auto X = [&](size_t i) { return hn::LoadU(df, xt + i * kSubs + g); };
  V amax = zero, max = zero;
  for (size_t i = 0; i < kLen; ++i) {
    const auto gt = hn::Gt(hn::Abs(X(i)), amax);
    amax = hn::IfThenElse(gt, hn::Abs(X(i)), amax);
    max = hn::IfThenElse(gt, X(i), max);
  }
  const auto all_zero = hn::Lt(amax, hn::Set(df, 1e-15f));  // ggml GROUP_MAX_EPS
  // sum (w * q) * x and sum (w * q) * q, q the codebook value.
  auto Sums = [&](V id, V& sumqx, V& sumq2) {
    sumqx = sumq2 = zero;
    for (size_t i = 0; i < kLen; ++i) {
      const V x = X(i);
      V q;
      (void)BestIndexIq4(df, hn::Mul(id, x), q);
      const V w = wt != nullptr ? hn::LoadU(df, wt + i * kSubs + g) : hn::Mul(x, x);
      const V wq = hn::Mul(w, q);
      sumqx = hn::Add(sumqx, hn::Mul(wq, x));
      sumq2 = hn::Add(sumq2, hn::Mul(wq, q));
    }
  };
  // d = -max / values[0]; id = 1 / d.
  const V d0 = hn::Div(hn::Neg(max), hn::Set(df, static_cast<float>(kq::kIq4Values[0])));
  V sumqx, sumq2;
  Sums(hn::Div(hn::Set(df, 1.0f), d0), sumqx, sumq2);
  V d = hn::IfThenElseZero(hn::Gt(sumq2, zero), hn::Div(sumqx, sumq2));
  V best = hn::Mul(d, sumqx);
  for (int itry = -7; itry <= 7; ++itry) {
    const float num = static_cast<float>(itry + kq::kIq4Values[0]);
    Sums(hn::Div(hn::Set(df, num), max), sumqx, sumq2);
    const auto better =
        hn::And(hn::Gt(sumq2, zero), hn::Gt(hn::Mul(sumqx, sumqx), hn::Mul(best, sumq2)));
    d = hn::IfThenElse(better, hn::Div(sumqx, sumq2), d);
    best = hn::IfThenElse(better, hn::Mul(d, sumqx), best);
  }
  hn::StoreU(hn::IfThenZeroElse(all_zero, d), df, scale_out + g);
}

// Stage 1 of IQ4_XS: the eight searches in lanes, then the reference's
// super-block part.
HWY_INLINE void SearchIq4XsLanes(const float* HWY_RESTRICT x, uint8_t* HWY_RESTRICT block,
                                 ref::KQuantSub& sub) {
  const hn::CappedTag<float, 8> df;
  HWY_ALIGN float xt[256];
  TransposeTile<8, 32>(x, xt);
  float scales[8];
  for (size_t g = 0; g < 8; g += hn::Lanes(df)) Iq4Lanes(df, xt, g, nullptr, scales);
  ref::FinishIq4Xs(scales, block, sub);
}

// The same with an importance matrix (qw: 256 values): the reference's
// weights (ref::ImatrixWeights), the searches in lanes.
HWY_INLINE void SearchIq4XsLanesW(const float* HWY_RESTRICT x, const float* HWY_RESTRICT qw,
                                  uint8_t* HWY_RESTRICT block, ref::KQuantSub& sub) {
  const hn::CappedTag<float, 8> df;
  HWY_ALIGN float xt[256];
  HWY_ALIGN float wt[256];
  float weights[256], sw[8];
  ref::ImatrixWeights(GgmlType::kIQ4_XS, x, qw, weights, sw);
  TransposeTile<8, 32>(x, xt);
  TransposeTile<8, 32>(weights, wt);
  float scales[8];
  for (size_t g = 0; g < 8; g += hn::Lanes(df)) Iq4Lanes(df, xt, g, wt, scales);
  ref::FinishIq4Xs(scales, block, sub);
}

// Stage 2 of IQ4_XS per element: best_index_int8(values, sub.d[j] * x).
HWY_INLINE void RequantIq4XsVec(const float* HWY_RESTRICT x, const ref::KQuantSub& sub,
                                uint8_t* HWY_RESTRICT codes) {
  const hn::CappedTag<float, 16> df;
  const hn::RebindToSigned<decltype(df)> di;
  const hn::Rebind<uint8_t, decltype(di)> d8;
  const size_t n = hn::Lanes(df);
  for (int j = 0; j < sub.n_sub; ++j) {
    const auto idl = hn::Set(df, sub.d[j]);
    const size_t end = static_cast<size_t>((j + 1) * sub.sub_len);
    for (size_t i = static_cast<size_t>(j * sub.sub_len); i < end; i += n) {
      hn::Vec<decltype(df)> q;
      const auto idx = BestIndexIq4(df, hn::Mul(idl, hn::LoadU(df, x + i)), q);
      hn::StoreU(hn::DemoteTo(d8, idx), d8, codes + i);
    }
  }
}

#endif  // HWY_TARGET != HWY_SCALAR

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace amn
HWY_AFTER_NAMESPACE();

#endif  // AMN_KERNELS_GGML_IQ4XS_SEARCH_INL_H_
