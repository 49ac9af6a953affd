// Per-target scaled FP8 dequantization (amn/fp8_dequant.h), Highway 1.0.3.
// Decode the codes to exact F32 (the BF16 lanes of fp8_convert-inl.h, << 16),
// one Mul by the column block's scale, the NaN choice of
// kernels/ref/fp8_dequant_ref.h, then the F32 -> BF16/F16 rounding of
// float_convert-inl.h. On F16C targets whole chunks inside one block take a
// shorter route (DequantDirectSpan: codes to F16 bits, vcvtph2ps, the same
// one Mul, then the F32 store, the NaN-free BF16 rounding or vcvtps2ph).
// When a scale covers >= 1024 elements, BF16 output on x86 takes per-scale
// nibble tables (DequantBf16ByNibbleTables) and F16 output on SSE4/SSSE3
// 256-entry per-scale tables (DequantByTables), both made by the chunk code.
// Same bytes as kernels/ref/fp8_dequant_ref.cc on every target; the SCALAR
// target (one-lane vectors, no 16-byte table lookup) runs that reference.
#if defined(AMN_KERNELS_FP8_DEQUANT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef AMN_KERNELS_FP8_DEQUANT_INL_H_
#undef AMN_KERNELS_FP8_DEQUANT_INL_H_
#else
#define AMN_KERNELS_FP8_DEQUANT_INL_H_
#endif

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "hwy/highway.h"
#include "kernels/kernel_args.h"
#include "kernels/float_convert-inl.h"
#include "kernels/float_formats.h"
#include "kernels/fp8_convert-inl.h"
#include "kernels/ref/fp8_dequant_ref.h"

HWY_BEFORE_NAMESPACE();
namespace amn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// What a kernel writes: F32 values, or BF16 / F16 bit patterns.
enum class DequantOut { kF32, kBf16, kF16 };

// The vector code below is compiled on every target but SCALAR, which lacks
// ConcatOdd/UpperHalf and 16-byte table lookups and runs the reference
// instead (Fp8DequantRows). Vectors are sizeless on SVE, so a scale travels
// as two vectors (scale, nan) rather than in a struct.
#if HWY_TARGET != HWY_SCALAR

// The NaN a NaN product takes when its code is not NaN: the scale, quieted,
// if the scale is NaN; otherwise the product was 0 * Inf and gets x86's
// default NaN (kernels/ref/fp8_dequant_ref.h explains the choice).
template <class DF>
HWY_INLINE hn::Vec<DF> ProductNan(DF df, hn::Vec<DF> scale) {
  const hn::RebindToUnsigned<DF> du;
  const auto quieted =
      hn::BitCast(df, hn::Or(hn::BitCast(du, scale), hn::Set(du, fmt::kF32QuietBit)));
  const auto invalid = hn::BitCast(df, hn::Set(du, ref::kF32InvalidProductNan));
  return hn::IfThenElse(hn::IsNaN(scale), quieted, invalid);
}

// A product that may be NaN, given the NaN rule: a NaN value (already quiet:
// it was decoded from a code) wins, then `nan`.
template <class V>
HWY_INLINE V ApplyNanRule(V value, V product, V nan) {
  const V special = hn::IfThenElse(hn::IsNaN(value), value, nan);
  return hn::IfThenElse(hn::IsNaN(product), special, product);
}

// A chunk is 2N elements, N = Lanes(ScalableTag<float>), held as two F32
// vectors A and B. For F32 output A is elements [0, N) and B is [N, 2N), so
// each stores as it is. For BF16/F16 output A is the even elements and B the
// odd ones: both come out of the u16 lanes of the decoded codes with a shift
// or a mask, and go back into them with one OddEven, with no cross-lane
// shuffle either way. Element k of the chunk is lane LaneOf(k) of A ++ B.
template <DequantOut kOut>
HWY_INLINE size_t LaneOf(size_t k, size_t n) {
  return kOut == DequantOut::kF32 ? k : (k & 1) * n + (k >> 1);
}

