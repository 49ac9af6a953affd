// Per-target dequantization of gpt-oss MXFP4 safetensors (the Mxfp4St
// family: the plain layout through kernels/fp4-inl.h's flat run, the
// transposed one here), Highway 1.0.3. Layouts, formulas and the NaN rule
// are those of kernels/ref/fp4_ref.h; every target writes its bytes. The
// SCALAR target runs that reference.
//
// MXFP4 transposed (transformers' [experts][groups*32][rows]): lanes run
// along the rows. A tile of T rows of one group is transposed as bytes into
// a [16][T] stack tile; output row c then reads byte row c/2 (low nibble for
// even c) and takes one scale per lane (per row), so the stores are whole
// vectors along the output rows. F16 output where F16 converts in hardware
// (F16C, AArch64) decodes a tile with finite scales straight to F16 bits
// (E2m1F16DirectChunk). On x86 and NEON a tile whose E8M0 codes keep every
// product a normal number takes the exponent path instead (see "The
// exponent path" below): no multiply, the scale's k added to the exponent
// field, on bytes.
#if defined(AMN_KERNELS_MXFP4_TRANSPOSED_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef AMN_KERNELS_MXFP4_TRANSPOSED_INL_H_
#undef AMN_KERNELS_MXFP4_TRANSPOSED_INL_H_
#else
#define AMN_KERNELS_MXFP4_TRANSPOSED_INL_H_
#endif

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "hwy/highway.h"
#include "kernels/float_formats.h"
#include "kernels/fp4-inl.h"
#include "kernels/fp8_dequant-inl.h"
#include "kernels/kernel_args.h"
#include "kernels/ref/fp4_ref.h"

HWY_BEFORE_NAMESPACE();
namespace amn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR

// Rows per transposed MXFP4 tile of the general path: at least 64 and at
// least one chunk (256 was measured slower: its rows' input lines and
// output columns no longer stay in L1 together).
inline constexpr size_t kFp4MaxTileRows = std::max<size_t>(64, 2 * kFp4MaxLanes);

// Rows per band: Mxfp4TransposedRun walks the input rows in bands and, within a
// band, the groups of its column range, so each input line (four groups of one
// row) is used while it is in cache instead of once per group pass over every
// row. Where the exponent path below exists, a band whose scales all allow it
// is one exponent-path tile, which writes a column's 512 outputs before the
// next column; a band with a scale outside the range goes tile by tile (64
// rows), so only that scale's tile takes the general path
// (docs/performance/half-precision-outputs.md, "Transposed MXFP4 in row bands";
// 512 rather than 256 since the real-shaped measurement of 2026-11-29:
// 1.04-1.12x on gpt-oss experts). Elsewhere a band is one general tile.
//
// The targets with the exponent path below: x86 (timed) and NEON (the
// same 128-bit code: TBL for pshufb, ZIP for the interleaves; untimed,
// fewer instructions per element under emulation, docs/performance/arm.md).
#undef AMN_MXFP4_EXP_PATH
#if HWY_ARCH_X86 || HWY_TARGET == HWY_NEON
#define AMN_MXFP4_EXP_PATH 1
#else
#define AMN_MXFP4_EXP_PATH 0
#endif

#if AMN_MXFP4_EXP_PATH
inline constexpr size_t kMxfp4BandRows = 512;
#else
inline constexpr size_t kMxfp4BandRows = kFp4MaxTileRows;
#endif

