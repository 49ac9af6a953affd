// GPTQ dequantization to the GEMM-native [in, out] orientation (kInOut),
// Highway 1.0.3: row i is the shifted word row qweight[bits*i/32][:],
// contiguous along j, against F32 zero and scale tables of the row's group
// built once per column chunk (and, with a small g_idx, once per group).
#if defined(AMN_KERNELS_GPTQ_IN_OUT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef AMN_KERNELS_GPTQ_IN_OUT_INL_H_
#undef AMN_KERNELS_GPTQ_IN_OUT_INL_H_
#else
#define AMN_KERNELS_GPTQ_IN_OUT_INL_H_
#endif

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "hwy/highway.h"
#include "kernels/gptq_common-inl.h"
#include "kernels/gptq_layout.h"

HWY_BEFORE_NAMESPACE();
namespace amn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// SCALAR runs the reference (kernels/gptq-inl.h).
#if HWY_TARGET != HWY_SCALAR

// ---- kInOut ------------------------------------------------------------

// Columns per kInOut chunk: a multiple of 32, so every chunk of the zero
// rows starts on a word boundary for every bit width.
inline constexpr size_t kInOutChunk = 1024;

// The F32 zeros and scales of group g for columns [col0, col0 + cols) into
// tables of kInOutChunk + 2 * kGptqMaxLanes floats (entries past `cols` are
// 0). Vectorized: the zero row's words and the scale bytes are copied into
// zero-padded stack buffers first, so no load leaves the spans.
// Returns true when every scale of the chunk is finite.
template <uint32_t kBits>
HWY_INLINE bool BuildColumnTables(const gptq::LayerView& layer, size_t g, size_t col0, size_t cols,
                                  float* HWY_RESTRICT zeros, float* HWY_RESTRICT scales) {
  const hn::ScalableTag<float> df;
  const hn::RebindToUnsigned<decltype(df)> du;
  const size_t lanes = hn::Lanes(df);
  HWY_ALIGN uint32_t words[kInOutChunk * kBits / 32 + kStreamPadWords];
  HWY_ALIGN uint32_t scale_bits[kInOutChunk + kGptqMaxLanes];
  const size_t n_words = cols * kBits / 32 + (cols * kBits % 32 != 0 ? 1 : 0);
  const size_t row_words = layer.n * kBits / 32;
  std::memcpy(words, layer.qzeros + 4 * (g * row_words + col0 * kBits / 32), 4 * n_words);
  std::memset(words + n_words, 0, 4 * kStreamPadWords);
  const size_t padded = (cols + lanes - 1) / lanes * lanes;
  const size_t scale_size = layer.scale_type == ElemType::kF32 ? 4 : 2;
  std::memset(scale_bits, 0, sizeof(uint32_t) * padded);
  const uint8_t* scale_row = layer.scales + scale_size * (g * layer.n + col0);
  if (scale_size == 4) {
    std::memcpy(scale_bits, scale_row, 4 * cols);
  } else {
    // Widen the 16-bit patterns into u32 slots (low half), then convert.
    for (size_t c = 0; c < cols; ++c) {
      scale_bits[c] = static_cast<uint32_t>(scale_row[2 * c] | scale_row[2 * c + 1] << 8);
    }
  }
  const auto plus_one = hn::Set(df, layer.zeros_plus_one ? 1.0f : 0.0f);
  const auto lane_bits = LaneBitOffsets<kBits>(du);
  const hn::RebindToSigned<decltype(df)> di;
  auto non_finite = hn::Zero(du);  // exponent bits all ones somewhere
  const auto exponent = hn::Set(du, fmt::kF32ExpMask);
  for (size_t c = 0; c < padded; c += lanes) {
    const auto field = UnpackFields<kBits>(du, words, c, lane_bits);
    hn::StoreU(hn::Add(hn::ConvertTo(df, hn::BitCast(di, field)), plus_one), df, zeros + c);
    auto s = hn::LoadU(du, scale_bits + c);
    if (layer.scale_type == ElemType::kF16) {
      s = F16BitsToF32Lanes(du, s);
    } else if (layer.scale_type == ElemType::kBf16) {
      s = hn::ShiftLeft<16>(s);
    }
    non_finite = hn::Or(non_finite, hn::VecFromMask(du, hn::Eq(hn::And(s, exponent), exponent)));
    hn::StoreU(hn::BitCast(df, s), df, scales + c);
  }
  // The tail vectors of a row read up to 2L - 1 entries past `cols`.
  std::fill(zeros + padded, zeros + padded + 2 * kGptqMaxLanes, 0.0f);
  std::fill(scales + padded, scales + padded + 2 * kGptqMaxLanes, 0.0f);
  return hn::AllTrue(du, hn::Eq(non_finite, hn::Zero(du)));
}

