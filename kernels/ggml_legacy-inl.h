// Per-target dequantization of the ggml legacy 32-element block quants
// (Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 Q8_1 IQ4_NL MXFP4) and of the newer one-scale
// types NVFP4 (64), Q1_0 (128), Q2_0 (64) (layouts in kernels/ggml_blocks.h)
// to F32/F16/BF16, bit-exact with kernels/ref/ggml_legacy_ref.cc on every
// target: codes become exact F32 integers, then one Mul (and for Q4_1/Q5_1
// one Add) per element in ggml's order, never fused; narrowing uses the
// integer encoders of kernels/float_convert-inl.h. NaN results follow the
// reference's rule (kernels/ref/ggml_legacy_ref.h); blocks whose d or m is
// Inf/NaN take a chunk variant that makes them canonical (chosen per block).
// On x86 the 4-bit types' 16-bit outputs may instead go through a byte
// table of the block's 16 possible results, Q5_0/Q5_1's through two for
// their 32 (GgmlUsesByteTables).
//
// A block is decoded in chunks of N = Lanes(CappedTag<u32, 16>) elements: N
// is a power of two <= 16 (SVE counts lanes with SV_POW2), so a chunk never
// straddles the low/high nibble halves of a 32-element block (NVFP4's 16-lane
// chunks go through a 16-byte copy) and all loads stay inside the block.
// Only per-block scalars (f16 scales) are read outside vectors; there are no
// per-element branches. Stores are StoreU of exactly N outputs, so any output
// alignment works and nothing past n_blocks * 32 outputs is written.
#if defined(AMN_KERNELS_GGML_LEGACY_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef AMN_KERNELS_GGML_LEGACY_INL_H_
#undef AMN_KERNELS_GGML_LEGACY_INL_H_
#else
#define AMN_KERNELS_GGML_LEGACY_INL_H_
#endif

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "hwy/highway.h"
#include "amn/ggml_type.h"
#include "kernels/kernel_args.h"
#include "kernels/float_convert-inl.h"
#include "kernels/ggml_blocks.h"
#include "kernels/int4_byte_table-inl.h"

HWY_BEFORE_NAMESPACE();
namespace amn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using GgmlDU = hn::CappedTag<uint32_t, 16>;

// Per-block scalars as F32 bit patterns (plain integers: SVE vectors cannot
// be struct members). NaN rule (the reference's): a NaN result is d's NaN
// when d is NaN, else m's when m is NaN, else ggml::kInvalidNan (Inf * 0,
// Inf - Inf), independent of operand order and of the CPU's default NaN.

struct GgmlBlockScales {
  uint32_t d;
  uint32_t m;
  uint32_t d_nan;  // the NaN of a NaN product
  uint32_t m_nan;  // the NaN of a NaN sum whose product is not NaN
  bool special;    // d or m is Inf or NaN: results may be NaN
};

HWY_INLINE GgmlBlockScales GgmlMakeScales(uint32_t d, uint32_t m) {
  const auto finite = [](uint32_t bits) { return (bits & 0x7F800000u) != 0x7F800000u; };
  if (HWY_LIKELY(finite(d) && finite(m))) return {d, m, 0, 0, false};
  const auto is_nan = [](uint32_t bits) { return (bits & 0x7FFFFFFFu) > 0x7F800000u; };
  return {d, m, is_nan(d) ? d : ggml::kInvalidNan, is_nan(m) ? m : ggml::kInvalidNan, true};
}

// The scales of a block whose f16 d is at x and, for kMin, its f16 m at
// x + 2 (Q4_0, Q4_1, Q5_0, Q5_1; Q8_0 measured 0.80-0.97x with it on
// AVX3_DL/AVX3 and keeps F16ScaleBits, docs/performance/gguf-legacy.md, "Q5_0 and
// Q5_1 16-bit outputs through per-block tables"). On AVX3 and AVX3_DL a
// block whose d and m are finite, the usual case, widens both with one
// vcvtph2ps: exact for
// every finite f16, subnormals included, whatever MXCSR's DAZ says
// (float_convert-inl.h, FromF16), so the bits are F16ScaleBits's. That is
// about 5 instructions per scale instead of F16ScaleBits's range test, two
// shifts, an and, an add and an or per scale and GgmlMakeScales's finite test
// on the widened bits (docs/performance/gguf-legacy.md, "Q5_0 and Q5_1 against ggml").
// The finite test is done on the f16 bits instead: an exponent field
// e = h & 0x7C00 is all ones exactly when e + 0x400 reaches bit 15 (for
// kMin in both halves at once: no carry crosses from the low half, whose
// e + 0x400 <= 0x8000). Blocks with an Inf/NaN scale, and the other
// targets, take F16ScaleBits and GgmlMakeScales: on AVX2 this path measured
// 5-10 % slower in every Q5 row (the same docs section).
inline constexpr uint32_t kF16PairExponents = 0x7C007C00u;  // d | m << 16
inline constexpr uint32_t kF16PairExponentUnit = 0x04000400u;
inline constexpr uint32_t kF16PairCarries = 0x80008000u;  // set: Inf/NaN
template <bool kMin>
HWY_INLINE GgmlBlockScales GgmlF16BlockScales(const uint8_t* x) {
#if AMN_F16_HARDWARE_DEMOTE && (HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL)
  const uint32_t dm = kMin ? ggml::LoadLe32(x) : ggml::LoadLe16(x);
  if (HWY_LIKELY((((dm & kF16PairExponents) + kF16PairExponentUnit) & kF16PairCarries) == 0)) {
    const hn::CappedTag<uint32_t, 2> d32;
    const hn::Rebind<hwy::float16_t, decltype(d32)> df16;
    const hn::RebindToFloat<decltype(d32)> df;
    const hn::Repartition<uint32_t, decltype(df16)> dw;  // one u32 lane: d, m as u16
    const auto halves = hn::BitCast(df16, hn::Set(dw, dm));
    const auto wide = hn::BitCast(d32, hn::PromoteTo(df, halves));
    const uint32_t m = kMin ? hn::GetLane(hn::Reverse(d32, wide)) : 0;
    return {hn::GetLane(wide), m, 0, 0, false};
  }
#endif
  return GgmlMakeScales(ggml::F16ScaleBits(ggml::LoadLe16(x)),
                        kMin ? ggml::F16ScaleBits(ggml::LoadLe16(x + 2)) : 0);
}

// Whether every result q * d of a non-special block of a type without a
// min (integer codes |q| <= max_code) is ±0 or has a magnitude in
// [2^-14, 2^16), the range of ToF16LowerInRange: F16InRangeProducts
// (float_convert-inl.h) on d. (Q5_1's q * d + m could be bounded the same
// way when d and m share a sign, but GGUF files store d > 0 > m, where the
// sum cancels towards 0: measured, its test only cost time;
// docs/performance/f16-on-sse4.md.)
HWY_INLINE bool GgmlF16InRange(uint32_t d_bits, float max_code) {
  float d;
  std::memcpy(&d, &d_bits, sizeof(d));
  return F16InRangeProducts(d, max_code);
}

