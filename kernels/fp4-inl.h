// Per-target NVFP4 and gpt-oss MXFP4 dequantization (amn/fp4_dequant.h;
// the transposed MXFP4 layout is in mxfp4_transposed-inl.h), Highway 1.0.3.
// Layouts, formulas and the NaN rule are those of kernels/ref/fp4_ref.h;
// every target writes its bytes. The SCALAR target (one-lane vectors, no
// 16-byte table lookup) runs that reference.
//
// A chunk is 2N elements, N = Lanes(ScalableTag<float>): their E2M1 codes
// sit in the 2N u16 lanes of one vector, become BF16 bits (exact) by two
// byte-table lookups, then the A/B F32 vectors, the one F32 multiply, the NaN
// choice and the stores of kernels/fp8_dequant-inl.h (WidenA/WidenB,
// StoreOut, ApplyNanRule, ProductNan), which this family reuses.
//
// Packed layouts (NVFP4; MXFP4 without the transpose) are one flat run of
// groups: codes, scales and outputs of [rows][groups] are all row-major with
// the group innermost, so rows need no special handling. The group scales
// are computed per tile of 64 groups into a stack array (NVFP4: the E4M3
// codes decoded and divided by the global scale, vectorised), and classified
// once per tile (Fp4TileRange): a tile of finite scales skips the per-chunk
// NaN test.
//
// Transposed MXFP4 (gpt-oss) is in kernels/mxfp4_transposed-inl.h.
#if defined(AMN_KERNELS_FP4_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef AMN_KERNELS_FP4_INL_H_
#undef AMN_KERNELS_FP4_INL_H_
#else
#define AMN_KERNELS_FP4_INL_H_
#endif

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "hwy/highway.h"
#include "kernels/kernel_args.h"
#include "kernels/float_formats.h"
#include "kernels/fp8_convert-inl.h"
#include "kernels/fp8_dequant-inl.h"
#include "kernels/int4_byte_table-inl.h"
#include "kernels/ref/fp4_ref.h"
#include "kernels/ref/fp8_dequant_ref.h"

HWY_BEFORE_NAMESPACE();
namespace amn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR

// Groups per tile of precomputed scales.
inline constexpr size_t kFp4TileGroups = 64;
inline constexpr size_t kFp4MaxLanes = HWY_MAX_BYTES / sizeof(float);

// Per E2M1 code (0, 0.5, 1, 1.5, 2, 3, 4, 6, then the negatives, -0.0 at
// 8): F16 high byte, BF16 low and high byte, and 0xFF where the
// value is not +-0 (codes 0 and 8).
HWY_ALIGN inline constexpr uint8_t kE2m1F16High[16] = {0x00, 0x38, 0x3C, 0x3E, 0x40, 0x42,
                                                       0x44, 0x46, 0x80, 0xB8, 0xBC, 0xBE,
                                                       0xC0, 0xC2, 0xC4, 0xC6};
HWY_ALIGN inline constexpr uint8_t kE2m1Bf16Low[16] = {0x00, 0x00, 0x80, 0xC0, 0x00, 0x40,
                                                       0x80, 0xC0, 0x00, 0x00, 0x80, 0xC0,
                                                       0x00, 0x40, 0x80, 0xC0};
HWY_ALIGN inline constexpr uint8_t kE2m1Bf16High[16] = {0x00, 0x3F, 0x3F, 0x3F, 0x40, 0x40,
                                                        0x40, 0x40, 0x80, 0xBF, 0xBF, 0xBF,
                                                        0xC0, 0xC0, 0xC0, 0xC0};
HWY_ALIGN inline constexpr uint8_t kE2m1Nonzero[16] = {0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
                                                       0xFF, 0xFF, 0x00, 0xFF, 0xFF, 0xFF,
                                                       0xFF, 0xFF, 0xFF, 0xFF};

