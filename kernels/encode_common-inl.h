// Per-target helpers every encoder body shares (Highway 1.0.3): loading a
// tile of BF16/F16/F32 input as F32 into a stack buffer (with the
// non-finite check), and adding a tile's errors to kernels::ErrorSums in the
// order kernels/encode_common.h fixes (lane = element index % 8), so the sums
// are the scalar reference's bytes on every vector width; or, for bodies
// that encode straight from the input (EncodeGroupsInRegisters), the same
// sums kept in registers, and max |x| with the non-finite check in one
// integer pass (AbsMaxBits).
// Not compiled for HWY_SCALAR: the encoders run their references there.
#if defined(AMN_KERNELS_ENCODE_COMMON_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef AMN_KERNELS_ENCODE_COMMON_INL_H_
#undef AMN_KERNELS_ENCODE_COMMON_INL_H_
#else
#define AMN_KERNELS_ENCODE_COMMON_INL_H_
#endif

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "hwy/highway.h"
#include "kernels/encode_common.h"
#include "kernels/float_convert-inl.h"

HWY_BEFORE_NAMESPACE();
namespace amn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR

// Elements per tile, and the padding after a tile buffer so full vectors
// can always be read and written past its last valid element.
inline constexpr size_t kEncodeTile = 256;
inline constexpr size_t kEncodePad = HWY_MAX_BYTES / sizeof(float);

using EncDF = hn::ScalableTag<float>;
using EncDU = hn::RebindToUnsigned<EncDF>;

// Input elements [i0, i0 + count) (count <= kEncodeTile) as F32 into xs,
// zero-padded to a whole number of vectors. Returns false if any of them is
// NaN or infinite.
HWY_INLINE bool LoadEncodeTile(const uint8_t* HWY_RESTRICT in, ElemType type, uint64_t i0,
                               size_t count, float* HWY_RESTRICT xs) {
  const EncDF df;
  const EncDU du;
  const size_t n = hn::Lanes(df);
  size_t k = 0;
  auto bad = hn::Zero(du);
  const auto exp_mask = hn::Set(du, 0x7F800000u);
  for (; k + n <= count; k += n) {
    hn::Vec<EncDU> bits;
    if (type == ElemType::kF32) {
      bits = FromF32()(du, reinterpret_cast<const float*>(in + 4 * (i0 + k)));
    } else if (type == ElemType::kBf16) {
      bits = FromBf16()(du, reinterpret_cast<const uint16_t*>(in + 2 * (i0 + k)));
    } else {
      bits = FromF16()(du, reinterpret_cast<const uint16_t*>(in + 2 * (i0 + k)));
    }
    // All exponent bits set: NaN or Inf.
    bad = hn::Or(bad, hn::VecFromMask(du, hn::Eq(hn::And(bits, exp_mask), exp_mask)));
    hn::StoreU(hn::BitCast(df, bits), df, xs + k);
  }
  bool finite = hn::AllTrue(du, hn::Eq(bad, hn::Zero(du)));
  for (; k < count; ++k) {
    const uint32_t bits = kernels::LoadInputBits(in, type, i0 + k);
    finite = finite && kernels::IsFiniteF32Bits(bits);
    xs[k] = std::bit_cast<float>(bits);
  }
  // xs has kEncodePad >= n floats after the tile.
  hn::StoreU(hn::Zero(df), df, xs + count);
  return finite;
}

// The first non-finite element of [i0, i0 + count) (one exists).
HWY_INLINE uint64_t FirstNonFinite(const uint8_t* in, ElemType type, uint64_t i0, size_t count) {
  for (size_t k = 0; k < count; ++k) {
    if (!kernels::IsFiniteF32Bits(kernels::LoadInputBits(in, type, i0 + k))) return i0 + k;
  }
  return i0 + count;  // not reached
}


// Input elements [i, i + N) as F32 bits (the loaders of LoadEncodeTile), for
// an input type fixed at compile time.
template <ElemType kType>
HWY_INLINE hn::Vec<EncDU> LoadInputLanes(const uint8_t* HWY_RESTRICT in, uint64_t i) {
  const EncDU du;
  if constexpr (kType == ElemType::kF32) {
    return FromF32()(du, reinterpret_cast<const float*>(in + 4 * i));
  } else if constexpr (kType == ElemType::kBf16) {
    return FromBf16()(du, reinterpret_cast<const uint16_t*>(in + 2 * i));
  } else {
    return FromF16()(du, reinterpret_cast<const uint16_t*>(in + 2 * i));
  }
}

