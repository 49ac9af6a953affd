// GPTQ dequantization to the nn.Linear [out, in] orientation (kOutIn),
// Highway 1.0.3. Row j is column j's bit stream, whose words lie N words
// apart. Tiles of L neighbouring rows load whole word rows and transpose
// them in registers into per-row streams (each qweight cache line is read
// once); runs inside one group take their results from a table of all
// 2^bits results of the group, or compute them. With act-order g_idx,
// whole tiles are computed in the transposed domain (lane = row) and
// transposed back (kernels/gptq_act_order-inl.h); other rows take per-lane
// zeros and scales.
#if defined(AMN_KERNELS_GPTQ_OUT_IN_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef AMN_KERNELS_GPTQ_OUT_IN_INL_H_
#undef AMN_KERNELS_GPTQ_OUT_IN_INL_H_
#else
#define AMN_KERNELS_GPTQ_OUT_IN_INL_H_
#endif

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "amn/weight_layout.h"
#include "hwy/highway.h"
#include "kernels/float_convert-inl.h"
#include "kernels/float_formats.h"
#include "kernels/fp8_dequant-inl.h"
#include "kernels/gptq_act_order-inl.h"
#include "kernels/gptq_common-inl.h"
#include "kernels/gptq_layout.h"
#include "kernels/gptq_tiles-inl.h"
#include "kernels/int4_byte_table-inl.h"

HWY_BEFORE_NAMESPACE();
namespace amn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// SCALAR runs the reference (kernels/gptq-inl.h).
#if HWY_TARGET != HWY_SCALAR

// ---- kOutIn ------------------------------------------------------------

// Elements per kOutIn chunk (a multiple of 32; 512 keeps a tile's streams
// at 9 KiB for 8 bits).
inline constexpr size_t kOutInChunk = 512;
// Rows whose tiles take each chunk together (DequantGptqOutIn): 32 columns
// of 4-byte words are one 128-byte line pair of every qweight word row;
// layers of at least kOutInLongWordRows word rows (K >= 8192 at 4 bits)
// take blocks of up to 256 rows of a call, 1 KiB of each word row.
inline constexpr size_t kOutInBlockRows = 32;
inline constexpr size_t kOutInLongBlockRows = 256;
inline constexpr size_t kOutInLongWordRows = 1024;
// AVX-512 on long layers: each chunk's word rows of a band of columns are
// first copied into one stack buffer of this many bytes (whole rows of the
// band, one after the other), and the tiles transposed from there. Loaded
// in place, the 16 word rows of a tile lie N * 4 bytes apart (16 KiB at
// N = 4096), all in one L1 set; packed, 1.0-1.5x faster at real shapes
// (docs/performance/safetensors-schemes.md, "GPTQ [out, in] packed bands
// on AVX-512"). AVX2 and SSE4 were mixed (8-bit 0.85-0.93x), so keep loading
// in place.
inline constexpr size_t kOutInPackBytes = 64 * 1024;
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
inline constexpr bool kOutInPackedBands = true;
#else
inline constexpr bool kOutInPackedBands = false;
#endif

// Row j's F32 zero and scale of group g.
HWY_INLINE float ZeroOf(const gptq::LayerView& layer, size_t g, size_t j) {
  return static_cast<float>(gptq::Zero(layer, g, j));
}
HWY_INLINE float ScaleOf(const gptq::LayerView& layer, size_t g, size_t j) {
  const uint32_t bits = gptq::ScaleBits(layer, g, j);
  float scale;
  std::memcpy(&scale, &bits, sizeof(scale));
  return scale;
}

// The results of one group (zero, scale) for the codes (as F32) in each lane: in
// the low 16 bits (BF16/F16 bits) or the F32 bits, by the arithmetic and
// NaN rule of DequantStep, done once per group.
template <DequantOut kOut, class DF>
HWY_INLINE hn::Vec<hn::RebindToUnsigned<DF>> GroupLutOf(DF df, hn::Vec<DF> codes,
                                                        hn::Vec<DF> zero, hn::Vec<DF> scale) {
  const hn::RebindToUnsigned<DF> du;
  const auto product = hn::Mul(hn::Sub(codes, zero), scale);
  const auto bits =
      hn::BitCast(du, hn::IfThenElse(hn::IsNaN(product), ProductNan(df, scale), product));
  if constexpr (kOut == DequantOut::kF32) return bits;
  if constexpr (kOut == DequantOut::kBf16) return hn::ShiftRight<16>(F32BitsToBf16Upper(du, bits));
  if constexpr (kOut == DequantOut::kF16) return F32BitsToF16Lanes(du, bits);
}

// GroupLutOf for codes base + l in lane l.
template <DequantOut kOut, class DF>
HWY_INLINE hn::Vec<hn::RebindToUnsigned<DF>> GroupLutLow(DF df, hn::Vec<DF> zero,
                                                         hn::Vec<DF> scale, int32_t base = 0) {
  const hn::RebindToSigned<DF> di;
  return GroupLutOf<kOut>(df, hn::ConvertTo(df, hn::Iota(di, base)), zero, scale);
}

