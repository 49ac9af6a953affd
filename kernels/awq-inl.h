// Per-target AWQ GEMM 4-bit dequantization (amn/awq_dequant.h), Highway
// 1.0.3. Same bytes as kernels/ref/awq_ref.cc on every target: the nibble of
// column j is (word >> 4*REV[j % 8]) & 0xF, the integer difference q - z is
// converted to F32 (exact), multiplied once by the F32 scale (never fused),
// then rounded to the output type. SCALAR (one-lane vectors) runs the
// reference.
//
// Two orientations, two loop nests:
// * kInOut (row i = input feature, N outputs): column tiles of up to
//   kAwqTileCols with the tile's scales and zeros widened once per group,
//   a vector at a time, into stack tables (AwqInOutTables); each vector of
//   n words (8n columns) is spread over 8 vectors by TableLookupLanes (lane
//   L of vector k takes word (kn + L) / 8) and a per-lane shift
//   (SSE4/SSSE3: a broadcast word, constant shifts and blends). F16 output
//   on SSE4/SSSE3 takes the integer rounding of ToF16LowerInRange for a
//   tile and group whose products are all ±0 or F16-normal
//   (AwqColumnF16InRange).
// * kOutIn (row j = output feature, K outputs; what `amn remember` writes):
//   the eight output rows of one word column share every word, so a vector
//   holds that word from n consecutive input rows (gathered from a
//   cache-resident tile of input rows) and each of the eight rows is one
//   uniform shift of it, with the group's zero and scale broadcast. On x86
//   the row's 16 possible results (codes 0..15) are computed once per group
//   with the same vector formula and looked up: BF16/F16 by byte shuffles
//   (Int4ByteTables) on SSSE3 to AVX3_DL, F32 (and the input rows left
//   over) by lane permutes (CodeTable16) on AVX2 and AVX-512.
#if defined(AMN_KERNELS_AWQ_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef AMN_KERNELS_AWQ_INL_H_
#undef AMN_KERNELS_AWQ_INL_H_
#else
#define AMN_KERNELS_AWQ_INL_H_
#endif

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "hwy/highway.h"
#include "kernels/int4_byte_table-inl.h"
#include "kernels/kernel_args.h"
#include "kernels/packed_int_store-inl.h"
#include "kernels/ref/awq_ref.h"
#include "kernels/ref/packed_words.h"

HWY_BEFORE_NAMESPACE();
namespace amn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR

// Columns per in-out tile: a multiple of 8n for every target (n <= 64), and
// two 16 KiB tables on the stack. A whole row of a 4096-output layer: at
// that real shape, tiles of 1024 columns (512 bytes of each 2 KiB input
// row, then the next tile) streamed 1.1-1.4x slower with AVX2 and SSE4
// (docs/performance/awq.md, "AWQ GEMM layout: tables by vector, whole-row
// tiles").
inline constexpr size_t kAwqTileCols = 4096;

#if HWY_TARGET == HWY_SSE4 || HWY_TARGET == HWY_SSSE3
// 128-bit vectors: vectors 2w and 2w + 1 of a unit (lane L of vector k is
// column kn + L) are the eight columns of word w, m = 0..3 and 4..7 at
// shifts 4 * REV[m] = 0, 16, 4, 20 and 8, 24, 12, 28: the broadcast word,
// its odd lanes shifted by 16, its upper half by 4 (two blends), then the
// whole by 8. kWord is a template parameter so that every shift is an
// immediate (the lane lookups and per-lane shift selects of the general
// path below, with a runtime k, were rebuilt per vector: g++ 12 kept the
// SSE4 F16 loop rolled).
template <size_t kWord, class DU>
HWY_INLINE void AwqInOutWordCodes(DU du, hn::Vec<DU> words, hn::Vec<DU>& q0, hn::Vec<DU>& q1) {
  const auto word = hn::Broadcast<static_cast<int>(kWord)>(words);
  const auto halves = hn::OddEven(hn::ShiftRight<16>(word), word);
  const auto low = hn::ConcatUpperLower(du, hn::ShiftRight<4>(halves), halves);
  q0 = hn::And(low, hn::Set(du, 0xFu));
  q1 = hn::And(hn::ShiftRight<8>(low), hn::Set(du, 0xFu));
}
#else
// The codes of vector k (0..7) of a unit of n words (8n columns; lane L is
// column kn + L): word (kn + L) / 8 by TableLookupLanes, at shift
// 4 * REV[m] = 16 * (m & 1) + 4 * (m & 2) / 2 + 4 * (m & 4) / 2, m = column % 8.
template <class DU>
HWY_INLINE hn::Vec<DU> AwqInOutVectorCodes(DU du, hn::Vec<DU> words, size_t k) {
  const hn::RebindToSigned<DU> di;
  const size_t n = hn::Lanes(du);
  const auto column = hn::Add(hn::Iota(du, 0), hn::Set(du, static_cast<uint32_t>(k * n)));
  const auto word = hn::TableLookupLanes(
      words, hn::IndicesFromVec(du, hn::BitCast(di, hn::ShiftRight<3>(column))));
  const auto m = hn::And(column, hn::Set(du, 7u));
  const auto shift = hn::Or(hn::ShiftLeft<1>(hn::And(m, hn::Set(du, 6u))),
                            hn::ShiftLeft<4>(hn::And(m, hn::Set(du, 1u))));
  return hn::And(hn::Shr(word, shift), hn::Set(du, 0xFu));
}
#endif