// body(std::integral_constant<ElemType, T>()) for the input type T = type
// (BF16, F16 or F32): one branch per call instead of one per vector.
template <class Body>
HWY_INLINE auto WithInputType(ElemType type, const Body& body) {
  if (type == ElemType::kBf16) return body(std::integral_constant<ElemType, ElemType::kBf16>());
  if (type == ElemType::kF16) return body(std::integral_constant<ElemType, ElemType::kF16>());
  return body(std::integral_constant<ElemType, ElemType::kF32>());
}

// max |x| of input elements [i0, i0 + count) as F32 bits: for finite
// values the order of |x| is the order of its bits with the sign cleared,
// so one integer max gives both the absmax and the non-finite check (the
// result is >= 0x7F800000 exactly when some element is NaN or infinite).
// BF16 and F16 take the max on their 16-bit patterns (twice the lanes per
// vector) and widen it once: widening to F32 keeps the order, and keeps
// Inf and NaN at or above 0x7F800000.
template <ElemType kType>
HWY_INLINE uint32_t AbsMaxBits(const uint8_t* HWY_RESTRICT in, uint64_t i0, size_t count) {
  if constexpr (kType == ElemType::kF32) {
    const EncDU du;
    const size_t n = hn::Lanes(du);
    const auto magnitude = hn::Set(du, 0x7FFFFFFFu);
    auto m = hn::Zero(du);
    size_t k = 0;
    for (; k + n <= count; k += n) {
      m = hn::Max(m, hn::And(LoadInputLanes<kType>(in, i0 + k), magnitude));
    }
    uint32_t bits = hn::GetLane(hn::MaxOfLanes(du, m));
    for (; k < count; ++k) {
      bits = std::max(bits, kernels::LoadInputBits(in, kType, i0 + k) & 0x7FFFFFFFu);
    }
    return bits;
  } else {
    const hn::ScalableTag<uint16_t> d16;
    const size_t n = hn::Lanes(d16);
    const uint8_t* HWY_RESTRICT p = in + 2 * i0;
    const auto magnitude = hn::Set(d16, 0x7FFF);
    auto m = hn::Zero(d16);
    size_t k = 0;
    for (; k + n <= count; k += n) {
      m = hn::Max(m, hn::And(hn::LoadU(d16, reinterpret_cast<const uint16_t*>(p + 2 * k)),
                             magnitude));
    }
    uint16_t half = hn::GetLane(hn::MaxOfLanes(d16, m));
    for (; k < count; ++k) {
      half = std::max<uint16_t>(half, static_cast<uint16_t>((p[2 * k] | p[2 * k + 1] << 8) & 0x7FFF));
    }
    return kType == ElemType::kBf16 ? static_cast<uint32_t>(half) << 16
                                    : ref::F16ToF32Bits(half);
  }
}

// u32 lanes holding codes in their low byte -> bytes. On x86 a truncation is
// 1-3 shuffles where the saturating DemoteTo is 2-4 instructions (2-5 % of
// the FP8 encoder on the VM, performance/encoders.md). Highway 1.0.3's AVX3_DL
// TruncateTo(u8, u32) permutes dwords where it means bytes (wrong codes), so
// AVX3_DL spells out the AVX3 one: each 128-bit block's 4 low bytes to its
// first dword, then those 4 dwords to the bottom. The targets not measured
// (EMU128, Arm) keep a DemoteTo of the low bytes.
HWY_INLINE hn::Vec<hn::Rebind<uint8_t, EncDU>> CodesToBytes(hn::Rebind<uint8_t, EncDU> d8,
                                                           hn::Vec<EncDU> codes) {
#if HWY_TARGET == HWY_AVX3_DL
  (void)d8;
  const EncDU du;
  const hn::Repartition<uint8_t, EncDU> du8;
  alignas(16) static constexpr uint8_t kLowBytes[16] = {0, 4, 8, 12, 0, 4, 8, 12,
                                                        0, 4, 8, 12, 0, 4, 8, 12};
  alignas(64) static constexpr uint32_t kFirstDwords[16] = {0, 4, 8, 12, 0, 4, 8, 12,
                                                            0, 4, 8, 12, 0, 4, 8, 12};
  const auto quads = hn::TableLookupBytes(codes, hn::BitCast(du, hn::LoadDup128(du8, kLowBytes)));
  const auto packed = hn::TableLookupLanes(quads, hn::SetTableIndices(du, kFirstDwords));
  return hn::LowerHalf(hn::LowerHalf(hn::BitCast(du8, packed)));
#elif HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_SSE4 || \
    HWY_TARGET == HWY_SSSE3
  return hn::TruncateTo(d8, codes);
#else
  const EncDU du;
  return hn::DemoteTo(d8, hn::BitCast(hn::RebindToSigned<EncDU>(), hn::And(codes, hn::Set(du, 0xFFu))));
#endif
}

