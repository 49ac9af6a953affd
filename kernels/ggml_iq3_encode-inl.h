// Per-target body of family GgmlIq3Quant (Highway 1.0.3): ggml's IQ3_XXS and
// IQ3_S encoders without and with an importance matrix, byte for byte the
// scalar reference kernels/ref/ggml_iq3_encode_ref.h (ggml's
// quantize_row_iq3_xxs_impl / quantize_row_iq3_s_impl). Layout, formulas
// and order rules: that header and docs/schemes/ggml-encode-iq3.md.
//
// Bit-exactness decides what is vectorised. The search runs in the
// reference's own code (ref::QuantizeIq3Block), given this target's two
// order-free parts (ref::Iq3Ops):
//   * levels: clamp(nearest_int(0.5 (id |x| - 1)), 0, 7) for the 32 values
//     of a sub-block, per lane (IEEE Mul and Sub, the 1.5 * 2^23 rounding
//     trick on integer lanes: exact on every target);
//   * distances: the weighted squared distance of every neighbour candidate
//     of an off-grid group, one candidate per lane, each lane summing its
//     four terms in the reference's order (the tables hold the candidates'
//     values as padded float rows, so no gathers).
// What stays scalar, and why: the sums sumqx and sumq2 over a sub-block
// (ggml accumulates them in element order; a lane-parallel sum would round
// differently), the choice among candidates (strict <, first wins), the
// grid look-ups and the packing.
// SCALAR runs the reference. Non-finite input: the index of the first such
// element is returned; blocks before its super-block are written.
#if defined(AMN_KERNELS_GGML_IQ3_ENCODE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef AMN_KERNELS_GGML_IQ3_ENCODE_INL_H_
#undef AMN_KERNELS_GGML_IQ3_ENCODE_INL_H_
#else
#define AMN_KERNELS_GGML_IQ3_ENCODE_INL_H_
#endif

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

// At most 16 lanes: 32 (a sub-block) and kIq3NeighbourPad (16) are whole
// numbers of vectors on every target.
using Iq3DF = hn::CappedTag<float, 16>;

// ref::Iq3Ops::levels for the 32 values of a sub-block.
inline void Iq3LevelsVec(float id, const float* HWY_RESTRICT xval, int8_t* HWY_RESTRICT l) {
  const Iq3DF df;
  const hn::RebindToSigned<Iq3DF> di;
  const hn::Rebind<int8_t, decltype(di)> d8;
  const auto vid = hn::Set(df, id), one = hn::Set(df, 1.0f), half = hn::Set(df, 0.5f);
  const auto lo = hn::Zero(di), hi = hn::Set(di, 7);
  for (size_t i = 0; i < 32; i += hn::Lanes(df)) {
    const auto v = hn::Mul(half, hn::Sub(hn::Mul(vid, hn::LoadU(df, xval + i)), one));
    const auto q = hn::Min(hi, hn::Max(lo, NearestIntVec(df, v)));
    hn::StoreU(hn::DemoteTo(d8, q), d8, l + i);
  }
}

// ref::Iq3Ops::distances: candidates c .. c + Lanes - 1 per vector.
inline void Iq3DistancesVec(const ref::Iq3Neighbours& list, const float* HWY_RESTRICT xval,
                            const float* HWY_RESTRICT w, float scale, float* HWY_RESTRICT d2) {
  const Iq3DF df;
  const auto vs = hn::Set(df, scale);
  const auto x0 = hn::Set(df, xval[0]), x1 = hn::Set(df, xval[1]);
  const auto x2 = hn::Set(df, xval[2]), x3 = hn::Set(df, xval[3]);
  const auto w0 = hn::Set(df, w[0]), w1 = hn::Set(df, w[1]);
  const auto w2 = hn::Set(df, w[2]), w3 = hn::Set(df, w[3]);
  const size_t n_pad = static_cast<size_t>(list.n_pad);
  for (size_t c = 0; c < n_pad; c += hn::Lanes(df)) {
    const float* q = list.q + c;
    const auto e0 = hn::Sub(hn::Mul(vs, hn::LoadU(df, q)), x0);
    const auto e1 = hn::Sub(hn::Mul(vs, hn::LoadU(df, q + n_pad)), x1);
    const auto e2 = hn::Sub(hn::Mul(vs, hn::LoadU(df, q + 2 * n_pad)), x2);
    const auto e3 = hn::Sub(hn::Mul(vs, hn::LoadU(df, q + 3 * n_pad)), x3);
    // ((0 + t0) + t1) + t2) + t3, each t = (w * e) * e: the reference's order.
    auto s = hn::Add(hn::Zero(df), hn::Mul(hn::Mul(w0, e0), e0));
    s = hn::Add(s, hn::Mul(hn::Mul(w1, e1), e1));
    s = hn::Add(s, hn::Mul(hn::Mul(w2, e2), e2));
    s = hn::Add(s, hn::Mul(hn::Mul(w3, e3), e3));
    hn::StoreU(s, df, d2 + c);
  }
}

#endif  // HWY_TARGET != HWY_SCALAR

inline uint64_t EncodeGgmlIq3Quant(const kernels::GgmlQuantArgs& a, kernels::ErrorSums* errors) {
#if HWY_TARGET == HWY_SCALAR
  return ref::EncodeGgmlIq3Quant(a, errors);
#else
  static constexpr ref::Iq3Ops kOps{Iq3LevelsVec, Iq3DistancesVec};
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
                          out, kOps);
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