// Nibbles of elements j0 .. j0+N-1 from qs[16] in ggml's order (low nibbles
// are elements 0..15, high nibbles 16..31), as u32 lanes. The bytes are
// zero-extended, so a high nibble is the byte >> 4 with no mask (the branch
// is per chunk, resolved at compile time where the block loop is unrolled).
HWY_INLINE hn::Vec<GgmlDU> GgmlNibbles(GgmlDU du, const uint8_t* qs, size_t j0) {
  const hn::Rebind<uint8_t, GgmlDU> d8;
  const auto bytes = hn::PromoteTo(du, hn::LoadU(d8, qs + (j0 & 15)));
  return j0 < 16 ? hn::And(bytes, hn::Set(du, 15u)) : hn::ShiftRight<4>(bytes);
}

// Bit y of qh, moved to bit 4, for y = j0 .. j0+N-1. A table of single-bit
// masks instead of per-lane shifts (SVE has no vector operator>> in 1.0.3).
HWY_INLINE hn::Vec<GgmlDU> GgmlHighBits(GgmlDU du, uint32_t qh, size_t j0) {
  HWY_ALIGN static constexpr uint32_t kBit[32] = {
      1u << 0,  1u << 1,  1u << 2,  1u << 3,  1u << 4,  1u << 5,  1u << 6,  1u << 7,
      1u << 8,  1u << 9,  1u << 10, 1u << 11, 1u << 12, 1u << 13, 1u << 14, 1u << 15,
      1u << 16, 1u << 17, 1u << 18, 1u << 19, 1u << 20, 1u << 21, 1u << 22, 1u << 23,
      1u << 24, 1u << 25, 1u << 26, 1u << 27, 1u << 28, 1u << 29, 1u << 30, 1u << 31};
  const auto bit = hn::LoadU(du, kBit + j0);
  const auto set = hn::Eq(hn::And(hn::Set(du, qh), bit), bit);
  return hn::And(hn::VecFromMask(du, set), hn::Set(du, 16u));
}

// Q5_0/Q5_1's fifth bits: on AVX-512 a chunk is 16 lanes = two whole bytes
// of qh (bit y of qh is bit y % 8 of byte y / 8, LoadMaskBits's order),
// loaded into a mask register that selects the or per lane: 1.1-1.3x faster
// than GgmlHighBits's table load, and, compare and and (docs/performance/gguf-legacy.md,
// "Q5_0/Q5_1 fifth bits as a mask"). AVX2's emulated mask (broadcast, and,
// compare, blendv) was 1.2-1.3x slower; with 4 lanes a chunk starts
// mid-byte. Only the Q5 decoders use it, so no other type's code changes.
inline constexpr bool kGgmlQhMask = HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL;

// Q5 codes of elements j0 .. j0+N-1: nibble | 16 * (bit y of qh), with qs
// the block's 16 nibble bytes and qh its 4 fifth-bit bytes.
HWY_INLINE hn::Vec<GgmlDU> GgmlQ5Codes(GgmlDU du, const uint8_t* qs, const uint8_t* qh, size_t j0) {
  if constexpr (kGgmlQhMask) {
    const auto nibbles = GgmlNibbles(du, qs, j0);
    return hn::IfThenElse(hn::LoadMaskBits(du, qh + j0 / 8), hn::Or(nibbles, hn::Set(du, 16u)),
                          nibbles);
  } else {
    return hn::Or(GgmlNibbles(du, qs, j0), GgmlHighBits(du, ggml::LoadLe32(qh), j0));
  }
}

// Q5_0's signed codes, GgmlQ5Codes - 16. With the mask that is the nibble
// where the bit is set, else nibble - 16 = nibble | ~15 (two's complement):
// one masked or, no subtraction.
HWY_INLINE hn::Vec<hn::RebindToSigned<GgmlDU>> GgmlQ5SignedCodes(GgmlDU du, const uint8_t* qs,
                                                                 const uint8_t* qh, size_t j0) {
  const hn::RebindToSigned<GgmlDU> di;
  if constexpr (kGgmlQhMask) {
    const auto nibbles = GgmlNibbles(du, qs, j0);
    return hn::BitCast(di, hn::IfThenElse(hn::LoadMaskBits(du, qh + j0 / 8), nibbles,
                                          hn::Or(nibbles, hn::Set(du, ~15u))));
  } else {
    return hn::Sub(hn::BitCast(di, GgmlQ5Codes(du, qs, qh, j0)), hn::Set(di, 16));
  }
}

HWY_INLINE hn::Vec<hn::RebindToFloat<GgmlDU>> GgmlScalar(uint32_t bits) {
  const GgmlDU du;
  return hn::BitCast(hn::RebindToFloat<GgmlDU>(), hn::Set(du, bits));
}

HWY_INLINE hn::Vec<hn::RebindToFloat<GgmlDU>> GgmlToF32(hn::Vec<hn::RebindToSigned<GgmlDU>> q) {
  return hn::ConvertTo(hn::RebindToFloat<GgmlDU>(), q);
}

// q * d (commutative: only d can be NaN), NaN results made canonical when
// the block is special (kSpecial is chosen once per block).
template <bool kSpecial>
HWY_INLINE hn::Vec<hn::RebindToFloat<GgmlDU>> GgmlScaled(hn::Vec<hn::RebindToFloat<GgmlDU>> q,
                                                         const GgmlBlockScales& s) {
  const auto p = hn::Mul(q, GgmlScalar(s.d));
  if constexpr (!kSpecial) return p;
  return hn::IfThenElse(hn::IsNaN(p), GgmlScalar(s.d_nan), p);
}

// p + m for a canonical product p.
template <bool kSpecial>
HWY_INLINE hn::Vec<hn::RebindToFloat<GgmlDU>> GgmlPlusMin(hn::Vec<hn::RebindToFloat<GgmlDU>> p,
                                                          const GgmlBlockScales& s) {
  const auto r = hn::Add(p, GgmlScalar(s.m));
  if constexpr (!kSpecial) return r;
  return hn::IfThenElse(hn::IsNaN(p), p, hn::IfThenElse(hn::IsNaN(r), GgmlScalar(s.m_nan), r));
}

// ---- Decoders: Scales(x) once per block, Chunk(x, j0, scales) per N elements.

// The 4-bit types (Q4_0, Q4_1, IQ4_NL, MXFP4): every output is
// Decoder::Values(its nibble, the block's scales), the 16 nibble bytes at
// byte kQsOffset of the block in ggml's order. So a block has at most 16
// distinct outputs, which GgmlByteTableBlock uses.
template <class Decoder>
struct GgmlNibbleDecoder {
  template <bool kSpecial>
  static HWY_INLINE hn::Vec<hn::RebindToFloat<GgmlDU>> Chunk(const uint8_t* x, size_t j0,
                                                             const GgmlBlockScales& s) {
    return Decoder::template Values<kSpecial>(GgmlNibbles(GgmlDU(), x + Decoder::kQsOffset, j0),
                                              s);
  }
};

