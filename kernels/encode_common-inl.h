// Per-target helpers every encoder body shares (Highway 1.0.3): loading a
// tile of BF16/F16/F32 input as F32 into a stack buffer (with the
// non-finite check), and adding a tile's errors to kernels::ErrorSums in the
// order kernels/encode_common.h fixes (lane = element index % 8), so the sums
// are the scalar reference's bytes on every vector width.
// Not compiled for HWY_SCALAR: the encoders run their references there.
#if defined(AMN_KERNELS_ENCODE_COMMON_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef AMN_KERNELS_ENCODE_COMMON_INL_H_
#undef AMN_KERNELS_ENCODE_COMMON_INL_H_
#else
#define AMN_KERNELS_ENCODE_COMMON_INL_H_
#endif

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

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

#if HWY_HAVE_FLOAT64 && !HWY_HAVE_SCALABLE
// The whole groups of 8 elements from xs[k] on (index + k a multiple of 8),
// with the lanes' sums in kV registers of 8 / kV double lanes each (lane
// j * N + l of the sums in register j, lane l): the same additions in the
// same order as one lane at a time. Returns the new k.
template <size_t kV, class DD>
HWY_INLINE size_t AddEncodeErrorsInRegisters(DD dd, const float* HWY_RESTRICT xs,
                                             const float* HWY_RESTRICT xq, size_t k, size_t count,
                                             kernels::ErrorSums& sums) {
  const hn::Rebind<float, DD> dfh;
  constexpr size_t kN = kernels::kErrorLanes / kV;
  hn::Vec<DD> abs[kV], sq[kV], ref[kV];
  for (size_t j = 0; j < kV; ++j) {
    abs[j] = hn::LoadU(dd, sums.abs + j * kN);
    sq[j] = hn::LoadU(dd, sums.sq_err + j * kN);
    ref[j] = hn::LoadU(dd, sums.sq_ref + j * kN);
  }
  auto vmax = hn::Zero(dd);
  for (; k + kernels::kErrorLanes <= count; k += kernels::kErrorLanes) {
    for (size_t j = 0; j < kV; ++j) {
      const auto x = hn::PromoteTo(dd, hn::LoadU(dfh, xs + k + j * kN));
      const auto d = hn::Sub(x, hn::PromoteTo(dd, hn::LoadU(dfh, xq + k + j * kN)));
      const auto a = hn::Abs(d);
      abs[j] = hn::Add(abs[j], a);
      sq[j] = hn::Add(sq[j], hn::Mul(d, d));
      ref[j] = hn::Add(ref[j], hn::Mul(x, x));
      vmax = hn::Max(vmax, a);
    }
  }
  for (size_t j = 0; j < kV; ++j) {
    hn::StoreU(abs[j], dd, sums.abs + j * kN);
    hn::StoreU(sq[j], dd, sums.sq_err + j * kN);
    hn::StoreU(ref[j], dd, sums.sq_ref + j * kN);
  }
  const double m = hn::GetLane(hn::MaxOfLanes(dd, vmax));
  if (m > sums.max_abs) sums.max_abs = m;
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
    // Fixed-width targets keep the sums in registers (kErrorLanes / N of them).
    constexpr size_t kL = kernels::kErrorLanes;
    if (n == 8) {
      k = AddEncodeErrorsInRegisters<kL / 8>(hn::CappedTag<double, 8>(), xs, xq, k, count, sums);
    } else if (n == 4) {
      k = AddEncodeErrorsInRegisters<kL / 4>(hn::CappedTag<double, 4>(), xs, xq, k, count, sums);
    } else if (n == 2) {
      k = AddEncodeErrorsInRegisters<kL / 2>(hn::CappedTag<double, 2>(), xs, xq, k, count, sums);
    }
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