// E2M1 codes (u16 lanes, 0..15) -> BF16 bits of their values (exact). The
// low and high byte of each value's BF16 pattern come from one 16-byte table
// each; a lane's upper byte is 0, which indexes entry 0 (+0.0: both bytes 0),
// so the two lookups combine with one shift and Or.
template <class D16>
HWY_INLINE hn::Vec<D16> E2m1ToBf16(D16 d16, hn::Vec<D16> codes) {
  const hn::Repartition<uint8_t, D16> d8;
  const auto index = hn::BitCast(d8, codes);
  const auto low =
      hn::BitCast(d16, hn::TableLookupBytes(hn::LoadDup128(d8, kE2m1Bf16Low), index));
  const auto high =
      hn::BitCast(d16, hn::TableLookupBytes(hn::LoadDup128(d8, kE2m1Bf16High), index));
  return hn::Or(low, hn::ShiftLeft<8>(high));
}

// N packed bytes -> the 2N codes in element order: byte k's low nibble is
// element 2k (u16 lane 2k), its high nibble element 2k+1.
template <class DF>
HWY_INLINE hn::Vec<hn::Repartition<uint16_t, DF>> PackedCodes(DF /*df*/, const uint8_t* HWY_RESTRICT in) {
  const hn::RebindToUnsigned<DF> du;
  const hn::Rebind<uint8_t, decltype(du)> d8;
  const auto bytes = hn::PromoteTo(du, hn::LoadU(d8, in));
  const auto pair = hn::Or(hn::And(bytes, hn::Set(du, 0x0Fu)),
                           hn::ShiftLeft<12>(hn::And(bytes, hn::Set(du, 0xF0u))));
  return hn::BitCast(hn::Repartition<uint16_t, DF>(), pair);
}

// 2N bytes -> their low (shift 0) or high (shift 4) nibbles, one per u16
// lane.
template <class DF>
HWY_INLINE hn::Vec<hn::Repartition<uint16_t, DF>> NibbleCodes(DF /*df*/,
                                                              const uint8_t* HWY_RESTRICT in,
                                                              int shift) {
  const hn::Repartition<uint16_t, DF> d16;
  const hn::Rebind<uint8_t, decltype(d16)> d8;
  const auto bytes = hn::PromoteTo(d16, hn::LoadU(d8, in));
  return hn::And(hn::ShiftRightSame(bytes, shift), hn::Set(d16, 0x0Fu));
}

// What a tile's scales prove about every product of an E2M1 value (|v| <=
// 6) and one of them, checked once per tile (E2m1GroupRun):
// * kAny: nothing (a NaN or infinite scale): each chunk tests for NaN;
// * kFinite: all scales finite, so no product is NaN (finite * finite never
//   is): no per-chunk test, NaN-free roundings;
// * kF16Normal: F16 output on targets with kF16InRangeStore, every scale
//   0 or with 2^-13 <= |q| and fl(6 |q|) < 2^16, so every product is ±0 or
//   in [2^-14, 2^16) (fl is monotone: fl(0.5 |q|) = |q| / 2 bounds the
//   nonzero ones below, fl(6 |q|) above), the range of
//   F32BitsToF16SignExtendedInRange.
enum class Fp4TileRange { kAny, kFinite, kF16Normal };

