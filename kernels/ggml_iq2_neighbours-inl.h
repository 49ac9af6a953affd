// The IQ2/IQ1 encoders' neighbour scoring per target (Highway 1.0.3): one
// lane per listed grid point, each lane summing its 8 terms in element
// order with separate Mul and Add (no MulAdd), so every lane holds the bits
// of ref::iq2::ScoreNeighboursRef (kernels/ref/ggml_iq2_grid_index.h). The
// grid values come by GatherIndex from the float table. The tail of the
// list (fewer than a vector) and HWY_SCALAR run the reference.
#if defined(AMN_KERNELS_GGML_IQ2_NEIGHBOURS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef AMN_KERNELS_GGML_IQ2_NEIGHBOURS_INL_H_
#undef AMN_KERNELS_GGML_IQ2_NEIGHBOURS_INL_H_
#else
#define AMN_KERNELS_GGML_IQ2_NEIGHBOURS_INL_H_
#endif

#include <cstddef>
#include <cstdint>

#include "hwy/highway.h"
#include "kernels/ref/ggml_iq2_grid_index.h"

HWY_BEFORE_NAMESPACE();
namespace amn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

inline void ScoreIq2Neighbours(const float* table, const uint16_t* list, size_t n,
                               const float* x, const float* w, float scale, float* d2) {
#if HWY_TARGET == HWY_SCALAR
  ref::iq2::ScoreNeighboursRef(table, list, n, x, w, scale, d2);
#else
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  const hn::RebindToUnsigned<decltype(df)> du;
  const hn::Rebind<uint16_t, decltype(df)> d16;
  const size_t lanes = hn::Lanes(df);
  const auto vscale = hn::Set(df, scale);
  size_t j = 0;
  for (; j + lanes <= n; j += lanes) {
    // Element 0 of point g sits at table[8 g].
    const auto base = hn::BitCast(di, hn::ShiftLeft<3>(hn::PromoteTo(du, hn::LoadU(d16, list + j))));
    auto sum = hn::Zero(df);
    for (int i = 0; i < 8; ++i) {
      const auto q = hn::GatherIndex(df, table + i, base);
      const auto diff = hn::Sub(hn::Mul(vscale, q), hn::Set(df, x[i]));
      sum = hn::Add(sum, hn::Mul(hn::Mul(hn::Set(df, w[i]), diff), diff));
    }
    hn::StoreU(sum, df, d2 + j);
  }
  if (j < n) ref::iq2::ScoreNeighboursRef(table, list + j, n - j, x, w, scale, d2 + j);
#endif
}

}  // namespace HWY_NAMESPACE
}  // namespace amn
HWY_AFTER_NAMESPACE();

#endif  // AMN_KERNELS_GGML_IQ2_NEIGHBOURS_INL_H_