#if !HWY_HAVE_SCALABLE
// The low bytes of the u32 lanes of a, b, c, d, in that order: 4 * N bytes
// to out with one store. A byte shuffle per vector moves each 16-byte
// block's 4 codes into that block's dword m (m = 0 for a .. 3 for d), three
// ors merge them, and one lane permutation (none with 4 lanes) puts the
// dwords in element order: 9 instructions per 4 vectors where CodesToBytes
// and a store per vector take 12-16.
HWY_INLINE void StoreLowBytes4(hn::Vec<EncDU> a, hn::Vec<EncDU> b, hn::Vec<EncDU> c,
                               hn::Vec<EncDU> d, uint8_t* HWY_RESTRICT out) {
  const EncDU du;
  const hn::Repartition<uint8_t, EncDU> d8;
  constexpr uint8_t Z = 0x80;  // TableLookupBytesOr0: a zero byte
  alignas(16) static constexpr uint8_t kToDword[4][16] = {
      {0, 4, 8, 12, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z},
      {Z, Z, Z, Z, 0, 4, 8, 12, Z, Z, Z, Z, Z, Z, Z, Z},
      {Z, Z, Z, Z, Z, Z, Z, Z, 0, 4, 8, 12, Z, Z, Z, Z},
      {Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, 0, 4, 8, 12}};
  const auto pick = [&](hn::Vec<EncDU> v, size_t m) {
    return hn::TableLookupBytesOr0(hn::BitCast(d8, v), hn::LoadDup128(d8, kToDword[m]));
  };
  auto dwords =
      hn::BitCast(du, hn::Or(hn::Or(pick(a, 0), pick(b, 1)), hn::Or(pick(c, 2), pick(d, 3))));
  // Dword 4k + m holds lanes 4k .. 4k+3 of vector m; output dword p is
  // element 4p, lane 4p % N of vector 4p / N.
  constexpr size_t kBlocks = hn::MaxLanes(du) / 4;
  if constexpr (kBlocks > 1) {
    struct Order {
      alignas(64) uint32_t lane[4 * kBlocks];
    };
    static constexpr Order kOrder = [] {
      Order o{};
      for (uint32_t p = 0; p < 4 * kBlocks; ++p) o.lane[p] = 4 * (p % kBlocks) + p / kBlocks;
      return o;
    }();
    dwords = hn::TableLookupLanes(dwords, hn::SetTableIndices(du, kOrder.lane));
  }
  hn::StoreU(hn::BitCast(d8, dwords), d8, out);
}
#endif

#if HWY_HAVE_FLOAT64 && !HWY_HAVE_SCALABLE
// The Lethe sums (encode_common.h) of a run of elements that starts at an
// index multiple of 8, kept in registers while the codes are computed, so
// neither x nor x' goes through memory. The two halves of an F32 vector of
// N lanes widen to doubles of N / 2 lanes; lane l of the sums is lane
// l % (N / 2) of accumulator l / (N / 2), so there are 16 / N accumulators
// (1 with AVX-512, 2 with AVX2, 4 with SSE4) and a group of 8 elements is
// max(1, 8 / N) vectors. Each lane adds its elements in increasing index
// order, as the reference does.
class EncodeErrorRegs {
 public:
  using DD = hn::CappedTag<double, kernels::kErrorLanes>;
  static constexpr size_t kN = hn::MaxLanes(EncDF());
  static constexpr size_t kHalf = kN / 2;  // double lanes per accumulator
  static constexpr size_t kV = kernels::kErrorLanes / kHalf;
  // Vectors per group of kErrorLanes elements.
  static constexpr size_t kGroupVectors = kN >= kernels::kErrorLanes ? 1 : kernels::kErrorLanes / kN;
  static_assert(kHalf * kV == kernels::kErrorLanes && kHalf == hn::MaxLanes(DD()) &&
                kGroupVectors <= 2);