// The decoded BF16 bits of 2N codes (u16 lanes) as exact F32: A and B. For
// F32 output on single-block vectors (SSE4, SSSE3, NEON, EMU128) a zero
// interleave puts each BF16 into the upper half of its u32 lane in order;
// wider vectors interleave per 128-bit block and promote halves instead.
template <DequantOut kOut, class DF, class V16>
HWY_INLINE hn::Vec<DF> WidenA(DF df, V16 bf16) {
  const hn::RebindToUnsigned<DF> du;
  if constexpr (kOut == DequantOut::kF32 && HWY_MAX_BYTES == 16) {
    const hn::Repartition<uint16_t, DF> d16;
    return hn::BitCast(df, hn::InterleaveLower(d16, hn::Zero(d16), bf16));
  } else if constexpr (kOut == DequantOut::kF32) {
    const hn::Half<hn::Repartition<uint16_t, DF>> dh;
    return hn::BitCast(df, hn::ShiftLeft<16>(hn::PromoteTo(du, hn::LowerHalf(dh, bf16))));
  } else {
    return hn::BitCast(df, hn::ShiftLeft<16>(hn::BitCast(du, bf16)));
  }
}
template <DequantOut kOut, class DF, class V16>
HWY_INLINE hn::Vec<DF> WidenB(DF df, V16 bf16) {
  const hn::RebindToUnsigned<DF> du;
  if constexpr (kOut == DequantOut::kF32 && HWY_MAX_BYTES == 16) {
    const hn::Repartition<uint16_t, DF> d16;
    return hn::BitCast(df, hn::InterleaveUpper(d16, hn::Zero(d16), bf16));
  } else if constexpr (kOut == DequantOut::kF32) {
    const hn::Half<hn::Repartition<uint16_t, DF>> dh;
    return hn::BitCast(df, hn::ShiftLeft<16>(hn::PromoteTo(du, hn::UpperHalf(dh, bf16))));
  } else {
    return hn::BitCast(df, hn::And(hn::BitCast(du, bf16), hn::Set(du, 0xFFFF0000u)));
  }
}

// Stores A and B (u32 lanes of F32 bits) as 2N outputs. BF16/F16 use
// float_convert-inl.h's encoders (their NaN-free roundings when kMayBeNan
// is false), whose 16-bit results sit in one half of each lane.
template <DequantOut kOut, bool kMayBeNan, class DU, typename TOut>
HWY_INLINE void StoreOut(DU du, hn::Vec<DU> a, hn::Vec<DU> b, TOut* HWY_RESTRICT out) {
  const hn::Repartition<uint16_t, DU> d16;
  if constexpr (kOut == DequantOut::kF32) {
    const hn::RebindToFloat<DU> df;
    hn::StoreU(hn::BitCast(df, a), df, out);
    hn::StoreU(hn::BitCast(df, b), df, out + hn::Lanes(du));
  } else if constexpr (kOut == DequantOut::kBf16) {
    const auto encode = [du](hn::Vec<DU> x) {
      return kMayBeNan ? F32BitsToBf16Upper(du, x) : NonNanToBf16Upper(du, x);
    };
    hn::StoreU(
        hn::OddEven(hn::BitCast(d16, encode(b)), hn::BitCast(d16, hn::ShiftRight<16>(encode(a)))),
        d16, out);
  } else {
    const auto f16_b = hn::ShiftLeft<16>(F32BitsToF16Lanes<kMayBeNan>(du, b));
    hn::StoreU(hn::OddEven(hn::BitCast(d16, f16_b),
                           hn::BitCast(d16, F32BitsToF16Lanes<kMayBeNan>(du, a))),
               d16, out);
  }
}

