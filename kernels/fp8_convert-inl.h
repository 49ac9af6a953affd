// Per-target OFP8 (E4M3FN, E5M2) -> F32/BF16/F16 cast kernels (Highway 1.0.3).
// Every FP8 value is exact in all three outputs, so these never round: the
// result is a bit-field rebias, with subnormal and special codes taken from an
// 8-entry table (kernels/fp8_tables.h) so no lane branches. F32 is the BF16
// result shifted left by 16, exact because every FP8 value is a BF16 value,
// except on F16C targets, where vcvtph2ps widens the codes read as F16 bits
// (Fp8AsF16, Fp8HalfToF32).
// Same bytes as kernels/ref/fp8_ref.cc on every target; the SCALAR target
// (one-lane vectors, no 16-byte table lookup) runs that reference. On x86
// and NEON the BF16 and F16 outputs are byte maps instead: nibble lookups
// into constant tables (MapByNibbles), and E5M2 -> F16 a byte interleave;
// on SSE4 and SSSE3 the F32 outputs too (the BF16 map, widened).
#if defined(AMN_KERNELS_FP8_CONVERT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef AMN_KERNELS_FP8_CONVERT_INL_H_
#undef AMN_KERNELS_FP8_CONVERT_INL_H_
#else
#define AMN_KERNELS_FP8_CONVERT_INL_H_
#endif

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "hwy/highway.h"
#include "kernels/float_convert-inl.h"
#include "kernels/fp8_tables.h"
#include "kernels/int4_byte_table-inl.h"
#include "kernels/kernel_args.h"
#include "kernels/ref/fp8_ref.h"
#include "kernels/row_driver-inl.h"