// The byte transpose of a transposed MXFP4 tile: tile[k][t0 + i] = byte k
// of the block of row i (i < 16), rows at `first` with `stride` bytes
// between them; rows i >= valid read as zero bytes. Where 16-byte vectors
// with interleaves exist (x86, NEON, EMU128) this is a 16x16 transpose in
// registers: four rounds of InterleaveLower/Upper on 8-, 16-, 32- and
// 64-bit lanes, pairing vector i with i + 8, leave column k in vector k
// with row bitreverse(lane) in each lane, so the rows are loaded in
// bit-reversed order. Elsewhere (SVE, ...) a scalar copy.
template <size_t kTileRows>
HWY_INLINE void TransposeBlocks16(const uint8_t* HWY_RESTRICT first, size_t stride, size_t valid,
                                  uint8_t (*HWY_RESTRICT tile)[kTileRows], size_t t0) {
  constexpr size_t kB = ref::kMxfp4GroupBytes;
#if HWY_ARCH_X86 || HWY_TARGET == HWY_NEON || HWY_TARGET == HWY_EMU128
  static constexpr uint8_t kBitReversed[16] = {0, 8, 4, 12, 2, 10, 6, 14,
                                               1, 9, 5, 13, 3, 11, 7, 15};
  const hn::Full128<uint8_t> d8;
  const hn::Full128<uint16_t> d16;
  const hn::Full128<uint32_t> d32;
  const hn::Full128<uint64_t> d64;
  using V = hn::Vec<decltype(d8)>;
  V v[16];
  for (size_t i = 0; i < 16; ++i) {
    const size_t row = kBitReversed[i];
    v[i] = row < valid ? hn::LoadU(d8, first + row * stride) : hn::Zero(d8);
  }
  const auto butterfly = [&v](auto d) {
    V next[16];
    for (size_t i = 0; i < 8; ++i) {
      const auto a = hn::BitCast(d, v[i]);
      const auto b = hn::BitCast(d, v[i + 8]);
      next[2 * i] = hn::BitCast(hn::Full128<uint8_t>(), hn::InterleaveLower(d, a, b));
      next[2 * i + 1] = hn::BitCast(hn::Full128<uint8_t>(), hn::InterleaveUpper(d, a, b));
    }
    for (size_t i = 0; i < 16; ++i) v[i] = next[i];
  };
  butterfly(d8);
  butterfly(d16);
  butterfly(d32);
  butterfly(d64);
  for (size_t k = 0; k < kB; ++k) hn::StoreU(v[k], d8, tile[k] + t0);
#else
  for (size_t i = 0; i < 16; ++i) {
    for (size_t k = 0; k < kB; ++k) tile[k][t0 + i] = i < valid ? first[i * stride + k] : 0;
  }
#endif
}

#if AMN_MXFP4_EXP_PATH
// The exponent path of transposed MXFP4 (x86 targets and NEON): a tile
// whose E8M0 codes e all lie in [kExpPathMin, kExpPathMax] makes only
// products v * 2^k (k = e - 127, v an E2M1 value) that are normal numbers of
// the output type. Such a product is exact (v has at most two significant
// bits), so its bits are v's bits with k added to the exponent field, and a
// zero code stays +-0: no F32 multiply, no rounding, no NaN test. The work
// is done on bytes, one tile row position per byte: the nibbles index
// 16-byte tables (pshufb, TBL), the per-row addend is masked by a "nonzero
// code" table, and InterleaveLower/Upper build the 16-bit (and for F32 the
// 32-bit) outputs.
// Those interleaves work per 128-bit block, so the tile's rows are stored in
// the order that makes the stores come out in row order (ExpPathRowOrder).
//   F16: bits = code's F16 bits + (k << 10); the low byte is zero, so only
//     the high byte is computed (a byte add: the exponent field stays in
//     1..30). Normal for 0.5 * 2^k >= 2^-14 and 6 * 2^k < 2^16: k in
//     [-13, 13].
//   BF16: bits = code's BF16 bits + (k << 7), a 16-bit add. Normal for k in
//     [-125, 125] (F32 normal range; the reference's F32 product is then
//     exact too). F32: the same bits << 16.
// Other tiles (E8M0 0, 1, 253..255; for F16 also |k| > 13) take the
// general path with the reference's F32 multiply and NaN rule.
template <DequantOut kOut>
inline constexpr uint8_t kExpPathMin = kOut == DequantOut::kF16 ? 127 - 13 : 127 - 125;
template <DequantOut kOut>
inline constexpr uint8_t kExpPathMax = kOut == DequantOut::kF16 ? 127 + 13 : 127 + 125;