// One chunk: 2N codes at `in` to as many outputs. The codes are decoded once,
// in u16 lanes, to BF16 bits (exact: every FP8 value is a BF16 value), then
// widened to exact F32 vectors A and B, which take (scale_a, nan_a) and
// (scale_b, nan_b). Each product is one IEEE multiply (never fused). Real
// weights never make a NaN product, so the NaN rule runs only for chunks
// that have one: a branch that is always predicted, in place of four
// selects per vector.
template <class Decode, DequantOut kOut, class DF, typename TOut>
HWY_INLINE void DequantChunk(DF df, const uint8_t* HWY_RESTRICT in, hn::Vec<DF> scale_a,
                             hn::Vec<DF> nan_a, hn::Vec<DF> scale_b, hn::Vec<DF> nan_b,
                             TOut* HWY_RESTRICT out) {
  const hn::RebindToUnsigned<DF> du;
  const hn::Repartition<uint16_t, DF> d16;
  const hn::Rebind<uint8_t, decltype(d16)> d8;
  const auto bf16 = Decode()(d16, hn::PromoteTo(d16, hn::LoadU(d8, in)));
  const auto a = WidenA<kOut>(df, bf16);
  const auto b = WidenB<kOut>(df, bf16);
  const auto product_a = hn::Mul(a, scale_a);
  const auto product_b = hn::Mul(b, scale_b);
  if (HWY_LIKELY(hn::AllFalse(df, hn::Or(hn::IsNaN(product_a), hn::IsNaN(product_b))))) {
    StoreOut<kOut, false>(du, hn::BitCast(du, product_a), hn::BitCast(du, product_b), out);
  } else {
    StoreOut<kOut, true>(du, hn::BitCast(du, ApplyNanRule(a, product_a, nan_a)),
                         hn::BitCast(du, ApplyNanRule(b, product_b, nan_b)), out);
  }
}

#if AMN_F16_HARDWARE_DEMOTE
// Any output on F16C targets (AVX2, AVX3, AVX3_DL): a span of whole chunks
// inside one block goes code -> F16 bits -> vcvtph2ps -> one Mul, in
// element order, with no table lookup, no blends and no odd/even shuffle
// (Fp8AsF16 in fp8_convert-inl.h: the F16 is the E5M2 value, or 2^-8 times
// the E4M3 value). For E4M3 the 2^8 moves into the scale: scale * 256 is
// exact while finite (a power of two; a subnormal scale just gains
// exponent), so value * scale and (value / 256) * (scale * 256) are the
// same real number and the one IEEE multiply rounds both to the same F32,
// FTZ included. The F32 operands of the Mul are exact (vcvtph2ps ignores
// DAZ), as in the reference. What this path cannot produce is the
// reference's NaN rule, so it runs only for a finite scale * factor, and a
// span holding a special code (E4M3 NaN; E5M2 Inf or NaN) is redone by the
// general path. Otherwise no product is NaN (finite times finite), so F16
// takes vcvtps2ph and BF16 the NaN-free rounding.
template <DequantOut kOut, class DU>
HWY_INLINE void StoreDirectPair(DU du, hn::Vec<DU> a, hn::Vec<DU> b, void* HWY_RESTRICT out) {
  if constexpr (kOut == DequantOut::kF32) {
    const hn::RebindToFloat<DU> df;
    hn::StoreU(hn::BitCast(df, a), df, static_cast<float*>(out));
    hn::StoreU(hn::BitCast(df, b), df, static_cast<float*>(out) + hn::Lanes(df));
  } else if constexpr (kOut == DequantOut::kBf16) {
    ToBf16UpperNonNan::StorePair(du, a, b, static_cast<uint16_t*>(out));
  } else {
    StoreF16Pair(du, a, b, static_cast<uint16_t*>(out));
  }
}

