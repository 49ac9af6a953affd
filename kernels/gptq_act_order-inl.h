// GPTQ act-order tiles of the nn.Linear [out, in] orientation
// (kernels/gptq_out_in-inl.h), Highway 1.0.3: with a g_idx, n neighbouring
// output rows are computed in the transposed domain (lane = row), element
// by element down the input, and transposed back in blocks of n x n.
#if defined(AMN_KERNELS_GPTQ_ACT_ORDER_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef AMN_KERNELS_GPTQ_ACT_ORDER_INL_H_
#undef AMN_KERNELS_GPTQ_ACT_ORDER_INL_H_
#else
#define AMN_KERNELS_GPTQ_ACT_ORDER_INL_H_
#endif

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "amn/weight_layout.h"
#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "kernels/float_convert-inl.h"
#include "kernels/float_formats.h"
#include "kernels/fp8_dequant-inl.h"
#include "kernels/gptq_common-inl.h"
#include "kernels/gptq_layout.h"
#include "kernels/gptq_tiles-inl.h"

HWY_BEFORE_NAMESPACE();
namespace amn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR

// Entries the zero and scale tables of a layer with a g_idx hold (a tile's:
// group x lane, a row's: group), 32 KiB on the stack, which a row's table
// of every group's 2^bits results (twice as many entries) shares. Tiles of
// layers with more groups than fit read each element's zeros and scales
// from the layer instead (1.2-1.9x slower where both were timed,
// docs/schemes/gptq.md). 4096 entries hold the 8-lane tiles of K = 16384
// in groups of 32 (2048 held K = 8192).
inline constexpr size_t kGptqMaxTableEntries = 4096;

// The lanes of an act-order tile (ActOrderTile): at most 8, so AVX-512
// runs 256-bit tiles, which transpose in registers and take half the table
// entries per group: 1.3-1.6x faster than 16-lane tiles at real shapes
// (docs/schemes/gptq.md, "Act-order tiles of 8 lanes on AVX-512").
using ActOrderTag = hn::CappedTag<uint32_t, 8>;

// How far ahead of its block an act-order tile prefetches its qweight rows,
// in elements (ActOrderTile; 32 to 128 measured alike).
inline constexpr size_t kActOrderPrefetchElems = 64;

// What an act-order tile's elements share (ActOrderTile): where its zeros
// and scales come from, and where each element's results go.
struct ActOrderTileView {
  const gptq::LayerView* layer;
  const float* zeros;   // with tables: [g * n + t]
  const float* scales;  // with tables: [g * n + t]
  size_t j0, n;
  // Without tables the zeros are fields j0.. of a qzeros row: UnpackFieldsAt
  // reads n words from the word of field j0, inside the tensor for the rows
  // below `direct_groups`; the last rows' words are copied into `zero_words`.
  size_t zero_row_bytes, first_word_byte, zero_bytes, direct_groups, scale_bytes;
  uint32_t first_bit;
  uint32_t* zero_words;
  uint32_t* by_element;  // element e's results (lane t: row j0 + t) at [e * n]
};