// order[p], p < Lanes(u8): the row (of a run of Lanes(u8) rows) whose codes
// sit at byte p of a tile row, and position[] its inverse, so that the
// exponent path's interleaves (one level for 16-bit outputs, two for F32)
// store the run's outputs in row order. Found by running the same
// interleaves on byte positions.
template <DequantOut kOut>
HWY_INLINE void ExpPathRowOrder(uint8_t* HWY_RESTRICT order, uint8_t* HWY_RESTRICT position) {
  const hn::ScalableTag<uint8_t> d8;
  const hn::Repartition<uint16_t, decltype(d8)> d16;
  const size_t n = hn::Lanes(d8);
  HWY_ALIGN uint8_t identity[HWY_MAX_BYTES];
  for (size_t p = 0; p < n; ++p) identity[p] = static_cast<uint8_t>(p);
  const auto v = hn::Load(d8, identity);
  const auto lo = hn::InterleaveLower(d8, v, v);
  const auto hi = hn::InterleaveUpper(d8, v, v);
  HWY_ALIGN uint8_t lanes[4 * HWY_MAX_BYTES];
  size_t width = 2;  // bytes per output
  if constexpr (kOut == DequantOut::kF32) {
    width = 4;
    const auto lo16 = hn::BitCast(d16, lo);
    const auto hi16 = hn::BitCast(d16, hi);
    hn::Store(hn::BitCast(d8, hn::InterleaveLower(d16, lo16, lo16)), d8, lanes);
    hn::Store(hn::BitCast(d8, hn::InterleaveUpper(d16, lo16, lo16)), d8, lanes + n);
    hn::Store(hn::BitCast(d8, hn::InterleaveLower(d16, hi16, hi16)), d8, lanes + 2 * n);
    hn::Store(hn::BitCast(d8, hn::InterleaveUpper(d16, hi16, hi16)), d8, lanes + 3 * n);
  } else {
    hn::Store(lo, d8, lanes);
    hn::Store(hi, d8, lanes + n);
  }
  for (size_t j = 0; j < n; ++j) {
    order[lanes[j * width]] = static_cast<uint8_t>(j);
    position[j] = lanes[j * width];
  }
}

// The blocks of 16 rows (r + j of a run: row order[16 * b + j] for
// 128-bit block b), one 16-byte block per 128-bit block of the vector;
// rows >= valid read as zero bytes.
template <class D8>
HWY_INLINE hn::Vec<D8> LoadRowBlocks(D8 d8, const uint8_t* HWY_RESTRICT first, size_t stride,
                                     size_t valid, const uint8_t* HWY_RESTRICT order, size_t j) {
  HWY_ALIGN static constexpr uint8_t kZeroRow[16] = {};
  const auto row = [&](size_t b) {
    const size_t r = order[16 * b + j];
    return r < valid ? first + r * stride : kZeroRow;
  };
  const hn::Full128<uint8_t> d128;
  if constexpr (hn::MaxLanes(d8) == 16) {
    return hn::LoadU(d8, row(0));
  } else if constexpr (hn::MaxLanes(d8) == 32) {
    return hn::Combine(d8, hn::LoadU(d128, row(1)), hn::LoadU(d128, row(0)));
  } else {
    const hn::Half<D8> dh;
    return hn::Combine(d8, hn::Combine(dh, hn::LoadU(d128, row(3)), hn::LoadU(d128, row(2))),
                       hn::Combine(dh, hn::LoadU(d128, row(1)), hn::LoadU(d128, row(0))));
  }
}

// TransposeBlocks16 on whole vectors for one run of Lanes(d8) rows in the
// exponent path's order: each 128-bit block transposes its own 16 rows, so
// the interleaves do the work of all blocks at once and tile row k is one
// store: tile[k][t + p] = byte k of run row order[p].
template <class D8, size_t kTileRows>
HWY_INLINE void TransposeRun(D8 d8, const uint8_t* HWY_RESTRICT first, size_t stride, size_t valid,
                             const uint8_t* HWY_RESTRICT order,
                             uint8_t (*HWY_RESTRICT tile)[kTileRows], size_t t) {
  static constexpr uint8_t kBitReversed[16] = {0, 8, 4, 12, 2, 10, 6, 14,
                                               1, 9, 5, 13, 3, 11, 7, 15};
  using V = hn::Vec<D8>;
  V v[16];
  for (size_t i = 0; i < 16; ++i) {
    v[i] = LoadRowBlocks(d8, first, stride, valid, order, kBitReversed[i]);
  }
  const auto butterfly = [&v, d8](auto d) {
    V next[16];
    for (size_t i = 0; i < 8; ++i) {
      const auto a = hn::BitCast(d, v[i]);
      const auto b = hn::BitCast(d, v[i + 8]);
      next[2 * i] = hn::BitCast(d8, hn::InterleaveLower(d, a, b));
      next[2 * i + 1] = hn::BitCast(d8, hn::InterleaveUpper(d, a, b));
    }
    for (size_t i = 0; i < 16; ++i) v[i] = next[i];
  };
  butterfly(d8);
  butterfly(hn::Repartition<uint16_t, D8>());
  butterfly(hn::Repartition<uint32_t, D8>());
  butterfly(hn::Repartition<uint64_t, D8>());
  for (size_t k = 0; k < ref::kMxfp4GroupBytes; ++k) hn::Store(v[k], d8, tile[k] + t);
}