// Elements [*i, stop) of a run (stop - *i >= one chunk) in whole chunks, all
// scaled by `scale`; *i ends past the last whole chunk. False when the span
// must be redone by the general path (a special code, or a scale that is
// not finite once multiplied by kScaleFactor); its outputs are then
// incomplete.
template <class Decode, DequantOut kOut, class DF, typename TOut>
HWY_INLINE bool DequantDirectSpan(DF df, const uint8_t* HWY_RESTRICT codes, size_t* i,
                                  size_t stop, float scale, TOut* HWY_RESTRICT out) {
  using AsF16 = Fp8AsF16<Decode>;
  const float folded = scale * AsF16::kScaleFactor;
  if ((std::bit_cast<uint32_t>(folded) & fmt::kF32ExpMask) == fmt::kF32ExpMask) return false;
  const hn::RebindToUnsigned<DF> du;
  const hn::Repartition<uint16_t, DF> d16;
  const size_t n = hn::Lanes(df);
  const auto scale_v = hn::Set(df, folded);
  auto seen = hn::Zero(d16);
  size_t k = *i;
  for (; k + 2 * n <= stop; k += 2 * n) {
    const auto bits = AsF16::Load(d16, codes + k);
    seen = hn::Or(seen, hn::VecFromMask(d16, AsF16::Special(d16, bits)));
    StoreDirectPair<kOut>(du, hn::BitCast(du, hn::Mul(WidenF16Lower(df, bits), scale_v)),
                          hn::BitCast(du, hn::Mul(WidenF16Upper(df, bits), scale_v)), out + k);
  }
  *i = k;
  return hn::AllFalse(d16, hn::MaskFromVec(seen));
}
#endif  // AMN_F16_HARDWARE_DEMOTE

// Where element i of a run finds its scale: block `index` covers elements
// [end - block_elems, end). The last block also takes every element past it
// (the padded lanes of a tail chunk), so no scale is read out of bounds.
struct BlockCursor {
  const float* scales;
  size_t n_blocks;
  size_t block_elems;
  size_t index = 0;
  size_t end = block_elems;

  // Moves to the block holding element i (never backwards).
  HWY_INLINE void Seek(size_t i) {
    while (i >= end && index + 1 < n_blocks) {
      ++index;
      end += block_elems;
    }
  }
};

// A chunk that crosses a block boundary (or the padded tail) with per-lane
// scales: element k of [i, i + 2N) takes its block's scale in lane
// LaneOf(k) of `lanes`. Leaves `cursor` where it was.
template <class Decode, DequantOut kOut, class DF, typename TOut>
HWY_INLINE void DequantChunkLaneScales(DF df, const uint8_t* HWY_RESTRICT in, BlockCursor cursor,
                                       size_t i, float* HWY_RESTRICT lanes,
                                       TOut* HWY_RESTRICT out) {
  const size_t n = hn::Lanes(df);
  for (size_t k = 0; k < 2 * n; ++k) {
    cursor.Seek(i + k);
    lanes[LaneOf<kOut>(k, n)] = cursor.scales[cursor.index];
  }
  const auto scale_a = hn::LoadU(df, lanes);
  const auto scale_b = hn::LoadU(df, lanes + n);
  DequantChunk<Decode, kOut>(df, in, scale_a, ProductNan(df, scale_a), scale_b,
                             ProductNan(df, scale_b), out);
}

