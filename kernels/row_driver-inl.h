// Per-target row driver shared by the element-wise kernels: whole vectors
// first, then the tail through a zero-padded copy, so no load or store ever
// touches memory outside the caller's spans (Highway 1.0.3's masked loads may
// fault, and it has no LoadN).
#if defined(AMN_KERNELS_ROW_DRIVER_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef AMN_KERNELS_ROW_DRIVER_INL_H_
#undef AMN_KERNELS_ROW_DRIVER_INL_H_
#else
#define AMN_KERNELS_ROW_DRIVER_INL_H_
#endif

#include <cstddef>
#include <cstring>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace amn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Calls `chunk(d, in + i, out + i)` for i = 0, N, 2N, ... where N = Lanes(d):
// every call converts exactly N elements, the last one from a padded copy.
template <class D, typename TIn, typename TOut, class Chunk>
HWY_INLINE void ForEachVector(D d, const TIn* HWY_RESTRICT in, size_t n_elems,
                              TOut* HWY_RESTRICT out, const Chunk& chunk) {
  const size_t lanes = hn::Lanes(d);
  size_t i = 0;
  for (; i + lanes <= n_elems; i += lanes) {
    chunk(d, in + i, out + i);
  }
  const size_t rest = n_elems - i;
  if (rest == 0) return;
  constexpr size_t kMaxLanes = HWY_MAX_BYTES / sizeof(hn::TFromD<D>);
  HWY_ALIGN TIn in_tail[kMaxLanes] = {};
  HWY_ALIGN TOut out_tail[kMaxLanes];
  std::memcpy(in_tail, in + i, rest * sizeof(TIn));
  chunk(d, in_tail, out_tail);
  std::memcpy(out + i, out_tail, rest * sizeof(TOut));
}

}  // namespace HWY_NAMESPACE
}  // namespace amn
HWY_AFTER_NAMESPACE();

#endif  // AMN_KERNELS_ROW_DRIVER_INL_H_