// Element e of an act-order block: its codes q (the field in the low kBits
// of each lane, anything above it) in group g, to by_element + e * n.
template <uint32_t kBits, DequantOut kOut, bool kMayBeNan, bool kTables, bool kInRange, class DU>
HWY_INLINE void ActOrderElement(DU du, const ActOrderTileView& t, hn::Vec<DU> q, size_t g, size_t e,
                                hn::Vec<DU> lane_bits, hn::Vec<DU> plus_one) {
  const hn::Rebind<float, DU> df;
  const hn::RebindToSigned<DU> di;
  const gptq::LayerView& layer = *t.layer;
  hn::Vec<decltype(df)> zero, scale;
  if constexpr (kTables) {
    zero = hn::LoadU(df, t.zeros + g * t.n);
    scale = hn::LoadU(df, t.scales + g * t.n);
  } else {
    const uint8_t* zero_at = layer.qzeros + g * t.zero_row_bytes + t.first_word_byte;
    const uint32_t* words = reinterpret_cast<const uint32_t*>(zero_at);
    if (HWY_UNLIKELY(g >= t.direct_groups)) {
      std::memcpy(t.zero_words, zero_at, t.zero_bytes - (g * t.zero_row_bytes + t.first_word_byte));
      words = t.zero_words;
    }
    zero = hn::ConvertTo(
        df, hn::BitCast(
                di, hn::Add(UnpackFieldsAt<kBits>(du, words, t.first_bit, lane_bits), plus_one)));
    const uint8_t* scale_at = layer.scales + (g * layer.n + t.j0) * t.scale_bytes;
    if (layer.scale_type == ElemType::kF32) {
      scale = hn::LoadU(df, reinterpret_cast<const float*>(scale_at));
    } else if (layer.scale_type == ElemType::kBf16) {
      scale = hn::BitCast(df, FromBf16()(du, reinterpret_cast<const uint16_t*>(scale_at)));
    } else {
      scale = hn::BitCast(df, FromF16()(du, reinterpret_cast<const uint16_t*>(scale_at)));
    }
  }
  const auto mask = hn::Set(du, (1u << kBits) - 1);
  auto product =
      hn::Mul(hn::Sub(hn::ConvertTo(df, hn::BitCast(di, hn::And(q, mask))), zero), scale);
  if (kMayBeNan) product = hn::IfThenElse(hn::IsNaN(product), ProductNan(df, scale), product);
  const auto bits = hn::BitCast(du, product);
  hn::Vec<DU> encoded;
  if constexpr (kOut == DequantOut::kF32) {
    encoded = bits;
  } else if constexpr (kOut == DequantOut::kBf16) {
    encoded =
        hn::ShiftRight<16>(kMayBeNan ? F32BitsToBf16Upper(du, bits) : NonNanToBf16Upper(du, bits));
  } else if constexpr (kInRange) {
    encoded = ToF16LowerInRange()(du, bits);
  } else {
    encoded = F32BitsToF16Lanes(du, bits);
  }
  hn::Store(encoded, du, t.by_element + e * t.n);
}

// Whether a whole act-order block (n elements from an element index that
// is a multiple of n) of kBits codes lies in whole words of one or two
// qweight rows, or in one half of a word: 4 and 8 bits on the fixed-width
// targets (n a compile-time constant there).
template <uint32_t kBits>
constexpr bool ActOrderWholeWords() {
  return (kBits == 4 || kBits == 8) && !HWY_HAVE_SCALABLE;
}

// Elements kE.. of such a block: element e's codes are word row (e * kBits
// / 32) shifted right by e * kBits % 32, a constant (w0: the first row,
// already shifted to the block's first field; w1: the second); the
// recursion unrolls the block at compile time. g_idx: the block's entries.
template <uint32_t kBits, DequantOut kOut, bool kMayBeNan, bool kTables, bool kInRange, size_t kE,
          size_t kN, class DU>
HWY_INLINE void ActOrderWholeWordBlock(DU du, const ActOrderTileView& t, hn::Vec<DU> w0,
                                       hn::Vec<DU> w1, const uint8_t* HWY_RESTRICT g_idx,
                                       hn::Vec<DU> lane_bits, hn::Vec<DU> plus_one) {
  if constexpr (kE < kN) {
    constexpr size_t kBit = kE * kBits;
    const auto q = hn::ShiftRight<kBit % 32>(kBit < 32 ? w0 : w1);
    ActOrderElement<kBits, kOut, kMayBeNan, kTables, kInRange>(
        du, t, q, gptq::LoadLe32(g_idx + 4 * kE), kE, lane_bits, plus_one);
    ActOrderWholeWordBlock<kBits, kOut, kMayBeNan, kTables, kInRange, kE + 1, kN>(
        du, t, w0, w1, g_idx, lane_bits, plus_one);
  }
}

