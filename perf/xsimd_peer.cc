// The xsimd F32->BF16 peer, compiled twice (AMN_XSIMD_PEER_NAME and the ISA
// flags come from perf/CMakeLists.txt). The rounding is integer arithmetic on
// the bits, like amn's kernel; the 32->16 narrowing is a plain loop the
// compiler vectorises (xsimd 8 has no narrowing conversion).
#include <xsimd/xsimd.hpp>

#include "perf/xsimd_peer.h"

namespace amn::perf {

bool AMN_XSIMD_PEER_NAME(const float* in, size_t n_elems, uint16_t* out) {
  if (!__builtin_cpu_supports(AMN_XSIMD_PEER_CPU)) return false;
  using Batch = xsimd::batch<uint32_t>;
  using FloatBatch = xsimd::batch<float>;
  constexpr size_t kLanes = Batch::size;
  alignas(64) uint32_t narrow[kLanes];
  size_t i = 0;
  for (; i + kLanes <= n_elems; i += kLanes) {
    const Batch x = xsimd::bitwise_cast<Batch>(FloatBatch::load_unaligned(in + i));
    const Batch lsb = (x >> 16) & Batch(1u);
    const Batch rounded = (x + Batch(0x7FFFu) + lsb) >> 16;
    const Batch quiet = (x | Batch(0x00400000u)) >> 16;
    const auto is_nan = (x & Batch(0x7FFFFFFFu)) > Batch(0x7F800000u);
    xsimd::select(is_nan, quiet, rounded).store_aligned(narrow);
    for (size_t j = 0; j < kLanes; ++j) out[i + j] = static_cast<uint16_t>(narrow[j]);
  }
  for (; i < n_elems; ++i) {
    uint32_t x;
    __builtin_memcpy(&x, in + i, 4);
    const bool is_nan = (x & 0x7FFFFFFFu) > 0x7F800000u;
    out[i] = static_cast<uint16_t>(is_nan ? (x | 0x00400000u) >> 16
                                          : (x + 0x7FFFu + ((x >> 16) & 1u)) >> 16);
  }
  return true;
}

}  // namespace amn::perf