// The low (shift 0) or high (shift 4) nibbles of Lanes(d8) tile bytes.
template <class D8>
HWY_INLINE hn::Vec<D8> TileNibbles(D8 d8, const uint8_t* HWY_RESTRICT in, int shift) {
  const hn::Repartition<uint16_t, D8> d16;
  const auto bytes = hn::BitCast(d16, hn::LoadU(d8, in));
  return hn::And(hn::BitCast(d8, hn::ShiftRightSame(bytes, shift)), hn::Set(d8, uint8_t{0x0F}));
}

// The exponent addends of a run of rows whose E8M0 codes are `e` (tile
// order). F16: k << 2 per byte (added to the high byte) in A. BF16/F32:
// k << 7 per 16-bit lane, A for the InterleaveLower half, B the upper.
template <DequantOut kOut, class D8>
HWY_INLINE hn::Vec<hn::Repartition<uint16_t, D8>> ExpAddendA(D8 d8, hn::Vec<D8> e) {
  const hn::Repartition<uint16_t, D8> d16;
  if constexpr (kOut == DequantOut::kF16) {
    return hn::BitCast(d16, hn::ShiftLeft<2>(hn::Sub(e, hn::Set(d8, uint8_t{127}))));
  } else {
    const auto e16 = hn::BitCast(d16, hn::InterleaveLower(d8, e, hn::Zero(d8)));
    return hn::ShiftLeft<7>(hn::Sub(e16, hn::Set(d16, uint16_t{127})));
  }
}
template <DequantOut kOut, class D8>
HWY_INLINE hn::Vec<hn::Repartition<uint16_t, D8>> ExpAddendB(D8 d8, hn::Vec<D8> e) {
  const hn::Repartition<uint16_t, D8> d16;
  if constexpr (kOut == DequantOut::kF16) {
    return hn::Zero(d16);
  } else {
    const auto e16 = hn::BitCast(d16, hn::InterleaveUpper(d8, e, hn::Zero(d8)));
    return hn::ShiftLeft<7>(hn::Sub(e16, hn::Set(d16, uint16_t{127})));
  }
}