// One row's columns [0, cols) of a chunk: codes from word row `row` (and
// `next` when the row's fields straddle), tables from BuildColumnTables.
template <uint32_t kBits, DequantOut kOut, bool kMayBeNan, typename TOut>
HWY_INLINE void InOutRowChunk(const uint32_t* HWY_RESTRICT row, const uint32_t* HWY_RESTRICT next,
                              uint32_t shift, size_t cols, const float* HWY_RESTRICT zeros,
                              const float* HWY_RESTRICT scales, TOut* HWY_RESTRICT out) {
  const hn::ScalableTag<float> df;
  const hn::RebindToUnsigned<decltype(df)> du;
  const size_t lanes = hn::Lanes(df);
  const bool straddles = shift + kBits > 32;
  // (Captures no vector: SVE vectors are sizeless.)
  const auto code = [du, shift, straddles](const uint32_t* r, const uint32_t* nx, size_t c) {
    auto v = hn::ShiftRightSame(hn::LoadU(du, r + c), static_cast<int>(shift));
    if (32 % kBits != 0 && straddles) {
      v = hn::Or(v, hn::ShiftLeftSame(hn::LoadU(du, nx + c), static_cast<int>(32 - shift)));
    }
    return hn::And(v, hn::Set(du, (1u << kBits) - 1));
  };
  size_t c = 0;
  for (; c + 2 * lanes <= cols; c += 2 * lanes) {
    DequantStep<kOut, kMayBeNan>(df, code(row, next, c), code(row, next, c + lanes),
                                 hn::LoadU(df, zeros + c),
                      hn::LoadU(df, zeros + c + lanes), hn::LoadU(df, scales + c),
                      hn::LoadU(df, scales + c + lanes), out + c);
  }
  const size_t rest = cols - c;
  if (rest == 0) return;
  HWY_ALIGN uint32_t row_tail[2 * kGptqMaxLanes] = {};
  HWY_ALIGN uint32_t next_tail[2 * kGptqMaxLanes] = {};
  HWY_ALIGN TOut out_tail[2 * kGptqMaxLanes];
  std::memcpy(row_tail, row + c, 4 * rest);
  if (straddles) std::memcpy(next_tail, next + c, 4 * rest);
  DequantStep<kOut, kMayBeNan>(df, code(row_tail, next_tail, 0), code(row_tail, next_tail, lanes),
                    hn::LoadU(df, zeros + c), hn::LoadU(df, zeros + c + lanes),
                    hn::LoadU(df, scales + c), hn::LoadU(df, scales + c + lanes), out_tail);
  std::memcpy(out + c, out_tail, rest * sizeof(TOut));
}

// With a g_idx of at most this many groups, kInOut visits the rows group by
// group (one scan of g_idx per group), so each chunk's tables are built
// once per group instead of once per row.
inline constexpr size_t kInOutScanGroups = 64;

template <uint32_t kBits, DequantOut kOut, typename TOut>
HWY_INLINE void DequantGptqInOut(const gptq::LayerView& layer, size_t row_begin, size_t row_end,
                                 TOut* HWY_RESTRICT out) {
  HWY_ALIGN float zeros[kInOutChunk + 2 * kGptqMaxLanes];
  HWY_ALIGN float scales[kInOutChunk + 2 * kGptqMaxLanes];
  const auto* words = reinterpret_cast<const uint32_t*>(layer.qweight);
  // Row i of the chunk at col0 with the current tables.
  const auto row_chunk = [&](size_t i, size_t col0, size_t cols, bool finite) {
    const size_t bit = i * kBits;
    const uint32_t* row = words + (bit / 32) * layer.n + col0;
    const uint32_t shift = static_cast<uint32_t>(bit % 32);
    // Only a straddling row reads the next word row, which then exists.
    const uint32_t* next = shift + kBits > 32 ? row + layer.n : row;
    TOut* dst = out + (i - row_begin) * layer.n + col0;
    if (finite) {
      InOutRowChunk<kBits, kOut, false>(row, next, shift, cols, zeros, scales, dst);
    } else {
      InOutRowChunk<kBits, kOut, true>(row, next, shift, cols, zeros, scales, dst);
    }
  };
  const bool by_group = layer.g_idx != nullptr && layer.groups <= kInOutScanGroups;
  for (size_t col0 = 0; col0 < layer.n; col0 += kInOutChunk) {
    const size_t cols = std::min(kInOutChunk, layer.n - col0);
    if (by_group) {
      for (size_t g = 0; g < layer.groups; ++g) {
        bool built = false, finite = false;
        for (size_t i = row_begin; i < row_end; ++i) {
          if (gptq::LoadLe32(layer.g_idx + 4 * i) != g) continue;
          if (!built) {
            finite = BuildColumnTables<kBits>(layer, g, col0, cols, zeros, scales);
            built = true;
          }
          row_chunk(i, col0, cols, finite);
        }
      }
      continue;
    }
    size_t cached_group = ~size_t{0};
    bool finite = false;
    for (size_t i = row_begin; i < row_end; ++i) {
      const size_t g = gptq::GroupOf(layer, i);
      if (g != cached_group) {
        finite = BuildColumnTables<kBits>(layer, g, col0, cols, zeros, scales);
        cached_group = g;
      }
      row_chunk(i, col0, cols, finite);
    }
  }
}

#endif  // HWY_TARGET != HWY_SCALAR

}  // namespace HWY_NAMESPACE
}  // namespace amn
HWY_AFTER_NAMESPACE();

#endif  // AMN_KERNELS_GPTQ_IN_OUT_INL_H_