// One run of n elements sharing a block layout (a row, or a whole matrix
// with one scale). Whole chunks inside one block use a broadcast scale;
// chunks across a boundary gather per-lane scales; the last partial chunk
// goes through zero-padded copies, so nothing outside the spans is touched
// (Highway 1.0.3 has no LoadN, and its masked loads may fault).
template <class Decode, DequantOut kOut, typename TOut>
HWY_INLINE void DequantRun(const uint8_t* HWY_RESTRICT codes, size_t n, BlockCursor cursor,
                           TOut* HWY_RESTRICT out) {
  const hn::ScalableTag<float> df;
  const size_t chunk = 2 * hn::Lanes(df);
  constexpr size_t kMaxChunk = HWY_MAX_BYTES / sizeof(uint16_t);
  HWY_ALIGN float lane_scales[kMaxChunk];
  size_t i = 0;
  while (i + chunk <= n) {
    if (i + chunk <= cursor.end) {
      const size_t stop = std::min(cursor.end, n);
#if AMN_F16_HARDWARE_DEMOTE
      // Every output measured faster this way (docs/performance/fp8.md, "FP8 to
      // F32 and BF16 through F16C").
      size_t next = i;
      if (DequantDirectSpan<Decode, kOut>(df, codes, &next, stop, cursor.scales[cursor.index],
                                          out)) {
        i = next;
        cursor.Seek(i);
        continue;
      }
#endif
      const auto scale = hn::Set(df, cursor.scales[cursor.index]);
      const auto nan = ProductNan(df, scale);
      for (; i + chunk <= stop; i += chunk) {
        DequantChunk<Decode, kOut>(df, codes + i, scale, nan, scale, nan, out + i);
      }
    } else {
      DequantChunkLaneScales<Decode, kOut>(df, codes + i, cursor, i, lane_scales, out + i);
      i += chunk;
    }
    cursor.Seek(i);
  }
  const size_t rest = n - i;
  if (rest == 0) return;
  HWY_ALIGN uint8_t code_tail[kMaxChunk] = {};
  HWY_ALIGN TOut out_tail[kMaxChunk];
  std::memcpy(code_tail, codes + i, rest);
  DequantChunkLaneScales<Decode, kOut>(df, code_tail, cursor, i, lane_scales, out_tail);
  std::memcpy(out + i, out_tail, rest * sizeof(TOut));
}

// Per-scale lookup tables (issue 18). An FP8 code has 256 values, and every
// element under one scale maps its code through the same function, so when a
// scale covers enough elements the kernel computes that function once, as a
// 256-entry table made by DequantChunk itself over the codes 0..255 (the
// same decode, Mul, NaN rule and rounding: the same bits by construction),
// and then each output is one byte -> u16 load. Taken only where it measured
// faster (docs/performance/f16-on-sse4.md, "Per-scale lookup tables"): F16 on SSE4 and
// SSSE3, whose F32 -> F16 rounding is done in software (`amn bench`, 65,536
// elements in 128-column blocks, 2-core AVX-512 development VM: 3.7-4.3x
// faster, about 0.25 ns/element). BF16 takes the nibble tables below on
// every x86 target (about 1.5x faster again on SSE4/SSSE3), the F16C
// targets' F16 (DequantDirectSpan) is 2.5x faster than a lookup, and the
// F32 outputs write twice the bytes: these keep the vector path.
template <DequantOut kOut>
constexpr bool kFp8LookupTables =
    (HWY_TARGET == HWY_SSE4 || HWY_TARGET == HWY_SSSE3) && kOut == DequantOut::kF16;
// The fewest elements a scale must cover for its table to pay: building one
// costs about as much as 256 outputs of the vector path, and the break-even
// from the measured per-element times comes to about 330 elements (F16) and
// 410-460 (BF16); 1024 keeps a margin.
constexpr size_t kFp8LookupMinElems = 1024;

// The codes 0..255, the input a table is made from.
alignas(64) inline constexpr auto kFp8AllCodes = [] {
  std::array<uint8_t, 256> codes{};
  for (size_t i = 0; i < codes.size(); ++i) codes[i] = static_cast<uint8_t>(i);
  return codes;
}();

// out[k] = the output of codes[k] under `scale`, by the vector path; n is a
// multiple of 32, which every target's chunk divides.
template <class Decode, DequantOut kOut, typename TOut>
HWY_INLINE void DequantCodesOneScale(float scale, const uint8_t* HWY_RESTRICT codes, size_t n,
                                     TOut* HWY_RESTRICT out) {
  const hn::ScalableTag<float> df;
  const size_t chunk = 2 * hn::Lanes(df);
  const auto scale_v = hn::Set(df, scale);
  const auto nan = ProductNan(df, scale_v);
  for (size_t i = 0; i < n; i += chunk) {
    DequantChunk<Decode, kOut>(df, codes + i, scale_v, nan, scale_v, nan, out + i);
  }
}