// Lane q of `lut` for each code q (codes < Lanes(du)).
template <class DU>
HWY_INLINE hn::Vec<DU> LookUp(DU du, hn::Vec<DU> lut, hn::Vec<DU> codes) {
  const hn::RebindToSigned<DU> di;
  return hn::TableLookupLanes(lut, hn::IndicesFromVec(du, hn::BitCast(di, codes)));
}

// Entry `code` of a table of 2L entries held as t0 (codes [0, L)) and t1
// (codes [L, 2L)); with `two` false every code is below L and only t0 is
// read. L is a power of two.
template <class DU>
HWY_INLINE hn::Vec<DU> LookUp2(DU du, hn::Vec<DU> t0, hn::Vec<DU> t1, hn::Vec<DU> codes,
                               bool two) {
  if (!two) return LookUp(du, t0, codes);
  const auto lanes = hn::Set(du, static_cast<uint32_t>(hn::Lanes(du)));
  const auto index = hn::And(codes, hn::Sub(lanes, hn::Set(du, 1u)));
  return hn::IfThenElse(hn::TestBit(codes, lanes), LookUp(du, t1, index), LookUp(du, t0, index));
}

#if HWY_ARCH_X86 || HWY_TARGET == HWY_NEON
// 2- and 3-bit codes as u16 lanes, on x86 (SSSE3 to AVX3_DL) and NEON
// (untimed, by instruction count: docs/performance/arm.md). A vector's
// 8 * blocks fields are at most 12 bytes, so one 128-bit load broadcast
// to every block holds them all; a byte shuffle puts the two bytes around
// field l in u16 lane l and a multiply by 2^(16 - kBits - shift) moves the
// field to the top bits of that lane: constant shifts only (the u32 path,
// UnpackFields, needs per-lane variable shifts and lane lookups, which
// Highway builds from multiplies and shuffles before AVX2).
template <uint32_t kBits>
struct Codes16Pattern {
  alignas(64) uint8_t window[64];       // bytes (lo, lo + 1) for u16 lane l
  alignas(64) uint16_t multiplier[32];  // 2^(16 - kBits - shift) for lane l
};

template <uint32_t kBits>
constexpr Codes16Pattern<kBits> MakeCodes16Pattern() {
  Codes16Pattern<kBits> p{};
  for (uint32_t lane = 0; lane < 32; ++lane) {
    const uint32_t bit = lane * kBits;
    p.window[2 * lane] = static_cast<uint8_t>(bit / 8);
    p.window[2 * lane + 1] = static_cast<uint8_t>(bit / 8 + 1);
    p.multiplier[lane] = static_cast<uint16_t>(1u << (16 - kBits - bit % 8));
  }
  return p;
}

// Fields [c, c + Lanes(d16)) of the byte stream (c a multiple of 8), one
// per u16 lane.
template <uint32_t kBits, class D16>
HWY_INLINE hn::Vec<D16> Codes16(D16 d16, const uint8_t* HWY_RESTRICT bytes, size_t c,
                                hn::Vec<hn::Repartition<uint8_t, D16>> window,
                                hn::Vec<D16> multiplier) {
  const hn::Repartition<uint8_t, D16> d8;
  const auto raw = hn::LoadDup128(d8, bytes + c * kBits / 8);
  const auto top = hn::Mul(hn::BitCast(d16, hn::TableLookupBytes(raw, window)), multiplier);
  return hn::ShiftRight<16 - kBits>(top);
}

// BroadcastRun for 2- and 3-bit codes (see above): every 16-bit result of
// the group sits in one u16 table per block (BF16/F16 bits, or the low
// and the high halves of the F32 bits), and each code q looks up bytes
// (2q, 2q + 1) of it. F32 only where vectors are at most two blocks.
template <uint32_t kBits, DequantOut kOut, class DF, typename TOut>
HWY_INLINE void Codes16Run(DF df, const uint8_t* HWY_RESTRICT bytes, size_t c, size_t end,
                           hn::Vec<DF> zero, hn::Vec<DF> scale, TOut* HWY_RESTRICT out) {
  const hn::RebindToSigned<DF> di;
  const hn::Repartition<uint16_t, DF> d16;
  const hn::Repartition<uint8_t, DF> d8;
  static constexpr Codes16Pattern<kBits> kPattern = MakeCodes16Pattern<kBits>();
  const auto window = hn::Load(d8, kPattern.window);
  const auto multiplier = hn::Load(d16, kPattern.multiplier);
  const size_t lanes = hn::Lanes(df);
  // Results of codes l % 8 in u32 lane l; with 4 lanes, r0 and r1 hold
  // codes [0, 4) and [4, 8). Their low (high) halves, in order, repeat
  // codes [0, 8) in every block.
  const auto code_of = [&](int32_t base) {
    return hn::ConvertTo(df, hn::And(hn::Iota(di, base), hn::Set(di, 7)));
  };
  const auto r0 = GroupLutOf<kOut>(df, code_of(0), zero, scale);
  const auto r1 = lanes >= 8 ? r0 : GroupLutOf<kOut>(df, code_of(4), zero, scale);
  const auto low = hn::ConcatEven(d16, hn::BitCast(d16, r1), hn::BitCast(d16, r0));
  // Code q -> byte indices (2q, 2q + 1).
  const auto to_bytes = hn::Set(d16, 0x0202);
  const auto byte_one = hn::Set(d16, 0x0100);
  const size_t step = hn::Lanes(d16);
  for (; c < end; c += step) {
    const auto q = Codes16<kBits>(d16, bytes, c, window, multiplier);
    const auto index = hn::BitCast(d8, hn::Add(hn::Mul(q, to_bytes), byte_one));
    const auto lo = hn::BitCast(d16, hn::TableLookupBytes(hn::BitCast(d8, low), index));
    if constexpr (kOut != DequantOut::kF32) {
      hn::StoreU(lo, d16, out + c);
    } else {
#if HWY_MAX_BYTES <= 32
      const auto high = hn::ConcatOdd(d16, hn::BitCast(d16, r1), hn::BitCast(d16, r0));
      const auto hi = hn::BitCast(d16, hn::TableLookupBytes(hn::BitCast(d8, high), index));
      // Per block: u32 results of lanes [0, 4) and [4, 8).
      const auto first = hn::BitCast(df, hn::InterleaveLower(d16, lo, hi));
      const auto second = hn::BitCast(df, hn::InterleaveUpper(d16, lo, hi));
#if HWY_MAX_BYTES == 16
      hn::StoreU(first, df, out + c);
      hn::StoreU(second, df, out + c + lanes);
#else
      hn::StoreU(hn::ConcatLowerLower(df, second, first), df, out + c);
      hn::StoreU(hn::ConcatUpperUpper(df, second, first), df, out + c + lanes);
#endif
#endif
    }
  }
}
#endif  // HWY_ARCH_X86 || HWY_TARGET == HWY_NEON