// Stores the F32 products A and B of a chunk whose tile is kFinite or
// kF16Normal (StoreOut<kOut, false> but for the two F16 cases below).
template <DequantOut kOut, Fp4TileRange kRange, class DU, typename TOut>
HWY_INLINE void StoreE2m1Products(DU du, hn::Vec<DU> a, hn::Vec<DU> b, TOut* HWY_RESTRICT out) {
#if HWY_TARGET == HWY_SSE4 || HWY_TARGET == HWY_SSSE3
  if constexpr (kOut == DequantOut::kF16 && kRange == Fp4TileRange::kF16Normal) {
    // Even elements from A's sign-extended F16 (its upper half dropped by
    // the OddEven), odd ones from B's.
    const hn::Repartition<uint16_t, DU> d16;
    const auto odd = hn::ShiftLeft<16>(hn::BitCast(du, F32BitsToF16SignExtendedInRange(du, b)));
    hn::StoreU(hn::OddEven(hn::BitCast(d16, odd),
                           hn::BitCast(d16, F32BitsToF16SignExtendedInRange(du, a))),
               d16, out);
    return;
  }
#endif
#if AMN_F16_HARDWARE_DEMOTE
  const hn::Rebind<uint16_t, DU> dh;  // N u16 lanes
  if constexpr (kOut == DequantOut::kF16 && hn::MaxLanes(dh) == 8) {
    // AVX2: vcvtps2ph of the even and the odd elements, two word unpacks
    // back to element order (one 128-bit block each) and two stores, in
    // place of StoreOut's two widenings, shift and blend.
    const auto even = F32BitsToF16Narrow(du, a);
    const auto odd = F32BitsToF16Narrow(du, b);
    hn::StoreU(hn::InterleaveLower(dh, even, odd), dh, out);
    hn::StoreU(hn::InterleaveUpper(dh, even, odd), dh, out + 8);
    return;
  }
#endif
  StoreOut<kOut, false>(du, a, b, out);
}

// One chunk: 2N codes times (scale_a, scale_b), lane for lane in the A/B
// layout of fp8_dequant-inl.h (LaneOf), to 2N outputs. Real weights never
// make a NaN product, so under kAny the NaN rule runs only for chunks that
// have one; a kFinite or kF16Normal tile (Fp4TileRange) has none.
template <DequantOut kOut, Fp4TileRange kRange = Fp4TileRange::kAny, class DF, class V16,
          typename TOut>
HWY_INLINE void E2m1Chunk(DF df, V16 codes, hn::Vec<DF> scale_a, hn::Vec<DF> scale_b,
                          TOut* HWY_RESTRICT out) {
  const hn::RebindToUnsigned<DF> du;
  const hn::Repartition<uint16_t, DF> d16;
  const auto bf16 = E2m1ToBf16(d16, codes);
  const auto a = WidenA<kOut>(df, bf16);
  const auto b = WidenB<kOut>(df, bf16);
  const auto product_a = hn::Mul(a, scale_a);
  const auto product_b = hn::Mul(b, scale_b);
  if constexpr (kRange != Fp4TileRange::kAny) {
    StoreE2m1Products<kOut, kRange>(du, hn::BitCast(du, product_a), hn::BitCast(du, product_b),
                                    out);
    return;
  }
  if (HWY_LIKELY(hn::AllFalse(df, hn::Or(hn::IsNaN(product_a), hn::IsNaN(product_b))))) {
    StoreOut<kOut, false>(du, hn::BitCast(du, product_a), hn::BitCast(du, product_b), out);
  } else {
    StoreOut<kOut, true>(du, hn::BitCast(du, ApplyNanRule(a, product_a, ProductNan(df, scale_a))),
                         hn::BitCast(du, ApplyNanRule(b, product_b, ProductNan(df, scale_b))),
                         out);
  }
}

#if AMN_F16_HARDWARE_DEMOTE
// F16 output with F16C, for chunks whose scales are all finite (E8M0 below
// 255): every E2M1 value is an F16 whose low byte is zero, so one byte-table
// lookup on the code held in the upper byte of a u16 lane (the lower byte,
// zero, looks up entry 0, +0.0) gives its F16 bits; vcvtph2ps widens them
// exactly, one Mul per vector takes the per-lane scales (element order:
// lane j of A is element j, of B element N + j), and StoreF16Pair rounds and
// stores in order. A finite scale times a finite value is never NaN, so the
// NaN rule has nothing to do. `shift` 0 takes the low nibbles of the 2N
// bytes at `in`, 4 the high ones.
template <class DF>
HWY_INLINE void E2m1F16DirectChunk(DF df, const uint8_t* HWY_RESTRICT in, int shift,
                                   hn::Vec<DF> scale_a, hn::Vec<DF> scale_b,
                                   uint16_t* HWY_RESTRICT out) {
  const hn::RebindToUnsigned<DF> du;
  const hn::Repartition<uint16_t, DF> d16;
  const hn::Repartition<uint8_t, DF> d8;
  const hn::Rebind<uint8_t, decltype(d16)> d8_half;
  const auto bytes = hn::PromoteTo(d16, hn::LoadU(d8_half, in));
  const auto index = hn::And(hn::ShiftLeftSame(bytes, 8 - shift), hn::Set(d16, uint16_t{0x0F00}));
  const auto bits = hn::BitCast(
      d16, hn::TableLookupBytes(hn::LoadDup128(d8, kE2m1F16High), hn::BitCast(d8, index)));
  const auto a = WidenF16Lower(df, bits);
  const auto b = WidenF16Upper(df, bits);
  StoreF16Pair(du, hn::BitCast(du, hn::Mul(a, scale_a)), hn::BitCast(du, hn::Mul(b, scale_b)),
               out);
}
#endif  // AMN_F16_HARDWARE_DEMOTE

