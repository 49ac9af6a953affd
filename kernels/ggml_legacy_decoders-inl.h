// The ggml legacy block decoders for ggml_legacy-inl.h: per block, its
// scales (Scales: f16 d and m widened to F32 bits, Inf/NaN marked special);
// per chunk of N = Lanes(GgmlDU) elements, their F32 results (Chunk), the
// reference's arithmetic (kernels/ref/ggml_legacy_ref.cc) in vector lanes.
// How blocks become outputs (stores, byte tables, scale groups, dispatch)
// is in ggml_legacy-inl.h.
#if defined(AMN_KERNELS_GGML_LEGACY_DECODERS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef AMN_KERNELS_GGML_LEGACY_DECODERS_INL_H_
#undef AMN_KERNELS_GGML_LEGACY_DECODERS_INL_H_
#else
#define AMN_KERNELS_GGML_LEGACY_DECODERS_INL_H_
#endif

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "hwy/highway.h"
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
  static constexpr bool kSignedCodes = true;   // GgmlQ5DwordsBlock
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
  static constexpr bool kSignedCodes = false;  // GgmlQ5DwordsBlock
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

}  // namespace HWY_NAMESPACE
}  // namespace amn
HWY_AFTER_NAMESPACE();

#endif  // AMN_KERNELS_GGML_LEGACY_DECODERS_INL_H_