// F16 output on the targets without F16C where ToF16LowerInRange's integer
// rounding exists (SSE4, SSSE3): a tile row group whose every product is ±0
// or in F16's normal range (AwqColumnF16InRange) is stored by it.
template <DequantOut kOut>
constexpr bool kAwqInOutF16InRange = kOut == DequantOut::kF16 && kF16InRangeStore;

// Whether every product fl((q - zero) * scale), q in 0..15, of one column is
// ±0 or has a magnitude in [2^-14, 2^16): q - zero is an exact integer of
// magnitude at most max(zero, 15 - zero), and the product is the one F32
// multiply that F16InRangeProducts bounds (false for Inf and NaN scales).
// The F16 output's rounding is then the store's, once, whatever the scale
// type (the scale is widened exactly to F32).
HWY_INLINE bool AwqColumnF16InRange(int32_t zero, float scale) {
  return F16InRangeProducts(scale, static_cast<float>(std::max(zero, 15 - zero)));
}

// The codes q0 and q1 of 2n consecutive columns to 2n outputs, with those
// columns' scales and zeros. kInRange: F16 products that
// AwqColumnF16InRange accepted for every column of the tile.
template <DequantOut kOut, bool kMayBeNan, bool kInRange, class DU, typename TOut>
HWY_INLINE void AwqInOutStorePair(DU du, hn::Vec<DU> q0, hn::Vec<DU> q1,
                                  const float* HWY_RESTRICT scale,
                                  const int32_t* HWY_RESTRICT zero, TOut* HWY_RESTRICT out) {
  static_assert(!kInRange || (kAwqInOutF16InRange<kOut> && !kMayBeNan));
  const hn::RebindToSigned<DU> di;
  const hn::RebindToFloat<DU> df;
  const size_t n = hn::Lanes(du);
  const auto d0 = hn::Sub(hn::BitCast(di, q0), hn::LoadU(di, zero));
  const auto d1 = hn::Sub(hn::BitCast(di, q1), hn::LoadU(di, zero + n));
  const auto p0 = ScaledProduct<kMayBeNan>(df, hn::ConvertTo(df, d0), hn::LoadU(df, scale));
  const auto p1 = ScaledProduct<kMayBeNan>(df, hn::ConvertTo(df, d1), hn::LoadU(df, scale + n));
  if constexpr (kInRange) {
    ToF16LowerInRange::StorePair(du, hn::BitCast(du, p0), hn::BitCast(du, p1), out);
  } else {
    StorePair<kOut, kMayBeNan>(df, p0, p1, out);
  }
}

#if HWY_TARGET == HWY_SSE4 || HWY_TARGET == HWY_SSSE3
// Word kWord of a unit: its 8 columns.
template <size_t kWord, DequantOut kOut, bool kMayBeNan, bool kInRange, class DU, typename TOut>
HWY_INLINE void AwqInOutWord(DU du, hn::Vec<DU> words, const float* HWY_RESTRICT scale,
                             const int32_t* HWY_RESTRICT zero, TOut* HWY_RESTRICT out) {
  hn::Vec<DU> q0, q1;
  AwqInOutWordCodes<kWord>(du, words, q0, q1);
  AwqInOutStorePair<kOut, kMayBeNan, kInRange>(du, q0, q1, scale + 8 * kWord, zero + 8 * kWord,
                                               out + 8 * kWord);
}
#endif

// One unit: n words at `bytes` (8n columns) to 8n outputs.
template <DequantOut kOut, bool kMayBeNan, bool kInRange, typename TOut>
HWY_INLINE void AwqInOutUnit(const uint8_t* HWY_RESTRICT bytes, const float* HWY_RESTRICT scale,
                             const int32_t* HWY_RESTRICT zero, TOut* HWY_RESTRICT out) {
  const hn::ScalableTag<uint32_t> du;
  const hn::Repartition<uint8_t, decltype(du)> d8;
  const auto words = hn::BitCast(du, hn::LoadU(d8, bytes));
#if HWY_TARGET == HWY_SSE4 || HWY_TARGET == HWY_SSSE3
  AwqInOutWord<0, kOut, kMayBeNan, kInRange>(du, words, scale, zero, out);
  AwqInOutWord<1, kOut, kMayBeNan, kInRange>(du, words, scale, zero, out);
  AwqInOutWord<2, kOut, kMayBeNan, kInRange>(du, words, scale, zero, out);
  AwqInOutWord<3, kOut, kMayBeNan, kInRange>(du, words, scale, zero, out);
#else
  // (Vector indices as template parameters, as on SSE4, measured 6-9 %
  // slower for F32 on AVX2 and AVX3_DL, best of three pairs:
  // docs/performance/awq.md, "AWQ GEMM layout (`awq4_inout`) 16-bit outputs".)
  const size_t n = hn::Lanes(du);
  for (size_t k = 0; k < 8; k += 2) {
    AwqInOutStorePair<kOut, kMayBeNan, kInRange>(du, AwqInOutVectorCodes(du, words, k),
                                                 AwqInOutVectorCodes(du, words, k + 1),
                                                 scale + k * n, zero + k * n, out + k * n);
  }
#endif
}

