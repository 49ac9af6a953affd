// Per-target OFP8 (E4M3FN, E5M2) -> F32/BF16/F16 cast kernels (Highway 1.0.3).
// Every FP8 value is exact in all three outputs, so these never round: the
// result is a bit-field rebias, with subnormal and special codes taken from an
// 8-entry table (kernels/fp8_tables.h) so no lane branches. F32 is the BF16
// result shifted left by 16, exact because every FP8 value is a BF16 value.
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

#include "hwy/highway.h"
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

// u8 codes -> F32 = BF16 << 16, computed in u32 lanes.
template <class Op>
struct Fp8ToF32Chunk {
  template <class DU32>
  HWY_INLINE void operator()(DU32 du32, const uint8_t* HWY_RESTRICT in,
                             float* HWY_RESTRICT out) const {
    const hn::Rebind<uint8_t, DU32> d8;
    const hn::RebindToFloat<DU32> df;
    const auto bf16 = Op()(du32, hn::PromoteTo(du32, hn::LoadU(d8, in)));
    hn::StoreU(hn::BitCast(df, hn::ShiftLeft<16>(bf16)), df, out);
  }
};

// One row: SCALAR runs the reference, other targets the vector chunks in
// lanes of type TLane (u16 for 16-bit outputs, u32 for F32).
template <typename TLane, template <class> class Chunk, class Op, typename TOut>
HWY_INLINE void Fp8Row(void (*reference)(const uint8_t*, size_t, TOut*),
                       const uint8_t* in, size_t n_elems, TOut* out) {
#if HWY_TARGET == HWY_SCALAR
  reference(in, n_elems, out);
#else
  (void)reference;
  ForEachVector(hn::ScalableTag<TLane>(), in, n_elems, out, Chunk<Op>());
#endif
}

// Row kernels: n_elems codes -> n_elems outputs, any alignment, no overlap.
HWY_INLINE void E4m3ToF32Kernel(const uint8_t* in, size_t n, float* out) {
  Fp8Row<uint32_t, Fp8ToF32Chunk, E4m3ToBf16Op>(ref::ConvertE4m3ToF32, in, n, out);
}
HWY_INLINE void E4m3ToBf16Kernel(const uint8_t* in, size_t n, uint16_t* out) {
  Fp8Row<uint16_t, Fp8To16Chunk, E4m3ToBf16Op>(ref::ConvertE4m3ToBf16, in, n, out);
}
HWY_INLINE void E4m3ToF16Kernel(const uint8_t* in, size_t n, uint16_t* out) {
  Fp8Row<uint16_t, Fp8To16Chunk, E4m3ToF16Op>(ref::ConvertE4m3ToF16, in, n, out);
}
HWY_INLINE void E5m2ToF32Kernel(const uint8_t* in, size_t n, float* out) {
  Fp8Row<uint32_t, Fp8ToF32Chunk, E5m2ToBf16Op>(ref::ConvertE5m2ToF32, in, n, out);
}
HWY_INLINE void E5m2ToBf16Kernel(const uint8_t* in, size_t n, uint16_t* out) {
  Fp8Row<uint16_t, Fp8To16Chunk, E5m2ToBf16Op>(ref::ConvertE5m2ToBf16, in, n, out);
}
HWY_INLINE void E5m2ToF16Kernel(const uint8_t* in, size_t n, uint16_t* out) {
  Fp8Row<uint16_t, Fp8To16Chunk, E5m2ToF16Op>(ref::ConvertE5m2ToF16, in, n, out);
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
