// Per-target body of family GgmlIq3Quant (Highway 1.0.3): ggml's IQ3_XXS and
// IQ3_S encoders without and with an importance matrix, byte for byte the
// scalar reference kernels/ref/ggml_iq3_encode_ref.h (ggml's
// quantize_row_iq3_xxs_impl / quantize_row_iq3_s_impl). Layout, formulas
// and order rules: that header and docs/schemes/ggml-encode-iq3.md.
//
// Bit-exactness decides what is vectorised. The trial scales of a
// sub-block (31 for IQ3_XXS, 19 for IQ3_S) are independent until ggml picks
// one, so they run one trial per lane (Iq3TrialsVec, given to the
// reference's block code as its ref::Iq3TrialsFn):
//   * each lane's inverse scale (15 + 0.2 is) / max and levels
//     clamp(nearest_int(0.5 (id |x| - 1)), 0, 7) (IEEE Mul, Sub, Div; the
//     1.5 * 2^23 rounding trick on integer lanes: exact on every target);
//   * each lane's sums sumqx and sumq2 over the 32 elements, accumulated in
//     element order within the lane, as the scalar loop does for that trial.
//   * the neighbour search of an off-grid group: one candidate per lane
//     (Iq3BestNeighbourVec), each lane's four-term distance in order, the
//     winner the reference's (see there).
// What stays scalar, and why: the grid look-ups (4096-entry table, one per
// trial and group), the choice among trials (in trial order, strict >),
// the refit at the winning scale and the packing (once per sub-block: the
// reference's code).
// SCALAR runs the reference. Non-finite input: the index of the first such
// element is returned; blocks before its super-block are written.
#if defined(AMN_KERNELS_GGML_IQ3_ENCODE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef AMN_KERNELS_GGML_IQ3_ENCODE_INL_H_
#undef AMN_KERNELS_GGML_IQ3_ENCODE_INL_H_
#else
#define AMN_KERNELS_GGML_IQ3_ENCODE_INL_H_
#endif

#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "hwy/highway.h"
#include "kernels/encode_args.h"
#include "kernels/encode_common-inl.h"
#include "kernels/encode_common.h"
#include "kernels/ggml_kquant_search-inl.h"  // NearestIntVec
#include "kernels/ref/ggml_iq3_encode_ref.h"
#include "kernels/ref/ggml_iq3_index.h"

HWY_BEFORE_NAMESPACE();
namespace amn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR

// ref::Iq3BestNeighbour with one candidate per lane (vectors of at most 8
// lanes: lists hold 5 to 7 candidates on average, padded to 8). Each lane
// sums its four terms (w_i e_i) e_i in order from 0, as the scalar loop.
// The scalar scan keeps the first candidate of least distance below
// FLT_MAX (NaN never wins); here: NaN and padding lanes become +Inf, m is
// the least lane, and the winner the first lane equal to m when m < FLT_MAX
// (else ggml's abort case: the first candidate). The same candidate.
inline int Iq3BestNeighbourVec(const ref::Iq3Index& index, uint32_t u,
                               const float* HWY_RESTRICT xval, const float* HWY_RESTRICT waux,
                               float scale, int8_t* HWY_RESTRICT l) {
  const hn::CappedTag<float, 8> df;
  const size_t N = hn::Lanes(df);
  const ref::Iq3Neighbours list = index.NeighboursOf(u);
  const auto vs = hn::Set(df, scale);
  const auto x0 = hn::Set(df, xval[0]), x1 = hn::Set(df, xval[1]);
  const auto x2 = hn::Set(df, xval[2]), x3 = hn::Set(df, xval[3]);
  const auto w0 = hn::Set(df, waux[0]), w1 = hn::Set(df, waux[1]);
  const auto w2 = hn::Set(df, waux[2]), w3 = hn::Set(df, waux[3]);
  const auto inf = hn::Set(df, HUGE_VALF), n = hn::Set(df, static_cast<float>(list.n));
  const size_t n_pad = static_cast<size_t>(list.n_pad);
  HWY_ALIGN float d2[40];  // n_pad <= 40
  auto least = inf;
  for (size_t c = 0; c < n_pad; c += N) {
    const float* q = list.q + c;
    const auto e0 = hn::Sub(hn::Mul(vs, hn::LoadU(df, q)), x0);
    const auto e1 = hn::Sub(hn::Mul(vs, hn::LoadU(df, q + n_pad)), x1);
    const auto e2 = hn::Sub(hn::Mul(vs, hn::LoadU(df, q + 2 * n_pad)), x2);
    const auto e3 = hn::Sub(hn::Mul(vs, hn::LoadU(df, q + 3 * n_pad)), x3);
    auto s = hn::Add(hn::Zero(df), hn::Mul(hn::Mul(w0, e0), e0));
    s = hn::Add(s, hn::Mul(hn::Mul(w1, e1), e1));
    s = hn::Add(s, hn::Mul(hn::Mul(w2, e2), e2));
    s = hn::Add(s, hn::Mul(hn::Mul(w3, e3), e3));
    const auto real = hn::And(hn::Lt(hn::Iota(df, static_cast<float>(c)), n), hn::Eq(s, s));
    s = hn::IfThenElse(real, s, inf);
    hn::Store(s, df, d2 + c);
    least = hn::Min(least, s);
  }
  const float m = hn::GetLane(hn::MinOfLanes(df, least));
  int g = list.index[0];
  if (m < FLT_MAX) {
    for (int c = 0; c < list.n; ++c) {
      if (d2[c] == m) {
        g = list.index[c];
        break;
      }
    }
  }
  for (int i = 0; i < 4; ++i) l[i] = static_cast<int8_t>(index.Level(g, i));
  return g;
}

// Trials padded to 32 lanes' worth: a whole number of vectors of up to 16
// lanes; the padding trials compute but are never chosen.
inline constexpr int kIq3Trials = 32;