// Columns [0, tc) of one tile row (tc a multiple of 8); the last partial
// unit goes through zero-padded copies, so nothing outside the spans is
// touched. The tables hold a whole number of units.
template <DequantOut kOut, bool kMayBeNan, bool kInRange, typename TOut>
HWY_INLINE void AwqInOutTileRow(const uint8_t* HWY_RESTRICT bytes, size_t tc,
                                const float* HWY_RESTRICT scale, const int32_t* HWY_RESTRICT zero,
                                TOut* HWY_RESTRICT out) {
  const size_t unit = 8 * hn::Lanes(hn::ScalableTag<uint32_t>());
  size_t c = 0;
  for (; c + unit <= tc; c += unit) {
    AwqInOutUnit<kOut, kMayBeNan, kInRange>(bytes + c / 2, scale + c, zero + c, out + c);
  }
  if (c == tc) return;
  const size_t rest = tc - c;
  HWY_ALIGN uint8_t bytes_tail[HWY_MAX_BYTES] = {};
  HWY_ALIGN TOut out_tail[2 * HWY_MAX_BYTES];
  std::memcpy(bytes_tail, bytes + c / 2, rest / 2);
  AwqInOutUnit<kOut, kMayBeNan, kInRange>(bytes_tail, scale + c, zero + c, out_tail);
  std::memcpy(out + c, out_tail, rest * sizeof(TOut));
}

// A vector of scales at `at` (of `type`) as F32 bits, widened exactly as
// the reference widens them (FromF16 / FromBf16).
template <class DU>
HWY_INLINE hn::Vec<DU> AwqScaleBits(DU du, const uint8_t* HWY_RESTRICT at, ElemType type) {
  if (type == ElemType::kF32) return hn::LoadU(du, reinterpret_cast<const uint32_t*>(at));
  if (type == ElemType::kBf16) return FromBf16()(du, reinterpret_cast<const uint16_t*>(at));
  return FromF16()(du, reinterpret_cast<const uint16_t*>(at));
}

// All ones in the lanes whose F32 bits are Inf or NaN, else zero.
template <class DU>
HWY_INLINE hn::Vec<DU> AwqNonFiniteLanes(DU du, hn::Vec<DU> bits) {
  const auto exponent = hn::Set(du, fmt::kF32ExpMask);
  return hn::VecFromMask(du, hn::Eq(hn::And(bits, exponent), exponent));
}

// The scales and zeros of group g for tile columns [c0, c0 + tc), widened
// into `scale` and `zero` (F32 and i32, column c0 + c at index c) with
// whole vectors: the zeros by the codes' own unpacking (qzeros packs a
// group's N zeros as qweight packs a row's N codes), the scales by FromF16 /
// FromBf16 (exact, the reference's widening); entries [tc, padded) get
// scale 0 and zero 0 (their products are ±0). Returns whether every scale
// is finite. (Widened one column at a time, this took about 3 ns per
// column on AVX2: 0.02-0.1 ns per output element at group sizes 128-32.)
HWY_INLINE bool AwqInOutTables(const ref::AwqMatrix& m, size_t g, size_t c0, size_t tc,
                               size_t padded, float* HWY_RESTRICT scale,
                               int32_t* HWY_RESTRICT zero) {
  const hn::ScalableTag<uint32_t> du;
  const hn::Repartition<uint8_t, decltype(du)> d8;
  const size_t n = hn::Lanes(du);
  const size_t n_cols = m.out_features;
  const uint8_t* zero_words = m.qzeros + 4 * (g * (n_cols / 8)) + c0 / 2;
  HWY_ALIGN uint8_t zero_tail[HWY_MAX_BYTES] = {};
  for (size_t c = 0; c < padded; c += 8 * n) {
    const uint8_t* bytes = zero_words + c / 2;
    if (c + 8 * n > tc) {
      std::memcpy(zero_tail, bytes, (tc - c) / 2);
      bytes = zero_tail;
    }
    const auto words = hn::BitCast(du, hn::LoadU(d8, bytes));
    uint32_t* dst = reinterpret_cast<uint32_t*>(zero + c);
#if HWY_TARGET == HWY_SSE4 || HWY_TARGET == HWY_SSSE3
    // Word w's columns 8w..8w+3 and 8w+4..8w+7, as AwqInOutWord stores them.
    hn::Vec<decltype(du)> q[8];
    AwqInOutWordCodes<0>(du, words, q[0], q[1]);
    AwqInOutWordCodes<1>(du, words, q[2], q[3]);
    AwqInOutWordCodes<2>(du, words, q[4], q[5]);
    AwqInOutWordCodes<3>(du, words, q[6], q[7]);
    for (size_t k = 0; k < 8; ++k) hn::Store(q[k], du, dst + 4 * k);
#else
    for (size_t k = 0; k < 8; ++k) hn::Store(AwqInOutVectorCodes(du, words, k), du, dst + k * n);
#endif
  }
  const size_t scale_bytes = ElemTypeBytes(m.scale_type);
  const uint8_t* scale_at = m.scales + scale_bytes * (g * n_cols + c0);
  auto non_finite = hn::Zero(du);
  uint32_t* scale_bits = reinterpret_cast<uint32_t*>(scale);
  size_t c = 0;
  for (; c + n <= tc; c += n) {
    const auto bits = AwqScaleBits(du, scale_at + scale_bytes * c, m.scale_type);
    non_finite = hn::Or(non_finite, AwqNonFiniteLanes(du, bits));
    hn::Store(bits, du, scale_bits + c);
  }
  bool finite = hn::AllFalse(du, hn::Ne(non_finite, hn::Zero(du)));
  for (; c < tc; ++c) {
    const uint32_t bits = ref::ScaleF32Bits(m.scales, m.scale_type, g * n_cols + c0 + c);
    finite = finite && !IsNonFiniteBits(bits);
    scale_bits[c] = bits;
  }
  std::fill(scale + tc, scale + padded, 0.0f);
  return finite;
}

