// Per-target F32/F16/BF16 conversion kernels (Highway 1.0.3 templates).
// Every target gives the bytes of kernels/ref/float_convert_ref.cc. F32 -> F16
// uses F16C's vcvtps2ph on the x86 targets that have it (AVX2, AVX3*) and
// FCVTN/FCVT on AArch64 (NEON, SVE*): both are exactly the reference's rule
// for every input class (see AMN_F16_HARDWARE_DEMOTE), and F16 inputs widen
// with vcvtph2ps / FCVTL there, also exact (see FromF16). Elsewhere
// (SSE4, SSSE3, SCALAR, EMU128) F32 -> F16 rounds with one F32 addition of a
// power-of-two bias (F32BitsToF16Magnitude), and BF16 and F16 inputs use
// integer arithmetic on the bit patterns: Highway's own DemoteTo(bf16)
// truncates and its f16 emulation on those targets differs by target
// (TOOLCHAIN.md pitfall 1).
#if defined(AMN_KERNELS_FLOAT_CONVERT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef AMN_KERNELS_FLOAT_CONVERT_INL_H_
#undef AMN_KERNELS_FLOAT_CONVERT_INL_H_
#else
#define AMN_KERNELS_FLOAT_CONVERT_INL_H_
#endif

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "hwy/highway.h"
#include "kernels/kernel_args.h"
#include "kernels/float_formats.h"
#include "kernels/row_driver-inl.h"

HWY_BEFORE_NAMESPACE();
namespace amn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// ---- Lane operations on u32 lanes holding F32 bit patterns -----------------

// F32 bits -> BF16 bits in the UPPER 16 bits of each lane (the lower 16 are
// garbage; callers keep the odd u16 lanes or shift right by 16).
// Formula (round to nearest even on the bit pattern, as PyTorch):
//   bf16 = (x + 0x7FFF + ((x >> 16) & 1)) >> 16
// NaN: (x | quiet bit) >> 16, i.e. quiet, same sign, top payload bits. The
// NaN test is IsNaN (an unordered self-compare, which never signals); note
// Highway 1.0.3's Ne is ordered on x86, i.e. false for NaN.
template <class DU>
HWY_INLINE hn::Vec<DU> F32BitsToBf16Upper(DU du, hn::Vec<DU> x) {
  const hn::RebindToFloat<DU> df;
  const auto lsb = hn::And(hn::ShiftRight<16>(x), hn::Set(du, 1u));
  const auto rounded = hn::Add(hn::Add(x, hn::Set(du, 0x7FFFu)), lsb);
  const auto quiet_nan = hn::Or(x, hn::Set(du, fmt::kF32QuietBit));
  return hn::IfThenElse(hn::RebindMask(du, hn::IsNaN(hn::BitCast(df, x))), quiet_nan, rounded);
}

// The same for lanes known not to be NaN (any finite value or ±Inf): the
// round-to-nearest-even without the NaN select. Inf (0x7F800000, low half
// zero, even) stays Inf; a finite value that rounds past the largest BF16
// carries into the exponent and becomes Inf, as in F32BitsToBf16Upper.
// Only a NaN input would come out wrong (rounded, or carried into the sign
// bit), so callers must prove their lanes NaN-free.
template <class DU>
HWY_INLINE hn::Vec<DU> NonNanToBf16Upper(DU du, hn::Vec<DU> x) {
  const auto lsb = hn::And(hn::ShiftRight<16>(x), hn::Set(du, 1u));
  return hn::Add(hn::Add(x, hn::Set(du, 0x7FFFu)), lsb);
}

// The same, in the low 16 bits of each lane (upper 16 zero).
template <class DU>
HWY_INLINE hn::Vec<DU> F32BitsToBf16Lanes(DU du, hn::Vec<DU> x) {
  return hn::ShiftRight<16>(F32BitsToBf16Upper(du, x));
}

// F32 bits -> F16 bits without the sign (0..0x7FFF in each u32 lane), IEEE
// round to nearest even; the path of the targets without a hardware
// conversion (see F32BitsToF16Lanes).
// The F32 adder does the rounding for every finite |x| (the branch-free
// float -> half conversion of Giesen's and Maratyszcza's FP16 code):
// * base = |x| * 4, computed as (|x| * 2^112) * 2^-110 so that |x| >= 2^16
//   overflows to Inf (both products exact otherwise: powers of two, and no
//   F32 subnormal comes out of a normal |x|);
// * bias = 2^(e + 15), e = max(exponent of |x|, -14): one ulp of bias is
//   2^(e - 8), i.e. 2^(e - 10) in units of |x|, F16's ulp at |x|'s binade
//   (2^-24 for the subnormal range, which the clamp of e gives);
// * sum = bias + base rounds once, to nearest even (IEEE addition, never
//   fused: -ffp-contract=off). Its mantissa holds m = |x| / 2^(e-10)
//   rounded (1024..2048 for a normal F16, 0..1024 below; at most 12 bits, so
//   the sum stays in bias's binade) and its exponent e + 142, whose low five
//   bits are e + 14: F16 = ((sum >> 13) & 0x7C00) + (sum & 0xFFF), the
//   implicit bit of m carrying into the exponent as it should (a rounding
//   up to 2048 at e = 15, i.e. 65520 <= |x| < 2^16, gives 0x7C00 = Inf).
// * |x| >= 2^16 and Inf: base = Inf, sum = Inf, the same formula gives
//   0x7C00. (bias's integer add may wrap into the sign bit for e > 112,
//   which leaves Inf + bias = Inf.)
// * NaN: the sum is some NaN, whose payload is not relied on; one select
//   (and one zeroing) gives 0x7E00 | the top 10 payload bits instead (the
//   reference's rule).
// No F32 subnormal is ever produced from a normal operand, and an F32
// subnormal |x| (F16 result 0) gives 0 whether or not DAZ/FTZ are set, so
// the bits do not depend on MXCSR's FTZ/DAZ; the rounding assumes
// round-to-nearest, the default.
// kMayBeNan = false (callers that have proved their lanes NaN-free, as for
// NonNanToBf16Upper) drops the NaN select and zeroing: for a lane that is
// not NaN both are the identity, so every non-NaN input gets the same bits.
template <bool kMayBeNan = true, class DU>
HWY_INLINE hn::Vec<DU> F32BitsToF16Magnitude(DU du, hn::Vec<DU> x) {
  const hn::RebindToSigned<DU> di;
  const hn::RebindToFloat<DU> df;
  const auto abs = hn::And(x, hn::Set(du, fmt::kF32AbsMask));
  const auto abs_f = hn::BitCast(df, abs);
  const auto base = hn::Mul(hn::Mul(abs_f, hn::Set(df, 0x1.0p112f)), hn::Set(df, 0x1.0p-110f));
  // 2^exponent (0 for an F32 subnormal, Inf for Inf/NaN: never a NaN, so
  // Max is well defined everywhere), at least 2^-14; then times 2^15.
  const auto pow2 = hn::Max(hn::BitCast(df, hn::And(x, hn::Set(du, fmt::kF32ExpMask))),
                            hn::BitCast(df, hn::Set(du, fmt::kF32BitsF16MinNormal)));
  const auto bias = hn::Add(hn::BitCast(du, pow2), hn::Set(du, 15u << 23));
  const auto sum = hn::BitCast(du, hn::Add(base, hn::BitCast(df, bias)));
  if (!kMayBeNan) {
    return hn::Add(hn::And(hn::ShiftRight<13>(sum), hn::Set(du, 0x7FFFu)),
                   hn::And(sum, hn::Set(du, 0xFFFu)));
  }
  // NaN lanes take |x| with the quiet bit instead of the sum: bits 13..30
  // shifted down and masked to 15 are then 0x7C00 | 0x200 | the top payload
  // bits, and their low part is zeroed. For the sum the same mask keeps
  // (exponent & 31) << 10, as bits 13..22 of a finite sum are zero (m < 2^12).
  const auto is_nan = hn::RebindMask(
      du, hn::Gt(hn::BitCast(di, abs), hn::Set(di, static_cast<int32_t>(fmt::kF32ExpMask))));
  const auto high = hn::IfThenElse(is_nan, hn::Or(abs, hn::Set(du, fmt::kF32QuietBit)), sum);
  return hn::Add(hn::And(hn::ShiftRight<13>(high), hn::Set(du, 0x7FFFu)),
                 hn::And(hn::IfThenZeroElse(is_nan, sum), hn::Set(du, 0xFFFu)));
}

