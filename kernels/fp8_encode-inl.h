// Per-target FP8 encoders (amn/quantize.h AbsMaxGrid, QuantizeFp8),
// Highway 1.0.3, bit-exact with kernels/ref/fp8_encode_ref.cc:
//   amax  = max |f32(x)| per group_rows x group_cols group (a max: order-free)
//   code  = fp8_rne(clamp(f32(x) / scale, -max_finite, max_finite))
// Layout: rows x cols row-major BF16/F16/F32 input (any alignment), codes
// one byte per element in the same order, the group grid row-major with
// partial edge groups. Per row, each group's column segment runs in tiles
// of kEncodeTile elements: loaded to F32 (encode_common-inl.h), divided by
// the group's scale (Div: IEEE division on every target), clamped, then
// rounded with integer ops:
//   * |q| >= the format's smallest normal: RNE at the FP8 mantissa's last
//     bit on the F32 bits (add half-ulp - 1 plus the kept lsb, shift), then
//     rebias the exponent (a mantissa carry moves into the exponent);
//   * below: |q| + 2^(24 - bias - mant_bits) in F32 arithmetic, whose ulp is
//     the FP8 subnormal step, so the hardware's RNE gives the code in the
//     low bits (never fused, -ffp-contract=off).
// The sign bit is copied (-0 -> 0x80). x' = f32(code) * scale for the
// error sums is the code's exact F32 value (taken from the rounding, not
// decoded) times the scale.
// NaN/Inf input: the index of the first such element is returned (codes
// undefined); scales are finite and > 0 (the caller checks).
// SCALAR runs the reference.
#if defined(AMN_KERNELS_FP8_ENCODE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef AMN_KERNELS_FP8_ENCODE_INL_H_
#undef AMN_KERNELS_FP8_ENCODE_INL_H_
#else
#define AMN_KERNELS_FP8_ENCODE_INL_H_
#endif

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "hwy/highway.h"
#include "kernels/encode_common-inl.h"
#include "kernels/encode_args.h"
#include "kernels/encode_common.h"
#include "kernels/ref/fp8_encode_ref.h"

HWY_BEFORE_NAMESPACE();
namespace amn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR

// FP8 format constants: mantissa bits and exponent bias.
template <bool kE5m2>
struct Fp8Fmt {
  static constexpr int kMant = kE5m2 ? 2 : 3;
  static constexpr int kBias = kE5m2 ? 15 : 7;
  static constexpr int kShift = 23 - kMant;  // F32 mantissa bits dropped
  static constexpr uint32_t kMinNormalBits = static_cast<uint32_t>(127 + 1 - kBias) << 23;
  static constexpr uint32_t kRebias = static_cast<uint32_t>(127 - kBias) << kMant;
  // 2^(24 - bias - mant): its F32 ulp is the FP8 subnormal step.
  static constexpr uint32_t kMagicBits = static_cast<uint32_t>(127 + 24 - kBias - kMant) << 23;
  static constexpr float kMaxFinite = kE5m2 ? 57344.0f : 448.0f;
  static constexpr uint32_t kExpMask = kE5m2 ? 0x1Fu : 0x0Fu;
};

// Clamped, finite F32 lanes -> FP8 codes in u32 lanes, and the codes'
// values as F32 (exact: the rounded F32 before the rebias, or the
// subnormal sum minus the magic number), so x' needs no decoding.
template <bool kE5m2>
HWY_INLINE hn::Vec<EncDU> F32ToFp8Lanes(hn::Vec<EncDF> q, hn::Vec<EncDF>* value) {
  using F = Fp8Fmt<kE5m2>;
  const EncDF df;
  const EncDU du;
  const hn::RebindToSigned<EncDU> di;
  const auto bits = hn::BitCast(du, q);
  const auto sign_bit = hn::And(bits, hn::Set(du, 0x80000000u));
  const auto abs = hn::AndNot(hn::Set(du, 0x80000000u), bits);
  const auto lsb = hn::And(hn::ShiftRight<F::kShift>(abs), hn::Set(du, 1u));
  const auto rounded = hn::Add(hn::Add(abs, hn::Set(du, (1u << (F::kShift - 1)) - 1u)), lsb);
  const auto normal_value = hn::And(rounded, hn::Set(du, ~((1u << F::kShift) - 1u)));
  const auto normal = hn::Sub(hn::ShiftRight<F::kShift>(rounded), hn::Set(du, F::kRebias));
  const auto magic = hn::Set(du, F::kMagicBits);
  const auto sum = hn::Add(hn::BitCast(df, abs), hn::BitCast(df, magic));
  const auto sub = hn::Sub(hn::BitCast(du, sum), magic);
  const auto sub_value = hn::BitCast(du, hn::Sub(sum, hn::BitCast(df, magic)));
  const auto is_sub = hn::RebindMask(
      du, hn::Lt(hn::BitCast(di, abs), hn::Set(di, static_cast<int32_t>(F::kMinNormalBits))));
  *value = hn::BitCast(df, hn::Or(hn::IfThenElse(is_sub, sub_value, normal_value), sign_bit));
  return hn::Or(hn::IfThenElse(is_sub, sub, normal), hn::ShiftRight<24>(sign_bit));
}