#if AMN_BYTE_TABLES
// Whether 4-bit codes to BF16/F16 take Nibble16Run (measured per target:
// docs/performance/safetensors-schemes.md, "GPTQ/AWQ 4-bit 16-bit outputs on AVX2 through byte
// tables"; NEON untimed, by instruction count: docs/performance/arm.md);
// elsewhere they take the u32 lane lookups below.
template <DequantOut kOut>
constexpr bool GptqNibbleUsesByteTables() {
  return kOut != DequantOut::kF32;  // every AMN_BYTE_TABLES target
}

// The shortest run (elements of one group in a chunk) that takes them: the
// byte tables cost more to build than they save on short runs, which take
// the group's u32 lane tables (AVX2, AVX-512) or the arithmetic (SSE4 BF16)
// below. Groups of 32 (and of 64 on AVX-512) thus run 1.04-1.4x faster
// (docs/performance/safetensors-schemes.md, "GPTQ 4-bit 16-bit outputs:
// short groups without byte tables"); SSE4/SSSE3 F16 keep the tables at any
// length, as their other path rounds to F16 in software (1.2x slower at 32).
template <DequantOut kOut>
constexpr size_t GptqNibbleTableMinRun() {
  if (HWY_TARGET <= HWY_AVX3) return 128;
  if (HWY_TARGET == HWY_AVX2) return 64;
  return kOut == DequantOut::kF16 ? 0 : 64;
}

// u32 lane 4k + p (128-bit block k of B, position p) takes word k + B * p:
// then the lower 8 bytes of block k hold words k and k + B, whose 16
// codes StoreInt4ByteLookups writes to outputs [8k, 8k + 8) and
// [8(k + B), 8(k + B) + 8), and the upper 8 bytes the next 4B words: the
// outputs of a load in element order. Identity for one block.
struct NibbleWordOrder {
  alignas(64) int32_t index[16];
};
constexpr NibbleWordOrder MakeNibbleWordOrder(size_t blocks) {
  NibbleWordOrder order{};
  for (size_t lane = 0; lane < 16; ++lane) {
    order.index[lane] = static_cast<int32_t>(lane / 4 + blocks * (lane % 4));
  }
  return order;
}

// BroadcastRun for 4-bit codes to BF16/F16 on x86: the group's 16 results
// (GroupLutOf, in the low 16 bits of each lane) become byte tables
// (kernels/int4_byte_table-inl.h). A vector of bytes holds 2 * Lanes(d8)
// codes; its words reordered (NibbleWordOrder, one lane permute on AVX2
// and AVX-512), the low and high nibbles of each block's lower (upper)
// 8 bytes, interleaved, are the first (second) Lanes(d8) outputs' codes.
template <DequantOut kOut, class DF, typename TOut>
HWY_INLINE void Nibble16Run(DF df, const uint8_t* HWY_RESTRICT bytes, size_t c, size_t end,
                            hn::Vec<DF> zero, hn::Vec<DF> scale, TOut* HWY_RESTRICT out) {
  const hn::Repartition<uint8_t, DF> d8;
  const hn::Repartition<uint32_t, DF> du;
  const auto tables = MakeInt4ByteTables<false>(d8, [&](auto /*du*/, auto codes) {
    return GroupLutOf<kOut>(df, hn::ConvertTo(df, codes), zero, scale);
  });
  const size_t half = hn::Lanes(d8);
  const auto store_load = [&](const uint8_t* from, uint16_t* to) {
    auto v = hn::LoadU(d8, from);
    if constexpr (HWY_MAX_BYTES > 16) {
      static constexpr NibbleWordOrder kOrder = MakeNibbleWordOrder(HWY_MAX_BYTES / 16);
      v = hn::BitCast(d8, hn::TableLookupLanes(hn::BitCast(du, v),
                                               hn::SetTableIndices(du, kOrder.index)));
    }
    const auto low = Int4Nibbles<0>(d8, v);
    const auto high = Int4Nibbles<1>(d8, v);
    StoreInt4ByteLookups(d8, tables, hn::InterleaveLower(d8, low, high), to);
    StoreInt4ByteLookups(d8, tables, hn::InterleaveUpper(d8, low, high), to + half);
  };
  for (; c + 2 * half <= end; c += 2 * half) store_load(bytes + c / 2, out + c);
  // The stream is zero-padded past the run: a whole load, the rest dropped.
  if (c < end) {
    HWY_ALIGN uint16_t last[2 * HWY_MAX_BYTES];
    store_load(bytes + c / 2, last);
    std::memcpy(out + c, last, (end - c) * sizeof(uint16_t));
  }
}
#endif  // AMN_BYTE_TABLES