// Where the lanes of a chunk find their group scale in a flat run with
// kGroup-element groups. A chunk no wider than a group lies inside one
// group (chunks start at multiples of 2N, both powers of two): a broadcast.
// A wider chunk starts on a group boundary, and lane j of A (B) holds
// element LaneOf-inverse(j), i.e. group index_a[j] (index_b[j]) past the
// chunk's first group: one table lookup each.
template <DequantOut kOut, size_t kGroup, class DF>
class GroupScaleLanes {
 public:
  explicit GroupScaleLanes(DF df) {
    const size_t n = hn::Lanes(df);
    wide_ = 2 * n > kGroup;
    for (size_t j = 0; j < n; ++j) {
      index_a_[j] = static_cast<int32_t>((kOut == DequantOut::kF32 ? j : 2 * j) / kGroup);
      index_b_[j] = static_cast<int32_t>((kOut == DequantOut::kF32 ? n + j : 2 * j + 1) / kGroup);
    }
  }
  // `q` holds the scales of the groups from the one holding element i on,
  // with at least N readable entries when chunks are wider than a group.
  HWY_INLINE hn::Vec<DF> A(DF df, const float* q) const {
    if (!wide_) return hn::Set(df, q[0]);
    return hn::TableLookupLanes(hn::LoadU(df, q), hn::SetTableIndices(df, index_a_));
  }
  HWY_INLINE hn::Vec<DF> B(DF df, const float* q) const {
    if (!wide_) return hn::Set(df, q[0]);
    return hn::TableLookupLanes(hn::LoadU(df, q), hn::SetTableIndices(df, index_b_));
  }

 private:
  bool wide_;
  HWY_ALIGN int32_t index_a_[kFp4MaxLanes];
  HWY_ALIGN int32_t index_b_[kFp4MaxLanes];
};

// Stores N quotients scale / global with the reference's NaN rule: a NaN
// scale (a decoded code, already quiet) wins, else global_nan.
// Returns the quotients (NaN where a stored one is NaN).
template <class DF>
HWY_INLINE hn::Vec<DF> StoreQuotients(DF df, hn::Vec<DF> scale, hn::Vec<DF> global,
                                      hn::Vec<DF> global_nan, float* HWY_RESTRICT q) {
  const auto quotient = hn::Div(scale, global);
  const auto nan = hn::IsNaN(quotient);
  if (HWY_LIKELY(hn::AllFalse(df, nan))) {
    hn::StoreU(quotient, df, q);
  } else {
    hn::StoreU(hn::IfThenElse(nan, hn::IfThenElse(hn::IsNaN(scale), scale, global_nan), quotient),
               df, q);
  }
  return quotient;
}

// Lanes whose scale q keeps every product with an E2M1 value F16-normal
// or zero (Fp4TileRange::kF16Normal); false for NaN and Inf.
template <class DF>
HWY_INLINE hn::Mask<DF> F16NormalScales(DF df, hn::Vec<DF> q) {
  const auto abs = hn::Abs(q);
  const auto in_range = hn::And(hn::Ge(abs, hn::Set(df, 0x1.0p-13f)),
                                hn::Lt(hn::Mul(abs, hn::Set(df, 6.0f)), hn::Set(df, 65536.0f)));
  return hn::Or(hn::Eq(abs, hn::Zero(df)), in_range);
}