// F32 bits -> F16 bits (low 16 bits of each lane), IEEE round to nearest even.
// Without a hardware conversion (F16C, Arm): F32BitsToF16Magnitude (above)
// and the sign.
//
// On AVX2/AVX3 targets Highway 1.0.3's DemoteTo(f16) is vcvtps2ph with
// imm8 = _MM_FROUND_NO_EXC: rounding from imm8 (RNE, whatever MXCSR says), no
// exceptions, subnormal F16 results produced (FTZ does not apply), overflow
// to Inf, F32 subnormals to ±0 (they are far below half an F16 ulp, and
// DAZ would give the same), and a NaN keeps its sign and top 10 payload bits
// with the quiet bit forced: a signalling NaN whose top bits are zero becomes
// 0x7E00 | sign, like the reference. FloatConvertExhaustive (in
// tests/float_convert_test.cc) checks all 2^32 inputs per target.
// HWY_DISABLE_F16C makes Highway emulate (with other NaN and rounding rules),
// so that build keeps the software path (F32BitsToF16Magnitude). The same
// switch selects vcvtph2ps for F16 inputs (FromF16).
//
// On AArch64 (NEON and every SVE target) Highway 1.0.3's DemoteTo(f16) and
// PromoteTo(f32, f16) are the FCVTN/FCVTL (SVE: FCVT) instructions, which
// follow the Arm ARM's FPConvert: RNE under the default FPCR, F16 results not
// flushed (conversions ignore FZ16; an F32 subnormal that FZ flushes would
// round to ±0 anyway), overflow to Inf, F16 subnormal inputs widened exactly,
// and a NaN keeps its sign and top payload bits with the quiet bit forced
// (FPConvertNaN), as vcvtps2ph/vcvtph2ps and the reference do. They read
// the rounding mode from FPCR, as the software path's F32 addition and every
// kernel's IEEE multiply do; FPCR.DN or AHP set (no Linux process starts
// with them) would change NaNs or the format. The same tests cover them,
// under qemu-aarch64 (whose emulation follows FPConvert).
#undef AMN_F16_HARDWARE_DEMOTE
#if ((HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL) && \
     !defined(HWY_DISABLE_F16C)) ||                                                     \
    (HWY_ARCH_ARM_A64 && (HWY_TARGET == HWY_NEON || HWY_TARGET == HWY_SVE ||           \
                          HWY_TARGET == HWY_SVE2 || HWY_TARGET == HWY_SVE_256 ||         \
                          HWY_TARGET == HWY_SVE2_128))
#define AMN_F16_HARDWARE_DEMOTE 1
#else
#define AMN_F16_HARDWARE_DEMOTE 0
#endif

template <bool kMayBeNan = true, class DU>
HWY_INLINE hn::Vec<DU> F32BitsToF16Lanes(DU du, hn::Vec<DU> x) {
#if AMN_F16_HARDWARE_DEMOTE
  const hn::RebindToFloat<DU> df;
  const hn::Rebind<hwy::float16_t, DU> df16;
  const hn::Rebind<uint16_t, DU> du16;
  return hn::PromoteTo(du, hn::BitCast(du16, hn::DemoteTo(df16, hn::BitCast(df, x))));
#else
  return hn::Or(F32BitsToF16Magnitude<kMayBeNan>(du, x),
                hn::And(hn::ShiftRight<16>(x), hn::Set(du, fmt::kF16SignMask)));
#endif
}

// F32 bits -> F16 bits as a u16 vector with the same lane count (half the
// width). With a hardware conversion this is the bare vcvtps2ph (FCVTN)
// result, with no widening.
template <class DU>
HWY_INLINE hn::Vec<hn::Rebind<uint16_t, DU>> F32BitsToF16Narrow(DU du, hn::Vec<DU> x) {
  const hn::Rebind<uint16_t, DU> du16;
#if AMN_F16_HARDWARE_DEMOTE
  (void)du;
  const hn::RebindToFloat<DU> df;
  const hn::Rebind<hwy::float16_t, DU> df16;
  return hn::BitCast(du16, hn::DemoteTo(df16, hn::BitCast(df, x)));
#else
  // Lanes hold 0..0xFFFF, so the saturating i32 -> u16 demotion is exact.
  const hn::RebindToSigned<DU> di;
  return hn::DemoteTo(du16, hn::BitCast(di, F32BitsToF16Lanes(du, x)));
#endif
}