// n_steps whole steps (2L elements each) from element c of the chunk
// stream to out + c, all in one group with F32 zero `zero_f` and scale `scale_f`.
// BF16/F16 output of 4 and 8 bits reads the stream's bytes widened to u32
// lanes: lane l holds elements 2l and 2l + 1 (low and high nibble, or
// byte), which map onto the even and odd u16 lanes of the output with one
// OddEven. Where one or two vectors hold 2^kBits lanes, results come from
// the group's table of every possible result (a lane lookup per vector, two
// and a select for two vectors); otherwise from the arithmetic, without NaN
// checks when the scale is finite.
template <uint32_t kBits, DequantOut kOut, typename TOut>
HWY_INLINE void BroadcastRun(const uint32_t* HWY_RESTRICT stream, size_t c, size_t n_steps,
                             float zero_f, float scale_f, TOut* HWY_RESTRICT out) {
  const hn::ScalableTag<float> df;
  const hn::RebindToUnsigned<decltype(df)> du;
  const hn::RebindToSigned<decltype(df)> di;
  const hn::Repartition<uint16_t, decltype(df)> d16;
  const size_t lanes = hn::Lanes(df);
  const size_t step = 2 * lanes;
  const auto zero = hn::Set(df, zero_f);
  const auto scale = hn::Set(df, scale_f);
  uint32_t scale_bits;
  std::memcpy(&scale_bits, &scale_f, sizeof(scale_bits));
  const bool finite = (scale_bits & fmt::kF32ExpMask) != fmt::kF32ExpMask;
  // A table of every result fits in one vector, or in two.
  const bool use_lut = 2 * lanes >= (size_t{1} << kBits);
  const bool two = lanes < (size_t{1} << kBits);
  const auto lanes_i = static_cast<int32_t>(lanes);
  const auto* bytes = reinterpret_cast<const uint8_t*>(stream);
  const size_t end = c + n_steps * step;
  // 8-bit codes to F16 in element order (A = bytes [c, c + L), B = the
  // next L), so the two results are stored as they are instead of being
  // widened again and interleaved with OddEven: with F16C (two vcvtps2ph)
  // for a finite scale; on SSE4/SSSE3 (ToF16LowerInRange's integer
  // rounding) for a group whose every result fl((q - z) * scale), q in
  // 0..255, is ±0 or in F16's normal range (F16InRangeProducts; q - z is
  // exact, |q - z| <= max(|z|, |255 - z|)).
  if constexpr (kOut == DequantOut::kF16 && kBits == 8 &&
                (AMN_F16_HARDWARE_DEMOTE || kF16InRangeStore)) {
    const float max_abs_diff = std::max(std::fabs(zero_f), std::fabs(255.0f - zero_f));
    if (HWY_LIKELY(finite) &&
        (AMN_F16_HARDWARE_DEMOTE || F16InRangeProducts(scale_f, max_abs_diff))) {
      const hn::Rebind<uint8_t, decltype(du)> d8;
      for (; c < end; c += step) {
        const auto qa = hn::PromoteTo(du, hn::LoadU(d8, bytes + c));
        const auto qb = hn::PromoteTo(du, hn::LoadU(d8, bytes + c + lanes));
        const auto a = hn::Mul(hn::Sub(hn::ConvertTo(df, hn::BitCast(di, qa)), zero), scale);
        const auto b = hn::Mul(hn::Sub(hn::ConvertTo(df, hn::BitCast(di, qb)), zero), scale);
        ToF16LowerInRange::StorePair(du, hn::BitCast(du, a), hn::BitCast(du, b), out + c);
      }
      return;
    }
  }
#if HWY_ARCH_X86 || HWY_TARGET == HWY_NEON
  // F32 where it wins: SSSE3/SSE4, and 3 bits on AVX2 (2 bits there and
  // AVX3's wider vectors keep the u32 path).
  if constexpr ((kBits == 2 || kBits == 3) &&
                (kOut != DequantOut::kF32 || HWY_MAX_BYTES == 16 ||
                 (HWY_MAX_BYTES == 32 && kBits == 3))) {
    Codes16Run<kBits, kOut>(df, bytes, c, end, zero, scale, out);
    return;
  }
#endif
#if AMN_BYTE_TABLES
  if constexpr (kBits == 4 && GptqNibbleUsesByteTables<kOut>()) {
    if (end - c >= GptqNibbleTableMinRun<kOut>()) {
      Nibble16Run<kOut>(df, bytes, c, end, zero, scale, out);
      return;
    }
  }
#endif
  if constexpr (kOut != DequantOut::kF32 && (kBits == 4 || kBits == 8)) {
    // Element pairs: lane l of the widened bytes (4 bits) or u16 (8 bits).
    const auto pair_at = [&](size_t e) {
      if constexpr (kBits == 4) {
        return hn::PromoteTo(du, hn::LoadU(hn::Rebind<uint8_t, decltype(du)>(), bytes + e / 2));
      } else {
        return hn::PromoteTo(du, hn::LoadU(hn::Rebind<uint16_t, decltype(du)>(),
                                           reinterpret_cast<const uint16_t*>(bytes) + e / 2));
      }
    };
    const auto low_mask = hn::Set(du, (1u << kBits) - 1);
    if (use_lut) {
      const auto low0 = GroupLutLow<kOut>(df, zero, scale);
      const auto low1 = GroupLutLow<kOut>(df, zero, scale, lanes_i);
      const auto high0 = hn::ShiftLeft<16>(low0);
      const auto high1 = hn::ShiftLeft<16>(low1);
      for (; c < end; c += step) {
        const auto pair = pair_at(c);
        const auto even = LookUp2(du, low0, low1, hn::And(pair, low_mask), two);
        const auto odd = LookUp2(du, high0, high1, hn::ShiftRight<kBits>(pair), two);
        hn::StoreU(hn::OddEven(hn::BitCast(d16, odd), hn::BitCast(d16, even)), d16, out + c);
      }
      return;
    }
    for (; c < end; c += step) {
      const auto pair = pair_at(c);
      const auto a = hn::Mul(
          hn::Sub(hn::ConvertTo(df, hn::BitCast(di, hn::And(pair, low_mask))), zero), scale);
      const auto b =
          hn::Mul(hn::Sub(hn::ConvertTo(df, hn::BitCast(di, hn::ShiftRight<kBits>(pair))), zero),
                  scale);
      if (HWY_LIKELY(finite)) {
        StoreOut<kOut, false>(du, hn::BitCast(du, a), hn::BitCast(du, b), out + c);
      } else {
        const auto nan = ProductNan(df, scale);
        StoreOut<kOut, true>(du, hn::BitCast(du, hn::IfThenElse(hn::IsNaN(a), nan, a)),
                             hn::BitCast(du, hn::IfThenElse(hn::IsNaN(b), nan, b)), out + c);
      }
    }
  } else {
    const auto lane_bits = LaneBitOffsets<kBits>(du);
    if (use_lut) {
      const auto lut0 = GroupLutLow<kOut>(df, zero, scale);
      const auto lut1 = GroupLutLow<kOut>(df, zero, scale, lanes_i);
      for (; c < end; c += step) {
        const auto a = LookUp2(du, lut0, lut1, UnpackFields<kBits>(du, stream, c, lane_bits), two);
        const auto b =
            LookUp2(du, lut0, lut1, UnpackFields<kBits>(du, stream, c + lanes, lane_bits), two);
        if constexpr (kOut == DequantOut::kF32) {
          hn::StoreU(hn::BitCast(df, a), df, out + c);
          hn::StoreU(hn::BitCast(df, b), df, out + c + lanes);
        } else {
          hn::StoreU(hn::ConcatEven(d16, hn::BitCast(d16, b), hn::BitCast(d16, a)), d16, out + c);
        }
      }
      return;
    }
    for (; c < end; c += step) {
      const auto qa = UnpackFields<kBits>(du, stream, c, lane_bits);
      const auto qb = UnpackFields<kBits>(du, stream, c + lanes, lane_bits);
      if (HWY_LIKELY(finite)) {
        DequantStep<kOut, false>(df, qa, qb, zero, zero, scale, scale, out + c);
      } else {
        DequantStep<kOut, true>(df, qa, qb, zero, zero, scale, scale, out + c);
      }
    }
  }
}