struct GgmlQ4_0 : GgmlNibbleDecoder<GgmlQ4_0> {
  static constexpr size_t kBytes = ggml::kQ4_0Bytes;
  static constexpr size_t kF16Scales = 1;  // GgmlScaleGroups
  static constexpr size_t kQsOffset = 2;
  static HWY_INLINE GgmlBlockScales Scales(const uint8_t* x) { return GgmlF16BlockScales<false>(x); }
  template <bool kSpecial>
  static HWY_INLINE hn::Vec<hn::RebindToFloat<GgmlDU>> Values(hn::Vec<GgmlDU> nibbles,
                                                              const GgmlBlockScales& s) {
    const hn::RebindToSigned<GgmlDU> di;
    const auto q = hn::Sub(hn::BitCast(di, nibbles), hn::Set(di, 8));
    return GgmlScaled<kSpecial>(GgmlToF32(q), s);
  }
};

struct GgmlQ4_1 : GgmlNibbleDecoder<GgmlQ4_1> {
  static constexpr size_t kBytes = ggml::kQ4_1Bytes;
  static constexpr size_t kF16Scales = 2;
  static constexpr size_t kQsOffset = 4;
  static HWY_INLINE GgmlBlockScales Scales(const uint8_t* x) { return GgmlF16BlockScales<true>(x); }
  template <bool kSpecial>
  static HWY_INLINE hn::Vec<hn::RebindToFloat<GgmlDU>> Values(hn::Vec<GgmlDU> nibbles,
                                                              const GgmlBlockScales& s) {
    const hn::RebindToSigned<GgmlDU> di;
    const auto q = hn::BitCast(di, nibbles);
    return GgmlPlusMin<kSpecial>(GgmlScaled<kSpecial>(GgmlToF32(q), s), s);
  }
};

// Q5_0 and Q5_1: every output is Values(its 5-bit code, the block's
// scales), the code's low nibble from the 16 bytes at kQsOffset in ggml's
// order and its fifth bit from the u32 qh at kQhOffset, so a block has at
// most 32 distinct outputs, which GgmlByteTableBlock uses (two 16-entry
// table sets). Chunk is Values on a chunk's codes (Q5_0 with the
// subtraction folded into GgmlQ5SignedCodes: the same F32 integers).
struct GgmlQ5_0 {
  static constexpr size_t kBytes = ggml::kQ5_0Bytes;
  static constexpr size_t kF16Scales = 1;
  static constexpr size_t kQhOffset = 2;
  static constexpr size_t kQsOffset = 6;
  static constexpr float kMaxAbsCode = 16.0f;  // GgmlF16InRange
  // With a finite d, (16 - k - 16) * d = -((16 + k - 16) * d) exactly (an
  // exact integer times d, negated: IEEE rounding is sign-symmetric), and
  // every 16-bit encoder rounds a negative non-NaN F32 to its magnitude's
  // bits with bit 15 set, so the outputs are odd around code 16
  // (Int5OddTables); Values<false> is never NaN.
  static constexpr bool kOddAroundCode16 = true;
  static HWY_INLINE GgmlBlockScales Scales(const uint8_t* x) { return GgmlF16BlockScales<false>(x); }
  template <bool kSpecial>
  static HWY_INLINE hn::Vec<hn::RebindToFloat<GgmlDU>> Values(hn::Vec<GgmlDU> codes,
                                                              const GgmlBlockScales& s) {
    const hn::RebindToSigned<GgmlDU> di;
    return GgmlScaled<kSpecial>(GgmlToF32(hn::Sub(hn::BitCast(di, codes), hn::Set(di, 16))), s);
  }
  template <bool kSpecial>
  static HWY_INLINE hn::Vec<hn::RebindToFloat<GgmlDU>> Chunk(const uint8_t* x, size_t j0,
                                                             const GgmlBlockScales& s) {
    const GgmlDU du;
    return GgmlScaled<kSpecial>(
        GgmlToF32(GgmlQ5SignedCodes(du, x + kQsOffset, x + kQhOffset, j0)), s);
  }
};

struct GgmlQ5_1 {
  static constexpr size_t kBytes = ggml::kQ5_1Bytes;
  static constexpr size_t kF16Scales = 2;
  static constexpr size_t kQhOffset = 4;
  static constexpr size_t kQsOffset = 8;
  static HWY_INLINE GgmlBlockScales Scales(const uint8_t* x) { return GgmlF16BlockScales<true>(x); }
  template <bool kSpecial>
  static HWY_INLINE hn::Vec<hn::RebindToFloat<GgmlDU>> Values(hn::Vec<GgmlDU> codes,
                                                              const GgmlBlockScales& s) {
    const hn::RebindToSigned<GgmlDU> di;
    return GgmlPlusMin<kSpecial>(GgmlScaled<kSpecial>(GgmlToF32(hn::BitCast(di, codes)), s), s);
  }
  template <bool kSpecial>
  static HWY_INLINE hn::Vec<hn::RebindToFloat<GgmlDU>> Chunk(const uint8_t* x, size_t j0,
                                                             const GgmlBlockScales& s) {
    const GgmlDU du;
    return Values<kSpecial>(GgmlQ5Codes(du, x + kQsOffset, x + kQhOffset, j0), s);
  }
};

// Q8_0 and Q8_1: d * i8, at byte offset kQsOffset.
template <size_t kBlockBytes, size_t kQsOffset>
struct GgmlQ8 {
  static constexpr size_t kBytes = kBlockBytes;
  static constexpr size_t kF16Scales = 1;  // Q8_1's s is not used by the decode
  static constexpr float kMaxAbsCode = 128.0f;  // GgmlF16InRange
  static HWY_INLINE GgmlBlockScales Scales(const uint8_t* x) {
    return GgmlMakeScales(ggml::F16ScaleBits(ggml::LoadLe16(x)), 0);
  }
  template <bool kSpecial>
  static HWY_INLINE hn::Vec<hn::RebindToFloat<GgmlDU>> Chunk(const uint8_t* x, size_t j0,
                                                             const GgmlBlockScales& s) {
    const hn::RebindToSigned<GgmlDU> di;
    const hn::Rebind<int8_t, GgmlDU> d8;
    const auto q =
        hn::PromoteTo(di, hn::LoadU(d8, reinterpret_cast<const int8_t*>(x) + kQsOffset + j0));
    return GgmlScaled<kSpecial>(GgmlToF32(q), s);
  }
};
using GgmlQ8_0 = GgmlQ8<ggml::kQ8_0Bytes, 2>;
using GgmlQ8_1 = GgmlQ8<ggml::kQ8_1Bytes, 4>;

struct GgmlIq4Nl : GgmlNibbleDecoder<GgmlIq4Nl> {
  static constexpr size_t kBytes = ggml::kIq4NlBytes;
  static constexpr size_t kF16Scales = 1;
  static constexpr size_t kQsOffset = 2;
  static HWY_INLINE GgmlBlockScales Scales(const uint8_t* x) {
    return GgmlMakeScales(ggml::F16ScaleBits(ggml::LoadLe16(x)), 0);
  }
  template <bool kSpecial>
  static HWY_INLINE hn::Vec<hn::RebindToFloat<GgmlDU>> Values(hn::Vec<GgmlDU> nibbles,
                                                              const GgmlBlockScales& s) {
    const auto k = Codebook16(GgmlDU(), nibbles, ggml::kIq4NlValues.data());
    return GgmlScaled<kSpecial>(GgmlToF32(k), s);
  }
};