#if !AMN_F16_HARDWARE_DEMOTE
// The F16 bits sign-extended to i32 (-32768..32767), which a saturating
// i32 -> i16 pack narrows exactly: the sign bit shifted arithmetically
// down to bits 15..31, ORed onto the magnitude.
template <bool kMayBeNan, class DU>
HWY_INLINE hn::Vec<hn::RebindToSigned<DU>> F32BitsToF16SignExtended(DU du, hn::Vec<DU> x) {
  const hn::RebindToSigned<DU> di;
  const auto sign =
      hn::ShiftRight<16>(hn::BitCast(di, hn::And(x, hn::Set(du, fmt::kF32SignMask))));
  return hn::Or(hn::BitCast(di, F32BitsToF16Magnitude<kMayBeNan>(du, x)), sign);
}
#endif

#if HWY_TARGET == HWY_SSE4 || HWY_TARGET == HWY_SSSE3
// F16 bits sign-extended to i32 (as F32BitsToF16SignExtended) by integer
// rounding of the F32 bit pattern, for lanes whose |x| is 0 or lies in
// [2^-14, 2^16) (the caller proves this per block, e.g. GgmlF16InRange).
// With t = |x|'s bits, (E << 23) | M, E in [113, 142] (2^-14 <= |x| < 2^16):
// the F16 exponent is E - 112 in [1, 30] (a normal F16) and its significand
// is M rounded to 10 bits, to nearest even: M's low 13 bits plus 0xFFF plus
// lsb (bit 13 of t) carry into bit 13 exactly when they exceed 0x1000, or
// equal it with lsb set. A carry out of the significand runs into the
// exponent field: the next binade with significand 0, which is the RNE
// result; at E = 142 that is exponent 31, significand 0 = 0x7C00 = Inf,
// the RNE result for 65520 <= |x| < 2^16. So
//   F16 = (t + 0xFFF + lsb) >> 13 - (112 << 10)
// is the reference's rounding on the whole range; the rebias is folded
// into the addend (112 << 23 is a multiple of 2^13, so the shift is exact).
// t = 0 gives a negative sum, which the clamp at 0 makes 0; the sign is
// then ORed on as in F32BitsToF16SignExtended (-0 -> 0x8000). Outside the
// range the bits are wrong (F16 subnormals would get the F32 binade's
// precision, |x| >= 2^16 a wrapped exponent), hence the caller's proof.
// 10 operations per vector (11 on SSSE3, whose i32 Max would be a compare
// and a blend: the clamp is AndNot of the broadcast sign bit instead)
// against F32BitsToF16SignExtended<false>'s 14.
template <class DU>
HWY_INLINE hn::Vec<hn::RebindToSigned<DU>> F32BitsToF16SignExtendedInRange(DU du,
                                                                           hn::Vec<DU> x) {
  const hn::RebindToSigned<DU> di;
  const auto t = hn::And(x, hn::Set(du, fmt::kF32AbsMask));
  const auto lsb = hn::And(hn::ShiftRight<13>(t), hn::Set(du, 1u));
  const auto sum = hn::BitCast(di, hn::Add(hn::Add(t, hn::Set(du, 0xFFFu - (112u << 23))), lsb));
  const auto rounded = hn::ShiftRight<13>(sum);
#if HWY_TARGET == HWY_SSE4
  const auto magnitude = hn::Max(rounded, hn::Zero(di));
#else
  const auto magnitude = hn::AndNot(hn::BroadcastSignBit(rounded), rounded);
#endif
  const auto sign =
      hn::ShiftRight<16>(hn::BitCast(di, hn::And(x, hn::Set(du, fmt::kF32SignMask))));
  return hn::Or(magnitude, sign);
}
#endif

// Stores lo (elements [0, N)) and hi ([N, 2N)), u32 lanes of F32 bits, as
// 2N F16 outputs at `out` (any alignment). With F16C: one vcvtps2ph and one
// half-width store per vector (GCC folds them into vcvtps2ph to memory).
// SSE4/SSSE3: one packssdw of the sign-extended results (ReorderDemote2To
// on a single 128-bit block keeps the order: lo's lanes, then hi's), instead
// of ConcatEven's two masks and packusdw (SSE4) or two byte shuffles and an
// unpack (SSSE3). Otherwise one full-width store of the even u16 halves of
// both software results; SCALAR's one-lane vectors cannot concatenate, so two
// lane stores. kMayBeNan = false: see F32BitsToF16Magnitude (F16C's
// instruction is the same either way).
template <bool kMayBeNan = true, class DU>
HWY_INLINE void StoreF16Pair(DU du, hn::Vec<DU> lo, hn::Vec<DU> hi, uint16_t* HWY_RESTRICT out) {
#if AMN_F16_HARDWARE_DEMOTE || HWY_TARGET == HWY_SCALAR
  const hn::Rebind<uint16_t, DU> du16;
  hn::StoreU(F32BitsToF16Narrow(du, lo), du16, out);
  hn::StoreU(F32BitsToF16Narrow(du, hi), du16, out + hn::Lanes(du));
#elif HWY_TARGET == HWY_SSE4 || HWY_TARGET == HWY_SSSE3
  const hn::Repartition<uint16_t, DU> d16;
  const hn::Repartition<int16_t, DU> di16;
  hn::StoreU(hn::BitCast(d16, hn::ReorderDemote2To(di16, F32BitsToF16SignExtended<kMayBeNan>(du, lo),
                                                   F32BitsToF16SignExtended<kMayBeNan>(du, hi))),
             d16, out);
#else
  const hn::Repartition<uint16_t, DU> d16;
  hn::StoreU(hn::ConcatEven(d16, hn::BitCast(d16, F32BitsToF16Lanes<kMayBeNan>(du, hi)),
                            hn::BitCast(d16, F32BitsToF16Lanes<kMayBeNan>(du, lo))),
             d16, out);
#endif
}

