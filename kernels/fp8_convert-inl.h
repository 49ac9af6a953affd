// Per-target OFP8 (E4M3FN, E5M2) -> F32/BF16/F16 cast kernels (Highway 1.0.3).
// Every FP8 value is exact in all three outputs, so these never round: the
// result is a bit-field rebias, with subnormal and special codes taken from an
// 8-entry table (kernels/fp8_tables.h) so no lane branches. F32 is the BF16
// result shifted left by 16, exact because every FP8 value is a BF16 value,
// except on F16C targets, where vcvtph2ps widens the codes read as F16 bits
// (Fp8AsF16, Fp8HalfToF32).
// Same bytes as kernels/ref/fp8_ref.cc on every target; the SCALAR target
// (one-lane vectors, no 16-byte table lookup) runs that reference.
#if defined(AMN_KERNELS_FP8_CONVERT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef AMN_KERNELS_FP8_CONVERT_INL_H_
#undef AMN_KERNELS_FP8_CONVERT_INL_H_
#else
#define AMN_KERNELS_FP8_CONVERT_INL_H_
#endif

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "hwy/highway.h"
#include "kernels/float_convert-inl.h"
#include "kernels/kernel_args.h"
#include "kernels/fp8_tables.h"
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

// u8 codes -> BF16 on F16C targets: the upper halves of the F32 (ConcatOdd).
// Taken on AVX2 only (Fp8ToBf16Chunk below).
template <class Op>
struct Fp8ToBf16ViaF16Chunk {
  template <class D16>
  HWY_INLINE void operator()(D16 d16, const uint8_t* HWY_RESTRICT in,
                             uint16_t* HWY_RESTRICT out) const {
    const hn::Repartition<float, D16> df;
    const hn::RebindToUnsigned<decltype(df)> du;
    const auto bits = Fp8AsF16<Op>::LoadExact(d16, in);
    StoreBf16UpperPair(du, hn::BitCast(du, Fp8HalfToF32<Op, false>(df, bits)),
                       hn::BitCast(du, Fp8HalfToF32<Op, true>(df, bits)), out);
  }
};
#elif HWY_MAX_BYTES == 16
// u8 codes -> F32 = BF16 << 16 on single-block targets (SSE4, SSSE3, NEON,
// EMU128): decoded in u16 lanes, then interleaved with zeros, which puts
// each BF16 in the upper half of its u32 lane and, in a vector of one
// 128-bit block, keeps element order.
template <class Op>
struct Fp8ToF32Chunk {
  template <class D16>
  HWY_INLINE void operator()(D16 d16, const uint8_t* HWY_RESTRICT in,
                             float* HWY_RESTRICT out) const {
    const hn::Rebind<uint8_t, D16> d8;
    const hn::Repartition<float, D16> df;
    const auto bf16 = Op()(d16, hn::PromoteTo(d16, hn::LoadU(d8, in)));
    const auto zero = hn::Zero(d16);
    hn::StoreU(hn::BitCast(df, hn::InterleaveLower(d16, zero, bf16)), df, out);
    hn::StoreU(hn::BitCast(df, hn::InterleaveUpper(d16, zero, bf16)), df, out + hn::Lanes(df));
  }
};
#else
// u8 codes -> F32 = BF16 << 16 elsewhere (SVE, AVX2 without F16C): the
// interleave works per 128-bit block there, so the codes are decoded in u32
// lanes, half as many per op.
template <class Op>
struct Fp8ToF32Chunk {
  template <class D16>
  HWY_INLINE void operator()(D16 d16, const uint8_t* HWY_RESTRICT in,
                             float* HWY_RESTRICT out) const {
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

// BF16 output goes through F16C on AVX2, where it measured faster than the
// u16-lane decode (docs/performance.md, "FP8 to F32 and BF16 through
// F16C"); on AVX3/AVX3_DL it measured no faster.
#if AMN_F16_HARDWARE_DEMOTE && HWY_TARGET == HWY_AVX2
template <class Op>
using Fp8ToBf16Chunk = Fp8ToBf16ViaF16Chunk<Op>;
#else
template <class Op>
using Fp8ToBf16Chunk = Fp8To16Chunk<Op>;
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
  Fp8Row<Fp8ToF32Chunk, E4m3ToBf16Op>(ref::ConvertE4m3ToF32, in, n, out);
}
HWY_INLINE void E4m3ToBf16Kernel(const uint8_t* in, size_t n, uint16_t* out) {
  Fp8Row<Fp8ToBf16Chunk, E4m3ToBf16Op>(ref::ConvertE4m3ToBf16, in, n, out);
}
HWY_INLINE void E4m3ToF16Kernel(const uint8_t* in, size_t n, uint16_t* out) {
  Fp8Row<Fp8To16Chunk, E4m3ToF16Op>(ref::ConvertE4m3ToF16, in, n, out);
}
HWY_INLINE void E5m2ToF32Kernel(const uint8_t* in, size_t n, float* out) {
  Fp8Row<Fp8ToF32Chunk, E5m2ToBf16Op>(ref::ConvertE5m2ToF32, in, n, out);
}
HWY_INLINE void E5m2ToBf16Kernel(const uint8_t* in, size_t n, uint16_t* out) {
  Fp8Row<Fp8ToBf16Chunk, E5m2ToBf16Op>(ref::ConvertE5m2ToBf16, in, n, out);
}
HWY_INLINE void E5m2ToF16Kernel(const uint8_t* in, size_t n, uint16_t* out) {
  Fp8Row<Fp8To16Chunk, E5m2ToF16Op>(ref::ConvertE5m2ToF16, in, n, out);
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