HWY_BEFORE_NAMESPACE();
namespace amn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The templates below are instantiated on every target but SCALAR (see
// Fp8Row): Highway's one-lane TableLookupBytes cannot look up 16 bytes.

// table[idx] (idx in [0, 8)) in each u16 or u32 lane, zero-extended. The
// table repeats in every 128-bit block, where TableLookupBytes looks up; a
// byte index of 0x80 yields zero.
template <class DU>
HWY_INLINE hn::Vec<DU> LookupTable8(DU du, hn::Vec<DU> idx, const Fp8Table8& table) {
  using T = hn::TFromD<DU>;
  const hn::Repartition<uint8_t, DU> d8;
  // Lane value idx -> bytes {2 idx, 2 idx + 1, 0x80, 0x80} (little-endian).
  const T upper_zero = sizeof(T) == 4 ? static_cast<T>(0x80800000u) : T{0};
  const auto byte_idx = hn::Add(hn::Mul(idx, hn::Set(du, T{0x0202})),
                                hn::Set(du, static_cast<T>(0x0100u | upper_zero)));
  return hn::BitCast(du, hn::TableLookupBytes(hn::LoadDup128(d8, table.bytes),
                                              hn::BitCast(d8, byte_idx)));
}

template <class DU>
HWY_INLINE hn::Vec<DU> SignTo16(DU du, hn::Vec<DU> code) {
  return hn::ShiftLeft<8>(hn::And(code, hn::Set(du, hn::TFromD<DU>{0x80})));
}

// E4M3FN code -> BF16 (kShift 4, kBias 120 << 7) or F16 (kShift 7, kBias
// 8 << 10): normal codes rebias (|code| << kShift) + kBias, i.e. exponent
// e - 7 + 127 (or + 15) and mantissa m moved to the top; |code| < 8 from the
// subnormal table; |code| == 0x7F is NaN.
template <int kShift, uint16_t kBias, class DU>
HWY_INLINE hn::Vec<DU> E4m3To16Lanes(DU du, hn::Vec<DU> code, const Fp8Table8& subnormals,
                                     uint16_t nan) {
  using T = hn::TFromD<DU>;
  const hn::RebindToSigned<DU> di;
  const auto abs = hn::And(code, hn::Set(du, T{0x7F}));
  const auto abs_i = hn::BitCast(di, abs);
  const auto normal = hn::Add(hn::ShiftLeft<kShift>(abs), hn::Set(du, T{kBias}));
  const auto subnormal = LookupTable8(du, hn::And(abs, hn::Set(du, T{7})), subnormals);
  auto magnitude = hn::IfThenElse(hn::RebindMask(du, hn::Lt(abs_i, hn::Set(di, 8))),
                                  subnormal, normal);
  magnitude = hn::IfThenElse(hn::RebindMask(du, hn::Eq(abs_i, hn::Set(di, 0x7F))),
                             hn::Set(du, T{nan}), magnitude);
  return hn::Or(magnitude, SignTo16(du, code));
}

// E5M2 code -> BF16: normal codes (e - 15 + 127) << 7 | m << 5, i.e.
// (|code| << 5) + (112 << 7); subnormals (|code| < 4) and Inf/NaN
// (|code| >= 0x7C) from the table at index (|code| & 3) | ((|code| >> 4) & 4).
template <class DU>
HWY_INLINE hn::Vec<DU> E5m2ToBf16Lanes(DU du, hn::Vec<DU> code) {
  using T = hn::TFromD<DU>;
  const hn::RebindToSigned<DU> di;
  const auto abs = hn::And(code, hn::Set(du, T{0x7F}));
  const auto abs_i = hn::BitCast(di, abs);
  const auto normal = hn::Add(hn::ShiftLeft<5>(abs), hn::Set(du, T{112 << 7}));
  const auto idx = hn::Or(hn::And(abs, hn::Set(du, T{3})),
                          hn::And(hn::ShiftRight<4>(abs), hn::Set(du, T{4})));
  const auto special = LookupTable8(du, idx, kE5m2SpecialBf16);
  const auto use_table = hn::Or(hn::Lt(abs_i, hn::Set(di, 4)),
                                hn::Gt(abs_i, hn::Set(di, 0x7B)));
  return hn::Or(hn::IfThenElse(hn::RebindMask(du, use_table), special, normal),
                SignTo16(du, code));
}

// E5M2 code -> F16: the code is the F16's upper byte; NaNs get the quiet bit.
template <class DU>
HWY_INLINE hn::Vec<DU> E5m2ToF16Lanes(DU du, hn::Vec<DU> code) {
  using T = hn::TFromD<DU>;
  const hn::RebindToSigned<DU> di;
  const auto abs_i = hn::BitCast(di, hn::And(code, hn::Set(du, T{0x7F})));
  const auto quiet = hn::IfThenElseZero(hn::RebindMask(du, hn::Gt(abs_i, hn::Set(di, 0x7C))),
                                        hn::Set(du, T{0x0200}));
  return hn::Or(hn::ShiftLeft<8>(code), quiet);
}

struct E4m3ToBf16Op {
  template <class DU>
  HWY_INLINE hn::Vec<DU> operator()(DU du, hn::Vec<DU> code) const {
    return E4m3To16Lanes<4, (120 << 7)>(du, code, kE4m3SubnormalBf16, kE4m3NanBf16);
  }
};
struct E4m3ToF16Op {
  template <class DU>
  HWY_INLINE hn::Vec<DU> operator()(DU du, hn::Vec<DU> code) const {
    return E4m3To16Lanes<7, (8 << 10)>(du, code, kE4m3SubnormalF16, kE4m3NanF16);
  }
};
struct E5m2ToBf16Op {
  template <class DU>
  HWY_INLINE hn::Vec<DU> operator()(DU du, hn::Vec<DU> code) const {
    return E5m2ToBf16Lanes(du, code);
  }
};
struct E5m2ToF16Op {
  template <class DU>
  HWY_INLINE hn::Vec<DU> operator()(DU du, hn::Vec<DU> code) const {
    return E5m2ToF16Lanes(du, code);
  }
};

#if AMN_BYTE_TABLES
// FP8 codes to 16-bit words through nibble tables (x86 targets and NEON; the
// 16-byte lookups are pshufb or TBL), shared by the plain casts below and
// the scaled BF16 kernel (fp8_dequant-inl.h). A code is sign | h | lo, h the
// top three exponent bits and lo the low nibble (the other exponent bits and
// the mantissa). Where a function of the code only moves the exponent field of
// its 16-bit output with the code's exponent (an exact cast; a scaled
// product that stays normal), the output of a normal code is
//   normal[lo] + (hi_add[h] << 8)
// because h steps the exponent in whole high-byte units (kHiStep: E4M3
// steps 2 exponents, i.e. 1 in a BF16 high byte and 8 in an F16 one; E5M2
// steps 4, 2 in a BF16 high byte), and a negative code flips bit 15 (hi_add
// adds 0x80 to the high byte). The codes no exponent step reaches
// (subnormals and zero at h & 7 == 0; E4M3 NaN, E5M2 Inf and NaN at
// h & 7 == 7) take `special` entries instead, picked per lane by a pair of
// class lookups. Every entry is one output of the function itself, so the
// tables give its bits for every code (the exhaustive tests pin this).
struct Fp8NibbleTables {
  alignas(16) uint8_t normal_lo[16];
  alignas(16) uint8_t normal_hi[16];
  alignas(16) uint8_t special_lo[16];
  alignas(16) uint8_t special_hi[16];
};

// Format constants, by the decode Op of the output: the exponent bias, the
// high-byte step of one h step, the largest finite code, and which low
// nibbles are special at h & 7 == 0 (low) and 7 (high).
template <class Decode>
struct Fp8NibbleFormat;
template <>
struct Fp8NibbleFormat<E4m3ToBf16Op> {
  static constexpr uint32_t kBias = 7;
  static constexpr uint8_t kHiStep = 1;
  static constexpr uint8_t kMaxFinite = 0x7E;
  static constexpr bool LowSpecial(size_t lo) { return lo < 8; }
  static constexpr bool HighSpecial(size_t lo) { return lo == 15; }
};
template <>
struct Fp8NibbleFormat<E4m3ToF16Op> : Fp8NibbleFormat<E4m3ToBf16Op> {
  static constexpr uint8_t kHiStep = 8;
};
template <>
struct Fp8NibbleFormat<E5m2ToBf16Op> {
  static constexpr uint32_t kBias = 15;
  static constexpr uint8_t kHiStep = 2;
  static constexpr uint8_t kMaxFinite = 0x7B;
  static constexpr bool LowSpecial(size_t lo) { return lo < 4; }
  static constexpr bool HighSpecial(size_t lo) { return lo >= 12; }
};

// What h adds to the high byte: its exponent steps, and the sign.
template <class Format>
alignas(16) inline constexpr auto kNibbleHiAdd = [] {
  std::array<uint8_t, 16> add{};
  for (size_t h = 0; h < 16; ++h) {
    add[h] = static_cast<uint8_t>((h & 7) * Format::kHiStep + (h & 8) * 16);
  }
  return add;
}();
// A lane is special when the classes of its lo and h agree: lo 1 (special
// at h & 7 == 0), 2 (special at 7) or 3 (never); h 1, 2 or 4 (neither).
template <class Format>
alignas(16) inline constexpr auto kNibbleLoClass = [] {
  std::array<uint8_t, 16> cls{};
  for (size_t lo = 0; lo < 16; ++lo) {
    cls[lo] = Format::LowSpecial(lo) ? 1 : Format::HighSpecial(lo) ? 2 : 3;
  }
  return cls;
}();
alignas(16) inline constexpr std::array<uint8_t, 16> kNibbleHiClass = {1, 4, 4, 4, 4, 4, 4, 2,
                                                                       1, 4, 4, 4, 4, 4, 4, 2};
// The codes whose outputs make the tables: [lo] the normal code with h = 1,
// [16 + lo] the special code of that lo, else the largest finite code (so
// a table build can see whether the largest output overflows).
template <class Format>
alignas(64) inline constexpr auto kNibbleBuildCodes = [] {
  std::array<uint8_t, 32> codes{};
  for (size_t lo = 0; lo < 16; ++lo) {
    codes[lo] = static_cast<uint8_t>(0x10 | lo);
    codes[16 + lo] = Format::LowSpecial(lo)    ? static_cast<uint8_t>(lo)
                     : Format::HighSpecial(lo) ? static_cast<uint8_t>(0x70 | lo)
                                               : Format::kMaxFinite;
  }
  return codes;
}();

// Fills *t from `words`, the 16-bit outputs of kNibbleBuildCodes<Format>;
// false when the largest finite code's output is BF16 Inf or NaN (the
// exponent steps would not hold up to it; only a scaled BF16 output can
// overflow).
template <class Decode>
HWY_INLINE bool FillNibbleTables(const uint16_t* HWY_RESTRICT words,
                                 Fp8NibbleTables* HWY_RESTRICT t) {
  using Format = Fp8NibbleFormat<Decode>;
  for (size_t lo = 0; lo < 16; ++lo) {
    const bool special = Format::LowSpecial(lo) || Format::HighSpecial(lo);
    if (!special && (words[16 + lo] & 0x7F80) == 0x7F80) return false;  // the largest overflows
    const uint8_t special_h = Format::LowSpecial(lo) ? 0 : 7;
    t->normal_lo[lo] = static_cast<uint8_t>(words[lo]);
    t->normal_hi[lo] = static_cast<uint8_t>((words[lo] >> 8) - kNibbleHiAdd<Format>[1]);
    t->special_lo[lo] = static_cast<uint8_t>(words[16 + lo]);
    t->special_hi[lo] =
        static_cast<uint8_t>((words[16 + lo] >> 8) - kNibbleHiAdd<Format>[special_h]);
  }
  return true;
}

// The order in which InterleaveLower/Upper of two byte vectors give 2 x N/2
// u16 outputs in element order: they pair bytes within 128-bit blocks, so on
// wider vectors block k must hold the k-th eighth-bytes of each half.
template <class D8>
HWY_INLINE hn::Vec<D8> ToInterleaveOrder(D8 d8, hn::Vec<D8> codes) {
  if constexpr (HWY_MAX_BYTES == 16) {
    return codes;
  } else {
    const hn::Repartition<uint64_t, D8> d64;
    const size_t n = hn::Lanes(d64);
    HWY_ALIGN int64_t order[HWY_MAX_BYTES / 8];
    for (size_t j = 0; j < n; ++j) order[j] = static_cast<int64_t>((j & 1) * (n / 2) + j / 2);
    return hn::BitCast(
        d8, hn::TableLookupLanes(hn::BitCast(d64, codes), hn::SetTableIndices(d64, order)));
  }
}

// out[k] = the word whose low and high bytes `map` gives for codes[k], k in
// [0, n): map(c, &lo, &hi) maps a byte vector of codes to those two bytes
// per lane. An F32 output is the word << 16 (a BF16 widened: every FP8
// value is a BF16, so the F32 cast's low halves are zero), in element order
// on vectors of one 128-bit block only. The last partial vector goes
// through zero-padded copies.
template <class D8, class Map, typename TOut>
HWY_INLINE void MapCodesToWords(D8 d8, const uint8_t* HWY_RESTRICT codes, size_t n, const Map& map,
                                TOut* HWY_RESTRICT out) {
  const size_t lanes = hn::Lanes(d8);
  const auto one_vector = [&](const uint8_t* HWY_RESTRICT in, TOut* HWY_RESTRICT dst) {
    hn::Vec<D8> lo, hi;
    map(ToInterleaveOrder(d8, hn::LoadU(d8, in)), &lo, &hi);
    if constexpr (std::is_same_v<TOut, float>) {
      static_assert(hn::MaxLanes(D8()) == 16, "F32 in element order needs one block");
      StoreEntryBytesAsF32(d8, lo, hi, dst);
    } else {
      StoreEntryBytes(d8, lo, hi, dst);
    }
  };
  size_t i = 0;
  for (; i + lanes <= n; i += lanes) one_vector(codes + i, out + i);
  if (i == n) return;
  HWY_ALIGN uint8_t code_tail[HWY_MAX_BYTES] = {};
  HWY_ALIGN TOut out_tail[HWY_MAX_BYTES];
  std::memcpy(code_tail, codes + i, n - i);
  one_vector(code_tail, out_tail);
  std::memcpy(out + i, out_tail, (n - i) * sizeof(TOut));
}

// out[k] = the output of codes[k] by the tables t, for k in [0, n).
template <class Decode, typename TOut>
HWY_INLINE void MapByNibbles(const uint8_t* HWY_RESTRICT codes, size_t n, const Fp8NibbleTables& t,
                             TOut* HWY_RESTRICT out) {
  using Format = Fp8NibbleFormat<Decode>;
  const hn::ScalableTag<uint8_t> d8;
  const auto normal_lo = hn::LoadDup128(d8, t.normal_lo);
  const auto normal_hi = hn::LoadDup128(d8, t.normal_hi);
  const auto special_lo = hn::LoadDup128(d8, t.special_lo);
  const auto special_hi = hn::LoadDup128(d8, t.special_hi);
  const auto hi_add = hn::LoadDup128(d8, kNibbleHiAdd<Format>.data());
  const auto lo_class = hn::LoadDup128(d8, kNibbleLoClass<Format>.data());
  const auto hi_class = hn::LoadDup128(d8, kNibbleHiClass.data());
  using V = hn::Vec<decltype(d8)>;
  MapCodesToWords(d8, codes, n, [&](V c, V* out_lo, V* out_hi) {
    const auto lo = hn::And(c, hn::Set(d8, 0x0F));
    const auto h = hn::ShiftRight<4>(c);
    const auto special =
        hn::Eq(hn::TableLookupBytes(lo_class, lo), hn::TableLookupBytes(hi_class, h));
    *out_lo = hn::IfThenElse(special, hn::TableLookupBytes(special_lo, lo),
                             hn::TableLookupBytes(normal_lo, lo));
    *out_hi = hn::Add(hn::IfThenElse(special, hn::TableLookupBytes(special_hi, lo),
                                     hn::TableLookupBytes(normal_hi, lo)),
                      hn::TableLookupBytes(hi_add, h));
  }, out);
}

// The constant tables of a plain cast (scale 1), from its reference's
// outputs, built once per target on first use. An F32 reference gives the
// tables of its high halves (its low halves are zero for every FP8 code:
// the exhaustive tests of the F32 casts hold the kernel to all 32 bits).
template <class Decode, typename TOut>
HWY_INLINE const Fp8NibbleTables& PlainNibbleTables(void (*reference)(const uint8_t*, size_t,
                                                                      TOut*)) {
  static const Fp8NibbleTables tables = [reference] {
    const auto& codes = kNibbleBuildCodes<Fp8NibbleFormat<Decode>>;
    TOut outputs[codes.size()];
    reference(codes.data(), codes.size(), outputs);
    uint16_t words[codes.size()];
    for (size_t k = 0; k < codes.size(); ++k) {
      if constexpr (std::is_same_v<TOut, float>) {
        words[k] = static_cast<uint16_t>(std::bit_cast<uint32_t>(outputs[k]) >> 16);
      } else {
        words[k] = outputs[k];
      }
    }
    Fp8NibbleTables t;
    FillNibbleTables<Decode>(words, &t);  // always true: no finite FP8 overflows BF16 or F16
    return t;
  }();
  return tables;
}

// E5M2 -> F16 as bytes: the low byte is zero and the high byte the code,
// with the F16 quiet bit (0x02 there) set on NaN codes (|code| > 0x7C).
HWY_INLINE void E5m2ToF16Bytes(const uint8_t* HWY_RESTRICT codes, size_t n,
                               uint16_t* HWY_RESTRICT out) {
  const hn::ScalableTag<uint8_t> d8;
  const hn::RebindToSigned<decltype(d8)> di8;
  using V = hn::Vec<decltype(d8)>;
  MapCodesToWords(d8, codes, n, [&](V c, V* out_lo, V* out_hi) {
    const auto abs = hn::BitCast(di8, hn::And(c, hn::Set(d8, 0x7F)));
    const auto nan = hn::RebindMask(d8, hn::Gt(abs, hn::Set(di8, 0x7C)));
    *out_lo = hn::Zero(d8);
    *out_hi = hn::Or(c, hn::IfThenElseZero(nan, hn::Set(d8, 0x02)));
  }, out);
}
#endif  // AMN_BYTE_TABLES

// u8 codes -> 16-bit results, computed in u16 lanes.
template <class Op>
struct Fp8To16Chunk {
  template <class DU16>
  HWY_INLINE void operator()(DU16 du16, const uint8_t* HWY_RESTRICT in,
                             uint16_t* HWY_RESTRICT out) const {
    const hn::Rebind<uint8_t, DU16> d8;
    hn::StoreU(Op()(du16, hn::PromoteTo(du16, hn::LoadU(d8, in))), du16, out);
  }
};

#if AMN_F16_HARDWARE_DEMOTE
// F16C targets (AVX2, AVX3, AVX3_DL) read the codes as F16 bits, which
// vcvtph2ps widens to F32 exactly (it ignores MXCSR.DAZ, Intel SDM, so F16
// subnormals convert exactly too):
// * E5M2: code << 8 is the F16 of the same value.
// * E4M3FN: the code sign-extended to 16 bits, << 7, bit 14 cleared, is the
//   sign at bit 15 over |code| at bits 7..13: the F16 with exponent field e
//   and mantissa m << 7, which is exactly 2^-8 times the E4M3 value (normal:
//   2^(e-15) (1 + m/8) against 2^(e-7) (1 + m/8); e == 0: an F16 subnormal,
//   m 2^-17 against m 2^-9). Users multiply by kScaleFactor = 2^8 (or fold
//   it into a scale).
// Load leaves the special codes (E4M3 NaN; E5M2 Inf and NaN) wrong or
// unquieted; Special finds them, LoadExact fixes them.
template <class Op>
struct Fp8AsF16 {
  static constexpr bool kE4m3 = std::is_same_v<Op, E4m3ToBf16Op>;
  static constexpr float kScaleFactor = kE4m3 ? 256.0f : 1.0f;
  // F16 bits whose (bits & kSpecial) == kSpecial come from a special code.
  static constexpr uint16_t kSpecial = kE4m3 ? 0x3F80 : 0x7C00;

  template <class D16>
  static HWY_INLINE hn::Vec<D16> Load(D16 d16, const uint8_t* HWY_RESTRICT in) {
    if constexpr (kE4m3) {
      const hn::RebindToSigned<D16> di16;
      const hn::Rebind<int8_t, D16> di8;
      const auto widened =
          hn::PromoteTo(di16, hn::LoadU(di8, reinterpret_cast<const int8_t*>(in)));
      return hn::And(hn::ShiftLeft<7>(hn::BitCast(d16, widened)), hn::Set(d16, uint16_t{0xBFFF}));
    } else {
      const hn::Rebind<uint8_t, D16> d8;
      return hn::ShiftLeft<8>(hn::PromoteTo(d16, hn::LoadU(d8, in)));
    }
  }

  template <class D16>
  static HWY_INLINE hn::Mask<D16> Special(D16 d16, hn::Vec<D16> bits) {
    const auto special = hn::Set(d16, kSpecial);
    return hn::Eq(hn::And(bits, special), special);
  }

  // Load, with every code's F16 widening to the reference's F32 (times
  // 2^-8 for E4M3, NaN aside: a NaN times 2^8 is the same NaN). The E4M3
  // NaN 0x3F80 (| sign) becomes the F16 NaN 0x7F80, i.e. F32 0x7FF00000,
  // kernels/ref/fp8_ref.cc's NaN. E5M2 needs nothing: vcvtph2ps quiets a
  // signalling NaN as the reference does (sets bit 22, keeps the payload).
  template <class D16>
  static HWY_INLINE hn::Vec<D16> LoadExact(D16 d16, const uint8_t* HWY_RESTRICT in) {
    const auto bits = Load(d16, in);
    if constexpr (kE4m3) {
      return hn::Or(bits, hn::IfThenElseZero(Special(d16, bits), hn::Set(d16, uint16_t{0x4000})));
    } else {
      return bits;
    }
  }
};

// The lower / upper half of 2N F16 bits (N = Lanes(df)) as F32, through
// vcvtph2ps, in element order.
template <class DF, class V16>
HWY_INLINE hn::Vec<DF> WidenF16Lower(DF df, V16 bits) {
  const hn::Rebind<uint16_t, DF> dh;
  const hn::Rebind<hwy::float16_t, DF> df16;
  return hn::PromoteTo(df, hn::BitCast(df16, hn::LowerHalf(dh, bits)));
}
template <class DF, class V16>
HWY_INLINE hn::Vec<DF> WidenF16Upper(DF df, V16 bits) {
  const hn::Rebind<uint16_t, DF> dh;
  const hn::Rebind<hwy::float16_t, DF> df16;
  return hn::PromoteTo(df, hn::BitCast(df16, hn::UpperHalf(dh, bits)));
}

// Exact F32 of the lower (kUpper false) or upper half of LoadExact's F16
// bits: vcvtph2ps, and for E4M3 one exact Mul by 2^8.
template <class Op, bool kUpper, class DF, class V16>
HWY_INLINE hn::Vec<DF> Fp8HalfToF32(DF df, V16 bits) {
  using AsF16 = Fp8AsF16<Op>;
  const auto wide = kUpper ? WidenF16Upper(df, bits) : WidenF16Lower(df, bits);
  if constexpr (AsF16::kE4m3) {
    return hn::Mul(wide, hn::Set(df, AsF16::kScaleFactor));
  } else {
    return wide;
  }
}

// u8 codes -> F32 on F16C targets.
template <class Op>
struct Fp8ToF32Chunk {
  template <class D16>
  HWY_INLINE void operator()(D16 d16, const uint8_t* HWY_RESTRICT in,
                             float* HWY_RESTRICT out) const {
    const hn::Repartition<float, D16> df;
    const auto bits = Fp8AsF16<Op>::LoadExact(d16, in);
    hn::StoreU(Fp8HalfToF32<Op, false>(df, bits), df, out);
    hn::StoreU(Fp8HalfToF32<Op, true>(df, bits), df, out + hn::Lanes(df));
  }
};
#else
// u8 codes -> F32 = BF16 << 16 elsewhere (SVE; EMU128 and AVX2 without
// F16C; SSE4 and SSSE3 take the nibble tables instead, below): decoded in
// u32 lanes, where no interleave across 128-bit blocks is needed.
template <class Op>
struct Fp8ToF32Chunk {
  template <class D16>
  HWY_INLINE void operator()(D16 /* d16: the u16 tag ForEachVector steps by */,
                             const uint8_t* HWY_RESTRICT in, float* HWY_RESTRICT out) const {
    const hn::Repartition<uint32_t, D16> du32;
    const hn::Rebind<uint8_t, decltype(du32)> d8;
    const hn::RebindToFloat<decltype(du32)> df;
    const size_t n = hn::Lanes(df);
    for (size_t half = 0; half < 2; ++half) {
      const auto bf16 = Op()(du32, hn::PromoteTo(du32, hn::LoadU(d8, in + half * n)));
      hn::StoreU(hn::BitCast(df, hn::ShiftLeft<16>(bf16)), df, out + half * n);
    }
  }
};
#endif

// The 16-bit casts take the nibble tables (MapByNibbles, E5m2ToF16Bytes) on
// x86 targets but SCALAR, where they measured faster than the u16-lane
// decode (docs/performance/fp8.md, "Plain FP8 to BF16 and F16 through constant
// nibble tables"), and on NEON (untimed: about half the instructions per
// element under emulation, docs/performance/arm.md); SVE keeps the u16 lanes.
#undef AMN_FP8_NIBBLE_CASTS  // this header is read once per target
#if AMN_BYTE_TABLES
#define AMN_FP8_NIBBLE_CASTS 1
#else
#define AMN_FP8_NIBBLE_CASTS 0
#endif
// F32 outputs too where no F16 hardware widens the codes and the vectors
// are one 128-bit block (SSE4, SSSE3; Arm NEON has FCVTL): the BF16
// tables, widened by a zero interleave (StoreEntryBytesAsF32).
#undef AMN_FP8_F32_BY_NIBBLES
#if AMN_FP8_NIBBLE_CASTS && !AMN_F16_HARDWARE_DEMOTE && HWY_MAX_BYTES == 16
#define AMN_FP8_F32_BY_NIBBLES 1
#else
#define AMN_FP8_F32_BY_NIBBLES 0
#endif

// One row: SCALAR runs the reference, other targets the vector chunks, one
// u16 vector's worth of codes each.
template <template <class> class Chunk, class Op, typename TOut>
HWY_INLINE void Fp8Row(void (*reference)(const uint8_t*, size_t, TOut*),
                       const uint8_t* in, size_t n_elems, TOut* out) {
#if HWY_TARGET == HWY_SCALAR
  reference(in, n_elems, out);
#else
  (void)reference;
  ForEachVector(hn::ScalableTag<uint16_t>(), in, n_elems, out, Chunk<Op>());
#endif
}

// Row kernels: n_elems codes -> n_elems outputs, any alignment, no overlap.
HWY_INLINE void E4m3ToF32Kernel(const uint8_t* in, size_t n, float* out) {
#if AMN_FP8_F32_BY_NIBBLES
  MapByNibbles<E4m3ToBf16Op>(in, n, PlainNibbleTables<E4m3ToBf16Op>(ref::ConvertE4m3ToF32), out);
#else
  Fp8Row<Fp8ToF32Chunk, E4m3ToBf16Op>(ref::ConvertE4m3ToF32, in, n, out);
#endif
}
HWY_INLINE void E4m3ToBf16Kernel(const uint8_t* in, size_t n, uint16_t* out) {
#if AMN_FP8_NIBBLE_CASTS
  MapByNibbles<E4m3ToBf16Op>(in, n, PlainNibbleTables<E4m3ToBf16Op>(ref::ConvertE4m3ToBf16), out);
#else
  Fp8Row<Fp8To16Chunk, E4m3ToBf16Op>(ref::ConvertE4m3ToBf16, in, n, out);
#endif
}
HWY_INLINE void E4m3ToF16Kernel(const uint8_t* in, size_t n, uint16_t* out) {
#if AMN_FP8_NIBBLE_CASTS
  MapByNibbles<E4m3ToF16Op>(in, n, PlainNibbleTables<E4m3ToF16Op>(ref::ConvertE4m3ToF16), out);
#else
  Fp8Row<Fp8To16Chunk, E4m3ToF16Op>(ref::ConvertE4m3ToF16, in, n, out);
#endif
}
HWY_INLINE void E5m2ToF32Kernel(const uint8_t* in, size_t n, float* out) {
#if AMN_FP8_F32_BY_NIBBLES
  MapByNibbles<E5m2ToBf16Op>(in, n, PlainNibbleTables<E5m2ToBf16Op>(ref::ConvertE5m2ToF32), out);
#else
  Fp8Row<Fp8ToF32Chunk, E5m2ToBf16Op>(ref::ConvertE5m2ToF32, in, n, out);
#endif
}
HWY_INLINE void E5m2ToBf16Kernel(const uint8_t* in, size_t n, uint16_t* out) {
#if AMN_FP8_NIBBLE_CASTS
  MapByNibbles<E5m2ToBf16Op>(in, n, PlainNibbleTables<E5m2ToBf16Op>(ref::ConvertE5m2ToBf16), out);
#else
  Fp8Row<Fp8To16Chunk, E5m2ToBf16Op>(ref::ConvertE5m2ToBf16, in, n, out);
#endif
}
HWY_INLINE void E5m2ToF16Kernel(const uint8_t* in, size_t n, uint16_t* out) {
#if AMN_FP8_NIBBLE_CASTS
  E5m2ToF16Bytes(in, n, out);
#else
  Fp8Row<Fp8To16Chunk, E5m2ToF16Op>(ref::ConvertE5m2ToF16, in, n, out);
#endif
}

// The Fp8Convert family (kernels/kernel_args.h): elements [begin, end) of
// E4M3FN or E5M2 codes to F32/BF16/F16.
HWY_INLINE void DecodeFp8Convert(const kernels::ConvertArgs& a, size_t begin, size_t end,
                                 ElemType out_type, void* out) {
  const size_t n = end - begin;
  const auto* in = static_cast<const uint8_t*>(a.in) + begin;
  const bool e4m3 = a.in_type == ElemType::kF8E4m3;
  switch (out_type) {
    case ElemType::kF32:
      (e4m3 ? E4m3ToF32Kernel : E5m2ToF32Kernel)(in, n, static_cast<float*>(out));
      break;
    case ElemType::kBf16:
      (e4m3 ? E4m3ToBf16Kernel : E5m2ToBf16Kernel)(in, n, static_cast<uint16_t*>(out));
      break;
    case ElemType::kF16:
      (e4m3 ? E4m3ToF16Kernel : E5m2ToF16Kernel)(in, n, static_cast<uint16_t*>(out));
      break;
    default:
      break;
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace amn
HWY_AFTER_NAMESPACE();

#endif  // AMN_KERNELS_FP8_CONVERT_INL_H_
