// Per-target ggml K-quant dequantization (Q2_K … Q8_K, IQ4_XS, TQ1_0, TQ2_0),
// Highway 1.0.3. Each 256-element super-block is done in two passes:
// 1. its codes are unpacked to signed integers (int8, one per element) with
//    16-lane u8 vector ops, and its 16 per-16-element factors (d·scale and
//    dmin·min, the same f32 operations as kernels/ref/ggml_kquant_ref.cc,
//    once per sub-block) are computed in scalar code (Q4_K and Q5_K skip the
//    int8 step: pass 2 unpacks their nibbles straight from the block);
// 2. each element is converted exactly to f32 and multiplied by its
//    broadcast factor (then the min subtracted), one IEEE operation each,
//    never fused, as the reference does. BF16/F16 round that F32 in
//    registers with float_convert-inl.h's encoders (no F32 scratch).
// NaN results follow the reference's rule (kernels/ref/ggml_kquant_ref.h): one
// NaN per block, from d and dmin alone, computed in scalar code; only blocks
// whose d or dmin is Inf/NaN (the only ones that can give NaN) take the pass-2
// variant with one IsNaN + IfThenElse per vector (chosen per block).
// Same bytes as the reference on every target; SCALAR (one-lane vectors,
// no 16-byte table lookup) runs the reference.
#if defined(AMN_KERNELS_GGML_KQUANT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef AMN_KERNELS_GGML_KQUANT_INL_H_
#undef AMN_KERNELS_GGML_KQUANT_INL_H_
#else
#define AMN_KERNELS_GGML_KQUANT_INL_H_
#endif

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "hwy/highway.h"
#include "kernels/kernel_args.h"
#include "kernels/float_convert-inl.h"
#include "kernels/ggml_blocks.h"
#include "kernels/ggml_kquant_blocks.h"
#include "kernels/ref/float_convert_ref.h"
#include "kernels/ref/ggml_kquant_ref.h"

HWY_BEFORE_NAMESPACE();
namespace amn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR

