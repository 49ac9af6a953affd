// Transposes of GPTQ qweight tiles (kernels/gptq_out_in-inl.h and
// kernels/gptq_act_order-inl.h), Highway 1.0.3: n neighbouring columns of
// 32-bit words, rows a stride apart, into one stream per column.
#if defined(AMN_KERNELS_GPTQ_TILES_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef AMN_KERNELS_GPTQ_TILES_INL_H_
#undef AMN_KERNELS_GPTQ_TILES_INL_H_
#else
#define AMN_KERNELS_GPTQ_TILES_INL_H_
#endif

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace amn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR

// The most lanes (columns) a transposed tile has.
inline constexpr size_t kTileLanes = 16;

// The streams of n = Lanes(du) neighbouring columns: word rows
// [0, n_words) of the qweight at `words` (column 0 of the tile; rows
// `stride` bytes apart) go to streams + t * stream_words for column t.
// Blocks of n x n words are transposed in log2(n) rounds of ConcatEven /
// ConcatOdd over pairs of rows (each round moves one bit of the row index
// into the lane index), through two on-stack tiles; word rows left over
// past the last whole block are copied one by one. n <= kTileLanes.
// kInRegisters (act-order tiles, ActOrderTile): with 4 or 8 lanes (not on
// SVE, whose vectors cannot be held in arrays) a block is transposed in
// registers instead, 32-bit then 64-bit interleaves within
// 128-bit blocks, then (8 lanes) the 128-bit halves joined: 8 and 24
// shuffles, no stack tiles. 1.2x faster for act-order tiles with AVX2; for
// the qweight's own tiles 0.93x with AVX2 at 8 bits, so those keep the
// rounds above (docs/schemes/gptq.md, "Act-order tiles transposed in
// registers").
template <bool kInRegisters = false, class DU>
HWY_INLINE void TransposeTileStreams(DU du, const uint8_t* HWY_RESTRICT words, size_t stride,
                                     size_t n_words, uint32_t* HWY_RESTRICT streams,
                                     size_t stream_words) {
  const size_t n = hn::Lanes(du);
  HWY_ALIGN uint32_t tile_a[kTileLanes * kTileLanes];
  HWY_ALIGN uint32_t tile_b[kTileLanes * kTileLanes];
  size_t w = 0;
#if !HWY_HAVE_SCALABLE  // (arrays of and pointers to vectors: not of sizeless SVE ones)
  if (kInRegisters && (n == 4 || n == 8)) {
    const hn::Repartition<uint64_t, DU> d64;
    const auto row = [&](size_t r) {
      return hn::LoadU(du, reinterpret_cast<const uint32_t*>(words + (w + r) * stride));
    };
    // Rows [r, r + 4) as u0..u3: lane 4k + m of u_c is row r + m, column c + 4k.
    const auto quad = [&](size_t r, hn::Vec<DU>* u) {
      const auto t0 = hn::BitCast(d64, hn::InterleaveLower(du, row(r), row(r + 1)));
      const auto t1 = hn::BitCast(d64, hn::InterleaveUpper(du, row(r), row(r + 1)));
      const auto t2 = hn::BitCast(d64, hn::InterleaveLower(du, row(r + 2), row(r + 3)));
      const auto t3 = hn::BitCast(d64, hn::InterleaveUpper(du, row(r + 2), row(r + 3)));
      u[0] = hn::BitCast(du, hn::InterleaveLower(d64, t0, t2));
      u[1] = hn::BitCast(du, hn::InterleaveUpper(d64, t0, t2));
      u[2] = hn::BitCast(du, hn::InterleaveLower(d64, t1, t3));
      u[3] = hn::BitCast(du, hn::InterleaveUpper(d64, t1, t3));
    };
    for (; w + n <= n_words; w += n) {
      hn::Vec<DU> lo[4], hi[4];
      quad(0, lo);
      if (n == 4) {
        for (size_t c = 0; c < 4; ++c) hn::StoreU(lo[c], du, streams + c * stream_words + w);
        continue;
      }
      quad(4, hi);
      for (size_t c = 0; c < 4; ++c) {
        hn::StoreU(hn::ConcatLowerLower(du, hi[c], lo[c]), du, streams + c * stream_words + w);
        hn::StoreU(hn::ConcatUpperUpper(du, hi[c], lo[c]), du,
                   streams + (c + 4) * stream_words + w);
      }
    }
  }
#endif
  for (; w + n <= n_words; w += n) {
    const uint8_t* block = words + w * stride;
    uint32_t* src = tile_a;
    uint32_t* dst = tile_b;
    for (size_t round = 1; round < n; round *= 2) {
      const bool first = round == 1;
      const bool last = round * 2 == n;
      for (size_t r = 0; r < n / 2; ++r) {
        const auto lo =
            first ? hn::LoadU(du, reinterpret_cast<const uint32_t*>(block + 2 * r * stride))
                  : hn::Load(du, src + 2 * r * n);
        const auto hi =
            first ? hn::LoadU(du, reinterpret_cast<const uint32_t*>(block + (2 * r + 1) * stride))
                  : hn::Load(du, src + (2 * r + 1) * n);
        const auto even = hn::ConcatEven(du, hi, lo);
        const auto odd = hn::ConcatOdd(du, hi, lo);
        if (last) {
          hn::StoreU(even, du, streams + r * stream_words + w);
          hn::StoreU(odd, du, streams + (r + n / 2) * stream_words + w);
        } else {
          hn::Store(even, du, dst + r * n);
          hn::Store(odd, du, dst + (r + n / 2) * n);
        }
      }
      std::swap(src, dst);
    }
  }
  for (; w < n_words; ++w) {
    for (size_t t = 0; t < n; ++t) {
      std::memcpy(streams + t * stream_words + w, words + w * stride + 4 * t, 4);
    }
  }
}

#endif  // HWY_TARGET != HWY_SCALAR

}  // namespace HWY_NAMESPACE
}  // namespace amn
HWY_AFTER_NAMESPACE();

#endif  // AMN_KERNELS_GPTQ_TILES_INL_H_