// Rows [rb, re) of the [K, N] weight.
template <DequantOut kOut, typename TOut>
HWY_INLINE void AwqInOut(const ref::AwqMatrix& m, size_t rb, size_t re, TOut* HWY_RESTRICT out) {
  const size_t n_cols = m.out_features;
  const size_t words = n_cols / 8;
  const size_t unit = 8 * hn::Lanes(hn::ScalableTag<uint32_t>());
  HWY_ALIGN float scale[kAwqTileCols];
  HWY_ALIGN int32_t zero[kAwqTileCols];
  for (size_t c0 = 0; c0 < n_cols; c0 += kAwqTileCols) {
    const size_t tc = std::min(kAwqTileCols, n_cols - c0);
    const size_t padded = (tc + unit - 1) / unit * unit;
    for (size_t i = rb; i < re;) {
      const size_t g = i / m.group_size;
      const size_t group_first = i - i % m.group_size;
      const size_t i_end = re - group_first > m.group_size ? group_first + m.group_size : re;
      const bool finite = AwqInOutTables(m, g, c0, tc, padded, scale, zero);
      bool in_range = kAwqInOutF16InRange<kOut> && finite;
      if constexpr (kAwqInOutF16InRange<kOut>) {
        for (size_t c = 0; c < tc && in_range; ++c) {
          in_range = AwqColumnF16InRange(zero[c], scale[c]);
        }
      }
      for (; i < i_end; ++i) {
        const uint8_t* bytes = m.qweight + 4 * (i * words) + c0 / 2;
        TOut* row_out = out + (i - rb) * n_cols + c0;
        if (kAwqInOutF16InRange<kOut> && in_range) {
          AwqInOutTileRow<kOut, false, kAwqInOutF16InRange<kOut>>(bytes, tc, scale, zero,
                                                                   row_out);
        } else if (finite) {
          AwqInOutTileRow<kOut, false, false>(bytes, tc, scale, zero, row_out);
        } else {
          AwqInOutTileRow<kOut, true, false>(bytes, tc, scale, zero, row_out);
        }
      }
    }
  }
}

// Where the out-in loops read word w of input row i: the qweight itself
// or a packed copy of one tile's band (AwqOutIn). `first` is word w0 of
// row i0.
struct AwqOutInWords {
  const uint8_t* first = nullptr;
  size_t i0 = 0, w0 = 0;
  size_t stride_bytes = 0;
  const uint8_t* At(size_t i, size_t w) const {
    return first + (i - i0) * stride_bytes + 4 * (w - w0);
  }
};

// Word `w` of n consecutive input rows starting at `first`, stride_bytes
// apart, from little-endian scalar loads of an L1/L2-resident tile. (The
// hardware gather, vpgatherdd, measured no faster with AVX-512 and slower
// with AVX2 on the AMD EPYC this was tuned on.)
template <class DU>
HWY_INLINE hn::Vec<DU> AwqGatherWords(DU du, const uint8_t* HWY_RESTRICT first,
                                      size_t stride_bytes) {
  HWY_ALIGN uint32_t lanes[HWY_MAX_BYTES / sizeof(uint32_t)];
  for (size_t lane = 0; lane < hn::Lanes(du); ++lane) {
    lanes[lane] = ref::LoadLe32(first + lane * stride_bytes);
  }
  return hn::Load(du, lanes);
}

#if AMN_BYTE_TABLES
// Entry q of an output row's 16-entry table (CodeTable16 or
// Int4ByteTables): Round((q - zero) * scale), BF16 in the upper half of the
// lane, F16 in the lower half, F32 whole.
template <DequantOut kOut, bool kMayBeNan>
struct AwqEntries {
  int32_t zero;
  float scale;
  template <class DU>
  HWY_INLINE hn::Vec<DU> operator()(DU du, hn::Vec<hn::RebindToSigned<DU>> codes) const {
    const hn::RebindToSigned<DU> di;
    const hn::RebindToFloat<DU> df;
    const auto diff = hn::Sub(codes, hn::Set(di, zero));
    const auto value = ScaledProduct<kMayBeNan>(df, hn::ConvertTo(df, diff), hn::Set(df, scale));
    return EncodeOutLanes<kOut, kMayBeNan>(du, hn::BitCast(du, value));
  }
};
#endif

#if AMN_BYTE_TABLES
// Whether BF16/F16 out-in rows take AwqOutInByteTables (measured per
// target: docs/performance/safetensors-schemes.md, "GPTQ/AWQ 4-bit 16-bit outputs on AVX2
// through byte tables"; NEON untimed, by instruction count:
// docs/performance/arm.md); F32 and the rest take CodeTable16 or the formula.
template <DequantOut kOut>
constexpr bool AwqOutInUsesByteTables() {
  return kOut != DequantOut::kF32;  // every AMN_BYTE_TABLES target
}