// F16 bits (u32 lanes, upper half zero) -> F32 bits, exact.
// * exponent 1..30: (h & 0x7FFF) << 13 rebiased by +112 << 23;
// * exponent 0: mantissa * 2^-24 computed as int->float (exact, < 2^10) times
//   a power of two (exact), so no subnormal F32 operand ever appears;
// * exponent 31: the same rebias again reaches 0xFF; NaN gets the quiet bit.
template <class DU>
HWY_INLINE hn::Vec<DU> F16BitsToF32Lanes(DU du, hn::Vec<DU> h) {
  const hn::RebindToSigned<DU> di;
  const hn::RebindToFloat<DU> df;
  const auto sign = hn::ShiftLeft<16>(hn::And(h, hn::Set(du, fmt::kF16SignMask)));
  const auto abs = hn::And(h, hn::Set(du, 0x7FFFu));
  const auto abs_i = hn::BitCast(di, abs);
  const auto rebias = hn::Set(du, 112u << 23);
  const auto normal = hn::Add(hn::ShiftLeft<13>(abs), rebias);
  const auto subnormal =
      hn::BitCast(du, hn::Mul(hn::ConvertTo(df, abs_i), hn::Set(df, 0x1.0p-24f)));
  const auto quiet =
      hn::IfThenElseZero(hn::RebindMask(du, hn::Gt(abs_i, hn::Set(di, 0x7C00))),
                         hn::Set(du, fmt::kF32QuietBit));
  const auto inf_or_nan = hn::Or(hn::Add(normal, rebias), quiet);
  auto result = hn::IfThenElse(hn::RebindMask(du, hn::Lt(abs_i, hn::Set(di, 0x400))),
                               subnormal, normal);
  result = hn::IfThenElse(hn::RebindMask(du, hn::Gt(abs_i, hn::Set(di, 0x7BFF))),
                          inf_or_nan, result);
  return hn::Or(result, sign);
}

// ---- Narrowing: F32-sized lanes to 16-bit outputs --------------------------
//
// Outside SCALAR a chunk is one full u16 vector's worth of outputs: two u32
// vectors stored by the encoder's StorePair (BF16: StoreBf16PairOnU16Lanes on
// AVX2/SSE4, else ConcatOdd of the upper halves; F16: StoreF16Pair). SCALAR's
// one-lane vectors cannot concatenate; a chunk is a lane, narrowed by DemoteTo.

#if HWY_TARGET != HWY_SCALAR
// 2N BF16 outputs from two vectors with BF16 bits in their upper halves
// (elements [0, N) in lo, [N, 2N) in hi): the odd u16 lanes, in order.
template <class DU>
HWY_INLINE void StoreBf16UpperPair(DU /* du */, hn::Vec<DU> lo, hn::Vec<DU> hi,
                                   uint16_t* HWY_RESTRICT out) {
  const hn::Repartition<uint16_t, DU> d16;
  hn::StoreU(hn::ConcatOdd(d16, hn::BitCast(d16, hi), hn::BitCast(d16, lo)), d16, out);
}
#endif

#if HWY_TARGET == HWY_NEON
// NEON: 8 BF16 outputs from lo (elements [0, 4)) and hi ([4, 8)), u32 lanes
// of F32 bits known not to be NaN (as NonNanToBf16Upper), in seven
// instructions instead of nine: x + 0x7FFF + lsb is x - t + 0x7FFF with
// t = CMTST(x, 1 << 16) (all ones, i.e. -1, exactly when lsb, bit 16, is
// set), and ADDHN adds the 0x7FFF and keeps the high halves, narrowing as
// it goes (ADDHN2 into the upper half for hi). The same sums mod 2^32 as
// NonNanToBf16Upper, so the same bits.
HWY_INLINE void StoreNonNanBf16PairNeon(hn::Vec<hn::Full128<uint32_t>> lo,
                                        hn::Vec<hn::Full128<uint32_t>> hi,
                                        uint16_t* HWY_RESTRICT out) {
  const hn::Full128<uint32_t> du;
  const auto lsb_bit = hn::Set(du, 1u << 16);
  const auto lo_sum = hn::Sub(lo, hn::VecFromMask(du, hn::TestBit(lo, lsb_bit)));
  const auto hi_sum = hn::Sub(hi, hn::VecFromMask(du, hn::TestBit(hi, lsb_bit)));
  const uint32x4_t half = vdupq_n_u32(0x7FFFu);
  vst1q_u16(out, vaddhn_high_u32(vaddhn_u32(lo_sum.raw, half), hi_sum.raw, half));
}
#endif

#if HWY_TARGET != HWY_SCALAR
// 2N BF16 outputs from lo (elements [0, N)) and hi ([N, 2N)), u32 lanes of
// F32 bits, each lane rounded (F32BitsToBf16Upper, or NonNanToBf16Upper for
// lanes the caller proved NaN-free) and the upper halves kept in order; on
// NEON the NaN-free pairs take StoreNonNanBf16PairNeon. The in-order BF16
// pair store of every family (AVX2/SSE4's float_convert encoders take
// StoreBf16PairOnU16Lanes instead).
template <bool kMayBeNan, class DU>
HWY_INLINE void StoreBf16RoundedPair(DU du, hn::Vec<DU> lo, hn::Vec<DU> hi,
                                     uint16_t* HWY_RESTRICT out) {
#if HWY_TARGET == HWY_NEON
  if constexpr (!kMayBeNan && hn::MaxLanes(DU()) == 4) return StoreNonNanBf16PairNeon(lo, hi, out);
#endif
  if constexpr (kMayBeNan) {
    StoreBf16UpperPair(du, F32BitsToBf16Upper(du, lo), F32BitsToBf16Upper(du, hi), out);
  } else {
    StoreBf16UpperPair(du, NonNanToBf16Upper(du, lo), NonNanToBf16Upper(du, hi), out);
  }
}
#endif