// Elements [i0, i0 + count) of the call (one segment of one group) with one
// scale: codes to codes[i0..], errors added when `errors` is set.
template <bool kE5m2>
HWY_INLINE uint64_t EncodeFp8Segment(const uint8_t* HWY_RESTRICT in, ElemType type, uint64_t i0,
                                     uint64_t count, float scale, uint8_t* HWY_RESTRICT codes,
                                     kernels::ErrorSums* errors) {
  const EncDF df;
  const hn::Rebind<uint8_t, EncDU> d8;
  const size_t n = hn::Lanes(df);
  HWY_ALIGN float xs[kEncodeTile + kEncodePad];
  HWY_ALIGN float xq[kEncodeTile + kEncodePad];
  HWY_ALIGN uint8_t ct[kEncodeTile + kEncodePad];
  const auto vscale = hn::Set(df, scale);
  const auto vmax = hn::Set(df, Fp8Fmt<kE5m2>::kMaxFinite);
  const auto vmin = hn::Neg(vmax);
  for (uint64_t done = 0; done < count; done += kEncodeTile) {
    const size_t len = static_cast<size_t>(std::min<uint64_t>(kEncodeTile, count - done));
    if (!LoadEncodeTile(in, type, i0 + done, len, xs)) {
      return FirstNonFinite(in, type, i0 + done, len);
    }
    uint8_t* HWY_RESTRICT out = codes + i0 + done;
    for (size_t k = 0; k < len; k += n) {
      const auto x = hn::Load(df, xs + k);
      const auto q = hn::Min(hn::Max(hn::Div(x, vscale), vmin), vmax);
      hn::Vec<EncDF> value;
      const auto code = CodesToBytes(d8, F32ToFp8Lanes<kE5m2>(q, &value));
      // Whole vectors straight to the output; a last partial one via ct.
      if (k + n <= len) {
        hn::StoreU(code, d8, out + k);
      } else {
        hn::StoreU(code, d8, ct);
        std::memcpy(out + k, ct, len - k);
      }
      if (errors != nullptr) hn::Store(hn::Mul(value, vscale), df, xq + k);
    }
    if (errors != nullptr) AddEncodeErrors(xs, xq, i0 + done, len, *errors);
  }
  return kernels::kAllFinite;
}

#endif  // HWY_TARGET != HWY_SCALAR

inline uint64_t AbsMaxGridBody(const uint8_t* HWY_RESTRICT in, ElemType type, uint64_t rows,
                               uint64_t cols, uint64_t group_rows, uint64_t group_cols,
                               float* HWY_RESTRICT amax) {
#if HWY_TARGET == HWY_SCALAR
  return ref::AbsMaxGridRef(in, type, rows, cols, group_rows, group_cols, amax);
#else
  const EncDF df;
  const size_t n = hn::Lanes(df);
  const uint64_t grid_cols = (cols + group_cols - 1) / group_cols;
  std::fill(amax, amax + (rows + group_rows - 1) / group_rows * grid_cols, 0.0f);
  HWY_ALIGN float xs[kEncodeTile + kEncodePad];
  for (uint64_t r = 0; r < rows; ++r) {
    float* group_row = amax + (r / group_rows) * grid_cols;
    for (uint64_t c0 = 0; c0 < cols; c0 += group_cols) {
      const uint64_t seg = std::min(group_cols, cols - c0);
      auto m = hn::Zero(df);
      for (uint64_t done = 0; done < seg; done += kEncodeTile) {
        const uint64_t i = r * cols + c0 + done;
        const size_t len = static_cast<size_t>(std::min<uint64_t>(kEncodeTile, seg - done));
        if (!LoadEncodeTile(in, type, i, len, xs)) return FirstNonFinite(in, type, i, len);
        for (size_t k = 0; k < len; k += n) m = hn::Max(m, hn::Abs(hn::Load(df, xs + k)));
      }
      float& g = group_row[c0 / group_cols];
      g = std::max(g, hn::GetLane(hn::MaxOfLanes(df, m)));
    }
  }
  return kernels::kAllFinite;
#endif
}

inline uint64_t QuantizeFp8Body(const uint8_t* HWY_RESTRICT in, ElemType type, uint64_t rows,
                                uint64_t cols, uint64_t group_rows, uint64_t group_cols,
                                bool e5m2, const float* HWY_RESTRICT scales,
                                uint8_t* HWY_RESTRICT codes, kernels::ErrorSums* errors) {
#if HWY_TARGET == HWY_SCALAR
  return ref::QuantizeFp8Ref(in, type, rows, cols, group_rows, group_cols, e5m2, scales, codes,
                             errors);
#else
  const uint64_t grid_cols = (cols + group_cols - 1) / group_cols;
  for (uint64_t r = 0; r < rows; ++r) {
    const float* scale_row = scales + (r / group_rows) * grid_cols;
    for (uint64_t c0 = 0; c0 < cols; c0 += group_cols) {
      const uint64_t seg = std::min(group_cols, cols - c0);
      const float scale = scale_row[c0 / group_cols];
      const uint64_t bad =
          e5m2 ? EncodeFp8Segment<true>(in, type, r * cols + c0, seg, scale, codes, errors)
               : EncodeFp8Segment<false>(in, type, r * cols + c0, seg, scale, codes, errors);
      if (bad != kernels::kAllFinite) return bad;
    }
  }
  return kernels::kAllFinite;
#endif
}

// The kernel table's entry points (kernels/encode_args.h).
inline uint64_t EncodeAbsMaxGrid(const kernels::AbsMaxGridArgs& a, kernels::ErrorSums*) {
  return AbsMaxGridBody(a.x.in, a.x.type, a.x.rows, a.x.cols, a.group_rows, a.group_cols, a.amax);
}
inline uint64_t EncodeFp8Quant(const kernels::Fp8QuantArgs& a, kernels::ErrorSums* errors) {
  return QuantizeFp8Body(a.x.in, a.x.type, a.x.rows, a.x.cols, a.group_rows, a.group_cols,
                         a.e5m2, a.scales, a.codes, errors);
}

}  // namespace HWY_NAMESPACE
}  // namespace amn
HWY_AFTER_NAMESPACE();

#endif  // include guard