struct GgmlMxfp4 : GgmlNibbleDecoder<GgmlMxfp4> {
  static constexpr size_t kBytes = ggml::kMxfp4Bytes;
  static constexpr size_t kQsOffset = 1;
  static HWY_INLINE GgmlBlockScales Scales(const uint8_t* x) {
    return GgmlMakeScales(ggml::Mxfp4HalfScaleBits(x[0]), 0);
  }
  template <bool kSpecial>
  static HWY_INLINE hn::Vec<hn::RebindToFloat<GgmlDU>> Values(hn::Vec<GgmlDU> nibbles,
                                                              const GgmlBlockScales& s) {
    const auto k = Codebook16(GgmlDU(), nibbles, ggml::kMxfp4Values.data());
    return GgmlScaled<kSpecial>(GgmlToF32(k), s);
  }
};

// ---- The newer types (kElems elements per block; the others have 32).

// NVFP4: the UE4M3 scale of the chunk's 16-element sub-block (finite, so
// never special) times the E2M1 codebook. A sub-block's 8 bytes hold its
// elements l and l + 8; with N <= 8 a chunk is one nibble of N bytes, with
// N = 16 it spans both halves, so the bytes are read from a doubled copy and
// each lane picks its nibble by mask.
struct GgmlNvfp4 {
  static constexpr size_t kBytes = ggml::kNvfp4Bytes;
  static constexpr size_t kElems = ggml::kNvfp4Elems;
  // Every result is exact in BF16 and a normal F16 or ±0 (GgmlExactStore):
  // a code k (|k| in {1, 2, 3, 4, 6, 8, 12}: at most 2 significant bits)
  // times d (Ue4m3HalfBits: 0, or at most 4 significant bits in [2^-10,
  // 240], 240 from byte 0xFF) has at most 6 significant bits and |k d| in
  // [2^-10, 2880].
  static constexpr bool kExactIn16Bits = true;
  static HWY_INLINE GgmlBlockScales Scales(const uint8_t*) { return GgmlMakeScales(0, 0); }
  template <bool kSpecial>
  static HWY_INLINE hn::Vec<hn::RebindToFloat<GgmlDU>> Chunk(const uint8_t* x, size_t j0,
                                                             const GgmlBlockScales&) {
    const GgmlDU du;
    const hn::Rebind<uint8_t, GgmlDU> d8;
    const size_t sub = j0 / ggml::kNvfp4SubElems;
    const auto d = GgmlScalar(ggml::kUe4m3HalfBits[x[sub]]);
    if constexpr (hn::MaxLanes(du) <= 8) {
      // A chunk lies in one half: the low (j0 % 16 < 8) or high nibbles of
      // bytes j0 % 8 .. j0 % 8 + N - 1 of the sub-block.
      const int shift = static_cast<int>(j0 & 8) / 2;
      const auto bytes = hn::PromoteTo(du, hn::LoadU(d8, x + 4 + sub * 8 + (j0 & 7)));
      const auto nibbles = hn::And(hn::ShiftRightSame(bytes, shift), hn::Set(du, 15u));
      return hn::Mul(GgmlToF32(Codebook16(du, nibbles, ggml::kMxfp4Values.data())), d);
    }
    HWY_ALIGN uint8_t twice[16];
    std::memcpy(twice, x + 4 + sub * 8, 8);
    std::memcpy(twice + 8, x + 4 + sub * 8, 8);
    const auto bytes = hn::PromoteTo(du, hn::LoadU(d8, twice + (j0 & 7)));
    // 1 for lanes in the high half (element l + 8) of the sub-block.
    HWY_ALIGN static constexpr uint32_t kHigh[32] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,
                                                     0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1};
    const auto high = hn::Ne(hn::LoadU(du, kHigh + (j0 & 15)), hn::Zero(du));
    const auto nibbles =
        hn::And(hn::IfThenElse(high, hn::ShiftRight<4>(bytes), bytes), hn::Set(du, 15u));
    const auto k = Codebook16(du, nibbles, ggml::kMxfp4Values.data());
    return hn::Mul(GgmlToF32(k), d);
  }
};

// Q1_0: d where the element's bit is set, else d with its sign flipped.
// Bits j0 .. j0+N-1 come from the little-endian word holding bits
// 32*(j0/32) .. (N <= 16 divides 32).
struct GgmlQ1_0 {
  static constexpr size_t kBytes = ggml::kQ1_0Bytes;
  static constexpr size_t kElems = ggml::kQ1_0Elems;
  static HWY_INLINE GgmlBlockScales Scales(const uint8_t* x) {
    return GgmlMakeScales(ggml::F16ScaleBits(ggml::LoadLe16(x)), 0);
  }
  template <bool kSpecial>
  static HWY_INLINE hn::Vec<hn::RebindToFloat<GgmlDU>> Chunk(const uint8_t* x, size_t j0,
                                                             const GgmlBlockScales& s) {
    const GgmlDU du;
    const auto set = hn::Ne(GgmlHighBits(du, ggml::LoadLe32(x + 2 + 4 * (j0 / 32)), j0 & 31),
                            hn::Zero(du));
    const auto d = hn::Set(du, s.d);
    const auto neg_d = hn::Xor(d, hn::Set(du, 0x80000000u));
    return hn::BitCast(hn::RebindToFloat<GgmlDU>(), hn::IfThenElse(set, d, neg_d));
  }
};

// Q2_0: (q - 1) * d, q the 2-bit field j % 16 of the little-endian word
// holding elements 16*(j0/16) .. (bit masks: no per-lane shifts).
struct GgmlQ2_0 {
  static constexpr size_t kBytes = ggml::kQ2_0Bytes;
  static constexpr size_t kElems = ggml::kQ2_0Elems;
  static HWY_INLINE GgmlBlockScales Scales(const uint8_t* x) {
    return GgmlMakeScales(ggml::F16ScaleBits(ggml::LoadLe16(x)), 0);
  }
  template <bool kSpecial>
  static HWY_INLINE hn::Vec<hn::RebindToFloat<GgmlDU>> Chunk(const uint8_t* x, size_t j0,
                                                             const GgmlBlockScales& s) {
    const GgmlDU du;
    const hn::RebindToSigned<GgmlDU> di;
    HWY_ALIGN static constexpr uint32_t kLow[16] = {
        1u << 0,  1u << 2,  1u << 4,  1u << 6,  1u << 8,  1u << 10, 1u << 12, 1u << 14,
        1u << 16, 1u << 18, 1u << 20, 1u << 22, 1u << 24, 1u << 26, 1u << 28, 1u << 30};
    const auto word = hn::Set(du, ggml::LoadLe32(x + 2 + 4 * (j0 / 16)));
    const auto lo = hn::LoadU(du, kLow + (j0 & 15));
    const auto hi = hn::ShiftLeft<1>(lo);
    const auto one = hn::Set(du, 1u);
    const auto q = hn::Or(hn::And(hn::VecFromMask(du, hn::Eq(hn::And(word, lo), lo)), one),
                          hn::And(hn::VecFromMask(du, hn::Eq(hn::And(word, hi), hi)), hn::Set(du, 2u)));
    return GgmlScaled<kSpecial>(GgmlToF32(hn::Sub(hn::BitCast(di, q), hn::Set(di, 1))), s);
  }
};

// Elements per block: kElems where a decoder has one, else 32.
template <class Decoder>
constexpr size_t GgmlBlockElems() {
  if constexpr (requires { Decoder::kElems; }) {
    return Decoder::kElems;
  } else {
    return ggml::kQK;
  }
}