// Row j's tables of a layer with a g_idx (rows outside whole tiles), or
// none: either every group's 2^bits results (GroupLutLow's, at [g << bits])
// or its zero and scale (at [g]).
struct RowTables {
  const uint32_t* results = nullptr;
  const float* zeros = nullptr;
  const float* scales = nullptr;
};

// Elements [i0, i0 + count) of row j, count <= kOutInChunk, from the chunk's
// stream `stream` (field 0 is element i0; zero-padded past the data).
// Without a g_idx, runs of whole steps inside one group take BroadcastRun;
// steps across a group boundary, the tail and every step of a layer with a
// g_idx (rows outside whole tiles: DequantGptqOutIn) take per-lane zeros
// and scales, from the row's tables when it has them.
template <uint32_t kBits, DequantOut kOut, typename TOut>
HWY_INLINE void OutInChunk(const gptq::LayerView& layer, size_t j,
                           const uint32_t* HWY_RESTRICT stream, size_t i0, size_t count,
                           TOut* HWY_RESTRICT out, const RowTables& row = {}) {
  const hn::ScalableTag<float> df;
  const hn::RebindToUnsigned<decltype(df)> du;
  const size_t lanes = hn::Lanes(df);
  const size_t step = 2 * lanes;
  const auto lane_bits = LaneBitOffsets<kBits>(du);
  HWY_ALIGN float lane_zeros[2 * kGptqMaxLanes];
  HWY_ALIGN float lane_scales[2 * kGptqMaxLanes];
  HWY_ALIGN uint32_t lane_groups[2 * kGptqMaxLanes];
  HWY_ALIGN TOut out_tail[2 * kGptqMaxLanes];
  const size_t group_size = layer.group_size;
  size_t c = 0;
  while (c < count) {
    const size_t i = i0 + c;
    const bool full = c + step <= count;
    if (layer.g_idx == nullptr && full && i / group_size == (i + step - 1) / group_size) {
      const size_t g = i / group_size;
      const size_t group_stop = std::min(count, (g + 1) * group_size - i0);
      const size_t n_steps = (group_stop - c) / step;
      BroadcastRun<kBits, kOut>(stream, c, n_steps, ZeroOf(layer, g, j), ScaleOf(layer, g, j),
                                out);
      c += n_steps * step;
      continue;
    }
    TOut* dst = full ? out + c : out_tail;
    const auto qa = UnpackFields<kBits>(du, stream, c, lane_bits);
    const auto qb = UnpackFields<kBits>(du, stream, c + lanes, lane_bits);
    // Each lane's group; the padded lanes of a tail repeat the last
    // element's.
    const size_t last = i0 + count - 1;
    const uint32_t* groups = lane_groups;  // (any alignment: read by LoadU, memcpy)
    if (layer.g_idx != nullptr && full) {
      groups = reinterpret_cast<const uint32_t*>(layer.g_idx + 4 * i);
    } else {
      for (size_t k = 0; k < step; ++k) {
        lane_groups[k] = static_cast<uint32_t>(gptq::GroupOf(layer, std::min(i + k, last)));
      }
    }
    const auto group = [&](size_t k) {
      uint32_t g;
      std::memcpy(&g, groups + k, sizeof(g));
      return g;
    };
    if (row.results != nullptr) {
      // Each lane's result (g << bits) + q of the row's table, picked
      // through memory.
      HWY_ALIGN uint32_t index[2 * kGptqMaxLanes];
      HWY_ALIGN uint32_t picked[2 * kGptqMaxLanes];
      hn::Store(hn::Add(hn::ShiftLeft<kBits>(hn::LoadU(du, groups)), qa), du, index);
      hn::Store(hn::Add(hn::ShiftLeft<kBits>(hn::LoadU(du, groups + lanes)), qb), du,
                index + lanes);
      for (size_t k = 0; k < step; ++k) picked[k] = row.results[index[k]];
      const auto ra = hn::Load(du, picked);
      const auto rb = hn::Load(du, picked + lanes);
      if constexpr (kOut == DequantOut::kF32) {
        hn::StoreU(hn::BitCast(df, ra), df, dst);
        hn::StoreU(hn::BitCast(df, rb), df, dst + lanes);
      } else {
        const hn::Repartition<uint16_t, decltype(du)> d16;
        hn::StoreU(hn::ConcatEven(d16, hn::BitCast(d16, rb), hn::BitCast(d16, ra)), d16, dst);
      }
      if (!full) std::memcpy(out + c, out_tail, (count - c) * sizeof(TOut));
      c += step;
      continue;
    }
    if (row.zeros != nullptr) {
      for (size_t k = 0; k < step; ++k) {
        lane_zeros[k] = row.zeros[group(k)];
        lane_scales[k] = row.scales[group(k)];
      }
    } else {
      for (size_t k = 0; k < step; ++k) {
        lane_zeros[k] = ZeroOf(layer, group(k), j);
        lane_scales[k] = ScaleOf(layer, group(k), j);
      }
    }
    DequantStep<kOut>(df, qa, qb, hn::LoadU(df, lane_zeros), hn::LoadU(df, lane_zeros + lanes),
                      hn::LoadU(df, lane_scales), hn::LoadU(df, lane_scales + lanes), dst);
    if (!full) std::memcpy(out + c, out_tail, (count - c) * sizeof(TOut));
    c += step;
  }
}

