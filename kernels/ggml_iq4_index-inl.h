// ggml's best_index_int8 over the IQ4_NL codebook, per lane (Highway
// 1.0.3): shared by the IQ4_NL encoder (kernels/ggml_legacy_encode-inl.h)
// and the IQ4_XS search (kernels/ggml_iq4xs_search-inl.h). Exact: the same
// F32 comparisons and subtractions as the scalar search
// (kernels/ref/ggml_quant_search.h BestIndexInt8). Not for HWY_SCALAR.
#if defined(AMN_KERNELS_GGML_IQ4_INDEX_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef AMN_KERNELS_GGML_IQ4_INDEX_INL_H_
#undef AMN_KERNELS_GGML_IQ4_INDEX_INL_H_
#else
#define AMN_KERNELS_GGML_IQ4_INDEX_INL_H_
#endif

#include <cstdint>

#include "hwy/highway.h"
#include "kernels/ggml_blocks.h"

HWY_BEFORE_NAMESPACE();
namespace amn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR

// ggml best_index_int8 over kvalues_iq4nl (16 sorted values) per lane, and
// the chosen value. The binary search ends at the largest k with
// v[k] <= x, so that entry (lo) and the next (hi) are found by comparing x
// with every value; the choice is the same float comparison
// x - lo < hi - x (ties to the upper). x <= v[0] gives 0 and x >= v[15]
// gives 15 first; NaN fails every comparison, and the scalar search then
// ends at 15, so NaN gives 15 too. (The encoders never pass NaN for finite
// input; the rule keeps the lanes equal to the scalar anyway.)
template <class DF>
HWY_INLINE hn::Vec<hn::RebindToSigned<DF>> BestIndexIq4(DF df, hn::Vec<DF> x, hn::Vec<DF>& q) {
  const hn::RebindToSigned<DF> di;
  const int8_t* v = ggml::kIq4NlValues.data();
  auto lo = hn::Set(df, static_cast<float>(v[0]));
  auto hi = hn::Set(df, static_cast<float>(v[15]));
  auto ml = hn::Zero(di);
  for (int k = 1; k < 15; ++k) {
    const auto vk = hn::Set(df, static_cast<float>(v[k]));
    const auto le = hn::Le(vk, x);
    lo = hn::IfThenElse(le, vk, lo);
    ml = hn::Sub(ml, hn::VecFromMask(di, hn::RebindMask(di, le)));  // + 1 where v[k] <= x
  }
  for (int k = 14; k >= 1; --k) {
    const auto vk = hn::Set(df, static_cast<float>(v[k]));
    hi = hn::IfThenElse(hn::Gt(vk, x), vk, hi);
  }
  const auto take_lo = hn::Lt(hn::Sub(x, lo), hn::Sub(hi, x));
  auto idx = hn::IfThenElse(hn::RebindMask(di, take_lo), ml, hn::Add(ml, hn::Set(di, 1)));
  q = hn::IfThenElse(take_lo, lo, hi);
  const auto v0 = hn::Set(df, static_cast<float>(v[0]));
  const auto v15 = hn::Set(df, static_cast<float>(v[15]));
  // >= v[15] or NaN. Not(Eq), not Ne: Highway 1.0.3's AVX-512 Ne is an
  // ordered compare, false for NaN (the IQ4_NL per-target test caught it).
  const auto top = hn::Or(hn::Ge(x, v15), hn::Not(hn::Eq(x, x)));
  const auto bottom = hn::Le(x, v0);
  idx = hn::IfThenElse(hn::RebindMask(di, top), hn::Set(di, 15), idx);
  idx = hn::IfThenElse(hn::RebindMask(di, bottom), hn::Zero(di), idx);
  q = hn::IfThenElse(top, v15, q);
  q = hn::IfThenElse(bottom, v0, q);
  return idx;
}

#endif  // HWY_TARGET != HWY_SCALAR

}  // namespace HWY_NAMESPACE
}  // namespace amn
HWY_AFTER_NAMESPACE();

#endif  // AMN_KERNELS_GGML_IQ4_INDEX_INL_H_