// ---- Output encoders: N F32 results to N outputs at `out`.

struct GgmlStoreF32 {
  using T = float;
  using Finite = GgmlStoreF32;
  HWY_INLINE void operator()(hn::Vec<hn::RebindToFloat<GgmlDU>> v, float* out) const {
    hn::StoreU(v, hn::RebindToFloat<GgmlDU>(), out);
  }
  HWY_INLINE void Pair(hn::Vec<hn::RebindToFloat<GgmlDU>> lo, hn::Vec<hn::RebindToFloat<GgmlDU>> hi,
                       float* out) const {
    const hn::RebindToFloat<GgmlDU> df;
    hn::StoreU(lo, df, out);
    hn::StoreU(hi, df, out + hn::Lanes(df));
  }
};

template <class Encode>
struct GgmlStore16 {
  using T = uint16_t;
  using Encoder = Encode;
  // The store for a block that is not special (float_convert-inl.h: BF16
  // and, without F16C, F16 without the NaN rule).
  using Finite = GgmlStore16<typename Encode::Finite>;
  HWY_INLINE void operator()(hn::Vec<hn::RebindToFloat<GgmlDU>> v, uint16_t* out) const {
    const GgmlDU du;
    const hn::RebindToSigned<GgmlDU> di;
    const hn::Rebind<uint16_t, GgmlDU> d16;
    auto bits = Encode()(du, hn::BitCast(du, v));
    if (Encode::kUpperHalf) bits = hn::ShiftRight<16>(bits);
    // Lanes hold 0..0xFFFF, so the saturating i32 -> u16 demotion is exact.
    hn::StoreU(hn::DemoteTo(d16, hn::BitCast(di, bits)), d16, out);
  }
  // 2N outputs: outside SCALAR the encoder's StorePair (float_convert-inl.h:
  // one full-width ConcatOdd store for BF16, vcvtps2ph stores for F16 where
  // F16C is exact).
  HWY_INLINE void Pair(hn::Vec<hn::RebindToFloat<GgmlDU>> lo, hn::Vec<hn::RebindToFloat<GgmlDU>> hi,
                       uint16_t* out) const {
#if HWY_TARGET == HWY_SCALAR
    (*this)(lo, out);
    (*this)(hi, out + 1);
#else
    const GgmlDU du;
    Encode::StorePair(du, hn::BitCast(du, lo), hn::BitCast(du, hi), out);
#endif
  }
};
using GgmlStoreBf16 = GgmlStore16<ToBf16Upper>;
using GgmlStoreF16 = GgmlStore16<ToF16Lower>;

// ---- Per-block byte tables for the 4- and 5-bit types' 16-bit outputs.

// Which (4- or 5-bit type, 16-bit output, target) combinations take
// GgmlByteTableBlock instead of rounding every element: the one place that
// chooses, from best-of-3 interleaved timings (docs/performance/f16-on-sse4.md,
// "Per-block tables for 4-bit GGUF types"). SSSE3/SSE4: every type and
// both outputs (F16 is rounded in software there). AVX2: BF16, and F16 but
// for Q4_1 (vcvtps2ph per element was as fast). AVX-512: BF16 of the
// codebook types only; its per-element F16 (vcvtps2ph) and Q4_0/Q4_1 BF16
// were faster than or as fast as the tables.
template <class Decoder, class Store>
constexpr bool GgmlUsesByteTables() {
  if constexpr (!requires { Decoder::kQsOffset; } || sizeof(typename Store::T) != 2) {
    return false;
  } else if constexpr (requires { Decoder::kQhOffset; }) {
    // Q5_0/Q5_1 (two table sets, Int5ByteTables; docs/performance/gguf-legacy.md, "Q5_0
    // and Q5_1 16-bit outputs through per-block tables"): SSSE3/SSE4 both
    // types and outputs (Q5_0 1.6-1.75x, Q5_1 1.06-1.24x); AVX2 Q5_0's BF16
    // only (1.19-1.22x: its finite blocks round 16 entries, Int5OddTables;
    // Q5_1's BF16 was 1.00-1.02x, the F16s 0.74-0.97x against vcvtps2ph);
    // AVX-512 took 1.5-2.4x the time with the tables.
    constexpr bool kBf16 = Store::Encoder::kUpperHalf;
    if (HWY_TARGET == HWY_SSE4 || HWY_TARGET == HWY_SSSE3) return true;
    return HWY_TARGET == HWY_AVX2 && kBf16 && std::is_same_v<Decoder, GgmlQ5_0>;
  } else {
    constexpr bool kBf16 = Store::Encoder::kUpperHalf;
    constexpr bool kCodebook =
        std::is_same_v<Decoder, GgmlIq4Nl> || std::is_same_v<Decoder, GgmlMxfp4>;
    if (HWY_TARGET == HWY_SSE4 || HWY_TARGET == HWY_SSSE3) return true;
    if (HWY_TARGET == HWY_AVX2) return kBf16 || !std::is_same_v<Decoder, GgmlQ4_1>;
    if (HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL) return kBf16 && kCodebook;
    return false;
  }
}

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_SSSE3
// One block of a 4-bit type as 16-bit outputs: its 16 possible results
// (Values on codes 0..15, the arithmetic of Chunk, then Encode) rounded once
// into byte tables, and its 32 nibbles looked up. The tables hold exactly
// what Chunk + Encode give each code, so the outputs are the same bits.
// Q5_0/Q5_1 the same way with two table sets, Values on codes 0..15 and on
// 16..31 (Int5ByteTables), the fifth bits (qh) choosing per output; a
// finite Q5_0 block computes only codes 17..31 and 32 (16 * d) and
// mirrors them (Int5OddTables, GgmlQ5_0::kOddAroundCode16).
template <class Decoder, class Encode, bool kSpecial>
HWY_INLINE void GgmlByteTableBlock(const uint8_t* HWY_RESTRICT x, const GgmlBlockScales& s,
                                   uint16_t* HWY_RESTRICT out) {
  using D8 = hn::ScalableTag<uint8_t>;
  const D8 d8;
  // The tables of codes first .. first + 15.
  const auto tables_from = [&s, d8](uint32_t first) {
    return MakeInt4ByteTables<Encode::kUpperHalf>(d8, [&s, first](auto du, auto codes) {
      const auto values =
          Decoder::template Values<kSpecial>(hn::Add(hn::BitCast(du, codes), hn::Set(du, first)), s);
      return Encode()(du, hn::BitCast(du, values));
    });
  };
  // Element j: the low nibble of qs[j], element j + 16 its high nibble.
  const Int4Lookup32Tag d32;
  const auto qs = hn::LoadDup128(d32, x + Decoder::kQsOffset);
  if constexpr (requires { Decoder::kQhOffset; }) {
    const auto tables = [&] {
      if constexpr (requires { Decoder::kOddAroundCode16; }) {
        if constexpr (!kSpecial) {
          // Entry k: Values on code 16 + k, on code 32 for k = 0.
          return Int5OddTables(
              d8, MakeInt4ByteTables<Encode::kUpperHalf>(d8, [&s](auto du, auto codes) {
                const auto odd = hn::Add(hn::And(hn::Add(hn::BitCast(du, codes), hn::Set(du, 15u)),
                                                 hn::Set(du, 15u)),
                                         hn::Set(du, 17u));
                return Encode()(du, hn::BitCast(du, Decoder::template Values<false>(odd, s)));
              }));
        }
      }
      return Int5ByteTables<D8>{tables_from(0), tables_from(16)};
    }();
    StoreInt5ByteLookups32(Int4Tables32(tables), Int4Nibbles<0>(d32, qs), Int4Nibbles<1>(d32, qs),
                           ggml::LoadLe32(x + Decoder::kQhOffset), out);
  } else {
    StoreInt4ByteLookups32(Int4Tables32(tables_from(0)), Int4Nibbles<0>(d32, qs),
                           Int4Nibbles<1>(d32, qs), out);
  }
}
#endif  // HWY_ARCH_X86 && HWY_TARGET <= HWY_SSSE3