// Lanes(d8) outputs of the exponent path from their nibbles (tile order)
// and the run's addends, stored in row order at `out`. kOut picks the bits
// made (and the row order); kF32 with 16-bit TOut is F16 output by way of
// the exact F32 values.
template <DequantOut kOut, class D8, class V16, typename TOut>
HWY_INLINE void ExpPathRun(D8 d8, hn::Vec<D8> nibbles, V16 addend_a, V16 addend_b,
                           TOut* HWY_RESTRICT out) {
  const hn::Repartition<uint16_t, D8> d16;
  const size_t n16 = hn::Lanes(d16);
  const auto nonzero = hn::TableLookupBytes(hn::LoadDup128(d8, kE2m1Nonzero), nibbles);
  if constexpr (kOut == DequantOut::kF16) {
    const auto high = hn::Add(hn::TableLookupBytes(hn::LoadDup128(d8, kE2m1F16High), nibbles),
                              hn::And(nonzero, hn::BitCast(d8, addend_a)));
    hn::StoreU(hn::BitCast(d16, hn::InterleaveLower(d8, hn::Zero(d8), high)), d16, out);
    hn::StoreU(hn::BitCast(d16, hn::InterleaveUpper(d8, hn::Zero(d8), high)), d16, out + n16);
  } else {
    const auto low = hn::TableLookupBytes(hn::LoadDup128(d8, kE2m1Bf16Low), nibbles);
    const auto high = hn::TableLookupBytes(hn::LoadDup128(d8, kE2m1Bf16High), nibbles);
    const auto mask_a = hn::BitCast(d16, hn::InterleaveLower(d8, nonzero, nonzero));
    const auto mask_b = hn::BitCast(d16, hn::InterleaveUpper(d8, nonzero, nonzero));
    const auto bf16_a =
        hn::Add(hn::BitCast(d16, hn::InterleaveLower(d8, low, high)), hn::And(mask_a, addend_a));
    const auto bf16_b =
        hn::Add(hn::BitCast(d16, hn::InterleaveUpper(d8, low, high)), hn::And(mask_b, addend_b));
    if constexpr (kOut == DequantOut::kBf16) {
      hn::StoreU(bf16_a, d16, out);
      hn::StoreU(bf16_b, d16, out + n16);
    } else {
      const hn::Repartition<uint32_t, D8> d32;
      const size_t n32 = hn::Lanes(d32);
      const auto zero = hn::Zero(d16);
      const auto f32_0 = hn::BitCast(d32, hn::InterleaveLower(d16, zero, bf16_a));
      const auto f32_1 = hn::BitCast(d32, hn::InterleaveUpper(d16, zero, bf16_a));
      const auto f32_2 = hn::BitCast(d32, hn::InterleaveLower(d16, zero, bf16_b));
      const auto f32_3 = hn::BitCast(d32, hn::InterleaveUpper(d16, zero, bf16_b));
      if constexpr (sizeof(TOut) == sizeof(uint16_t)) {
        // F16 output of a tile outside the F16 byte path's range: the exact
        // F32 product rounded as the reference does (finite: no NaN).
        StoreF16Pair<false>(d32, f32_0, f32_1, out);
        StoreF16Pair<false>(d32, f32_2, f32_3, out + 2 * n32);
      } else {
        uint32_t* HWY_RESTRICT out32 = reinterpret_cast<uint32_t*>(out);
        hn::StoreU(f32_0, d32, out32);
        hn::StoreU(f32_1, d32, out32 + n32);
        hn::StoreU(f32_2, d32, out32 + 2 * n32);
        hn::StoreU(f32_3, d32, out32 + 3 * n32);
      }
    }
  }
}

// The E8M0 codes of rows [0, t_n) (`groups` bytes apart from `first`) in
// tile order (`position[j]`: the byte of row j of a run, the inverse of
// ExpPathRowOrder), a partial last run padded with 127 (k = 0).
HWY_INLINE void GatherExpPathScales(const uint8_t* HWY_RESTRICT first, size_t groups,
                                    const uint8_t* HWY_RESTRICT position, size_t t_n,
                                    uint8_t* HWY_RESTRICT e_codes) {
  const size_t n = hn::Lanes(hn::ScalableTag<uint8_t>());
  for (size_t t = 0; t < t_n; t += n) {
    const size_t run = std::min(n, t_n - t);
    if (run < n) std::memset(e_codes + t, 127, n);
    for (size_t j = 0; j < run; ++j) e_codes[t + position[j]] = first[(t + j) * groups];
  }
}

// Whether the gathered codes of t_n rows all lie in kOut's exponent-path
// range (the padding of a partial run does).
template <DequantOut kOut>
HWY_INLINE bool InExpPathRange(const uint8_t* HWY_RESTRICT e_codes, size_t t_n) {
  const hn::ScalableTag<uint8_t> d8;
  const auto min = hn::Set(d8, kExpPathMin<kOut>);
  const auto span = hn::Set(d8, static_cast<uint8_t>(kExpPathMax<kOut> - kExpPathMin<kOut>));
  auto out_of_range = hn::Zero(d8);
  for (size_t t = 0; t < t_n; t += hn::Lanes(d8)) {
    // Outside the range: e - min > span (u8, wrapping), so the saturated
    // difference is nonzero.
    out_of_range =
        hn::Or(out_of_range, hn::SaturatedSub(hn::Sub(hn::Load(d8, e_codes + t), min), span));
  }
  return hn::AllTrue(d8, hn::Eq(out_of_range, hn::Zero(d8)));
}