// Fills q[0, n_groups) with NVFP4 group scales f32(e4m3) / global_scale
// (the reference's NaN rule), 2N at a time; q must hold n_groups rounded up
// to 2N entries. The last partial chunk decodes zero-padded codes.
// `nan_bits` is the NaN of a NaN quotient whose scale code is not NaN.
// (Scalars, not vectors: SVE vectors cannot be captured by a lambda.)
// Returns the tile's Fp4TileRange (kF16Normal only where kOut uses it);
// the zero-padded codes count too, which costs at most speed.
template <DequantOut kOut, class DF>
HWY_INLINE Fp4TileRange Nvfp4TileScales(DF df, const uint8_t* HWY_RESTRICT codes, size_t n_groups,
                                        float global_scale, uint32_t nan_bits,
                                        float* HWY_RESTRICT q) {
  constexpr bool kF16Range = kOut == DequantOut::kF16 && kF16InRangeStore;
  const hn::RebindToUnsigned<DF> du;
  const hn::Repartition<uint16_t, DF> d16;
  const auto global = hn::Set(df, global_scale);
  const auto global_nan = hn::BitCast(df, hn::Set(du, nan_bits));
  const hn::Rebind<uint8_t, decltype(d16)> d8;
  const size_t n = hn::Lanes(df);
  HWY_ALIGN uint8_t code_tail[2 * kFp4MaxLanes] = {};
  auto finite = hn::FirstN(df, n);
  auto f16_normal = finite;
  for (size_t k = 0; k < n_groups; k += 2 * n) {
    const uint8_t* in = codes + k;
    if (k + 2 * n > n_groups) {
      std::memcpy(code_tail, codes + k, n_groups - k);
      in = code_tail;
    }
    const auto bf16 = E4m3ToBf16Op()(d16, hn::PromoteTo(d16, hn::LoadU(d8, in)));
    const auto qa =
        StoreQuotients(df, WidenA<DequantOut::kF32>(df, bf16), global, global_nan, q + k);
    const auto qb =
        StoreQuotients(df, WidenB<DequantOut::kF32>(df, bf16), global, global_nan, q + k + n);
    finite = hn::And(finite, hn::And(hn::IsFinite(qa), hn::IsFinite(qb)));
    if constexpr (kF16Range) {
      f16_normal = hn::And(f16_normal, hn::And(F16NormalScales(df, qa), F16NormalScales(df, qb)));
    }
  }
  if (kF16Range && hn::AllTrue(df, f16_normal)) return Fp4TileRange::kF16Normal;
  return hn::AllTrue(df, finite) ? Fp4TileRange::kFinite : Fp4TileRange::kAny;
}

// Fills q[0, n_groups) with MXFP4 scales 2^(e - 127) (ref::E8m0ToF32Bits);
// kFinite unless a code is 255 (+Inf).
HWY_INLINE Fp4TileRange Mxfp4TileScales(const uint8_t* HWY_RESTRICT codes, size_t n_groups,
                                        float* HWY_RESTRICT q) {
  bool any_inf = false;
  for (size_t k = 0; k < n_groups; ++k) {
    const uint32_t bits = ref::E8m0ToF32Bits(codes[k]);
    std::memcpy(q + k, &bits, sizeof(bits));
    any_inf |= codes[k] == 0xFF;
  }
  return any_inf ? Fp4TileRange::kAny : Fp4TileRange::kFinite;
}

// The chunks of one tile of a flat run: `elems` outputs from the codes at
// `codes`, with group scales q (see E2m1GroupRun). The last partial chunk
// goes through zero-padded copies, so nothing outside the spans is touched.
template <DequantOut kOut, Fp4TileRange kRange, size_t kGroup, class DF, class Lanes,
          typename TOut>
