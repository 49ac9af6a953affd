// Peer implementation for perf/: F32->BF16 (round to nearest even, quiet
// NaN with sign; the same bytes as amn's kernel) written with xsimd, so the
// benchmarks show whether Highway leaves speed behind. Not part of the library.
#ifndef AMN_PERF_XSIMD_PEER_H_
#define AMN_PERF_XSIMD_PEER_H_

#include <cstddef>
#include <cstdint>

namespace amn::perf {

// xsimd compiles for one ISA per translation unit: the same source is built
// for AVX2 and for AVX-512BW. Each returns false when this CPU lacks the ISA.
bool XsimdF32ToBf16Avx2(const float* in, size_t n_elems, uint16_t* out);
bool XsimdF32ToBf16Avx512(const float* in, size_t n_elems, uint16_t* out);

}  // namespace amn::perf

#endif  // AMN_PERF_XSIMD_PEER_H_