// One tile on the exponent path: rows [0, t_n) of group g from `first`
// (`stride` bytes apart), their E8M0 codes e_codes (GatherExpPathScales),
// output rows [c_lo, c_hi) at y0 (row c_lo, element r0), `rows` apart; `order`
// from ExpPathRowOrder. Rows run in runs of Lanes(d8) (the last one partial,
// through out_tail; t_n <= kMxfp4BandRows, which Lanes(d8) divides on these
// targets). The tile and each run's addends are made once; then each column's
// t_n outputs are written in turn, one run after another.
template <DequantOut kOut, typename TOut>
HWY_INLINE void Mxfp4ExpPathTile(const uint8_t* HWY_RESTRICT first, size_t stride,
                                 const uint8_t* HWY_RESTRICT e_codes,
                                 const uint8_t* HWY_RESTRICT order, size_t t_n, size_t c_lo,
                                 size_t c_hi, size_t rows, TOut* HWY_RESTRICT y0) {
  const hn::ScalableTag<uint8_t> d8;
  const hn::Repartition<uint16_t, decltype(d8)> d16;
  const size_t n = hn::Lanes(d8);
  const size_t n16 = hn::Lanes(d16);
  constexpr size_t kG = ref::kMxfp4GroupElems;
  HWY_ALIGN uint8_t tile[ref::kMxfp4GroupBytes][kMxfp4BandRows];
  HWY_ALIGN uint16_t addends[2 * kMxfp4BandRows];
  HWY_ALIGN TOut out_tail[HWY_MAX_BYTES];
  for (size_t t = 0; t < t_n; t += n) {
    TransposeRun(d8, first + t * stride, stride, t_n - t, order, tile, t);
    const auto e = hn::Load(d8, e_codes + t);
    hn::Store(ExpAddendA<kOut>(d8, e), d16, addends + 2 * t);
    hn::Store(ExpAddendB<kOut>(d8, e), d16, addends + 2 * t + n16);
  }
  for (size_t c = c_lo; c < c_hi; ++c) {
    TOut* y = y0 + (c - c_lo) * rows;
    for (size_t t = 0; t < t_n; t += n) {
      const auto addend_a = hn::Load(d16, addends + 2 * t);
      const auto addend_b = hn::Load(d16, addends + 2 * t + n16);
      const auto nibbles = TileNibbles(d8, tile[(c % kG) / 2] + t, (c & 1) != 0 ? 4 : 0);
      if (t + n <= t_n) {
        ExpPathRun<kOut>(d8, nibbles, addend_a, addend_b, y + t);
      } else {
        ExpPathRun<kOut>(d8, nibbles, addend_a, addend_b, out_tail);
        std::memcpy(y + t, out_tail, (t_n - t) * sizeof(TOut));
      }
    }
  }
}
#endif  // AMN_MXFP4_EXP_PATH