// Word `w` of input rows first + 8 * (l / 4) + l % 4 (stride_bytes apart)
// in u32 lane l: block k of the vector holds rows [8k, 8k + 4) (all of
// [0, 4) with one block), as AwqOutInByteTables wants them.
template <class DU>
HWY_INLINE hn::Vec<DU> AwqGatherBlockWords(DU du, const uint8_t* HWY_RESTRICT first,
                                           size_t stride_bytes) {
  HWY_ALIGN uint32_t lanes[HWY_MAX_BYTES / sizeof(uint32_t)];
  for (size_t lane = 0; lane < hn::Lanes(du); ++lane) {
    lanes[lane] = ref::LoadLe32(first + (8 * (lane / 4) + lane % 4) * stride_bytes);
  }
  return hn::Load(du, lanes);
}

// BF16/F16 output on x86: output rows 8w + [c_lo, c_hi) over input rows
// [i0, i1) of one group through each row's byte tables, 16 input rows per
// 128-bit block (B blocks) at a time; returns the first row not done.
// StoreInt4ByteLookups writes the lower 8 codes of every block, then the
// upper 8, so block k must hold the codes of rows [8k, 8k + 8) and
// [8B + 8k, 8B + 8k + 8). Gathered vector m (0..3) holds in block k the
// words of four of them (rows 8k + 4 (m & 1) + 8B (m >> 1) + [0, 4)); a
// byte shuffle puts byte b of its four words in u32 lane b, and a 4x4
// lane transpose per block of the four vectors gives byte b of the
// block's 16 words in that order (vector b), whose low and high nibbles
// are the codes at shifts 8b and 8b + 4.
template <DequantOut kOut, bool kMayBeNan, typename TOut>
HWY_INLINE size_t AwqOutInByteTables(AwqOutInWords src, size_t w, size_t c_lo, size_t c_hi,
                                     size_t i0, size_t i1, const float* scale, const int32_t* zero,
                                     TOut* HWY_RESTRICT out_w, size_t out_row_len) {
  using D8 = hn::ScalableTag<uint8_t>;
  const D8 d8;
  const hn::Repartition<uint32_t, D8> du;
  const hn::Repartition<uint64_t, D8> d64;
  const size_t stride_bytes = src.stride_bytes;
  const uint8_t* const col = src.At(i0, w);  // word w of row i0
  const size_t rows = hn::Lanes(d8);  // 16 per block
  const size_t half_rows = rows / 2;  // 8B
  if (i0 + rows > i1) return i0;
  Int4ByteTables<D8> tables[8];
  for (size_t c = c_lo; c < c_hi; ++c) {
    tables[c] = MakeInt4ByteTables<kOut == DequantOut::kBf16>(
        d8, AwqEntries<kOut, kMayBeNan>{zero[c], scale[c]});
  }
  alignas(16) static constexpr uint8_t kBytePlanes[16] = {0, 4, 8,  12, 1, 5, 9,  13,
                                                          2, 6, 10, 14, 3, 7, 11, 15};
  const auto planes = hn::LoadDup128(d8, kBytePlanes);
  const auto gather = [&](const uint8_t* first) {
    const auto words = AwqGatherBlockWords(du, first, stride_bytes);
    return hn::BitCast(du, hn::TableLookupBytes(hn::BitCast(d8, words), planes));
  };
  size_t i = i0;
  for (; i + rows <= i1; i += rows) {
    const uint8_t* first = col + (i - i0) * stride_bytes;
    const auto t0 = gather(first);
    const auto t1 = gather(first + 4 * stride_bytes);
    const auto t2 = gather(first + half_rows * stride_bytes);
    const auto t3 = gather(first + (half_rows + 4) * stride_bytes);
    const auto lo01 = hn::BitCast(d64, hn::InterleaveLower(du, t0, t1));
    const auto lo23 = hn::BitCast(d64, hn::InterleaveLower(du, t2, t3));
    const auto hi01 = hn::BitCast(d64, hn::InterleaveUpper(du, t0, t1));
    const auto hi23 = hn::BitCast(d64, hn::InterleaveUpper(du, t2, t3));
    const hn::Vec<D8> bytes[4] = {hn::BitCast(d8, hn::InterleaveLower(d64, lo01, lo23)),
                                  hn::BitCast(d8, hn::InterleaveUpper(d64, lo01, lo23)),
                                  hn::BitCast(d8, hn::InterleaveLower(d64, hi01, hi23)),
                                  hn::BitCast(d8, hn::InterleaveUpper(d64, hi01, hi23))};
    for (size_t c = c_lo; c < c_hi; ++c) {
      const uint32_t shift = ref::AwqNibbleShift(c);
      const auto codes = (shift & 4) != 0 ? Int4Nibbles<1>(d8, bytes[shift / 8])
                                          : Int4Nibbles<0>(d8, bytes[shift / 8]);
      StoreInt4ByteLookups(d8, tables[c], codes, out_w + (c - c_lo) * out_row_len + i);
    }
  }
  return i;
}
#endif