namespace kqv {

constexpr size_t kQK = kq::kSuperBlockElems;

// GGUF type ids of the family.
enum : uint32_t { kQ2K = 10, kQ3K = 11, kQ4K = 12, kQ5K = 13, kQ6K = 14, kQ8K = 15,
                  kIq4Xs = 23, kTq1 = 34, kTq2 = 35 };

inline float F16At(const uint8_t* p) {
  const uint32_t bits = ggml::F16ScaleBits(kq::LoadLe16(p));
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

// One decoded super-block: integer codes, and per 16 elements the factor
// (and the min, for types that subtract one).
struct Decoded {
  HWY_ALIGN int8_t q[kQK];
  float dl[16];
  float ml[16];
  const int8_t* codes;  // q, or Q8_K's own bytes
  const uint8_t* block;  // the block itself (Q4_K/Q5_K codes are read from it)
};

using D8 = hn::CappedTag<uint8_t, 16>;

template <class V>
HWY_INLINE void Put(D8 d8, V v, int8_t* dst) {
  hn::StoreU(v, d8, reinterpret_cast<uint8_t*>(dst));
}

// Q2_K: q = (qs[32h+l] >> 2k) & 3; factors d·(sc&15), dmin·(sc>>4).
HWY_INLINE void DecodeQ2K(const uint8_t* b, Decoded& out) {
  using namespace kq::q2k;
  const D8 d8;
  const float d = F16At(b + kD), dmin = F16At(b + kDmin);
  for (size_t s = 0; s < 16; ++s) {
    const uint8_t sc = b[kScales + s];
    out.dl[s] = d * static_cast<float>(sc & 0xF);
    out.ml[s] = dmin * static_cast<float>(sc >> 4);
  }
  const auto three = hn::Set(d8, 3);
  for (size_t h = 0; h < 2; ++h) {
    for (size_t l = 0; l < 32; l += hn::Lanes(d8)) {
      const auto v = hn::LoadU(d8, b + kQs + 32 * h + l);
      for (int k = 0; k < 4; ++k) {
        Put(d8, hn::And(hn::ShiftRightSame(v, 2 * k), three), out.q + 128 * h + 32 * k + l);
      }
    }
  }
}

// Q3_K: q = ((qs >> 2k) & 3) - (hmask bit (4h+k) ? 0 : 4); factor d·(scale-32).
HWY_INLINE void DecodeQ3K(const uint8_t* b, Decoded& out) {
  using namespace kq::q3k;
  const D8 d8;
  const float d = F16At(b + kD);
  for (int s = 0; s < 16; ++s) {
    out.dl[s] = d * static_cast<float>(kq::Q3KScale(s, b + kScales));
  }
  const auto three = hn::Set(d8, 3), one = hn::Set(d8, 1);
  for (size_t h = 0; h < 2; ++h) {
    for (size_t l = 0; l < 32; l += hn::Lanes(d8)) {
      const auto v = hn::LoadU(d8, b + kQs + 32 * h + l);
      const auto hm = hn::LoadU(d8, b + kHmask + l);
      for (int k = 0; k < 4; ++k) {
        const auto lo = hn::And(hn::ShiftRightSame(v, 2 * k), three);
        const auto missing = hn::Xor(hn::And(hn::ShiftRightSame(hm, 4 * static_cast<int>(h) + k), one), one);
        Put(d8, hn::Sub(lo, hn::ShiftLeft<2>(missing)), out.q + 128 * h + 32 * k + l);
      }
    }
  }
}

// Q4_K and Q5_K: factors d·sc_j, dmin·m_j per 32-element sub-block j; the
// codes are unpacked in pass 2 (Q45KScaled), straight from the block.
HWY_INLINE void DecodeQ45KScales(const uint8_t* b, size_t scales_at, Decoded& out) {
  const float d = F16At(b), dmin = F16At(b + 2);
  for (int j = 0; j < 8; ++j) {
    uint8_t sc, m;
    kq::ScaleMinK4(j, b + scales_at, &sc, &m);
    out.dl[2 * j] = out.dl[2 * j + 1] = d * static_cast<float>(sc);
    out.ml[2 * j] = out.ml[2 * j + 1] = dmin * static_cast<float>(m);
  }
}

// Q6_K: q = (nibble (k>>1) of ql[64h+32(k&1)+l] | ((qh[32h+l] >> 2k) & 3) << 4)
// - 32; factor d·scales[y/16].
HWY_INLINE void DecodeQ6K(const uint8_t* b, Decoded& out) {
  using namespace kq::q6k;
  const D8 d8;
  const float d = F16At(b + kD);
  for (size_t s = 0; s < 16; ++s) {
    out.dl[s] = d * static_cast<float>(static_cast<int8_t>(b[kScales + s]));
  }
  const auto fifteen = hn::Set(d8, 15), three = hn::Set(d8, 3), bias = hn::Set(d8, 32);
  for (size_t h = 0; h < 2; ++h) {
    for (size_t l = 0; l < 32; l += hn::Lanes(d8)) {
      const auto qh = hn::LoadU(d8, b + kQh + 32 * h + l);
      const auto ql0 = hn::LoadU(d8, b + kQl + 64 * h + l);
      const auto ql1 = hn::LoadU(d8, b + kQl + 64 * h + 32 + l);
      // Element 128h+32k+l: nibble k>>1 of ql[64h+32(k&1)+l], qh bits 2k, 2k+1.
      // (No arrays of vectors: SVE vectors are sizeless.)
      const auto put = [&](int k, decltype(ql0) lo) {
        const auto hi = hn::ShiftLeft<4>(hn::And(hn::ShiftRightSame(qh, 2 * k), three));
        Put(d8, hn::Sub(hn::Or(lo, hi), bias), out.q + 128 * h + 32 * k + l);
      };
      put(0, hn::And(ql0, fifteen));
      put(1, hn::And(ql1, fifteen));
      put(2, hn::ShiftRight<4>(ql0));
      put(3, hn::ShiftRight<4>(ql1));
    }
  }
}

// IQ4_XS: sub-block j, q = K[nibble] (low nibbles of qs[16j..] first); factor
// d·(ls-32).
HWY_INLINE void DecodeIq4Xs(const uint8_t* b, Decoded& out) {
  using namespace kq::iq4xs;
  const D8 d8;
  const float d = F16At(b + kD);
  const uint16_t scales_h = kq::LoadLe16(b + kScalesH);
  for (int j = 0; j < 8; ++j) {
    const int ls =
        ((b[kScalesL + j / 2] >> (4 * (j % 2))) & 15) | (((scales_h >> (2 * j)) & 3) << 4);
    out.dl[2 * j] = out.dl[2 * j + 1] = d * static_cast<float>(ls - 32);
  }
  uint8_t table_bytes[16];
  std::memcpy(table_bytes, kq::kIq4Values.data(), 16);
  const auto table = hn::LoadU(d8, table_bytes);
  const auto fifteen = hn::Set(d8, 15);
  for (size_t j = 0; j < 8; ++j) {
    for (size_t l = 0; l < 16; l += hn::Lanes(d8)) {
      const auto v = hn::LoadU(d8, b + kQs + 16 * j + l);
      Put(d8, hn::TableLookupBytes(table, hn::And(v, fifteen)), out.q + 32 * j + l);
      Put(d8, hn::TableLookupBytes(table, hn::ShiftRight<4>(v)), out.q + 32 * j + 16 + l);
    }
  }
}

// TQ2_0: q = ((qs[32h+l] >> 2k) & 3) - 1; factor d.
HWY_INLINE void DecodeTq2(const uint8_t* b, Decoded& out) {
  using namespace kq::tq2;
  const D8 d8;
  const float d = F16At(b + kD);
  for (float& f : out.dl) f = d;
  const auto three = hn::Set(d8, 3), one = hn::Set(d8, 1);
  for (size_t h = 0; h < 2; ++h) {
    for (size_t l = 0; l < 32; l += hn::Lanes(d8)) {
      const auto v = hn::LoadU(d8, b + kQs + 32 * h + l);
      for (int k = 0; k < 4; ++k) {
        Put(d8, hn::Sub(hn::And(hn::ShiftRightSame(v, 2 * k), three), one),
            out.q + 128 * h + 32 * k + l);
      }
    }
  }
}

// TQ1_0: base-3 digits, digit(x,k) = (((x·3^k) mod 256)·3) >> 8, minus 1;
// factor d. Integer code without branches (Highway 1.0.3 has no u8 Mul).
HWY_INLINE void DecodeTq1(const uint8_t* b, Decoded& out) {
  using namespace kq::tq1;
  const float d = F16At(b + kD);
  for (float& f : out.dl) f = d;
  static constexpr uint8_t kPow3[5] = {1, 3, 9, 27, 81};
  const auto digit = [](uint8_t x, int k) {
    const uint8_t q = static_cast<uint8_t>(x * kPow3[k]);
    return static_cast<int8_t>(((static_cast<unsigned>(q) * 3) >> 8) - 1);
  };
  for (int k = 0; k < 5; ++k) {
    for (int l = 0; l < 32; ++l) out.q[32 * k + l] = digit(b[kQs + l], k);
    for (int l = 0; l < 16; ++l) out.q[160 + 16 * k + l] = digit(b[kQs + 32 + l], k);
  }
  for (int k = 0; k < 4; ++k) {
    for (int l = 0; l < 4; ++l) out.q[240 + 4 * k + l] = digit(b[kQh + l], k);
  }
}

// Where kType keeps d (f16; Q8_K: f32) and dmin (f16, where it has one).
struct ScaleFields {
  size_t d;
  bool has_dmin;
  size_t dmin;
};
template <uint32_t kType>
constexpr ScaleFields ScaleFieldsOf() {
  if constexpr (kType == kQ2K) return {kq::q2k::kD, true, kq::q2k::kDmin};
  if constexpr (kType == kQ3K) return {kq::q3k::kD, false, 0};
  if constexpr (kType == kQ4K) return {kq::q4k::kD, true, kq::q4k::kDmin};
  if constexpr (kType == kQ5K) return {kq::q5k::kD, true, kq::q5k::kDmin};
  if constexpr (kType == kQ6K) return {kq::q6k::kD, false, 0};
  if constexpr (kType == kQ8K) return {kq::q8k::kD, false, 0};
  if constexpr (kType == kIq4Xs) return {kq::iq4xs::kD, false, 0};
  if constexpr (kType == kTq1) return {kq::tq1::kD, false, 0};
  if constexpr (kType == kTq2) return {kq::tq2::kD, false, 0};
}

// d or dmin is Inf/NaN: the only blocks whose results can be NaN (finite f16
// scales times 6-bit factors and small codes cannot overflow). Integer tests
// on the raw bits: the common path widens nothing extra.
template <uint32_t kType>
HWY_INLINE bool SpecialBlock(const uint8_t* b) {
  constexpr ScaleFields f = ScaleFieldsOf<kType>();
  if constexpr (kType == kQ8K) {
    return (kq::LoadLe32(b + f.d) & 0x7F800000u) == 0x7F800000u;
  } else {
    const auto special = [b](size_t at) { return (kq::LoadLe16(b + at) & 0x7C00u) == 0x7C00u; };
    return special(f.d) || (f.has_dmin && special(f.dmin));
  }
}

// What every NaN result of a special block becomes (the reference's rule):
// d's NaN, else dmin's, quiet, else ggml::kInvalidNan. F16 scales are quieted
// by the widening, Q8_K's f32 d by setting the quiet bit, as a multiply does.
template <uint32_t kType>
HWY_INLINE uint32_t BlockNanBits(const uint8_t* b) {
  constexpr ScaleFields f = ScaleFieldsOf<kType>();
  const auto is_nan = [](uint32_t x) { return (x & 0x7FFFFFFFu) > 0x7F800000u; };
  const auto f16 = [b](size_t at) { return ref::F16ToF32Bits(kq::LoadLe16(b + at)); };
  const uint32_t d = kType == kQ8K ? kq::LoadLe32(b + f.d) : f16(f.d);
  const uint32_t dmin = f.has_dmin ? f16(f.dmin) : 0;
  if (is_nan(d)) return d | 0x00400000u;
  if (is_nan(dmin)) return dmin | 0x00400000u;
  return ggml::kInvalidNan;
}

// Pass 2: y = float(q - kBias) · dl[y/16] (- ml[y/16]); with kSpecial, NaN
// results become nan_bits (the intermediate NaNs' payloads are whatever the
// CPU gave). kBias is 0 except for the I-quants' biased IQ1 codes. Vectors
// of at most 16 lanes, so each lies inside one 16-element factor group.
// With kSpecial (a block whose d or dmin is Inf/NaN), NaN lanes become
// nan_bits; otherwise r unchanged.
template <bool kSpecial, class DF>
HWY_INLINE hn::Vec<DF> PinNan(DF df, hn::Vec<DF> r, uint32_t nan_bits) {
  if constexpr (!kSpecial) return r;
  const auto nan = hn::BitCast(df, hn::Set(hn::RebindToUnsigned<DF>(), nan_bits));
  return hn::IfThenElse(hn::IsNaN(r), nan, r);
}

template <bool kHasMin, bool kSpecial, int kBias>
struct Scaled {
  template <class DF>
  HWY_INLINE hn::Vec<DF> operator()(DF df, const Decoded& dec, uint32_t nan_bits,
                                    size_t i) const {
    const hn::RebindToSigned<DF> di;
    const hn::Rebind<int8_t, DF> d8;
    auto q = hn::PromoteTo(di, hn::LoadU(d8, dec.codes + i));
    if constexpr (kBias != 0) q = hn::Sub(q, hn::Set(di, kBias));
    auto r = hn::Mul(hn::ConvertTo(df, q), hn::Set(df, dec.dl[i / 16]));
    if constexpr (kHasMin) r = hn::Sub(r, hn::Set(df, dec.ml[i / 16]));
    return PinNan<kSpecial>(df, r, nan_bits);
  }
};

// Q4_K (kQ5 false) and Q5_K pass 2 without an int8 pass: element y = 32j + l
// of sub-block j = 2c + t is nibble t of qs[32c + l] (| bit j of qh[l] << 4);
// a vector never straddles a sub-block, so its shifts are uniform.
template <bool kQ5, bool kSpecial>
struct Q45KScaled {
  template <class DF>
  HWY_INLINE hn::Vec<DF> operator()(DF df, const Decoded& dec, uint32_t nan_bits,
                                    size_t i) const {
    const hn::RebindToUnsigned<DF> du;
    const hn::RebindToSigned<DF> di;
    const hn::Rebind<uint8_t, DF> d8;
    const size_t j = i / 32, l = i % 32;
    const size_t qs_at = kQ5 ? kq::q5k::kQs : kq::q4k::kQs;
    auto q = hn::PromoteTo(du, hn::LoadU(d8, dec.block + qs_at + 32 * (j / 2) + l));
    q = hn::And(hn::ShiftRightSame(q, static_cast<int>(4 * (j % 2))), hn::Set(du, 15u));
    if constexpr (kQ5) {
      const auto qh = hn::PromoteTo(du, hn::LoadU(d8, dec.block + kq::q5k::kQh + l));
      const auto bit = hn::And(hn::ShiftRightSame(qh, static_cast<int>(j)), hn::Set(du, 1u));
      q = hn::Or(q, hn::ShiftLeft<4>(bit));
    }
    auto r = hn::Mul(hn::ConvertTo(df, hn::BitCast(di, q)), hn::Set(df, dec.dl[i / 16]));
    r = hn::Sub(r, hn::Set(df, dec.ml[i / 16]));
    return PinNan<kSpecial>(df, r, nan_bits);
  }
};

template <class Value>
HWY_INLINE void StoreF32(const Decoded& dec, uint32_t nan_bits, float* HWY_RESTRICT y) {
  const hn::CappedTag<float, 16> df;
  for (size_t i = 0; i < kQK; i += hn::Lanes(df)) {
    hn::StoreU(Value()(df, dec, nan_bits, i), df, y + i);
  }
}

// BF16/F16 straight from the registers: two f32 vectors rounded and stored
// by Encode::StorePair (float_convert-inl.h, the reference's rounding).
template <class Value, class Encode>
HWY_INLINE void Store16(const Decoded& dec, uint32_t nan_bits, uint16_t* HWY_RESTRICT y) {
  const hn::CappedTag<uint32_t, 16> du;
  const hn::RebindToFloat<decltype(du)> df;
  const size_t n = hn::Lanes(du);
  // Fully unrolled (16 pairs on AVX2, 8 on AVX-512), so the sub-block index,
  // nibble shift and scale slot of each vector are constants: rolled, their
  // scalar arithmetic was half of the loop's instructions.
  HWY_UNROLL(16)
  for (size_t i = 0; i < kQK; i += 2 * n) {
    Encode::StorePair(du, hn::BitCast(du, Value()(df, dec, nan_bits, i)),
                      hn::BitCast(du, Value()(df, dec, nan_bits, i + n)), y + i);
  }
}

// One decoded block to F32 (TOut float) or BF16/F16 (kBf16 picks).
template <class Value, typename TOut, bool kBf16>
HWY_INLINE void StoreBlock(const Decoded& dec, uint32_t nan_bits, TOut* HWY_RESTRICT y) {
  if constexpr (sizeof(TOut) == 4) {
    StoreF32<Value>(dec, nan_bits, y);
  } else if constexpr (kBf16) {
    Store16<Value, ToBf16Upper>(dec, nan_bits, y);
  } else {
    Store16<Value, ToF16Lower>(dec, nan_bits, y);
  }
}

template <uint32_t kType>
HWY_INLINE void Decode(const uint8_t* b, Decoded& dec) {
  dec.codes = dec.q;
  dec.block = b;
  if constexpr (kType == kQ2K) DecodeQ2K(b, dec);
  if constexpr (kType == kQ3K) DecodeQ3K(b, dec);
  if constexpr (kType == kQ4K) DecodeQ45KScales(b, kq::q4k::kScales, dec);
  if constexpr (kType == kQ5K) DecodeQ45KScales(b, kq::q5k::kScales, dec);
  if constexpr (kType == kQ6K) DecodeQ6K(b, dec);
  if constexpr (kType == kQ8K) {
    const float d = kq::LoadLeF32(b + kq::q8k::kD);
    for (float& f : dec.dl) f = d;
    dec.codes = reinterpret_cast<const int8_t*>(b + kq::q8k::kQs);
  }
  if constexpr (kType == kIq4Xs) DecodeIq4Xs(b, dec);
  if constexpr (kType == kTq1) DecodeTq1(b, dec);
  if constexpr (kType == kTq2) DecodeTq2(b, dec);
}

// n_blocks super-blocks of kType; TOut float (F32) or uint16_t (kBf16 picks
// BF16 over F16).
template <uint32_t kType, typename TOut, bool kBf16>
HWY_INLINE void BlocksOut(const uint8_t* HWY_RESTRICT blocks, size_t n_blocks,
                          TOut* HWY_RESTRICT out) {
  constexpr bool kHasMin = kType == kQ2K || kType == kQ4K || kType == kQ5K;
  const size_t bytes = ref::KQuantBlockBytes(kType);
  Decoded dec;
  for (size_t i = 0; i < n_blocks; ++i) {
    const uint8_t* b = blocks + i * bytes;
    Decode<kType>(b, dec);
    constexpr bool kDirect = kType == kQ4K || kType == kQ5K;
    using Plain = std::conditional_t<kDirect, Q45KScaled<kType == kQ5K, false>,
                                     Scaled<kHasMin, false, 0>>;
    using Special = std::conditional_t<kDirect, Q45KScaled<kType == kQ5K, true>,
                                       Scaled<kHasMin, true, 0>>;
    if (HWY_UNLIKELY(SpecialBlock<kType>(b))) {  // per block, never per element
      StoreBlock<Special, TOut, kBf16>(dec, BlockNanBits<kType>(b), out + i * kQK);
    } else {
      StoreBlock<Plain, TOut, kBf16>(dec, 0, out + i * kQK);
    }
  }
}

template <typename TOut, bool kBf16>
HWY_INLINE bool TypeOut(uint32_t type, const uint8_t* blocks, size_t n_blocks, TOut* out) {
  switch (type) {
    case kQ2K: BlocksOut<kQ2K, TOut, kBf16>(blocks, n_blocks, out); return true;
    case kQ3K: BlocksOut<kQ3K, TOut, kBf16>(blocks, n_blocks, out); return true;
    case kQ4K: BlocksOut<kQ4K, TOut, kBf16>(blocks, n_blocks, out); return true;
    case kQ5K: BlocksOut<kQ5K, TOut, kBf16>(blocks, n_blocks, out); return true;
    case kQ6K: BlocksOut<kQ6K, TOut, kBf16>(blocks, n_blocks, out); return true;
    case kQ8K: BlocksOut<kQ8K, TOut, kBf16>(blocks, n_blocks, out); return true;
    case kIq4Xs: BlocksOut<kIq4Xs, TOut, kBf16>(blocks, n_blocks, out); return true;
    case kTq1: BlocksOut<kTq1, TOut, kBf16>(blocks, n_blocks, out); return true;
    case kTq2: BlocksOut<kTq2, TOut, kBf16>(blocks, n_blocks, out); return true;
    default: return false;
  }
}

}  // namespace kqv

#endif  // HWY_TARGET != HWY_SCALAR

// Row kernels: n_blocks super-blocks of GGUF type `type` to n_blocks * 256
// outputs (any alignment, no overlap). False, nothing written, for a type
// outside the family.
HWY_INLINE bool DequantKQuantToF32Kernel(uint32_t type, const uint8_t* blocks, size_t n_blocks,
                                         float* out) {
#if HWY_TARGET == HWY_SCALAR
  return ref::DequantKQuantToF32(type, blocks, n_blocks, out);
#else
  return kqv::TypeOut<float, false>(type, blocks, n_blocks, out);
#endif
}
HWY_INLINE bool DequantKQuantToBf16Kernel(uint32_t type, const uint8_t* blocks, size_t n_blocks,
                                          uint16_t* out) {
#if HWY_TARGET == HWY_SCALAR
  return ref::DequantKQuantToBf16(type, blocks, n_blocks, out);
#else
  return kqv::TypeOut<uint16_t, true>(type, blocks, n_blocks, out);
#endif
}
HWY_INLINE bool DequantKQuantToF16Kernel(uint32_t type, const uint8_t* blocks, size_t n_blocks,
                                         uint16_t* out) {
#if HWY_TARGET == HWY_SCALAR
  return ref::DequantKQuantToF16(type, blocks, n_blocks, out);
#else
  return kqv::TypeOut<uint16_t, false>(type, blocks, n_blocks, out);
#endif
}

// The GgmlKQuant family (kernels/kernel_args.h): blocks [begin, end) of a
// 256-element K-quant, IQ4_XS or TQ type; other types are ignored.
HWY_INLINE void DecodeGgmlKQuant(const kernels::GgmlArgs& a, size_t begin, size_t end,
                                 ElemType out_type, void* out) {
  const uint8_t* blocks = a.blocks + begin * ref::KQuantBlockBytes(a.type);
  const size_t n = end - begin;
  switch (out_type) {
    case ElemType::kF32: DequantKQuantToF32Kernel(a.type, blocks, n, static_cast<float*>(out)); break;
    case ElemType::kBf16: DequantKQuantToBf16Kernel(a.type, blocks, n, static_cast<uint16_t*>(out)); break;
    case ElemType::kF16: DequantKQuantToF16Kernel(a.type, blocks, n, static_cast<uint16_t*>(out)); break;
    default: break;
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace amn
HWY_AFTER_NAMESPACE();

#endif  // AMN_KERNELS_GGML_KQUANT_INL_H_