template <uint32_t kBits, DequantOut kOut, typename TOut>
HWY_INLINE void DequantGptqOutIn(const gptq::LayerView& layer, size_t row_begin, size_t row_end,
                                 TOut* HWY_RESTRICT out) {
  const hn::ScalableTag<uint32_t> du;
  const size_t lanes = hn::Lanes(du);
  const size_t stride = 4 * layer.n;
  // One stream per row of a tile, each kOutInChunk * kBits / 32 words plus
  // zero padding for the whole-vector loads past its end.
  constexpr size_t kStreamWords = kOutInChunk * kBits / 32 + kStreamPadWords;
  HWY_ALIGN uint32_t streams[kTileLanes * kStreamWords];
  const auto run_chunk = [&](size_t j, const uint32_t* stream, size_t i0,
                             const RowTables& row = {}) {
    OutInChunk<kBits, kOut>(layer, j, stream, i0, std::min(kOutInChunk, layer.k - i0),
                            out + (j - row_begin) * layer.k + i0, row);
  };
  // Column j's words of chunk i0, one strided load each, into `stream`.
  const auto copy_column = [&](size_t j, size_t i0, uint32_t* stream) {
    const size_t n_words = std::min(kOutInChunk, layer.k - i0) * kBits / 32;  // exact
    const uint8_t* column = layer.qweight + (i0 * kBits / 32) * stride + 4 * j;
    for (size_t w = 0; w < n_words; ++w) std::memcpy(stream + w, column + w * stride, 4);
    std::memset(stream + n_words, 0, 4 * kStreamPadWords);
  };
  if (layer.g_idx != nullptr) {
    union {
      uint32_t results[2 * kGptqMaxTableEntries + kGptqMaxLanes];
      struct {
        float zeros[kGptqMaxTableEntries];
        float scales[kGptqMaxTableEntries];
      } groups;
    } table;
    float* zeros = table.groups.zeros;
    float* scales = table.groups.scales;
    const size_t tile_lanes = hn::Lanes(ActOrderTag());
    if (tile_lanes <= kTileLanes && row_end - row_begin >= tile_lanes) {
      // Whole tiles in the transposed domain (ActOrderTile); the last one
      // ends at row_end and may overlap the one before, rewriting its rows
      // with the same values.
      // Layers whose zeros and scales of every group fit the tables get
      // them tabulated per tile, interleaved by row, group by group.
      const bool tabled = layer.groups * tile_lanes <= kGptqMaxTableEntries;
      const auto exponent = fmt::kF32ExpMask;
      // F16 on SSE4/SSSE3: a tile whose every result fl((q - z) * scale) is
      // ±0 or in F16's normal range (F16InRangeProducts; q - z is exact,
      // |q - z| <= 2^bits for q < 2^bits and z <= 2^bits) takes the integer
      // rounding of ToF16LowerInRange instead of the general software one.
      constexpr bool kInRangeTiles = kOut == DequantOut::kF16 && kF16InRangeStore;
      constexpr float kMaxAbsDiff = static_cast<float>(1u << kBits);
      for (size_t j = row_begin; j < row_end; j += tile_lanes) {
        const size_t j0 = std::min(j, row_end - tile_lanes);
        bool finite = true;
        bool in_range = kInRangeTiles;
        for (size_t g = 0; g < layer.groups; ++g) {
          for (size_t t = 0; t < tile_lanes; ++t) {
            const uint32_t scale_bits = gptq::ScaleBits(layer, g, j0 + t);
            finite = finite && (scale_bits & exponent) != exponent;
            if constexpr (kInRangeTiles) {
              float scale;
              std::memcpy(&scale, &scale_bits, 4);
              in_range = in_range && F16InRangeProducts(scale, kMaxAbsDiff);
            }
            if (tabled) {
              zeros[g * tile_lanes + t] = ZeroOf(layer, g, j0 + t);
              std::memcpy(&scales[g * tile_lanes + t], &scale_bits, 4);
            }
          }
        }
        TOut* tile_out = out + (j0 - row_begin) * layer.k;
        const auto tile = [&](auto may_be_nan, auto tables, auto in_range_f16) {
          ActOrderTile<kBits, kOut, decltype(may_be_nan)::value, decltype(tables)::value,
                       decltype(in_range_f16)::value>(layer, j0, zeros, scales, tile_out);
        };
        using Yes = std::true_type;
        using No = std::false_type;
        if constexpr (kInRangeTiles) {
          if (in_range) {  // (finite too)
            tabled ? tile(No(), Yes(), Yes()) : tile(No(), No(), Yes());
            continue;
          }
        }
        if (tabled) {
          finite ? tile(No(), Yes(), No()) : tile(Yes(), Yes(), No());
        } else {
          finite ? tile(No(), No(), No()) : tile(Yes(), No(), No());
        }
      }
      return;
    }
    // Fewer rows than a tile (or vectors wider than kTileLanes): row by
    // row, each row's results of every group tabulated when they fit, else
    // its zeros and scales when those do.
    const bool all_results = (layer.groups << kBits) <= 2 * kGptqMaxTableEntries;
    const bool tabled = layer.groups <= kGptqMaxTableEntries;
    const hn::Rebind<float, decltype(du)> df;
    const size_t levels = size_t{1} << kBits;
    for (size_t j = row_begin; j < row_end; ++j) {
      RowTables row;
      if (all_results) {
        for (size_t g = 0; g < layer.groups; ++g) {
          const auto zero = hn::Set(df, ZeroOf(layer, g, j));
          const auto scale = hn::Set(df, ScaleOf(layer, g, j));
          // Whole vectors: lanes past 2^bits spill into the next group's
          // slots (rewritten next) or the table's padding.
          for (size_t base = 0; base < levels; base += lanes) {
            hn::StoreU(GroupLutLow<kOut>(df, zero, scale, static_cast<int32_t>(base)), du,
                       table.results + (g << kBits) + base);
          }
        }
        row.results = table.results;
      } else if (tabled) {
        for (size_t g = 0; g < layer.groups; ++g) {
          zeros[g] = ZeroOf(layer, g, j);
          scales[g] = ScaleOf(layer, g, j);
        }
        row.zeros = zeros;
        row.scales = scales;
      }
      for (size_t i0 = 0; i0 < layer.k; i0 += kOutInChunk) {
        copy_column(j, i0, streams);
        run_chunk(j, streams, i0, row);
      }
    }
    return;
  }
  // Tiles of `lanes` neighbouring rows, chunk by chunk: a tile's streams
  // come from whole-vector loads of the qweight rows, transposed in
  // registers (TransposeTileStreams); rows left over take strided copies.
  // The tiles of a block of rows take each chunk in turn, so a chunk uses
  // more of the lines it reads (a narrower tile running down the layer
  // alone leaves the rest to be read again). Long layers (at least
  // kOutInLongWordRows word rows, each N * 4 bytes from the next) take
  // blocks of up to 256 rows: 1.1-1.5x faster in remember-sized calls at
  // real shapes (docs/performance/safetensors-schemes.md, "GPTQ [out, in]
  // in row blocks"). Shorter layers, where 256-row blocks were up to 8 %
  // slower with AVX2 (K = 4096, 4 bits), keep what the bench measured:
  // 32-row blocks for 8-bit codes (but F32 on AVX3, whose cache-resident
  // rows were 2 % slower) and 4-bit on 128-bit vectors; elsewhere each
  // tile runs down the layer alone.
  const auto tile_chunk = [&](size_t j0, size_t j1, size_t i0) {
    if (j1 - j0 == lanes && lanes <= kTileLanes) {
      const size_t n_words = std::min(kOutInChunk, layer.k - i0) * kBits / 32;
      TransposeTileStreams(du, layer.qweight + (i0 * kBits / 32) * stride + 4 * j0, stride,
                           n_words, streams, kStreamWords);
      for (size_t t = 0; t < lanes; ++t) {
        std::memset(streams + t * kStreamWords + n_words, 0, 4 * kStreamPadWords);
        run_chunk(j0 + t, streams + t * kStreamWords, i0);
      }
      return;
    }
    for (size_t j = j0; j < j1; ++j) {
      copy_column(j, i0, streams);
      run_chunk(j, streams, i0);
    }
  };
  constexpr bool kBlocks = (kBits == 8 && (kOut != DequantOut::kF32 || HWY_MAX_BYTES <= 32)) ||
                           (kBits == 4 && HWY_MAX_BYTES == 16);
  const bool long_layer = layer.k * kBits / 32 >= kOutInLongWordRows;
  const size_t block_rows = long_layer ? std::max(kOutInLongBlockRows, lanes)
                            : kBlocks  ? std::max(kOutInBlockRows, lanes)
                                       : lanes;
  // kOutInPackedBands: chunk i0 of columns [b0, b1) in bands of whole
  // tiles; the band's word rows are copied into `packed` (pitch: the
  // band's bytes) and its tiles transposed from there. Columns past the
  // last whole tile take tile_chunk.
  constexpr size_t kChunkWords = kOutInChunk * kBits / 32;
  constexpr size_t kBandCols = kOutInPackBytes / (4 * kChunkWords) / kTileLanes * kTileLanes;
  HWY_ALIGN uint8_t packed[kOutInPackedBands ? kOutInPackBytes : 1];
  const auto packed_chunk = [&](size_t b0, size_t b1, size_t i0) {
    const size_t n_words = std::min(kOutInChunk, layer.k - i0) * kBits / 32;
    const uint8_t* words = layer.qweight + (i0 * kBits / 32) * stride;
    for (size_t c0 = b0; c0 < b1; c0 += kBandCols) {
      const size_t c1 = std::min(c0 + kBandCols, b1);
      const size_t whole = (c1 - c0) / lanes * lanes;
      const size_t pitch = 4 * whole;
      for (size_t w = 0; w < n_words; ++w) {
        std::memcpy(packed + w * pitch, words + w * stride + 4 * c0, pitch);
      }
      for (size_t j0 = c0; j0 < c0 + whole; j0 += lanes) {
        TransposeTileStreams(du, packed + 4 * (j0 - c0), pitch, n_words, streams, kStreamWords);
        for (size_t t = 0; t < lanes; ++t) {
          std::memset(streams + t * kStreamWords + n_words, 0, 4 * kStreamPadWords);
          run_chunk(j0 + t, streams + t * kStreamWords, i0);
        }
      }
      if (whole < c1 - c0) tile_chunk(c0 + whole, c1, i0);
    }
  };
  const bool pack = kOutInPackedBands && long_layer && lanes <= kTileLanes;
  for (size_t b0 = row_begin; b0 < row_end; b0 += block_rows) {
    const size_t b1 = std::min(b0 + block_rows, row_end);
    for (size_t i0 = 0; i0 < layer.k; i0 += kOutInChunk) {
      if (pack) {
        packed_chunk(b0, b1, i0);
        continue;
      }
      for (size_t j0 = b0; j0 < b1; j0 += lanes) tile_chunk(j0, std::min(j0 + lanes, b1), i0);
    }
  }
}

#endif  // HWY_TARGET != HWY_SCALAR

}  // namespace HWY_NAMESPACE
}  // namespace amn
HWY_AFTER_NAMESPACE();

#endif  // AMN_KERNELS_GPTQ_OUT_IN_INL_H_