// Output rows 8w + [c_lo, c_hi) over input rows [i0, i1) of one group, whose
// zeros and scales are zero[c] and scale[c]. Input rows come 2n at a time;
// the rest (fewer than 2n) go through the reference element by element.
template <DequantOut kOut, bool kMayBeNan, typename TOut>
HWY_INLINE void AwqOutInWord(const ref::AwqMatrix& m, AwqOutInWords src, size_t w, size_t c_lo,
                             size_t c_hi, size_t i0, size_t i1, const float* scale,
                             const int32_t* zero, TOut* HWY_RESTRICT out_w, size_t out_row_len) {
  const hn::ScalableTag<uint32_t> du;
  const hn::RebindToSigned<decltype(du)> di;
  const hn::RebindToFloat<decltype(du)> df;
  const size_t n = hn::Lanes(du);
  const size_t stride_bytes = src.stride_bytes;
  const uint8_t* const col = src.At(i0, w);  // word w of row i0
  const auto mask = hn::Set(du, 0xFu);
  size_t i = i0;
#if AMN_BYTE_TABLES
  if constexpr (AwqOutInUsesByteTables<kOut>()) {
    i = AwqOutInByteTables<kOut, kMayBeNan>(src, w, c_lo, c_hi, i0, i1, scale, zero, out_w,
                                            out_row_len);
  }
#endif
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
  // AVX2/AVX-512: a code has 16 values, so each output row's 16 results are
  // a CodeTable16 (the vector formula below on codes 0..15) and a vector of
  // codes is looked up in it.
  CodeTable16<hn::Vec<decltype(du)>> tables[8];
  if (i + 2 * n <= i1) {
    for (size_t c = c_lo; c < c_hi; ++c) {
      tables[c] = MakeCodeTable16(du, AwqEntries<kOut, kMayBeNan>{zero[c], scale[c]});
    }
  }
  for (; i + 2 * n <= i1; i += 2 * n) {
    const uint8_t* first = col + (i - i0) * stride_bytes;
    const auto v0 = AwqGatherWords(du, first, stride_bytes);
    const auto v1 = AwqGatherWords(du, first + n * stride_bytes, stride_bytes);
    for (size_t c = c_lo; c < c_hi; ++c) {
      const int shift = static_cast<int>(ref::AwqNibbleShift(c));
      const auto q0 = hn::And(hn::ShiftRightSame(v0, shift), mask);
      const auto q1 = hn::And(hn::ShiftRightSame(v1, shift), mask);
      StoreEncodedPair<kOut>(du, LookupCodeTable16(du, tables[c], q0),
                             LookupCodeTable16(du, tables[c], q1),
                             out_w + (c - c_lo) * out_row_len + i);
    }
  }
#endif
  for (; i + 2 * n <= i1; i += 2 * n) {
    const uint8_t* first = col + (i - i0) * stride_bytes;
    const auto v0 = AwqGatherWords(du, first, stride_bytes);
    const auto v1 = AwqGatherWords(du, first + n * stride_bytes, stride_bytes);
    for (size_t c = c_lo; c < c_hi; ++c) {
      const int shift = static_cast<int>(ref::AwqNibbleShift(c));
      const auto z = hn::Set(di, zero[c]);
      const auto s = hn::Set(df, scale[c]);
      const auto q0 = hn::BitCast(di, hn::And(hn::ShiftRightSame(v0, shift), mask));
      const auto q1 = hn::BitCast(di, hn::And(hn::ShiftRightSame(v1, shift), mask));
      const auto p0 = ScaledProduct<kMayBeNan>(df, hn::ConvertTo(df, hn::Sub(q0, z)), s);
      const auto p1 = ScaledProduct<kMayBeNan>(df, hn::ConvertTo(df, hn::Sub(q1, z)), s);
      StorePair<kOut, kMayBeNan>(df, p0, p1, out_w + (c - c_lo) * out_row_len + i);
    }
  }
  for (; i < i1; ++i) {
    for (size_t c = c_lo; c < c_hi; ++c) {
      ref::StoreOutBits(ref::AwqValueF32Bits(m, i, 8 * w + c), OutElemType<kOut>(),
                        out_w + (c - c_lo) * out_row_len, i);
    }
  }
}

// The scales and zeros of group g for output rows 8w + [c_lo, c_hi), at
// index c of `scale` and `zero`: a whole word's eight rows with vectors of
// at most 8 lanes (FromF16 / FromBf16 widen exactly, as the reference
// does; a scalar call per row was about a fifth of the time at group size
// 32), part of a word row by row. Returns whether those scales are finite.
HWY_INLINE bool AwqOutInWordColumns(const ref::AwqMatrix& m, size_t g, size_t w, size_t c_lo,
                                    size_t c_hi, float* HWY_RESTRICT scale,
                                    int32_t* HWY_RESTRICT zero) {
  const size_t first = g * m.out_features + 8 * w;
  const uint32_t zero_word = ref::LoadLe32(m.qzeros + 4 * (g * (m.out_features / 8) + w));
  if (c_lo != 0 || c_hi != 8) {
    bool finite = true;
    for (size_t c = c_lo; c < c_hi; ++c) {
      const uint32_t bits = ref::ScaleF32Bits(m.scales, m.scale_type, first + c);
      finite = finite && !IsNonFiniteBits(bits);
      scale[c] = std::bit_cast<float>(bits);
      zero[c] = static_cast<int32_t>((zero_word >> ref::AwqNibbleShift(c)) & 0xF);
    }
    return finite;
  }
  const hn::CappedTag<uint32_t, 8> du;
  const size_t n = hn::Lanes(du);
  alignas(32) static constexpr uint32_t kShifts[8] = {0, 16, 4, 20, 8, 24, 12, 28};
  const size_t scale_bytes = ElemTypeBytes(m.scale_type);
  const uint8_t* scale_at = m.scales + scale_bytes * first;
  auto non_finite = hn::Zero(du);
  for (size_t c = 0; c < 8; c += n) {
    const auto bits = AwqScaleBits(du, scale_at + scale_bytes * c, m.scale_type);
    non_finite = hn::Or(non_finite, AwqNonFiniteLanes(du, bits));
    hn::Store(bits, du, reinterpret_cast<uint32_t*>(scale) + c);
    const auto codes = hn::Shr(hn::Set(du, zero_word), hn::Load(du, kShifts + c));
    hn::Store(hn::And(codes, hn::Set(du, 0xFu)), du, reinterpret_cast<uint32_t*>(zero) + c);
  }
  return hn::AllFalse(du, hn::Ne(non_finite, hn::Zero(du)));
}