// One block's kElems outputs at y with Store (kSpecial: the NaN rule).
template <class Decoder, class Store, bool kSpecial>
HWY_INLINE void GgmlBlock(const uint8_t* HWY_RESTRICT x, const GgmlBlockScales& scales,
                          typename Store::T* HWY_RESTRICT y) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_SSSE3
  if constexpr (GgmlUsesByteTables<Decoder, Store>()) {
    GgmlByteTableBlock<Decoder, typename Store::Encoder, kSpecial>(x, scales, y);
    return;
  }
#endif
  // Two chunks per store: 2N <= 32 divides the block.
  const size_t lanes = hn::Lanes(GgmlDU());
  for (size_t j0 = 0; j0 < GgmlBlockElems<Decoder>(); j0 += 2 * lanes) {
    Store().Pair(Decoder::template Chunk<kSpecial>(x, j0, scales),
                 Decoder::template Chunk<kSpecial>(x, j0 + lanes, scales), y + j0);
  }
}

// Whether a block of Decoder stored with Store tests GgmlF16InRange and
// takes ToF16LowerInRange when it passes: F16 outputs on the targets
// without F16C where the integer rounding exists (kF16InRangeStore), for
// the types rounding per element with q * d results (kMaxAbsCode);
// the 4-bit types round 16 table entries per block instead.
template <class Decoder, class Store>
constexpr bool GgmlUsesF16InRange() {
  if constexpr (!requires { Decoder::kMaxAbsCode; } || sizeof(typename Store::T) != 2) {
    return false;
  } else {
    return kF16InRangeStore && !Store::Encoder::kUpperHalf;
  }
}

// The store of a finite block for a Decoder whose results are all exact
// in BF16 and normal F16 or ±0 (kExactIn16Bits), where that is cheaper:
// BF16 keeps the upper halves with no rounding; F16 takes the integer
// rounding of ToF16LowerInRange on the targets without F16C
// (kF16InRangeStore), elsewhere the usual one.
template <class Decoder, class Store>
constexpr bool GgmlUsesExactStore() {
  if constexpr (!requires { Decoder::kExactIn16Bits; } || sizeof(typename Store::T) != 2) {
    return false;
  } else {
    return Store::Encoder::kUpperHalf || kF16InRangeStore;
  }
}
template <class Store>
using GgmlExactStore = GgmlStore16<
    std::conditional_t<Store::Encoder::kUpperHalf, ToBf16UpperExact, ToF16LowerInRange>>;

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_SSSE3
// NVFP4 16-bit outputs through per-call scale-byte rows (x86): an output is
// a function of its sub-block's UE4M3 byte and its code alone, so the row
// of a byte (ScaleByteRows, int4_byte_table-inl.h) holds the 16 outputs
// that the block path (GgmlNvfp4::Chunk and the store GgmlBlock would use)
// gives a sub-block holding codes 0..15 under that byte: the same bits by
// construction. A sub-block is then its 8 code bytes split into 16 nibbles
// in ggml's order and two lookups. Taken for calls of at least
// kGgmlNvfp4RowMinBlocks blocks, so the rows' builds (one per distinct
// byte, each about one sub-block's work on the block path) are spread over
// many sub-blocks, on the targets where it measured faster
// (docs/performance/gguf-decode.md, "NVFP4 16-bit outputs through scale-byte tables"):
// SSSE3, SSE4 and AVX2 (AVX-512 measured no clear gain).
inline constexpr size_t kGgmlNvfp4RowMinBlocks = 64;
inline constexpr size_t kGgmlMxfp4RowMinBlocks = 128;

// The 16 codes of each of two sub-blocks (16 code bytes at `in`) in ggml's
// order: the 8 low nibbles, then the 8 high ones.
HWY_INLINE void GgmlNvfp4SubBlockCodes(const uint8_t* HWY_RESTRICT in,
                                       hn::Vec<hn::Full128<uint8_t>>* HWY_RESTRICT first,
                                       hn::Vec<hn::Full128<uint8_t>>* HWY_RESTRICT second) {
  const hn::Full128<uint8_t> d8;
  const hn::Full128<uint64_t> d64;
  const auto bytes = hn::BitCast(d64, hn::LoadU(d8, in));
  const auto high = hn::ShiftRight<4>(bytes);
  const auto mask = hn::Set(d8, uint8_t{0x0F});
  *first = hn::And(hn::BitCast(d8, hn::InterleaveLower(d64, bytes, high)), mask);
  *second = hn::And(hn::BitCast(d8, hn::InterleaveUpper(d64, bytes, high)), mask);
}

template <class Store>
HWY_INLINE void GgmlNvfp4ByRows(const uint8_t* HWY_RESTRICT blocks, size_t n_blocks,
                                uint16_t* HWY_RESTRICT out) {
  using RowStore = std::conditional_t<GgmlUsesExactStore<GgmlNvfp4, Store>(),
                                      GgmlExactStore<Store>, typename Store::Finite>;
  ScaleByteRows rows;
  const auto build = [](uint8_t s, uint16_t* HWY_RESTRICT entries) {
    // Sub-block 0 (and 1) with element l the low nibble l of byte l and
    // element l + 8 the high nibble l + 8.
    HWY_ALIGN uint8_t x[ggml::kNvfp4Bytes] = {s,    s,    s,    s,    0x80, 0x91,
                                              0xA2, 0xB3, 0xC4, 0xD5, 0xE6, 0xF7,
                                              0x80, 0x91, 0xA2, 0xB3, 0xC4, 0xD5,
                                              0xE6, 0xF7};
    const GgmlBlockScales scales = GgmlNvfp4::Scales(x);
    const size_t lanes = hn::Lanes(GgmlDU());
    for (size_t j0 = 0; j0 < ggml::kNvfp4SubElems; j0 += 2 * lanes) {
      RowStore().Pair(GgmlNvfp4::Chunk<false>(x, j0, scales),
                      GgmlNvfp4::Chunk<false>(x, j0 + lanes, scales), entries + j0);
    }
  };
  for (size_t b = 0; b < n_blocks; ++b) {
    const uint8_t* x = blocks + b * ggml::kNvfp4Bytes;
    uint16_t* y = out + b * ggml::kNvfp4Elems;
    for (size_t s = 0; s < 4; s += 2) {
      hn::Vec<hn::Full128<uint8_t>> first, second;
      GgmlNvfp4SubBlockCodes(x + 4 + s * 8, &first, &second);
      StoreScaleByteRow(rows.Row(x[s], build), first, y + s * 16);
      StoreScaleByteRow(rows.Row(x[s + 1], build), second, y + s * 16 + 16);
    }
  }
}