// Transposed MXFP4, one expert: output rows [col_begin, col_end) of the
// [groups*32][rows] transpose. See the file comment.
template <DequantOut kOut, typename TOut>
HWY_INLINE void Mxfp4TransposedRun(const uint8_t* HWY_RESTRICT blocks,
                                   const uint8_t* HWY_RESTRICT scales, size_t rows, size_t groups,
                                   size_t col_begin, size_t col_end, TOut* HWY_RESTRICT out) {
  const hn::ScalableTag<float> df;
  const size_t n = hn::Lanes(df);
  const size_t chunk = 2 * n;
  const size_t tile_rows = std::max<size_t>(64, chunk);  // a multiple of chunk
  constexpr size_t kG = ref::kMxfp4GroupElems;
  constexpr size_t kB = ref::kMxfp4GroupBytes;
  HWY_ALIGN uint8_t tile[kB][kFp4MaxTileRows];
  HWY_ALIGN float lane_scales[kFp4MaxTileRows];
  uint8_t scale_codes[kFp4MaxTileRows];
  HWY_ALIGN TOut out_tail[2 * kFp4MaxLanes];
  if (col_begin >= col_end) return;
#if AMN_MXFP4_EXP_PATH
  HWY_ALIGN uint8_t exp_order[HWY_MAX_BYTES];
  HWY_ALIGN uint8_t exp_position[HWY_MAX_BYTES];
  HWY_ALIGN uint8_t wide_order[HWY_MAX_BYTES];  // F16 by way of F32
  HWY_ALIGN uint8_t wide_position[HWY_MAX_BYTES];
  HWY_ALIGN uint8_t exp_codes[kMxfp4BandRows];
  HWY_ALIGN uint8_t wide_codes[kMxfp4BandRows];  // F16 only
  ExpPathRowOrder<kOut>(exp_order, exp_position);
  ExpPathRowOrder<DequantOut::kF32>(wide_order, wide_position);
#endif
  for (size_t b0 = 0; b0 < rows; b0 += kMxfp4BandRows) {
    const size_t b_n = std::min(kMxfp4BandRows, rows - b0);
    for (size_t g = col_begin / kG; g <= (col_end - 1) / kG; ++g) {
      const size_t c_lo = std::max(col_begin, g * kG);
      const size_t c_hi = std::min(col_end, g * kG + kG);
#if AMN_MXFP4_EXP_PATH
      // Rows [r, r + n_rows) of group g on the exponent path, if their
      // codes (at `at` in exp_codes, in kOut's order; F16 also in
      // wide_codes, the F32 order) allow it; F16 outside [114, 140] but
      // inside [2, 252] by way of the F32 bits.
      const auto exp_path = [&](size_t r, size_t n_rows, size_t at) {
        const uint8_t* first = blocks + (r * groups + g) * kB;
        TOut* y = out + (c_lo - col_begin) * rows + r;
        if (InExpPathRange<kOut>(exp_codes + at, n_rows)) {
          Mxfp4ExpPathTile<kOut>(first, groups * kB, exp_codes + at, exp_order, n_rows, c_lo, c_hi,
                                 rows, y);
          return true;
        }
        if constexpr (kOut == DequantOut::kF16) {
          if (InExpPathRange<DequantOut::kF32>(wide_codes + at, n_rows)) {
            Mxfp4ExpPathTile<DequantOut::kF32>(first, groups * kB, wide_codes + at, wide_order,
                                               n_rows, c_lo, c_hi, rows, y);
            return true;
          }
        }
        return false;
      };
      // The whole band, else each of its tiles (a code outside the range
      // sends only its own tile to the general path). Tiles start at
      // multiples of 64 rows, whole runs of the band's codes.
      GatherExpPathScales(scales + b0 * groups + g, groups, exp_position, b_n, exp_codes);
      if constexpr (kOut == DequantOut::kF16) {
        if (!InExpPathRange<kOut>(exp_codes, b_n)) {
          GatherExpPathScales(scales + b0 * groups + g, groups, wide_position, b_n, wide_codes);
        }
      }
      if (exp_path(b0, b_n, 0)) continue;
#endif
      for (size_t r0 = b0; r0 < b0 + b_n; r0 += tile_rows) {
        const size_t t_n = std::min(tile_rows, rows - r0);
        const size_t t_padded = (t_n + chunk - 1) / chunk * chunk;
        const uint8_t* first = blocks + (r0 * groups + g) * kB;
#if AMN_MXFP4_EXP_PATH
        if (b_n > tile_rows && exp_path(r0, t_n, r0 - b0)) continue;
#endif
        // The tile's E8M0 scale bytes (one per row, `groups` bytes apart).
        bool any_inf = false;  // 255: +Inf
        for (size_t t = 0; t < t_n; ++t) {
          scale_codes[t] = scales[(r0 + t) * groups + g];
          any_inf |= scale_codes[t] == 0xFF;
        }
        for (size_t t = 0; t < t_padded; t += 16) {
          TransposeBlocks16(first + t * groups * kB, groups * kB, t < t_n ? t_n - t : 0, tile, t);
        }
        // The F16C direct path (E2m1F16DirectChunk) takes a tile whose
        // scales are all finite, with lane scales in element order.
        bool direct = false;
#if AMN_F16_HARDWARE_DEMOTE
        if constexpr (kOut == DequantOut::kF16) direct = !any_inf;
#endif
        (void)any_inf;
        for (size_t t = 0; t < t_padded; ++t) {
          const size_t at = (t / chunk) * chunk + (direct ? t % chunk : LaneOf<kOut>(t % chunk, n));
          // ref::E8m0ToF32Bits inline (2^(e - 127); e = 0 is the F32
          // subnormal 2^-127); padded rows get +0.
          const uint32_t e = t < t_n ? scale_codes[t] : 0;
          const uint32_t bits = t >= t_n ? 0u : e == 0 ? 0x00400000u : e << fmt::kF32MantBits;
          std::memcpy(lane_scales + at, &bits, sizeof(bits));
        }
        for (size_t c = c_lo; c < c_hi; ++c) {
          const uint8_t* codes = tile[(c % kG) / 2];
          const int shift = (c & 1) != 0 ? 4 : 0;  // odd columns: high nibbles
          TOut* y = out + (c - col_begin) * rows + r0;
          for (size_t t = 0; t < t_n; t += chunk) {
            const auto scale_a = hn::LoadU(df, lane_scales + t);
            const auto scale_b = hn::LoadU(df, lane_scales + t + n);
#if AMN_F16_HARDWARE_DEMOTE
            if constexpr (kOut == DequantOut::kF16) {
              if (direct) {
                if (t + chunk <= t_n) {
                  E2m1F16DirectChunk(df, codes + t, shift, scale_a, scale_b, y + t);
                } else {
                  E2m1F16DirectChunk(df, codes + t, shift, scale_a, scale_b, out_tail);
                  std::memcpy(y + t, out_tail, (t_n - t) * sizeof(TOut));
                }
                continue;
              }
            }
#endif
            const auto nibbles = NibbleCodes(df, codes + t, shift);
            if (t + chunk <= t_n) {
              E2m1Chunk<kOut>(df, nibbles, scale_a, scale_b, y + t);
            } else {
              E2m1Chunk<kOut>(df, nibbles, scale_a, scale_b, out_tail);
              std::memcpy(y + t, out_tail, (t_n - t) * sizeof(TOut));
            }
          }
        }
      }
    }
  }
}