// Output rows 8w + [c_lo, c_hi) over the input rows [i0, i1) of one tile,
// group by group (a tile may hold several groups, or part of one); g0 is
// the group of row i0 (divided once per tile by the caller: one division
// per word measured 2-4 % of the cache-resident size).
template <DequantOut kOut, typename TOut>
HWY_INLINE void AwqOutInWordTile(const ref::AwqMatrix& m, AwqOutInWords src, size_t w, size_t c_lo,
                                 size_t c_hi, size_t i0, size_t i1, size_t g0,
                                 TOut* HWY_RESTRICT out_w) {
  const size_t k_rows = m.in_features;
  for (size_t i = i0, g = g0; i < i1; ++g) {
    const size_t group_first = g * m.group_size;
    const size_t group_end =
        k_rows - group_first > m.group_size ? group_first + m.group_size : k_rows;
    const size_t i_end = std::min(group_end, i1);
    HWY_ALIGN float scale[8];
    HWY_ALIGN int32_t zero[8];
    const bool finite = AwqOutInWordColumns(m, g, w, c_lo, c_hi, scale, zero);
    if (finite) {
      AwqOutInWord<kOut, false>(m, src, w, c_lo, c_hi, i, i_end, scale, zero, out_w, k_rows);
    } else {
      AwqOutInWord<kOut, true>(m, src, w, c_lo, c_hi, i, i_end, scale, zero, out_w, k_rows);
    }
    i = i_end;
  }
}

// Blocking for the out-in loop (measured: docs/performance/awq.md, "AWQ [out,
// in]: streaming blocking"). A band of 64 word columns reads 256 contiguous
// bytes of each input row (the whole row when out_features <= 512), so the
// input streams in whole lines; a tile of 1024 input rows (256 KiB of the
// band, L2-resident while its 64 words read it) makes every output row
// segment 1024 elements (2-4 KiB), long enough for the hardware prefetcher
// to follow each of the band's output rows. Tiles ignore group boundaries
// (AwqOutInWordTile splits them), so 128-row groups do not cut them short.
//
// When the input row stride is a multiple of 2 KiB (N = 4096 outputs: 2 KiB,
// N = 8192: 4 KiB), one word column of consecutive rows falls into one or
// two L1 sets and few L2 sets, so the gathers kept missing. Such a band is
// first copied tile by tile into a stack buffer whose rows are a whole
// number of 64-byte lines apart (AwqOutInPackedBand) and gathered from
// there: measured 1.2-1.7x faster at N = 4096 and 8192, where the old
// remedy (tiles shrunk to 512 or 256 rows) had left them 1.2-1.8x slower
// than N = 3296 (docs/performance/awq.md, "AWQ [out, in]: packed tiles for
// aliasing strides").
// Other strides read the qweight directly: packing measured slower, or no
// faster, at N = 512-2048, whose remember-sized calls use 12-32 bytes of
// each copied line. Only the speed depends on this, never the bytes.
inline constexpr size_t kAwqOutInBandWords = 64;
inline constexpr size_t kAwqOutInTileRows = 1024;
inline constexpr size_t kAwqOutInPackAlias = 2048;
inline constexpr size_t kAwqOutInPackBytes = size_t{64} << 10;
// Packed tiles are whole multiples of the most rows one loop step takes on
// any target (x86 byte tables: up to 64; two vectors of u32: up to 128 on
// 2048-bit SVE).
inline constexpr size_t kAwqOutInPackRowUnit = 128;
static_assert(kAwqOutInPackRowUnit % (2 * HWY_MAX_BYTES / sizeof(uint32_t)) == 0 &&
                  kAwqOutInPackRowUnit % 64 == 0,
              "a packed tile is whole loop steps on every target");
static_assert(kAwqOutInPackBytes / (4 * kAwqOutInBandWords) >= kAwqOutInPackRowUnit);