  HWY_INLINE explicit EncodeErrorRegs(const kernels::ErrorSums& sums) {
    const DD dd;
    for (size_t j = 0; j < kV; ++j) {
      abs_[j] = hn::LoadU(dd, sums.abs + j * kHalf);
      sq_[j] = hn::LoadU(dd, sums.sq_err + j * kHalf);
      ref_[j] = hn::LoadU(dd, sums.sq_ref + j * kHalf);
    }
    max_ = hn::Zero(dd);
  }

  // Vector u (0 .. kGroupVectors - 1) of a group: x and x'.
  template <size_t u>
  HWY_INLINE void Add(hn::Vec<EncDF> x, hn::Vec<EncDF> xq) {
    const hn::Rebind<float, DD> dh;
    Add1((2 * u) % kV, hn::LowerHalf(dh, x), hn::LowerHalf(dh, xq));
    Add1((2 * u + 1) % kV, hn::UpperHalf(dh, x), hn::UpperHalf(dh, xq));
  }

  // One group of kErrorLanes elements from memory: the half vectors are
  // loaded (and widened) directly, with no split of a whole F32 vector.
  HWY_INLINE void AddGroup(const float* HWY_RESTRICT x, const float* HWY_RESTRICT xq) {
    const hn::Rebind<float, DD> dh;
    for (size_t j = 0; j < kV; ++j) {
      Add1(j, hn::LoadU(dh, x + j * kHalf), hn::LoadU(dh, xq + j * kHalf));
    }
  }

  HWY_INLINE void Store(kernels::ErrorSums& sums) const {
    const DD dd;
    for (size_t j = 0; j < kV; ++j) {
      hn::StoreU(abs_[j], dd, sums.abs + j * kHalf);
      hn::StoreU(sq_[j], dd, sums.sq_err + j * kHalf);
      hn::StoreU(ref_[j], dd, sums.sq_ref + j * kHalf);
    }
    const double m = hn::GetLane(hn::MaxOfLanes(dd, max_));
    if (m > sums.max_abs) sums.max_abs = m;
  }

 private:
  HWY_INLINE void Add1(size_t j, hn::Vec<hn::Rebind<float, DD>> xh,
                       hn::Vec<hn::Rebind<float, DD>> qh) {
    const DD dd;
    const auto x = hn::PromoteTo(dd, xh);
    const auto d = hn::Sub(x, hn::PromoteTo(dd, qh));
    const auto a = hn::Abs(d);
    abs_[j] = hn::Add(abs_[j], a);
    sq_[j] = hn::Add(sq_[j], hn::Mul(d, d));
    ref_[j] = hn::Add(ref_[j], hn::Mul(x, x));
    max_ = hn::Max(max_, a);
  }

  hn::Vec<DD> abs_[kV], sq_[kV], ref_[kV], max_;
};

// Elements [i0, i0 + count) of the call, read straight from the input in
// whole groups of kGroupVectors vectors (i0 a multiple of 8 when errors is
// set): encode(x, k) stores the codes of elements i0 + k .. and returns
// their x'; the errors are added in registers. Returns how many elements
// it did (the rest, fewer than a group, is the caller's); *bits_max gets
// the max of |x|'s F32 bits over them (>= 0x7F800000: a non-finite one).
template <ElemType kType, class Encode>
HWY_INLINE size_t EncodeGroupsInRegisters(const uint8_t* HWY_RESTRICT in, uint64_t i0,
                                          size_t count, kernels::ErrorSums* errors,
                                          const Encode& encode, uint32_t* bits_max) {
  const EncDF df;
  const EncDU du;
  constexpr size_t kN = EncodeErrorRegs::kN;
  constexpr size_t kG = EncodeErrorRegs::kGroupVectors * kN;
  const auto magnitude = hn::Set(du, 0x7FFFFFFFu);
  auto m = hn::Zero(du);
  size_t k = 0;
  const auto one = [&](auto u, auto& regs) {
    const auto bits = LoadInputLanes<kType>(in, i0 + k + u * kN);
    m = hn::Max(m, hn::And(bits, magnitude));
    const auto x = hn::BitCast(df, bits);
    const auto xq = encode(x, k + u * kN);
    if constexpr (!std::is_same_v<std::decay_t<decltype(regs)>, std::nullptr_t>) {
      regs.template Add<decltype(u)::value>(x, xq);
    }
  };
  if (errors != nullptr) {
    EncodeErrorRegs regs(*errors);
    for (; k + kG <= count; k += kG) {
      one(std::integral_constant<size_t, 0>(), regs);
      if constexpr (EncodeErrorRegs::kGroupVectors == 2) one(std::integral_constant<size_t, 1>(), regs);
    }
    regs.Store(*errors);
  } else {
    std::nullptr_t none;
    for (; k + kN <= count; k += kN) one(std::integral_constant<size_t, 0>(), none);
  }
  *bits_max = hn::GetLane(hn::MaxOfLanes(du, m));
  return k;
}