// ref::Iq3TrialsFn with one trial per lane.
inline float Iq3TrialsVec(bool xxs, const ref::Iq3Index& index, const float* HWY_RESTRICT xval,
                          const float* HWY_RESTRICT weight, const float* HWY_RESTRICT waux,
                          float max, int8_t* HWY_RESTRICT L, bool* HWY_RESTRICT on_grid) {
  const hn::CappedTag<float, 16> df;
  const hn::RebindToSigned<decltype(df)> di;
  const size_t N = hn::Lanes(df);
  const int n_trials = xxs ? 31 : 19;
  const int first_is = xxs ? -15 : -9;
  // lt[i * kIq3Trials + t]: level of element i in trial t.
  HWY_ALIGN int32_t lt[32 * kIq3Trials];
  HWY_ALIGN float id[kIq3Trials];
  HWY_ALIGN float sumqx[kIq3Trials], sumq2[kIq3Trials];
  const auto vmax = hn::Set(df, max);
  for (size_t t = 0; t < kIq3Trials; t += N) {
    // (2 kMaxQ - 1 + is * 0.2f) / max, is = first_is + t.
    const auto is = hn::ConvertTo(df, hn::Add(hn::Iota(di, first_is), hn::Set(di, static_cast<int32_t>(t))));
    hn::Store(hn::Div(hn::Add(hn::Set(df, 15.0f), hn::Mul(is, hn::Set(df, 0.2f))), vmax), df,
              id + t);
  }
  const auto one = hn::Set(df, 1.0f), half = hn::Set(df, 0.5f);
  const auto lo = hn::Zero(di), hi = hn::Set(di, 7);
  for (size_t i = 0; i < 32; ++i) {
    const auto x = hn::Set(df, xval[i]);
    for (size_t t = 0; t < kIq3Trials; t += N) {
      const auto v = hn::Mul(half, hn::Sub(hn::Mul(hn::Load(df, id + t), x), one));
      hn::Store(hn::Min(hi, hn::Max(lo, NearestIntVec(df, v))), di, lt + i * kIq3Trials + t);
    }
  }
  // Grid look-ups and neighbour searches, per trial and group.
  bool grid_aux[8][kIq3Trials];
  for (int k = 0; k < 8; ++k) {
    int32_t* l0 = lt + 4 * k * kIq3Trials;
    for (int t = 0; t < n_trials; ++t) {
      const uint32_t u = static_cast<uint32_t>(l0[t] | l0[kIq3Trials + t] << 3 |
                                               l0[2 * kIq3Trials + t] << 6 |
                                               l0[3 * kIq3Trials + t] << 9);
      grid_aux[k][t] = index.GridIndex(u) >= 0;
      if (grid_aux[k][t]) continue;
      int8_t l4[4];
      Iq3BestNeighbourVec(index, u, xval + 4 * k, waux + 4 * k, 1 / id[t], l4);
      for (int i = 0; i < 4; ++i) l0[i * kIq3Trials + t] = l4[i];
    }
  }
  // sumqx += (w x) q and sumq2 += (w q) q in element order, per lane.
  for (size_t t = 0; t < kIq3Trials; t += N) {
    auto sqx = hn::Zero(df), sq2 = hn::Zero(df);
    for (size_t i = 0; i < 32; ++i) {
      const auto l = hn::Load(di, lt + i * kIq3Trials + t);
      const auto q = hn::ConvertTo(df, hn::Add(hn::Add(l, l), hn::Set(di, 1)));
      const auto w = hn::Set(df, weight[i]);
      sqx = hn::Add(sqx, hn::Mul(hn::Set(df, weight[i] * xval[i]), q));
      sq2 = hn::Add(sq2, hn::Mul(hn::Mul(w, q), q));
    }
    hn::Store(sqx, df, sumqx + t);
    hn::Store(sq2, df, sumq2 + t);
  }
  // ggml's choice, in trial order.
  float best = 0;
  float scale = max / 15;
  int chosen = -1;
  for (int t = 0; t < n_trials; ++t) {
    if (sumq2[t] > 0 && sumqx[t] * sumqx[t] > best * sumq2[t]) {
      scale = sumqx[t] / sumq2[t];
      best = scale * sumqx[t];
      chosen = t;
    }
  }
  if (chosen >= 0) {
    for (int i = 0; i < 32; ++i) L[i] = static_cast<int8_t>(lt[i * kIq3Trials + chosen]);
    for (int k = 0; k < 8; ++k) on_grid[k] = grid_aux[k][chosen];
  }
  return scale;
}

#endif  // HWY_TARGET != HWY_SCALAR

inline uint64_t EncodeGgmlIq3Quant(const kernels::GgmlQuantArgs& a, kernels::ErrorSums* errors) {
#if HWY_TARGET == HWY_SCALAR
  return ref::EncodeGgmlIq3Quant(a, errors);
#else
  const size_t block_bytes = ref::Iq3EncodeBlockBytes(a.type);
  HWY_ALIGN float xs[kEncodeTile + kEncodePad];
  uint8_t* out = a.out;
  const uint64_t n = a.x.rows * a.x.cols;
  for (uint64_t i = 0; i < n; i += kEncodeTile, out += block_bytes) {
    if (!LoadEncodeTile(a.x.in, a.x.type, i, kEncodeTile, xs)) {
      return FirstNonFinite(a.x.in, a.x.type, i, kEncodeTile);
    }
    // Importance values are per column; cols is a multiple of 256.
    ref::QuantizeIq3Block(a.type, xs, a.imatrix != nullptr ? a.imatrix + i % a.x.cols : nullptr,
                          out, Iq3TrialsVec);
    // The error sums' order is by element index: the reference's loop.
    if (errors != nullptr) ref::AddIq3Errors(a.type, out, xs, i, *errors);
  }
  return kernels::kAllFinite;
#endif
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace amn
HWY_AFTER_NAMESPACE();

#endif  // AMN_KERNELS_GGML_IQ3_ENCODE_INL_H_