HWY_INLINE void E2m1TileChunks(DF df, const Lanes& lanes,
                               const uint8_t* HWY_RESTRICT codes, const float* HWY_RESTRICT q,
                               size_t elems, TOut* HWY_RESTRICT y) {
  const size_t chunk = 2 * hn::Lanes(df);
  size_t i = 0;
  for (; i + chunk <= elems; i += chunk) {
    const float* qi = q + i / kGroup;
    E2m1Chunk<kOut, kRange>(df, PackedCodes(df, codes + i / 2), lanes.A(df, qi), lanes.B(df, qi),
                            y + i);
  }
  if (i < elems) {
    HWY_ALIGN uint8_t code_tail[kFp4MaxLanes] = {};
    HWY_ALIGN TOut out_tail[2 * kFp4MaxLanes];
    std::memcpy(code_tail, codes + i / 2, (elems - i) / 2);
    const float* qi = q + i / kGroup;
    E2m1Chunk<kOut, kRange>(df, PackedCodes(df, code_tail), lanes.A(df, qi), lanes.B(df, qi),
                            out_tail);
    std::memcpy(y + i, out_tail, (elems - i) * sizeof(TOut));
  }
}

// A flat run of n_groups groups of kGroup elements (kGroup / 2 packed bytes
// each) with one scale byte per group, to n_groups * kGroup outputs.
// `fill(scale_codes, count, q)` computes the scales of a tile and returns
// its Fp4TileRange, which picks the tile's chunk loop.
template <DequantOut kOut, size_t kGroup, typename TOut, class FillScales>
HWY_INLINE void E2m1GroupRun(const uint8_t* HWY_RESTRICT packed,
                             const uint8_t* HWY_RESTRICT scale_codes, size_t n_groups,
                             TOut* HWY_RESTRICT out, const FillScales& fill) {
  const hn::ScalableTag<float> df;
  const GroupScaleLanes<kOut, kGroup, decltype(df)> lanes(df);
  // Entries past a tile's groups are read (for lanes that are discarded)
  // but must be initialised.
  HWY_ALIGN float q[kFp4TileGroups + 2 * kFp4MaxLanes] = {};
  for (size_t g0 = 0; g0 < n_groups; g0 += kFp4TileGroups) {
    const size_t tile_groups = std::min(kFp4TileGroups, n_groups - g0);
    const Fp4TileRange range = fill(scale_codes + g0, tile_groups, q);
    const size_t elems = tile_groups * kGroup;
    const uint8_t* codes = packed + g0 * (kGroup / 2);
    TOut* y = out + g0 * kGroup;
    if constexpr (kOut == DequantOut::kF16 && kF16InRangeStore) {
      if (range == Fp4TileRange::kF16Normal) {
        E2m1TileChunks<kOut, Fp4TileRange::kF16Normal, kGroup>(df, lanes, codes, q, elems, y);
        continue;
      }
    }
    if (HWY_LIKELY(range != Fp4TileRange::kAny)) {
      E2m1TileChunks<kOut, Fp4TileRange::kFinite, kGroup>(df, lanes, codes, q, elems, y);
    } else {
      E2m1TileChunks<kOut, Fp4TileRange::kAny, kGroup>(df, lanes, codes, q, elems, y);
    }
  }
}

#if AMN_BYTE_TABLES
// NVFP4 16-bit outputs through per-call scale-byte rows (x86 and NEON, where
// the 16-byte lookups are pshufb or TBL). With the global scale fixed for
// the call, an output depends on its group's E4M3 byte and its code alone,
// so the row of a byte (ScaleByteRows, int4_byte_table-inl.h) holds the 16
// outputs that E2m1Chunk, the general path with the NaN rule, gives codes
// 0..15 under that byte's quotient: the same bits by construction. A group
// is then its 8 code bytes split into 16 nibbles in element order and two
// lookups. Taken for calls of at least kNvfp4RowMinGroups groups, so that
// the rows' builds (one per distinct byte, each about one group's work on
// the general path) are spread over many groups, on the targets where it
// measured faster (docs/performance/gguf-newer-types.md, "NVFP4 16-bit
// outputs through scale-byte tables"): SSSE3, SSE4 and AVX2 (AVX-512
// measured no clear gain); NEON by instruction count (docs/performance/arm.md).
inline constexpr size_t kNvfp4RowMinGroups = 256;