// table[code] = the output of `code` under `scale`, by the vector path.
template <class Decode, DequantOut kOut, typename TOut>
HWY_INLINE void BuildCodeTable(float scale, TOut* HWY_RESTRICT table) {
  DequantCodesOneScale<Decode, kOut>(scale, kFp8AllCodes.data(), kFp8AllCodes.size(), table);
}

// out[k] = table[codes[k]] for k in [0, n).
template <typename TOut>
HWY_INLINE void LookupCodes(const uint8_t* HWY_RESTRICT codes, size_t n,
                            const TOut* HWY_RESTRICT table, TOut* HWY_RESTRICT out) {
  for (size_t k = 0; k < n; ++k) out[k] = table[codes[k]];
}

// Rows x cols by one table per column block. The tables of up to kGroup
// blocks are built first, then those blocks are done row by row, so memory
// is read and written in order (a whole column of blocks at a time would
// pass over a large call's input once per block).
template <class Decode, DequantOut kOut, typename TOut>
HWY_INLINE void DequantByTables(const uint8_t* HWY_RESTRICT codes, size_t rows, size_t cols,
                                const float* HWY_RESTRICT col_scales, size_t block_cols,
                                TOut* HWY_RESTRICT out) {
  constexpr size_t kGroup = 16;  // 8 KiB of tables
  HWY_ALIGN TOut tables[kGroup][256];
  const size_t n_blocks = (cols - 1) / block_cols + 1;
  for (size_t group = 0; group < n_blocks; group += kGroup) {
    const size_t group_end = std::min(n_blocks, group + kGroup);
    for (size_t b = group; b < group_end; ++b) {
      BuildCodeTable<Decode, kOut>(col_scales[b], tables[b - group]);
    }
    for (size_t r = 0; r < rows; ++r) {
      for (size_t b = group; b < group_end; ++b) {
        const size_t first = r * cols + b * block_cols;
        const size_t width = std::min(block_cols, cols - b * block_cols);
        LookupCodes(codes + first, width, tables[b - group], out + first);
      }
    }
  }
}

#if AMN_BYTE_TABLES
// Scaled FP8 to BF16 through per-scale nibble tables (MapByNibbles in
// fp8_convert-inl.h; x86, and NEON untimed: docs/performance/arm.md). For a
// finite scale whose normal-code products stay normal F32 and finite in
// BF16, the exponent steps hold: scaling a normal F32 by 2^k, with the
// result still normal, adds k to the exponent field of both the F32 product
// and its BF16 rounding (the rounded significand depends on the mantissa and
// the scale alone, carry to the next binade included). Every entry is the
// vector path's own output for one code (DequantCodesOneScale), so the
// rounding, the NaN rule and the sign of zero are the reference's.

// Fills *t for `scale`; false when the exponent steps would not hold: a
// scale that is not finite, too small for the smallest normal code's
// product (2^(1 - bias) * |scale|, exact) to be a normal F32, or large
// enough for the largest finite code's output to be BF16 Inf. Zero and NaN
// scales fail here too (their outputs do not step with the exponent).
template <class Decode>
HWY_INLINE bool BuildNibbleTables(float scale, Fp8NibbleTables* HWY_RESTRICT t) {
  using Format = Fp8NibbleFormat<Decode>;
  const uint32_t magnitude = std::bit_cast<uint32_t>(scale) & fmt::kF32AbsMask;
  if (magnitude >= fmt::kF32ExpMask || magnitude < (Format::kBias << 23)) return false;
  const auto& codes = kNibbleBuildCodes<Format>;
  HWY_ALIGN uint16_t bf16[32];
  DequantCodesOneScale<Decode, DequantOut::kBf16>(scale, codes.data(), codes.size(), bf16);
  return FillNibbleTables<Decode>(bf16, t);
}

// Where the nibble tables are taken: BF16 output on every x86 target, for a
// scale covering >= kFp8NibbleMinElems elements (building the tables costs
// 32 outputs of the vector path plus their unpacking).
template <class Decode, DequantOut kOut>
constexpr bool kFp8NibbleTables = kOut == DequantOut::kBf16;
constexpr size_t kFp8NibbleMinElems = 1024;