#if HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_SSE4
// AVX2/SSE4 (no two-source u16 shuffle): 2N BF16 outputs from lo (elements
// [0, N)) and hi ([N, 2N)), u32 lanes of F32 bits. Each F32 is split into
// its high half H and low half L first, then rounded on 16-bit lanes:
//   bf16 = H + carry, carry = (L + 0x7FFF + lsb) >> 16 = (L + lsb > 0x8000)
// with lsb = H & 1, i.e. NonNanToBf16Upper's sum taken apart (mod 2^16
// as there, so the bits are the same for every input). One in-block byte
// shuffle per vector and two 64-bit unpacks give both H and L in order
// (per 128-bit block: lo's four lanes, then hi's); the carry is
// min(sat(sat(L + lsb) - 0x8000), 1). 10 instructions per 2N outputs on
// AVX2 (the permute puts the blocks' quarters in order) instead of 12
// (4 per vector to round, 2 shifts + pack + permute to narrow).
// kNanRule: F32BitsToBf16Upper's NaN rule, (H | quiet bit) with no carry.
// The NaN masks are taken on the F32 vectors (IsNaN) and joined by one
// saturating i32 -> i16 pack, which leaves the lanes in the same order as
// the split (per 128-bit block: lo's four, then hi's); one or and one
// blend apply them on u16 lanes: 15 instructions per 2N outputs on AVX2
// instead of 18 (compare, or, blend per vector on top of the 12 above).
// kRound = false: for values already exact in BF16 (low halves zero), H
// alone, with no rounding: 4 instructions per 2N outputs on AVX2.
template <bool kNanRule, bool kRound = true, class DU>
HWY_INLINE void StoreBf16PairOnU16Lanes(DU /* du */, hn::Vec<DU> lo, hn::Vec<DU> hi,
                                        uint16_t* HWY_RESTRICT out) {
  const hn::Repartition<uint8_t, DU> d8;
  const hn::Repartition<uint16_t, DU> d16;
  const hn::Repartition<uint64_t, DU> d64;
  HWY_ALIGN static constexpr uint8_t kSplit[16] = {0, 1, 4, 5, 8,  9,  12, 13,
                                                   2, 3, 6, 7, 10, 11, 14, 15};
  const auto split = hn::LoadDup128(d8, kSplit);
  const auto a = hn::BitCast(d64, hn::TableLookupBytes(hn::BitCast(d8, lo), split));
  const auto b = hn::BitCast(d64, hn::TableLookupBytes(hn::BitCast(d8, hi), split));
  const auto low = hn::BitCast(d16, hn::InterleaveLower(d64, a, b));
  const auto high = hn::BitCast(d16, hn::InterleaveUpper(d64, a, b));
  auto bf16 = high;
  if constexpr (kRound) {
    const auto lsb = hn::And(high, hn::Set(d16, uint16_t{1}));
    const auto excess =
        hn::SaturatedSub(hn::SaturatedAdd(low, lsb), hn::Set(d16, uint16_t{0x8000}));
    bf16 = hn::Add(high, hn::Min(excess, hn::Set(d16, uint16_t{1})));
  }
  if constexpr (kNanRule) {
    const hn::RebindToFloat<DU> df;
    const hn::Repartition<int32_t, DU> di32;
    const hn::Repartition<int16_t, DU> di16;
    const auto nan_lo = hn::BitCast(di32, hn::VecFromMask(df, hn::IsNaN(hn::BitCast(df, lo))));
    const auto nan_hi = hn::BitCast(di32, hn::VecFromMask(df, hn::IsNaN(hn::BitCast(df, hi))));
    const auto nan = hn::MaskFromVec(hn::BitCast(d16, hn::ReorderDemote2To(di16, nan_lo, nan_hi)));
    const auto quiet = hn::Or(high, hn::Set(d16, uint16_t{fmt::kF32QuietBit >> 16}));
    bf16 = hn::IfThenElse(nan, quiet, bf16);
  }
#if HWY_TARGET == HWY_AVX2
  // Quarters (lo 0-3, hi 0-3, lo 4-7, hi 4-7) -> (lo 0-7, hi 0-7): one
  // vpermd with constant indices.
  const hn::Repartition<uint32_t, DU> d32;
  HWY_ALIGN static constexpr int32_t kQuarters[8] = {0, 1, 4, 5, 2, 3, 6, 7};
  bf16 = hn::BitCast(
      d16, hn::TableLookupLanes(hn::BitCast(d32, bf16), hn::SetTableIndices(d32, kQuarters)));
#endif
  hn::StoreU(bf16, d16, out);
}
#endif

// Functors from u32 lanes of F32 bits to u32 lanes of 16-bit results.
// StorePair (not on SCALAR for BF16) stores two vectors of F32 bits, elements
// [0, N) and [N, 2N), as 2N 16-bit outputs.
//
// ToBf16Upper rounds any F32 with the NaN rule; ToBf16UpperNonNan is for
// callers that have proved their values are never NaN (e.g. a finite scale
// times small integer codes) and skips it. `Finite` names the encoder a
// kernel may use on such a NaN-free path (itself, where there is no cheaper
// one).
struct ToBf16UpperNonNan {
  static constexpr bool kUpperHalf = true;
  using Finite = ToBf16UpperNonNan;
  template <class DU>
  HWY_INLINE hn::Vec<DU> operator()(DU du, hn::Vec<DU> f32) const {
    return NonNanToBf16Upper(du, f32);
  }
#if HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_SSE4
  template <class DU>
  static HWY_INLINE void StorePair(DU du, hn::Vec<DU> lo, hn::Vec<DU> hi,
                                   uint16_t* HWY_RESTRICT out) {
    StoreBf16PairOnU16Lanes<false>(du, lo, hi, out);
  }
#elif HWY_TARGET != HWY_SCALAR
  template <class DU>
  static HWY_INLINE void StorePair(DU du, hn::Vec<DU> lo, hn::Vec<DU> hi,
                                   uint16_t* HWY_RESTRICT out) {
    StoreBf16RoundedPair<false>(du, lo, hi, out);
  }
#endif
};
// For values proved exact in BF16 (the low 16 bits of every F32 zero, e.g.
// products of few significant bits): the upper halves, no rounding.
struct ToBf16UpperExact {
  static constexpr bool kUpperHalf = true;
  using Finite = ToBf16UpperExact;
  template <class DU>
  HWY_INLINE hn::Vec<DU> operator()(DU /* du */, hn::Vec<DU> f32) const {
    return f32;
  }
#if HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_SSE4
  template <class DU>
  static HWY_INLINE void StorePair(DU du, hn::Vec<DU> lo, hn::Vec<DU> hi,
                                   uint16_t* HWY_RESTRICT out) {
    StoreBf16PairOnU16Lanes<false, false>(du, lo, hi, out);
  }
#elif HWY_TARGET != HWY_SCALAR
  template <class DU>
  static HWY_INLINE void StorePair(DU du, hn::Vec<DU> lo, hn::Vec<DU> hi,
                                   uint16_t* HWY_RESTRICT out) {
    StoreBf16UpperPair(du, lo, hi, out);
  }
#endif
};
struct ToBf16Upper {
  static constexpr bool kUpperHalf = true;
  using Finite = ToBf16UpperNonNan;
  template <class DU>
  HWY_INLINE hn::Vec<DU> operator()(DU du, hn::Vec<DU> f32) const {
    return F32BitsToBf16Upper(du, f32);
  }
#if HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_SSE4
  template <class DU>
  static HWY_INLINE void StorePair(DU du, hn::Vec<DU> lo, hn::Vec<DU> hi,
                                   uint16_t* HWY_RESTRICT out) {
    StoreBf16PairOnU16Lanes<true>(du, lo, hi, out);
  }
#elif HWY_TARGET != HWY_SCALAR
  template <class DU>
  static HWY_INLINE void StorePair(DU du, hn::Vec<DU> lo, hn::Vec<DU> hi,
                                   uint16_t* HWY_RESTRICT out) {
    StoreBf16RoundedPair<true>(du, lo, hi, out);
  }
#endif
};
// F16 for lanes proved NaN-free (as ToBf16UpperNonNan): without F16C the
// rounding skips the NaN select (F32BitsToF16Magnitude<false>).
struct ToF16LowerNonNan {
  static constexpr bool kUpperHalf = false;
  using Finite = ToF16LowerNonNan;
  template <class DU>
  HWY_INLINE hn::Vec<DU> operator()(DU du, hn::Vec<DU> f32) const {
    return F32BitsToF16Lanes<false>(du, f32);
  }
  template <class DU>
  static HWY_INLINE void StorePair(DU du, hn::Vec<DU> lo, hn::Vec<DU> hi,
                                   uint16_t* HWY_RESTRICT out) {
    StoreF16Pair<false>(du, lo, hi, out);
  }
};
// F16 for lanes proved 0 or in [2^-14, 2^16) in magnitude (the caller's
// per-block test, e.g. GgmlF16InRange): on SSE4/SSSE3 the integer rounding of
// F32BitsToF16SignExtendedInRange; elsewhere the NaN-free store (with F16C
// the same vcvtps2ph), so kF16InRangeStore says where a caller gains by it.
#if HWY_TARGET == HWY_SSE4 || HWY_TARGET == HWY_SSSE3
inline constexpr bool kF16InRangeStore = true;
struct ToF16LowerInRange {
  static constexpr bool kUpperHalf = false;
  using Finite = ToF16LowerInRange;
  template <class DU>
  HWY_INLINE hn::Vec<DU> operator()(DU du, hn::Vec<DU> f32) const {
    return hn::And(hn::BitCast(du, F32BitsToF16SignExtendedInRange(du, f32)),
                   hn::Set(du, 0xFFFFu));
  }
  template <class DU>
  static HWY_INLINE void StorePair(DU du, hn::Vec<DU> lo, hn::Vec<DU> hi,
                                   uint16_t* HWY_RESTRICT out) {
    const hn::Repartition<uint16_t, DU> d16;
    const hn::Repartition<int16_t, DU> di16;
    hn::StoreU(hn::BitCast(d16, hn::ReorderDemote2To(di16, F32BitsToF16SignExtendedInRange(du, lo),
                                                     F32BitsToF16SignExtendedInRange(du, hi))),
               d16, out);
  }
};
#else
inline constexpr bool kF16InRangeStore = false;
using ToF16LowerInRange = ToF16LowerNonNan;
#endif