// The 16 codes of each of two groups (16 packed bytes at `in`) in element
// order: byte k's low nibble is element 2k, its high nibble element 2k + 1.
HWY_INLINE void Nvfp4GroupCodes(const uint8_t* HWY_RESTRICT in,
                                hn::Vec<hn::Full128<uint8_t>>* HWY_RESTRICT first,
                                hn::Vec<hn::Full128<uint8_t>>* HWY_RESTRICT second) {
  const hn::Full128<uint8_t> d8;
  const hn::Full128<uint16_t> d16;
  const auto bytes = hn::LoadU(d8, in);
  const auto high = hn::BitCast(d8, hn::ShiftRight<4>(hn::BitCast(d16, bytes)));
  const auto mask = hn::Set(d8, uint8_t{0x0F});
  *first = hn::And(hn::InterleaveLower(d8, bytes, high), mask);
  *second = hn::And(hn::InterleaveUpper(d8, bytes, high), mask);
}

template <DequantOut kOut>
HWY_INLINE void Nvfp4ByRows(const uint8_t* HWY_RESTRICT packed,
                            const uint8_t* HWY_RESTRICT scales, float global_scale,
                            uint32_t nan_bits, size_t n_groups, uint16_t* HWY_RESTRICT out) {
  const hn::ScalableTag<float> df;
  const size_t chunk = 2 * hn::Lanes(df);
  ScaleByteRows rows;
  const auto build = [&](uint8_t s, uint16_t* HWY_RESTRICT entries) {
    // Codes 0..15 (then repeated) as packed bytes, the byte's quotient by
    // the vector path, and the general chunk with the NaN rule.
    alignas(16) static constexpr uint8_t kCodes[16] = {0x10, 0x32, 0x54, 0x76, 0x98, 0xBA,
                                                       0xDC, 0xFE, 0x10, 0x32, 0x54, 0x76,
                                                       0x98, 0xBA, 0xDC, 0xFE};
    HWY_ALIGN float q[2 * kFp4MaxLanes];
    (void)Nvfp4TileScales<kOut>(df, &s, 1, global_scale, nan_bits, q);
    const auto scale = hn::Set(df, q[0]);
    for (size_t i = 0; i < ref::kNvfp4GroupElems; i += chunk) {
      E2m1Chunk<kOut>(df, PackedCodes(df, kCodes + i / 2), scale, scale, entries + i);
    }
  };
  size_t g = 0;
  for (; g + 2 <= n_groups; g += 2) {
    hn::Vec<hn::Full128<uint8_t>> first, second;
    Nvfp4GroupCodes(packed + g * 8, &first, &second);
    StoreScaleByteRow(rows.Row(scales[g], build), first, out + g * 16);
    StoreScaleByteRow(rows.Row(scales[g + 1], build), second, out + g * 16 + 16);
  }
  if (g < n_groups) {
    HWY_ALIGN uint8_t last[16] = {};
    std::memcpy(last, packed + g * 8, 8);
    hn::Vec<hn::Full128<uint8_t>> first, second;
    Nvfp4GroupCodes(last, &first, &second);
    StoreScaleByteRow(rows.Row(scales[g], build), first, out + g * 16);
  }
}
#endif  // AMN_BYTE_TABLES