// Rows x cols in BF16 by nibble tables per column block, grouped and row by
// row as DequantByTables; a block whose scale fails BuildNibbleTables runs
// the general path (DequantRun) instead.
template <class Decode>
HWY_INLINE void DequantBf16ByNibbleTables(const uint8_t* HWY_RESTRICT codes, size_t rows,
                                          size_t cols, const float* HWY_RESTRICT col_scales,
                                          size_t block_cols, uint16_t* HWY_RESTRICT out) {
  constexpr size_t kGroup = 16;
  Fp8NibbleTables tables[kGroup];
  bool usable[kGroup];
  const size_t n_blocks = (cols - 1) / block_cols + 1;
  for (size_t group = 0; group < n_blocks; group += kGroup) {
    const size_t group_end = std::min(n_blocks, group + kGroup);
    for (size_t b = group; b < group_end; ++b) {
      usable[b - group] = BuildNibbleTables<Decode>(col_scales[b], &tables[b - group]);
    }
    for (size_t r = 0; r < rows; ++r) {
      for (size_t b = group; b < group_end; ++b) {
        const size_t first = r * cols + b * block_cols;
        const size_t width = std::min(block_cols, cols - b * block_cols);
        if (usable[b - group]) {
          MapByNibbles<Decode>(codes + first, width, tables[b - group], out + first);
        } else {
          DequantRun<Decode, DequantOut::kBf16>(codes + first, width,
                                                BlockCursor{col_scales + b, 1, width}, out + first);
        }
      }
    }
  }
}
#endif  // AMN_BYTE_TABLES

#endif  // HWY_TARGET != HWY_SCALAR

// Whole rows: SCALAR runs the reference; other targets run row by row, or
// as one run when a single block spans every row (block_cols >= cols: all
// elements share col_scales[0]).
template <class Decode, DequantOut kOut, typename TOut>
HWY_INLINE void Fp8DequantRows(void (*reference)(const uint8_t*, size_t, size_t, const float*,
                                                 size_t, TOut*),
                               const uint8_t* codes, size_t rows, size_t cols,
                               const float* col_scales, size_t block_cols, TOut* out) {
#if HWY_TARGET == HWY_SCALAR
  reference(codes, rows, cols, col_scales, block_cols, out);
#else
  (void)reference;
  if (rows == 0 || cols == 0) return;
#if AMN_BYTE_TABLES
  if constexpr (kFp8NibbleTables<Decode, kOut>) {
    if (rows * std::min(block_cols, cols) >= kFp8NibbleMinElems) {
      const bool one_block = block_cols >= cols;
      DequantBf16ByNibbleTables<Decode>(codes, one_block ? 1 : rows, one_block ? rows * cols : cols,
                                        col_scales, one_block ? rows * cols : block_cols, out);
      return;
    }
  }
#endif
  if constexpr (kFp8LookupTables<kOut>) {
    if (rows * std::min(block_cols, cols) >= kFp8LookupMinElems) {
      // One scale over all rows is one block of rows * cols columns.
      const bool one_block = block_cols >= cols;
      DequantByTables<Decode, kOut>(codes, one_block ? 1 : rows, one_block ? rows * cols : cols,
                                    col_scales, one_block ? rows * cols : block_cols, out);
      return;
    }
  }
  if (block_cols >= cols) {
    const size_t n = rows * cols;
    DequantRun<Decode, kOut>(codes, n, BlockCursor{col_scales, 1, n}, out);
    return;
  }
  const size_t n_blocks = (cols - 1) / block_cols + 1;
  for (size_t r = 0; r < rows; ++r) {
    DequantRun<Decode, kOut>(codes + r * cols, cols, BlockCursor{col_scales, n_blocks, block_cols},
                             out + r * cols);
  }
#endif
}