// The whole groups from xs[k] on (index + k a multiple of 8) through the
// same registers, x and x' read from the tiles. Returns the new k.
HWY_INLINE size_t AddEncodeErrorsInRegisters(const float* HWY_RESTRICT xs,
                                             const float* HWY_RESTRICT xq, size_t k, size_t count,
                                             kernels::ErrorSums& sums) {
  EncodeErrorRegs regs(sums);
  for (; k + kernels::kErrorLanes <= count; k += kernels::kErrorLanes) {
    regs.AddGroup(xs + k, xq + k);
  }
  regs.Store(sums);
  return k;
}
#endif

// Adds the errors of elements [index, index + count) of the call, x in xs,
// x' in xq. Vectors of N double lanes (N divides 8) cover the elements from
// the first index that is a multiple of 8 in steps of N, each vector adding
// into lanes (index % 8) .. (index % 8) + N - 1 of the sums; the elements
// before it and after the last whole vector go through kernels::AddError.
// Every lane thus adds its elements in increasing index order, as the
// reference does.
HWY_INLINE void AddEncodeErrors(const float* HWY_RESTRICT xs, const float* HWY_RESTRICT xq,
                                uint64_t index, size_t count, kernels::ErrorSums& sums) {
  size_t k = 0;
#if HWY_HAVE_FLOAT64
  const hn::CappedTag<double, kernels::kErrorLanes> dd;
  const hn::Rebind<float, decltype(dd)> dfh;
  const size_t n = hn::Lanes(dd);
  if (kernels::kErrorLanes % n == 0) {
    for (; k < count && (index + k) % kernels::kErrorLanes != 0; ++k) {
      kernels::AddError(sums, index + k, xs[k], xq[k]);
    }
#if !HWY_HAVE_SCALABLE
    // Fixed-width targets keep the sums in registers (EncodeErrorRegs).
    k = AddEncodeErrorsInRegisters(xs, xq, k, count, sums);
#endif
    // Whatever is left in whole vectors (all of it on scalable targets),
    // through the sums in memory.
    auto vmax = hn::Zero(dd);
    for (; k + n <= count; k += n) {
      const size_t lane = static_cast<size_t>((index + k) % kernels::kErrorLanes);
      const auto x = hn::PromoteTo(dd, hn::LoadU(dfh, xs + k));
      const auto d = hn::Sub(x, hn::PromoteTo(dd, hn::LoadU(dfh, xq + k)));
      const auto a = hn::Abs(d);
      hn::StoreU(hn::Add(hn::LoadU(dd, sums.abs + lane), a), dd, sums.abs + lane);
      hn::StoreU(hn::Add(hn::LoadU(dd, sums.sq_err + lane), hn::Mul(d, d)), dd,
                 sums.sq_err + lane);
      hn::StoreU(hn::Add(hn::LoadU(dd, sums.sq_ref + lane), hn::Mul(x, x)), dd,
                 sums.sq_ref + lane);
      vmax = hn::Max(vmax, a);
    }
    const double m = hn::GetLane(hn::MaxOfLanes(dd, vmax));
    if (m > sums.max_abs) sums.max_abs = m;
  }
#endif
  for (; k < count; ++k) kernels::AddError(sums, index + k, xs[k], xq[k]);
}

#endif  // HWY_TARGET != HWY_SCALAR

}  // namespace HWY_NAMESPACE
}  // namespace amn
HWY_AFTER_NAMESPACE();

#endif  // include guard