template <DequantOut kOut, typename TOut>
HWY_INLINE void Nvfp4Run(const uint8_t* packed, const uint8_t* scales, float global_scale,
                         size_t n_groups, TOut* out) {
  const hn::ScalableTag<float> df;
  uint32_t global_bits;
  std::memcpy(&global_bits, &global_scale, sizeof(global_bits));
  const bool global_is_nan = (global_bits & fmt::kF32AbsMask) > fmt::kF32ExpMask;
  const uint32_t nan_bits =
      global_is_nan ? global_bits | fmt::kF32QuietBit : ref::kF32InvalidProductNan;
#if AMN_BYTE_TABLES
  if constexpr (kOut != DequantOut::kF32 && kNvfp4UsesScaleByteRows) {
    if (n_groups >= kNvfp4RowMinGroups) {
      Nvfp4ByRows<kOut>(packed, scales, global_scale, nan_bits, n_groups, out);
      return;
    }
  }
#endif
  E2m1GroupRun<kOut, ref::kNvfp4GroupElems>(
      packed, scales, n_groups, out,
      [df, global_scale, nan_bits](const uint8_t* codes, size_t count, float* q) {
        return Nvfp4TileScales<kOut>(df, codes, count, global_scale, nan_bits, q);
      });
}

template <DequantOut kOut, typename TOut>
HWY_INLINE void Mxfp4Run(const uint8_t* blocks, const uint8_t* scales, size_t n_groups,
                         TOut* out) {
  E2m1GroupRun<kOut, ref::kMxfp4GroupElems>(blocks, scales, n_groups, out, Mxfp4TileScales);
}

#endif  // HWY_TARGET != HWY_SCALAR

// Entry points (layouts and preconditions: kernels/ref/fp4_ref.h). SCALAR
// runs the reference. NVFP4 and untransposed MXFP4 take whole rows, which
// form one flat run of groups.
template <DequantOut kOut, typename TOut>
HWY_INLINE void DequantNvfp4Kernel(void (*reference)(const uint8_t*, const uint8_t*, float, size_t,
                                                     size_t, TOut*),
                                   const uint8_t* packed, const uint8_t* scales,
                                   float global_scale, size_t rows, size_t cols, TOut* out) {
#if HWY_TARGET == HWY_SCALAR
  reference(packed, scales, global_scale, rows, cols, out);
#else
  (void)reference;
  Nvfp4Run<kOut>(packed, scales, global_scale, rows * (cols / ref::kNvfp4GroupElems), out);
#endif
}

template <DequantOut kOut, typename TOut>
HWY_INLINE void DequantMxfp4Kernel(void (*reference)(const uint8_t*, const uint8_t*, size_t, size_t,
                                                     TOut*),
                                   const uint8_t* blocks, const uint8_t* scales, size_t rows,
                                   size_t groups, TOut* out) {
#if HWY_TARGET == HWY_SCALAR
  reference(blocks, scales, rows, groups, out);
#else
  (void)reference;
  Mxfp4Run<kOut>(blocks, scales, rows * groups, out);
#endif
}

// The Nvfp4 family (kernels/kernel_args.h): rows [begin, end).
HWY_INLINE void DecodeNvfp4(const kernels::Nvfp4Args& a, size_t begin, size_t end,
                            ElemType out_type, void* out) {
  const uint8_t* packed = a.packed + begin * (a.cols / 2);
  const uint8_t* scales = a.scales + begin * (a.cols / ref::kNvfp4GroupElems);
  const size_t rows = end - begin;
  switch (out_type) {
    case ElemType::kF32:
      DequantNvfp4Kernel<DequantOut::kF32>(ref::DequantNvfp4ToF32, packed, scales, a.global_scale,
                                           rows, a.cols, static_cast<float*>(out));
      break;
    case ElemType::kBf16:
      DequantNvfp4Kernel<DequantOut::kBf16>(ref::DequantNvfp4ToBf16, packed, scales,
                                            a.global_scale, rows, a.cols,
                                            static_cast<uint16_t*>(out));
      break;
    case ElemType::kF16:
      DequantNvfp4Kernel<DequantOut::kF16>(ref::DequantNvfp4ToF16, packed, scales, a.global_scale,
                                           rows, a.cols, static_cast<uint16_t*>(out));
      break;
    default:
      break;
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace amn
HWY_AFTER_NAMESPACE();

#endif  // AMN_KERNELS_FP4_INL_H_