// Row kernels. Layout, preconditions and NaN/Inf behaviour are those of
// kernels/ref/fp8_dequant_ref.h: codes [rows, cols] row-major, out the same
// shape, col_scales[ceil(cols / block_cols)], block_cols >= 1, no overlap,
// any alignment.
HWY_INLINE void DequantE4m3ToF32Kernel(const uint8_t* codes, size_t rows, size_t cols,
                                       const float* col_scales, size_t block_cols, float* out) {
  Fp8DequantRows<E4m3ToBf16Op, DequantOut::kF32>(ref::DequantE4m3ToF32, codes, rows, cols,
                                                 col_scales, block_cols, out);
}
HWY_INLINE void DequantE4m3ToBf16Kernel(const uint8_t* codes, size_t rows, size_t cols,
                                        const float* col_scales, size_t block_cols, uint16_t* out) {
  Fp8DequantRows<E4m3ToBf16Op, DequantOut::kBf16>(ref::DequantE4m3ToBf16, codes, rows, cols,
                                                  col_scales, block_cols, out);
}
HWY_INLINE void DequantE4m3ToF16Kernel(const uint8_t* codes, size_t rows, size_t cols,
                                       const float* col_scales, size_t block_cols, uint16_t* out) {
  Fp8DequantRows<E4m3ToBf16Op, DequantOut::kF16>(ref::DequantE4m3ToF16, codes, rows, cols,
                                                 col_scales, block_cols, out);
}
HWY_INLINE void DequantE5m2ToF32Kernel(const uint8_t* codes, size_t rows, size_t cols,
                                       const float* col_scales, size_t block_cols, float* out) {
  Fp8DequantRows<E5m2ToBf16Op, DequantOut::kF32>(ref::DequantE5m2ToF32, codes, rows, cols,
                                                 col_scales, block_cols, out);
}
HWY_INLINE void DequantE5m2ToBf16Kernel(const uint8_t* codes, size_t rows, size_t cols,
                                        const float* col_scales, size_t block_cols, uint16_t* out) {
  Fp8DequantRows<E5m2ToBf16Op, DequantOut::kBf16>(ref::DequantE5m2ToBf16, codes, rows, cols,
                                                  col_scales, block_cols, out);
}
HWY_INLINE void DequantE5m2ToF16Kernel(const uint8_t* codes, size_t rows, size_t cols,
                                       const float* col_scales, size_t block_cols, uint16_t* out) {
  Fp8DequantRows<E5m2ToBf16Op, DequantOut::kF16>(ref::DequantE5m2ToF16, codes, rows, cols,
                                                 col_scales, block_cols, out);
}

// The Fp8Dequant family (kernels/kernel_args.h): rows [begin, end).
HWY_INLINE void DecodeFp8Dequant(const kernels::Fp8ScaledArgs& a, size_t begin, size_t end,
                                 ElemType out_type, void* out) {
  const uint8_t* codes = a.codes + begin * a.cols;
  const size_t rows = end - begin;
  const bool e4m3 = a.code_type == ElemType::kF8E4m3;
  switch (out_type) {
    case ElemType::kF32:
      (e4m3 ? DequantE4m3ToF32Kernel : DequantE5m2ToF32Kernel)(
          codes, rows, a.cols, a.col_scales, a.block_cols, static_cast<float*>(out));
      break;
    case ElemType::kBf16:
      (e4m3 ? DequantE4m3ToBf16Kernel : DequantE5m2ToBf16Kernel)(
          codes, rows, a.cols, a.col_scales, a.block_cols, static_cast<uint16_t*>(out));
      break;
    case ElemType::kF16:
      (e4m3 ? DequantE4m3ToF16Kernel : DequantE5m2ToF16Kernel)(
          codes, rows, a.cols, a.col_scales, a.block_cols, static_cast<uint16_t*>(out));
      break;
    default:
      break;
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace amn
HWY_AFTER_NAMESPACE();

#endif  // AMN_KERNELS_FP8_DEQUANT_INL_H_