// Whether every product fl(q * factor) with an integer |q| <= max_abs_code
// (one F32 multiply, as the reference computes it; q = 0 included) is ±0 or
// has a magnitude in [2^-14, 2^16), so ToF16LowerInRange may store it. F32
// rounding is monotone and keeps representable bounds: factor = ±0 gives ±0
// everywhere; else |factor| >= 2^-14 bounds every q != 0 result below
// (|fl(q * factor)| >= |factor|), and fl(max_abs_code * |factor|) < 2^16,
// the kernel's own product on the largest code, bounds them above. False
// for ±Inf and NaN. Not for results with a min or zero point added after
// the product (q * d + m can cancel towards 0): callers fold a zero point
// into q (|q - z| <= max_abs_code) before the one multiply.
HWY_INLINE bool F16InRangeProducts(float factor, float max_abs_code) {
  uint32_t abs_bits;
  std::memcpy(&abs_bits, &factor, sizeof(abs_bits));
  abs_bits &= fmt::kF32AbsMask;
  if (abs_bits == 0) return true;
  float abs_factor;
  std::memcpy(&abs_factor, &abs_bits, sizeof(abs_factor));
  return abs_bits >= fmt::kF32BitsF16MinNormal && max_abs_code * abs_factor < 65536.0f;
}
struct ToF16Lower {
  static constexpr bool kUpperHalf = false;
  using Finite = ToF16LowerNonNan;
  template <class DU>
  HWY_INLINE hn::Vec<DU> operator()(DU du, hn::Vec<DU> f32) const {
    return F32BitsToF16Lanes(du, f32);
  }
  template <class DU>
  static HWY_INLINE void StorePair(DU du, hn::Vec<DU> lo, hn::Vec<DU> hi,
                                   uint16_t* HWY_RESTRICT out) {
    StoreF16Pair(du, lo, hi, out);
  }
};

// Input decoders: N32 elements at `p` to u32 lanes of F32 bits.
struct FromF32 {
  template <class DU>
  HWY_INLINE hn::Vec<DU> operator()(DU du, const float* HWY_RESTRICT p) const {
    return hn::BitCast(du, hn::LoadU(hn::RebindToFloat<DU>(), p));
  }
};
// F16 input: with F16C one vcvtph2ps (Highway 1.0.3's PromoteTo(f32, f16)
// on AVX2/AVX3*; FCVTL on NEON, FCVT on SVE). It is exact and equals
// ref::F16ToF32Bits for all 2^16 inputs: subnormals widen exactly
// (MXCSR.DAZ is ignored, Intel SDM; FZ16 does not apply to Arm's
// conversions), ±0 and ±Inf keep their sign, and a NaN keeps sign and
// payload with the quiet bit set, which is also the reference's rule (a
// signalling NaN comes out quiet on both sides). FloatConvertTest.
// Every16BitInput checks every pattern on every target. Elsewhere Highway
// emulates with other NaN rules, so those targets keep the integer path.
struct FromF16 {
  template <class DU>
  HWY_INLINE hn::Vec<DU> operator()(DU du, const uint16_t* HWY_RESTRICT p) const {
    const hn::Rebind<uint16_t, DU> du16;
#if AMN_F16_HARDWARE_DEMOTE
    const hn::RebindToFloat<DU> df;
    const hn::Rebind<hwy::float16_t, DU> df16;
    return hn::BitCast(du, hn::PromoteTo(df, hn::BitCast(df16, hn::LoadU(du16, p))));
#else
    return F16BitsToF32Lanes(du, hn::PromoteTo(du, hn::LoadU(du16, p)));
#endif
  }
};
struct FromBf16 {
  template <class DU>
  HWY_INLINE hn::Vec<DU> operator()(DU du, const uint16_t* HWY_RESTRICT p) const {
    return hn::ShiftLeft<16>(hn::PromoteTo(du, hn::LoadU(hn::Rebind<uint16_t, DU>(), p)));
  }
};