// kOutIn rows [j0, j0 + n) (n = Lanes, <= kTileLanes, j0 + n <= N) of a
// layer with a g_idx, computed in the transposed domain: for each element
// i, lane t is row j0 + t, so the codes are one shifted load of qweight
// word row bits*i/32 (whole blocks of 4 or 8 bits: one or two loads per
// block and constant shifts, ActOrderWholeWordBlock). The zero and scale
// of group g = g_idx[i] are plain loads of the tables at [g * n]
// (zeros[g * n + t], scales[g * n + t]) with kTables, else one load of
// scales[g][j0..] and fields j0.. of qzeros row g (UnpackFieldsAt), for any
// number of groups. Blocks of n elements are transposed back
// (TransposeTileStreams) into rows t. kMayBeNan = false when every scale of
// the tile is finite. kInRange (F16 on SSE4/SSSE3, DequantGptqOutIn's
// test): every result is ±0 or in F16's normal range, so it takes the
// integer rounding of ToF16LowerInRange.
template <uint32_t kBits, DequantOut kOut, bool kMayBeNan, bool kTables, bool kInRange,
          typename TOut>
HWY_INLINE void ActOrderTile(const gptq::LayerView& layer, size_t j0,
                             const float* HWY_RESTRICT zeros, const float* HWY_RESTRICT scales,
                             TOut* HWY_RESTRICT out) {
  const ActOrderTag du;
  const hn::Rebind<float, decltype(du)> df;
  const hn::Repartition<uint16_t, decltype(du)> d16;
  const hn::Half<decltype(d16)> dh;
  const size_t n = hn::Lanes(du);
  const size_t stride = 4 * layer.n;
  const uint8_t* column0 = layer.qweight + 4 * j0;
  const auto lane_bits = LaneBitOffsets<kBits>(du);
  const auto plus_one = hn::Set(du, layer.zeros_plus_one ? 1u : 0u);
  HWY_ALIGN uint32_t zero_words[kTileLanes] = {};
  HWY_ALIGN uint32_t by_element[kTileLanes * kTileLanes];
  ActOrderTileView tile{};
  tile.layer = &layer;
  tile.zeros = zeros;
  tile.scales = scales;
  tile.j0 = j0;
  tile.n = n;
  tile.zero_row_bytes = layer.n * kBits / 32 * 4;
  tile.first_word_byte = 4 * (j0 * kBits / 32);
  tile.first_bit = static_cast<uint32_t>(j0 * kBits % 32);
  tile.zero_bytes = layer.groups * tile.zero_row_bytes;
  tile.direct_groups =
      tile.zero_bytes >= tile.first_word_byte + 4 * n
          ? (tile.zero_bytes - tile.first_word_byte - 4 * n) / tile.zero_row_bytes + 1
          : 0;
  tile.scale_bytes = ElemTypeBytes(layer.scale_type);
  tile.zero_words = zero_words;
  tile.by_element = by_element;
  HWY_ALIGN uint32_t by_row[kTileLanes * kTileLanes];
  HWY_ALIGN TOut row_tail[kTileLanes];
  const size_t word_rows = (layer.k * kBits + 31) / 32;
  // The tile reads its n words of each qweight row, rows N * 4 bytes apart
  // (16 KiB at N = 4096): each in another page, where the hardware
  // prefetchers do not follow, so every row was a miss to memory. Each
  // block asks for the rows kActOrderPrefetchElems elements ahead: at real
  // shapes 2.0-3.1x faster with AVX2 and 1.3-2.1x with AVX-512
  // (docs/schemes/gptq.md, "Act-order tiles: the qweight rows prefetched").
  // Not with 4 lanes (SSE4, NEON): four tiles share each line, which the
  // first leaves in the cache, and the prefetches measured 1.1x slower.
  const bool prefetch = n >= 8;
  size_t prefetched = 0;  // rows [0, prefetched) asked for already
  for (size_t i0 = 0; i0 < layer.k; i0 += n) {
    const size_t m = std::min(n, layer.k - i0);
    if (prefetch) {
      const size_t first = std::max(prefetched, (i0 + kActOrderPrefetchElems) * kBits / 32);
      const size_t last = std::min(word_rows, (i0 + kActOrderPrefetchElems + n) * kBits / 32 + 1);
      prefetched = std::max(prefetched, last);
      for (size_t r = first; r < last; ++r) {
        hwy::Prefetch(column0 + r * stride);
        hwy::Prefetch(column0 + r * stride + 4 * n - 1);
      }
    }
    // A whole block of 4- or 8-bit codes: one or two word-row loads and
    // constant shifts, where the loop below loads and shifts (by a
    // variable count) once per element.
    bool whole_block = false;
    if constexpr (ActOrderWholeWords<kBits>()) {
      constexpr size_t kN = hn::MaxLanes(du);
      if (m == kN) {
        const uint8_t* row = column0 + (i0 * kBits / 32) * stride;
        auto w0 = hn::LoadU(du, reinterpret_cast<const uint32_t*>(row));
        // 4 lanes of 4 bits: half a word, the upper half from odd blocks.
        if (kN * kBits < 32 && i0 * kBits % 32 != 0) w0 = hn::ShiftRight<16>(w0);
        const auto w1 =
            kN * kBits > 32 ? hn::LoadU(du, reinterpret_cast<const uint32_t*>(row + stride)) : w0;
        ActOrderWholeWordBlock<kBits, kOut, kMayBeNan, kTables, kInRange, 0, kN>(
            du, tile, w0, w1, layer.g_idx + 4 * i0, lane_bits, plus_one);
        whole_block = true;
      }
    }
    for (size_t e = 0; e < n && !whole_block; ++e) {
      const size_t i = i0 + std::min(e, m - 1);  // padding repeats the last element
      const size_t bit = i * kBits;
      const uint8_t* row = column0 + (bit / 32) * stride;
      const int shift = static_cast<int>(bit % 32);
      auto q = hn::ShiftRightSame(hn::LoadU(du, reinterpret_cast<const uint32_t*>(row)), shift);
      if (32 % kBits != 0 && shift + kBits > 32) {
        const auto next = hn::LoadU(du, reinterpret_cast<const uint32_t*>(row + stride));
        q = hn::Or(q, hn::ShiftLeftSame(next, 32 - shift));
      }
      ActOrderElement<kBits, kOut, kMayBeNan, kTables, kInRange>(
          du, tile, q, gptq::LoadLe32(layer.g_idx + 4 * i), e, lane_bits, plus_one);
    }
    TransposeTileStreams<true>(du, reinterpret_cast<const uint8_t*>(by_element), 4 * n, n, by_row,
                               n);
    for (size_t t = 0; t < n; ++t) {
      const auto v = hn::Load(du, by_row + t * n);
      TOut* dst = m == n ? out + t * layer.k + i0 : row_tail;
      if constexpr (kOut == DequantOut::kF32) {
        hn::StoreU(hn::BitCast(df, v), df, dst);
      } else {
        hn::StoreU(hn::LowerHalf(dh, hn::ConcatEven(d16, hn::BitCast(d16, v), hn::BitCast(d16, v))),
                   dh, dst);
      }
      if (m != n) std::memcpy(out + t * layer.k + i0, row_tail, m * sizeof(TOut));
    }
  }
}

#endif  // HWY_TARGET != HWY_SCALAR

}  // namespace HWY_NAMESPACE
}  // namespace amn
HWY_AFTER_NAMESPACE();

#endif  // AMN_KERNELS_GPTQ_ACT_ORDER_INL_H_