#endif  // HWY_TARGET != HWY_SCALAR

template <DequantOut kOut, typename TOut>
HWY_INLINE void DequantMxfp4TransposedKernel(
    void (*reference)(const uint8_t*, const uint8_t*, size_t, size_t, size_t, size_t, TOut*),
    const uint8_t* blocks, const uint8_t* scales, size_t rows, size_t groups, size_t col_begin,
    size_t col_end, TOut* out) {
#if HWY_TARGET == HWY_SCALAR
  reference(blocks, scales, rows, groups, col_begin, col_end, out);
#else
  (void)reference;
  Mxfp4TransposedRun<kOut>(blocks, scales, rows, groups, col_begin, col_end, out);
#endif
}

template <DequantOut kOut, typename TOut>
HWY_INLINE void Mxfp4StOut(void (*plain_ref)(const uint8_t*, const uint8_t*, size_t, size_t, TOut*),
                           void (*transposed_ref)(const uint8_t*, const uint8_t*, size_t, size_t,
                                                  size_t, size_t, TOut*),
                           const kernels::Mxfp4StArgs& a, size_t begin, size_t end, TOut* out) {
  if (a.transposed) {
    DequantMxfp4TransposedKernel<kOut>(transposed_ref, a.blocks, a.scales, a.rows, a.groups, begin,
                                       end, out);
  } else {
    DequantMxfp4Kernel<kOut>(plain_ref, a.blocks + begin * a.groups * ref::kMxfp4GroupBytes,
                             a.scales + begin * a.groups, end - begin, a.groups, out);
  }
}

// The Mxfp4St family (kernels/kernel_args.h): rows [begin, end) of the plain
// or transposed layout.
HWY_INLINE void DecodeMxfp4St(const kernels::Mxfp4StArgs& a, size_t begin, size_t end,
                              ElemType out_type, void* out) {
  switch (out_type) {
    case ElemType::kF32:
      Mxfp4StOut<DequantOut::kF32>(ref::DequantMxfp4StToF32, ref::DequantMxfp4StTransposedToF32, a,
                                   begin, end, static_cast<float*>(out));
      break;
    case ElemType::kBf16:
      Mxfp4StOut<DequantOut::kBf16>(ref::DequantMxfp4StToBf16, ref::DequantMxfp4StTransposedToBf16,
                                    a, begin, end, static_cast<uint16_t*>(out));
      break;
    case ElemType::kF16:
      Mxfp4StOut<DequantOut::kF16>(ref::DequantMxfp4StToF16, ref::DequantMxfp4StTransposedToF16, a,
                                   begin, end, static_cast<uint16_t*>(out));
      break;
    default:
      break;
  }
}
}  // namespace HWY_NAMESPACE
}  // namespace amn
HWY_AFTER_NAMESPACE();

#endif  // AMN_KERNELS_MXFP4_TRANSPOSED_INL_H_