template <class Decode, class Encode>
struct NarrowChunk {
  template <class D16, typename TIn>
  HWY_INLINE void operator()(D16 d16, const TIn* HWY_RESTRICT in,
                             uint16_t* HWY_RESTRICT out) const {
#if HWY_TARGET == HWY_SCALAR
    const hn::Rebind<uint32_t, D16> du;
    auto result = Encode()(du, Decode()(du, in));
    if (Encode::kUpperHalf) result = hn::ShiftRight<16>(result);
    const hn::RebindToSigned<decltype(du)> di;
    hn::StoreU(hn::DemoteTo(d16, hn::BitCast(di, result)), d16, out);
#else
    (void)d16;
    const hn::Repartition<uint32_t, D16> du;
    Encode::StorePair(du, Decode()(du, in), Decode()(du, in + hn::Lanes(du)), out);
#endif
  }
};

// ---- F16 <-> BF16 on u16 lanes ---------------------------------------------
//
// Between F16 and BF16 most values need no F32 at all: a normal F16 rounds
// to BF16 by integer ops on its own bits, and a BF16 in F16's normal range
// converts exactly. Such lanes are converted as u16 lanes (8 per 128 bits,
// twice the u32 path's) with no widening or narrowing. The test is per
// vector: one with any other lane (subnormal, Inf, NaN, a BF16 outside
// F16's normal range) takes NarrowChunk's path through F32, so every input
// gets the reference's bits; zeros are easy too (kZerosEasy), at a second
// test's cost.
// Weights almost never leave the easy range.

// Lanes with lo <= abs < hi, for abs <= 0x7FFF and 0 < lo < hi <= 0x8000:
// abs + (0x8000 - lo) wraps [lo, hi) onto the most negative i16 values,
// [-0x8000, -0x8000 + hi - lo), and every other abs onto larger ones, so one
// signed compare tests both ends.
template <uint16_t kLo, uint16_t kHi, class D16>
HWY_INLINE hn::Mask<D16> AbsInRange(D16 d16, hn::Vec<D16> abs) {
  static_assert(0 < kLo && kLo < kHi && kHi <= 0x8000);
  const hn::RebindToSigned<D16> di16;
  const auto shifted = hn::BitCast(di16, hn::Add(abs, hn::Set(d16, uint16_t(0x8000 - kLo))));
  return hn::RebindMask(d16, hn::Lt(shifted, hn::Set(di16, int16_t(int32_t{kHi - kLo} - 0x8000))));
}

// F16 -> BF16 for F16 exponents 1..30 (normal, finite): the F32 is
// exp + 112 | mantissa << 13, and rounding it to BF16 (F32BitsToBf16Upper)
// drops its low 16 bits, i.e. the F16 mantissa's low 3. On the F16 bits:
//   bf16 = sign | (((abs + 3 + lsb) >> 3) + (112 << 7)), lsb = (abs >> 3) & 1,
// round to nearest even; a carry out of the mantissa bumps the exponent, as
// it should (65504 rounds to 65536, a normal BF16).
struct F16ToBf16OnU16 {
  static constexpr bool kZerosEasy = true;
  template <class D16>
  static HWY_INLINE hn::Mask<D16> IsEasy(D16 d16, hn::Vec<D16> abs) {
    return AbsInRange<0x0400, 0x7C00>(d16, abs);
  }
  template <class D16>
  static HWY_INLINE hn::Vec<D16> Convert(D16 d16, hn::Vec<D16> bits, hn::Vec<D16> abs) {
    const auto lsb = hn::And(hn::ShiftRight<3>(abs), hn::Set(d16, uint16_t{1}));
    const auto rounded = hn::ShiftRight<3>(hn::Add(hn::Add(abs, hn::Set(d16, uint16_t{3})), lsb));
    return hn::OrAnd(hn::Add(rounded, hn::Set(d16, uint16_t{112 << 7})), bits,
                     hn::Set(d16, fmt::kF16SignMask));
  }
};

// BF16 -> F16 for BF16 exponents 113..142 (F16's normal range): the 7
// mantissa bits fit in F16's 10, so the conversion is exact:
//   f16 = sign | ((abs - (112 << 7)) << 3).
struct Bf16ToF16OnU16 {
  // With F16C the general path is cheaper than the zero test and select
  // (AVX2, a zero in every vector: 0.072 against 0.110 ns/element).
  static constexpr bool kZerosEasy = !AMN_F16_HARDWARE_DEMOTE;
  template <class D16>
  static HWY_INLINE hn::Mask<D16> IsEasy(D16 d16, hn::Vec<D16> abs) {
    return AbsInRange<113 << 7, 143 << 7>(d16, abs);
  }
  template <class D16>
  static HWY_INLINE hn::Vec<D16> Convert(D16 d16, hn::Vec<D16> bits, hn::Vec<D16> abs) {
    return hn::OrAnd(hn::ShiftLeft<3>(hn::Sub(abs, hn::Set(d16, uint16_t{112 << 7}))), bits,
                     hn::Set(d16, fmt::kF16SignMask));
  }
};

// F16 -> F32 on u16 lanes where no hardware widens F16 (SSSE3, SSE4;
// docs/performance/f16-bf16-conversions.md): the easy lanes of F16 -> BF16
// (exponents 1..30, and zeros). The F32 is exp + 112 | mantissa << 13, so
// Convert gives its upper half, sign | ((abs >> 3) + (112 << 7)), and Store
// adds the lower half, the F16 bits << 13 in u16 lanes (the mantissa's low
// 3 bits; 0 for ±0, whose upper half is its sign), interleaving the two:
// element order on one 128-bit block.
#undef AMN_F16_TO_F32_ON_U16
#if !AMN_F16_HARDWARE_DEMOTE && HWY_TARGET != HWY_SCALAR && HWY_MAX_BYTES == 16
#define AMN_F16_TO_F32_ON_U16 1
#else
#define AMN_F16_TO_F32_ON_U16 0
#endif
#if AMN_F16_TO_F32_ON_U16
struct F16ToF32OnU16 : F16ToBf16OnU16 {
  template <class D16>
  static HWY_INLINE hn::Vec<D16> Convert(D16 d16, hn::Vec<D16> bits, hn::Vec<D16> abs) {
    return hn::OrAnd(hn::Add(hn::ShiftRight<3>(abs), hn::Set(d16, uint16_t{112 << 7})), bits,
                     hn::Set(d16, fmt::kF16SignMask));
  }
  template <class D16>
  static HWY_INLINE void Store(D16 d16, hn::Vec<D16> upper, hn::Vec<D16> bits,
                               float* HWY_RESTRICT out) {
    const hn::Repartition<float, D16> df;
    const auto lower = hn::ShiftLeft<13>(bits);
    hn::StoreU(hn::BitCast(df, hn::InterleaveLower(d16, lower, upper)), df, out);
    hn::StoreU(hn::BitCast(df, hn::InterleaveUpper(d16, lower, upper)), df, out + hn::Lanes(df));
  }
};
#endif