// MXFP4 the same way: a block's outputs are a function of its E8M0 byte and
// the code, so its row holds what GgmlBlock gives a block of codes 0..15
// (its per-block byte table where GgmlUsesByteTables, else the chunks).
// Taken for calls of at least kGgmlMxfp4RowMinBlocks blocks (each row
// costs about one block), where it measured faster (docs/performance/gguf-decode.md,
// "NVFP4 16-bit outputs through scale-byte tables"): every x86 target but
// AVX-512's BF16, whose per-block tables with 256-bit lookups were as fast.
template <class Store>
constexpr bool GgmlUsesMxfp4Rows() {
  if constexpr (sizeof(typename Store::T) != 2) {
    return false;
  } else {
    constexpr bool kAvx512 = HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL;
    return !(kAvx512 && Store::Encoder::kUpperHalf);
  }
}

template <class Store>
HWY_INLINE void GgmlMxfp4ByRows(const uint8_t* HWY_RESTRICT blocks, size_t n_blocks,
                                uint16_t* HWY_RESTRICT out) {
  ScaleByteRows rows;
  const auto build = [](uint8_t e, uint16_t* HWY_RESTRICT entries) {
    // Element j < 16 is the low nibble of qs[j]: code j.
    HWY_ALIGN uint8_t x[ggml::kMxfp4Bytes] = {e, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    HWY_ALIGN uint16_t block[ggml::kQK];
    GgmlBlock<GgmlMxfp4, typename Store::Finite, false>(x, GgmlMxfp4::Scales(x), block);
    std::memcpy(entries, block, 16 * sizeof(uint16_t));
  };
  const hn::Full128<uint8_t> d8;
  const hn::Full128<uint16_t> d16;
  const auto mask = hn::Set(d8, uint8_t{0x0F});
  for (size_t b = 0; b < n_blocks; ++b) {
    const uint8_t* x = blocks + b * ggml::kMxfp4Bytes;
    uint16_t* y = out + b * ggml::kQK;
    const uint8_t* row = rows.Row(x[0], build);
    // Element j: the low nibble of qs[j], element j + 16 its high nibble.
    const auto bytes = hn::LoadU(d8, x + 1);
    StoreScaleByteRow(row, hn::And(bytes, mask), y);
    StoreScaleByteRow(
        row, hn::And(hn::BitCast(d8, hn::ShiftRight<4>(hn::BitCast(d16, bytes))), mask), y + 16);
  }
}
#endif  // HWY_ARCH_X86 && HWY_TARGET <= HWY_SSSE3

// One block at x of any scales to its kElems outputs at y.
template <class Decoder, class Store>
HWY_INLINE void GgmlLegacyBlock(const uint8_t* HWY_RESTRICT x, typename Store::T* HWY_RESTRICT y) {
  const GgmlBlockScales scales = Decoder::Scales(x);
  // Why the finite path may store with Store::Finite (BF16, and F16 on the
  // targets without F16C, without the NaN rule): scales.special is false
  // only when d and m are both finite, for every bit pattern
  // (GgmlMakeScales tests the exponent field, and an Inf
  // or NaN f16 scale widens to an all-ones F32 exponent; MXFP4's E8M0
  // scale is always finite, at most 2^127: Mxfp4HalfScaleBits). Every
  // Chunk<false> result is then q * d or (q * d) + m with q an exact F32
  // integer (|q| <= 128) and d, m finite, or ±d (Q1_0), or an NVFP4
  // codebook value times a UE4M3 scale (always finite: Ue4m3HalfBits).
  // finite * finite is finite or ±Inf (MXFP4: 12 * 2^127 overflows), never
  // NaN (that needs Inf * 0 or a NaN operand); ±Inf + finite m is ±Inf,
  // never NaN (that needs Inf - Inf). So no finite-path lane is NaN, and
  // the NaN-free rounding gives the reference's bits, Inf included.
  if (HWY_UNLIKELY(scales.special)) {  // per block, never per element
    GgmlBlock<Decoder, Store, true>(x, scales, y);
    return;
  }
  if constexpr (GgmlUsesExactStore<Decoder, Store>()) {
    GgmlBlock<Decoder, GgmlExactStore<Store>, false>(x, scales, y);
    return;
  }
  if constexpr (GgmlUsesF16InRange<Decoder, Store>()) {
    if (GgmlF16InRange(scales.d, Decoder::kMaxAbsCode)) {
      GgmlBlock<Decoder, GgmlStore16<ToF16LowerInRange>, false>(x, scales, y);
      return;
    }
  }
  GgmlBlock<Decoder, typename Store::Finite, false>(x, scales, y);
}

#if AMN_F16_HARDWARE_DEMOTE
// F32 and BF16 outputs of the types whose f16 scales (d, or d and m) open
// the block (kF16Scales), on the F16C targets: the scales of Lanes(GgmlDU)
// blocks are tested for Inf/NaN together (GgmlF16BlockScales's test) and
// widened with one vcvtph2ps per 16 scales, instead of a test and a
// widening per block and a round trip of the results through general
// registers. vcvtph2ps is exact for every finite f16 (FromF16,
// float_convert-inl.h). A group with an Inf/NaN scale goes block by block
// (GgmlLegacyBlock, whose widening keeps NaN payloads): real files have
// none, and a per-block test inside the group loop cost BF16 up to 1.28x.
// Measured against per-block scales on real blocks
// (docs/performance/gguf-legacy.md, "F16 scales widened per group of
// blocks"): F32 and BF16 faster; F16 outputs (vcvtps2ph) and Q8_0's BF16
// gained nothing or lost up to 1.1x.
template <class Decoder, class Store>
constexpr bool GgmlUsesScaleGroups() {
  if constexpr (!requires { Decoder::kF16Scales; }) {
    return false;
  } else if constexpr (sizeof(typename Store::T) == 4) {
    return true;
  } else {
    return Store::Encoder::kUpperHalf && !std::is_same_v<Decoder, GgmlQ8_0> &&
           !std::is_same_v<Decoder, GgmlQ8_1>;
  }
}

// The blocks of whole groups from the start; returns how many it wrote.
// Not inlined: inside the dispatch function its unrolled groups made GCC
// rematerialize loop constants in the other outputs' block loops (F16
// 1.06-1.13x the time, measured; the same docs section).
template <class Decoder, class Store>
HWY_NOINLINE size_t GgmlScaleGroups(const uint8_t* HWY_RESTRICT blocks, size_t n_blocks,
                                    typename Store::T* HWY_RESTRICT out) {
  // GgmlLegacyBlock's per-block store choices, which a group skips.
  static_assert(!GgmlUsesExactStore<Decoder, Store>() && !GgmlUsesF16InRange<Decoder, Store>());
  constexpr size_t kElems = GgmlBlockElems<Decoder>();
  const GgmlDU du;
  const size_t group = hn::Lanes(du);
  const hn::Repartition<hwy::float16_t, GgmlDU> dh;  // d (and m) of each block
  const hn::Half<decltype(dh)> dh_half;
  const hn::Rebind<float, decltype(dh_half)> df;
  const hn::RebindToUnsigned<decltype(df)> du_half;
  HWY_ALIGN uint32_t words[16];  // d | m << 16 (m 0 without kMin)
  HWY_ALIGN uint32_t wide[32];   // F32 bits: d0, m0, d1, m1, ...
  size_t b = 0;
  for (; b + group <= n_blocks; b += group) {
    const uint8_t* x = blocks + b * Decoder::kBytes;
    typename Store::T* y = out + b * kElems;
    for (size_t i = 0; i < group; ++i) {
      const uint8_t* xi = x + i * Decoder::kBytes;
      words[i] = Decoder::kF16Scales == 2 ? ggml::LoadLe32(xi) : ggml::LoadLe16(xi);
    }
    const auto w = hn::Load(du, words);
    const auto carries = hn::And(
        hn::Add(hn::And(w, hn::Set(du, kF16PairExponents)), hn::Set(du, kF16PairExponentUnit)),
        hn::Set(du, kF16PairCarries));
    if (HWY_UNLIKELY(!hn::AllTrue(du, hn::Eq(carries, hn::Zero(du))))) {
      for (size_t i = 0; i < group; ++i) {
        GgmlLegacyBlock<Decoder, Store>(x + i * Decoder::kBytes, y + i * kElems);
      }
      continue;
    }
    // FromF16's widening on the words already in a register (FromF16 itself
    // loads from memory: storing the words as u16 for it measured 1.06-1.42x
    // slower).
    const auto halves = hn::BitCast(dh, w);
    hn::Store(hn::BitCast(du_half, hn::PromoteTo(df, hn::LowerHalf(dh_half, halves))), du_half,
              wide);
    hn::Store(hn::BitCast(du_half, hn::PromoteTo(df, hn::UpperHalf(dh_half, halves))), du_half,
              wide + group);
    for (size_t i = 0; i < group; ++i) {
      const GgmlBlockScales scales{wide[2 * i], wide[2 * i + 1], 0, 0, false};
      GgmlBlock<Decoder, typename Store::Finite, false>(x + i * Decoder::kBytes, scales,
                                                        y + i * kElems);
    }
  }
  return b;
}
#endif  // AMN_F16_HARDWARE_DEMOTE

// n_blocks whole blocks -> n_blocks * kElems outputs; no overlap.
template <class Decoder, class Store>
HWY_INLINE void DequantGgmlLegacyKernel(const uint8_t* HWY_RESTRICT blocks, size_t n_blocks,
                                        typename Store::T* HWY_RESTRICT out) {
  constexpr size_t kElems = GgmlBlockElems<Decoder>();
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_SSSE3
  if constexpr (std::is_same_v<Decoder, GgmlNvfp4> && sizeof(typename Store::T) == 2 &&
                kNvfp4UsesScaleByteRows) {
    if (n_blocks >= kGgmlNvfp4RowMinBlocks) {
      GgmlNvfp4ByRows<Store>(blocks, n_blocks, out);
      return;
    }
  }
  if constexpr (std::is_same_v<Decoder, GgmlMxfp4> && GgmlUsesMxfp4Rows<Store>()) {
    if (n_blocks >= kGgmlMxfp4RowMinBlocks) {
      GgmlMxfp4ByRows<Store>(blocks, n_blocks, out);
      return;
    }
  }
#endif
  size_t b = 0;
#if AMN_F16_HARDWARE_DEMOTE
  if constexpr (GgmlUsesScaleGroups<Decoder, Store>()) {
    b = GgmlScaleGroups<Decoder, Store>(blocks, n_blocks, out);
  }
#endif
  for (; b < n_blocks; ++b) {
    GgmlLegacyBlock<Decoder, Store>(blocks + b * Decoder::kBytes, out + b * kElems);
  }
}

template <class Decoder>
HWY_INLINE void GgmlLegacyOut(const uint8_t* blocks, size_t n_blocks, ElemType out_type,
                              void* out) {
  switch (out_type) {
    case ElemType::kF32:
      DequantGgmlLegacyKernel<Decoder, GgmlStoreF32>(blocks, n_blocks, static_cast<float*>(out));
      break;
    case ElemType::kBf16:
      DequantGgmlLegacyKernel<Decoder, GgmlStoreBf16>(blocks, n_blocks,
                                                      static_cast<uint16_t*>(out));
      break;
    case ElemType::kF16:
      DequantGgmlLegacyKernel<Decoder, GgmlStoreF16>(blocks, n_blocks,
                                                     static_cast<uint16_t*>(out));
      break;
    default:
      break;
  }
}

// The GgmlLegacy family (kernels/kernel_args.h): blocks [begin, end) of a
// ggml type of this family (Q4_0 … Q8_1, IQ4_NL, MXFP4, NVFP4, Q1_0, Q2_0);
// other types are ignored.
HWY_INLINE void DecodeGgmlLegacy(const kernels::GgmlArgs& a, size_t begin, size_t end,
                                 ElemType out_type, void* out) {
  const size_t n = end - begin;
  switch (static_cast<GgmlType>(a.type)) {
    case GgmlType::kQ4_0: GgmlLegacyOut<GgmlQ4_0>(a.blocks + begin * GgmlQ4_0::kBytes, n, out_type, out); break;
    case GgmlType::kQ4_1: GgmlLegacyOut<GgmlQ4_1>(a.blocks + begin * GgmlQ4_1::kBytes, n, out_type, out); break;
    case GgmlType::kQ5_0: GgmlLegacyOut<GgmlQ5_0>(a.blocks + begin * GgmlQ5_0::kBytes, n, out_type, out); break;
    case GgmlType::kQ5_1: GgmlLegacyOut<GgmlQ5_1>(a.blocks + begin * GgmlQ5_1::kBytes, n, out_type, out); break;
    case GgmlType::kQ8_0: GgmlLegacyOut<GgmlQ8_0>(a.blocks + begin * GgmlQ8_0::kBytes, n, out_type, out); break;
    case GgmlType::kQ8_1: GgmlLegacyOut<GgmlQ8_1>(a.blocks + begin * GgmlQ8_1::kBytes, n, out_type, out); break;
    case GgmlType::kIQ4_NL: GgmlLegacyOut<GgmlIq4Nl>(a.blocks + begin * GgmlIq4Nl::kBytes, n, out_type, out); break;
    case GgmlType::kMXFP4: GgmlLegacyOut<GgmlMxfp4>(a.blocks + begin * GgmlMxfp4::kBytes, n, out_type, out); break;
    case GgmlType::kNVFP4: GgmlLegacyOut<GgmlNvfp4>(a.blocks + begin * GgmlNvfp4::kBytes, n, out_type, out); break;
    case GgmlType::kQ1_0: GgmlLegacyOut<GgmlQ1_0>(a.blocks + begin * GgmlQ1_0::kBytes, n, out_type, out); break;
    case GgmlType::kQ2_0: GgmlLegacyOut<GgmlQ2_0>(a.blocks + begin * GgmlQ2_0::kBytes, n, out_type, out); break;
    default: break;
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace amn
HWY_AFTER_NAMESPACE();

#endif  // AMN_KERNELS_GGML_LEGACY_INL_H_