// Output rows [rb, re) over the input rows [i0, i1) of one tile of the band
// [w0, w1), its words read from `src`.
template <DequantOut kOut, typename TOut>
HWY_INLINE void AwqOutInTile(const ref::AwqMatrix& m, AwqOutInWords src, size_t rb, size_t re,
                             size_t w0, size_t w1, size_t i0, size_t i1, TOut* HWY_RESTRICT out) {
  const size_t g0 = i0 / m.group_size;
  for (size_t w = w0; w < w1; ++w) {
    const size_t c_lo = std::max(rb, 8 * w) - 8 * w;
    const size_t c_hi = std::min(re, 8 * w + 8) - 8 * w;
    AwqOutInWordTile<kOut>(m, src, w, c_lo, c_hi, i0, i1, g0,
                           out + (8 * w + c_lo - rb) * m.in_features);
  }
}

// The band [w0, w1) through packed tiles (an aliasing stride, above). Each
// row's band is copied in whole 64-byte chunks, which may read up to 63
// bytes past it, still inside the qweight for every row but the last,
// which is copied exactly.
template <DequantOut kOut, typename TOut>
HWY_NOINLINE void AwqOutInPackedBand(const ref::AwqMatrix& m, size_t rb, size_t re, size_t w0,
                                     size_t w1, TOut* HWY_RESTRICT out) {
  alignas(64) uint8_t packed[kAwqOutInPackBytes];
  const size_t k_rows = m.in_features;
  const size_t stride = 4 * (m.out_features / 8);
  const size_t band = 4 * (w1 - w0);
  const size_t pitch = (band + 63) / 64 * 64;
  const size_t tile_rows = std::min(
      kAwqOutInTileRows, kAwqOutInPackBytes / pitch / kAwqOutInPackRowUnit * kAwqOutInPackRowUnit);
  for (size_t i0 = 0; i0 < k_rows; i0 += tile_rows) {
    const size_t i1 = std::min(k_rows, i0 + tile_rows);
    for (size_t i = i0; i < i1; ++i) {
      const uint8_t* from = m.qweight + i * stride + 4 * w0;
      uint8_t* to = packed + (i - i0) * pitch;
      if (i + 1 < k_rows) {
        for (size_t c = 0; c < pitch; c += 64) std::memcpy(to + c, from + c, 64);
      } else {
        std::memcpy(to, from, band);
      }
    }
    AwqOutInTile<kOut>(m, AwqOutInWords{packed, i0, w0, pitch}, rb, re, w0, w1, i0, i1, out);
  }
}

// Rows [rb, re) of the [N, K] weight (the transpose of the GEMM-native one).
template <DequantOut kOut, typename TOut>
HWY_INLINE void AwqOutIn(const ref::AwqMatrix& m, size_t rb, size_t re, TOut* HWY_RESTRICT out) {
  const size_t k_rows = m.in_features;
  const size_t stride = 4 * (m.out_features / 8);
  const bool pack = (stride & (~stride + 1)) >= kAwqOutInPackAlias;  // largest power of two
  const size_t w_end = (re + 7) / 8;
  for (size_t w0 = rb / 8; w0 < w_end; w0 += kAwqOutInBandWords) {
    const size_t w1 = std::min(w_end, w0 + kAwqOutInBandWords);
    if (pack) {
      AwqOutInPackedBand<kOut>(m, rb, re, w0, w1, out);
      continue;
    }
    for (size_t i0 = 0; i0 < k_rows; i0 += kAwqOutInTileRows) {
      const size_t i1 = std::min(k_rows, i0 + kAwqOutInTileRows);
      AwqOutInTile<kOut>(m, AwqOutInWords{m.qweight + i0 * stride + 4 * w0, i0, w0, stride}, rb, re,
                         w0, w1, i0, i1, out);
    }
  }
}

#endif  // HWY_TARGET != HWY_SCALAR

// Rows [row_begin, row_end) in the orientation `out_in` selects, as in
// ref::DequantAwqRows (layout, preconditions, NaN rule: kernels/ref/awq_ref.h).
template <DequantOut kOut, typename TOut>
HWY_INLINE void DequantAwqKernel(const ref::AwqMatrix& m, bool out_in, size_t row_begin,
                                 size_t row_end, TOut* out) {
#if HWY_TARGET == HWY_SCALAR
  ref::DequantAwqRows(m, out_in, row_begin, row_end, OutElemType<kOut>(), out);
#else
  if (row_begin >= row_end) return;
  if (out_in) {
    AwqOutIn<kOut>(m, row_begin, row_end, out);
  } else {
    AwqInOut<kOut>(m, row_begin, row_end, out);
  }
#endif
}

// The Awq family (kernels/kernel_args.h): rows [begin, end) of the
// orientation.
HWY_INLINE void DecodeAwq(const kernels::AwqArgs& a, size_t begin, size_t end, ElemType out_type,
                          void* out) {
  switch (out_type) {
    case ElemType::kF32:
      DequantAwqKernel<DequantOut::kF32>(a.matrix, a.out_in, begin, end, static_cast<float*>(out));
      break;
    case ElemType::kBf16:
      DequantAwqKernel<DequantOut::kBf16>(a.matrix, a.out_in, begin, end,
                                          static_cast<uint16_t*>(out));
      break;
    case ElemType::kF16:
      DequantAwqKernel<DequantOut::kF16>(a.matrix, a.out_in, begin, end,
                                         static_cast<uint16_t*>(out));
      break;
    default:
      break;
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace amn
HWY_AFTER_NAMESPACE();

#endif  // AMN_KERNELS_AWQ_INL_H_