// One u16 vector: Easy's conversion when every lane is easy, else General
// (the path through F32) for the whole vector. A 16-bit output is stored
// as converted; an F32 one by Easy::Store, from the converted upper halves
// and the input bits.
template <class Easy, class General>
struct U16LanesOrGeneralChunk {
  template <class D16, typename TOut>
  HWY_INLINE void operator()(D16 d16, const uint16_t* HWY_RESTRICT in,
                             TOut* HWY_RESTRICT out) const {
    const auto bits = hn::LoadU(d16, in);
    const auto store = [&](hn::Vec<D16> converted) {
      if constexpr (std::is_same_v<TOut, float>) {
        Easy::Store(d16, converted, bits, out);
      } else {
        hn::StoreU(converted, d16, out);
      }
    };
    const auto abs = hn::And(bits, hn::Set(d16, uint16_t{0x7FFF}));
    const auto easy = Easy::IsEasy(d16, abs);
    if (HWY_LIKELY(hn::AllTrue(d16, easy))) {
      store(Easy::Convert(d16, bits, abs));
      return;
    }
    // ±0 is ±0 in every format: a vector of easy lanes and zeros (pruned,
    // e.g. 2:4-sparse, weights) keeps the u16 path, its zeros as their sign,
    // where that is cheaper than the general path (Easy::kZerosEasy).
    const auto zero = hn::Eq(abs, hn::Zero(d16));
    if (Easy::kZerosEasy && hn::AllTrue(d16, hn::Or(easy, zero))) {
      store(hn::IfThenElse(zero, hn::And(bits, hn::Set(d16, fmt::kF16SignMask)),
                           Easy::Convert(d16, bits, abs)));
    } else {
      General()(d16, in, out);
    }
  }
};

// Widening: u32 lanes of F32 bits stored as F32.
template <class Decode>
struct WidenChunk {
  template <class DU>
  HWY_INLINE void operator()(DU du, const uint16_t* HWY_RESTRICT in,
                             float* HWY_RESTRICT out) const {
    const hn::RebindToFloat<DU> df;
    hn::StoreU(hn::BitCast(df, Decode()(du, in)), df, out);
  }
};

// WidenChunk over one u16 vector's elements (two u32 vectors): the general
// path of U16LanesOrGeneralChunk for F32 outputs.
template <class Decode>
struct WidenPairChunk {
  template <class D16>
  HWY_INLINE void operator()(D16 /* d16 */, const uint16_t* HWY_RESTRICT in,
                             float* HWY_RESTRICT out) const {
    const hn::Repartition<uint32_t, D16> du;
    const size_t n = hn::Lanes(du);
    WidenChunk<Decode>()(du, in, out);
    WidenChunk<Decode>()(du, in + n, out + n);
  }
};

// Row kernels: n_elems inputs -> n_elems outputs, any alignment, no overlap.
HWY_INLINE void F32ToBf16Kernel(const float* in, size_t n_elems, uint16_t* out) {
  ForEachVector(hn::ScalableTag<uint16_t>(), in, n_elems, out, NarrowChunk<FromF32, ToBf16Upper>());
}
HWY_INLINE void F32ToF16Kernel(const float* in, size_t n_elems, uint16_t* out) {
  ForEachVector(hn::ScalableTag<uint16_t>(), in, n_elems, out, NarrowChunk<FromF32, ToF16Lower>());
}
HWY_INLINE void F16ToBf16Kernel(const uint16_t* in, size_t n_elems, uint16_t* out) {
  ForEachVector(hn::ScalableTag<uint16_t>(), in, n_elems, out,
                U16LanesOrGeneralChunk<F16ToBf16OnU16, NarrowChunk<FromF16, ToBf16Upper>>());
}
HWY_INLINE void Bf16ToF16Kernel(const uint16_t* in, size_t n_elems, uint16_t* out) {
  ForEachVector(hn::ScalableTag<uint16_t>(), in, n_elems, out,
                U16LanesOrGeneralChunk<Bf16ToF16OnU16, NarrowChunk<FromBf16, ToF16Lower>>());
}
HWY_INLINE void Bf16ToF32Kernel(const uint16_t* in, size_t n_elems, float* out) {
  ForEachVector(hn::ScalableTag<uint32_t>(), in, n_elems, out, WidenChunk<FromBf16>());
}
HWY_INLINE void F16ToF32Kernel(const uint16_t* in, size_t n_elems, float* out) {
#if AMN_F16_TO_F32_ON_U16
  ForEachVector(hn::ScalableTag<uint16_t>(), in, n_elems, out,
                U16LanesOrGeneralChunk<F16ToF32OnU16, WidenPairChunk<FromF16>>());
#else
  ForEachVector(hn::ScalableTag<uint32_t>(), in, n_elems, out, WidenChunk<FromF16>());
#endif
}

// The FloatConvert family (kernels/kernel_args.h): elements [begin, end)
// of an F32/F16/BF16 tensor to another of the three.
HWY_INLINE void DecodeFloatConvert(const kernels::ConvertArgs& a, size_t begin, size_t end,
                                   ElemType out_type, void* out) {
  const size_t n = end - begin;
  const auto* in = static_cast<const uint8_t*>(a.in) + begin * ElemTypeBytes(a.in_type);
  const auto* f32 = reinterpret_cast<const float*>(in);
  const auto* u16 = reinterpret_cast<const uint16_t*>(in);
  auto* o32 = static_cast<float*>(out);
  auto* o16 = static_cast<uint16_t*>(out);
  if (a.in_type == ElemType::kF32) {
    if (out_type == ElemType::kBf16) F32ToBf16Kernel(f32, n, o16);
    if (out_type == ElemType::kF16) F32ToF16Kernel(f32, n, o16);
  } else if (a.in_type == ElemType::kBf16) {
    if (out_type == ElemType::kF32) Bf16ToF32Kernel(u16, n, o32);
    if (out_type == ElemType::kF16) Bf16ToF16Kernel(u16, n, o16);
  } else if (a.in_type == ElemType::kF16) {
    if (out_type == ElemType::kF32) F16ToF32Kernel(u16, n, o32);
    if (out_type == ElemType::kBf16) F16ToBf16Kernel(u16, n, o16);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace amn
HWY_AFTER_NAMESPACE();

#endif  // AMN_KERNELS_FLOAT_CONVERT_INL_H_
