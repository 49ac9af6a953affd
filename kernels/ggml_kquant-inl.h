// Per-target ggml K-quant dequantization (Q2_K … Q8_K, IQ4_XS, TQ1_0, TQ2_0),
// Highway 1.0.3. Each 256-element super-block is done in two passes:
// 1. its codes are unpacked to signed integers (int8, one per element) with
//    u8 vector ops (Q2_K..Q6_K and TQ2_0 on up to 32 lanes, TQ1_0 on u16
//    lanes), and its per-16-element factors (Q4_K/Q5_K: per 32; d·scale and
//    dmin·min, the same f32 operations as kernels/ref/ggml_kquant_ref.cc,
//    once per sub-block) are computed on vectors (Q3_K's and Q4_K/Q5_K's
//    6-bit scales unpacked by byte shuffles; IQ4_XS's and TQ1_0/TQ2_0's in
//    scalar code);
// 2. each element is converted exactly to f32 and multiplied by its
//    broadcast factor (then the min subtracted), one IEEE operation each,
//    never fused, as the reference does. BF16/F16 round that F32 in
//    registers with float_convert-inl.h's encoders (no F32 scratch).
// NaN results follow the reference's rule (kernels/ref/ggml_kquant_ref.h): one
// NaN per block, from d and dmin alone, computed in scalar code; only blocks
// whose d or dmin is Inf/NaN (the only ones that can give NaN) take the pass-2
// variant with one IsNaN + IfThenElse per vector (chosen per block).
// TQ1_0 skips both passes for blocks with a finite d: its only results
// are -d, +0 · d and d, looked up per digit (Tq1TableBlock,
// ggml_tq1_table-inl.h).
// Q4_K's, IQ4_XS's, Q2_K's, Q3_K's and TQ2_0's 16-bit outputs on some x86
// targets (KQuantUsesByteTables) skip pass 1's code unpack: byte tables of
// each sub-block's few results (KQuantByteTableBlock, PlaneByteTableBlock).
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
#include "kernels/float_convert-inl.h"
#include "kernels/ggml_blocks.h"
#include "kernels/ggml_kquant_blocks.h"
#include "kernels/ggml_tq1_table-inl.h"
#include "kernels/int4_byte_table-inl.h"
#include "kernels/kernel_args.h"
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
};

using D8 = hn::CappedTag<uint8_t, 16>;

template <class D, class V>
HWY_INLINE void Put(D d8, V v, int8_t* dst) {
  hn::StoreU(v, d8, reinterpret_cast<uint8_t*>(dst));
}

// Byte passes run on up to 32 u8 lanes (one 32-byte run of a block's codes):
// twice the work per instruction of 16-lane vectors on AVX2/AVX-512.
using D32 = hn::CappedTag<uint8_t, 32>;

// (v >> k) & mask per byte, the shift done on u16 lanes: the bits a byte
// receives from its neighbour lie at 8-k..7, outside mask (callers check).
template <int k, class V>
HWY_INLINE V ShrAnd(D32 d8, V v, uint8_t mask) {
  const hn::Repartition<uint16_t, D32> d16;
  return hn::And(hn::BitCast(d8, hn::ShiftRight<k>(hn::BitCast(d16, v))), hn::Set(d8, mask));
}
// (v << k) & mask per byte on u16 lanes: neighbour bits land at 0..k-1.
template <int k, class V>
HWY_INLINE V ShlAnd(D32 d8, V v, uint8_t mask) {
  const hn::Repartition<uint16_t, D32> d16;
  return hn::And(hn::BitCast(d8, hn::ShiftLeft<k>(hn::BitCast(d16, v))), hn::Set(d8, mask));
}
// Bit `from` of each byte moved to bit `to` (nothing else kept).
template <int from, int to, class V>
HWY_INLINE V MoveBit(D32 d8, V v) {
  constexpr uint8_t kMask = static_cast<uint8_t>(1u << to);
  if constexpr (from == to) return hn::And(v, hn::Set(d8, kMask));
  if constexpr (from < to) return ShlAnd<to - from>(d8, v, kMask);
  if constexpr (from > to) return ShrAnd<from - to>(d8, v, kMask);
}

// The 16 per-16-element scale bytes of a block widened to F32 lanes, a
// vector at a time: lanes [s, s + Lanes) of bytes p[0..16), signed (Q6_K) or
// not (Q2_K). One vector op each where the scalar loop, which GCC unrolled
// but did not vectorize, took a load, convert, multiply and store per scale
// (Q2_K with AVX2: 217 of 488 instructions per block).
using DScale = hn::CappedTag<float, 16>;
template <typename TByte>
HWY_INLINE hn::Vec<hn::RebindToSigned<DScale>> ScaleBytes(const uint8_t* p, size_t s) {
  const hn::RebindToSigned<DScale> di;
  const hn::Rebind<TByte, DScale> d8;
  return hn::PromoteTo(di, hn::LoadU(d8, reinterpret_cast<const TByte*>(p) + s));
}

// Q2_K factors d·(sc&15), dmin·(sc>>4) per 16 elements (the F32 product of
// the reference, operands in its order).
HWY_INLINE void DecodeQ2KScales(const uint8_t* b, Decoded& out) {
  using namespace kq::q2k;
  const DScale df;
  const hn::RebindToSigned<DScale> di;
  const auto d = hn::Set(df, F16At(b + kD)), dmin = hn::Set(df, F16At(b + kDmin));
  for (size_t s = 0; s < 16; s += hn::Lanes(df)) {
    const auto sc = ScaleBytes<uint8_t>(b + kScales, s);
    hn::StoreU(hn::Mul(d, hn::ConvertTo(df, hn::And(sc, hn::Set(di, 15)))), df, out.dl + s);
    hn::StoreU(hn::Mul(dmin, hn::ConvertTo(df, hn::ShiftRight<4>(sc))), df, out.ml + s);
  }
}

// Q2_K's and TQ2_0's 2-bit codes: element 128h+32k+l is bits 2k..2k+1 of
// qs[32h+l], minus kBias; one u8 pass at up to 32 lanes.
template <int kBias>
HWY_INLINE void DecodeTwoBitPlanes(const uint8_t* qs, int8_t* q) {
  const D32 d8;
  const auto biased = [d8](decltype(hn::Zero(d8)) code) {
    if constexpr (kBias == 0) return code;
    return hn::Sub(code, hn::Set(d8, kBias));
  };
  for (size_t h = 0; h < 2; ++h) {
    for (size_t l = 0; l < 32; l += hn::Lanes(d8)) {
      const auto v = hn::LoadU(d8, qs + 32 * h + l);
      int8_t* dst = q + 128 * h + l;
      Put(d8, biased(hn::And(v, hn::Set(d8, 3))), dst);
      Put(d8, biased(ShrAnd<2>(d8, v, 3)), dst + 32);  // neighbour bits land at 6..7
      Put(d8, biased(ShrAnd<4>(d8, v, 3)), dst + 64);
      Put(d8, biased(ShrAnd<6>(d8, v, 3)), dst + 96);
    }
  }
}

// Q2_K: q = (qs[32h+l] >> 2k) & 3.
HWY_INLINE void DecodeQ2K(const uint8_t* b, Decoded& out) {
  DecodeQ2KScales(b, out);
  DecodeTwoBitPlanes<0>(b + kq::q2k::kQs, out.q);
}

// Q3_K factors d·(scale-32) per 16 elements. The 16 6-bit scales
// (kq::Q3KScale) come out of the 12 scale bytes with two 16-byte shuffles:
// the low four bits of scale s are nibble s/8 of byte s%8, bits 4..5 are
// bits 2(s/4).. of byte 8 + s%4, moved to 4..5 by a shift per group of four
// lanes (u16-lane shifts: the neighbour bits fall outside 0x30). The 16-byte
// load starts 4 bytes before the scales: only d's 2 bytes follow them.
HWY_INLINE void DecodeQ3KScales(const uint8_t* b, Decoded& out) {
  using namespace kq::q3k;
  const D8 d8;
  const hn::Repartition<uint16_t, D8> d16;
  HWY_ALIGN static constexpr uint8_t kX[16] = {4, 5, 6, 7, 8, 9, 10, 11, 4, 5, 6, 7, 8, 9, 10, 11};
  HWY_ALIGN static constexpr uint8_t kY[16] = {12, 13, 14, 15, 12, 13, 14, 15,
                                               12, 13, 14, 15, 12, 13, 14, 15};
  HWY_ALIGN static constexpr uint8_t kLow[16] = {15, 15, 15, 15, 15, 15, 15, 15};
  HWY_ALIGN static constexpr uint8_t kHigh[16] = {0,  0,  0,  0,  0,  0,  0,  0,
                                                  15, 15, 15, 15, 15, 15, 15, 15};
  HWY_ALIGN static constexpr uint8_t kTop0[16] = {0x30, 0x30, 0x30, 0x30};
  HWY_ALIGN static constexpr uint8_t kTop1[16] = {0, 0, 0, 0, 0x30, 0x30, 0x30, 0x30};
  HWY_ALIGN static constexpr uint8_t kTop2[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0x30, 0x30, 0x30, 0x30};
  HWY_ALIGN static constexpr uint8_t kTop3[16] = {0, 0, 0, 0, 0,    0,    0,    0,
                                                  0, 0, 0, 0, 0x30, 0x30, 0x30, 0x30};
  const auto raw = hn::LoadU(d8, b + kScales - 4);
  const auto x = hn::TableLookupBytes(raw, hn::Load(d8, kX));
  const auto y = hn::BitCast(d16, hn::TableLookupBytes(raw, hn::Load(d8, kY)));
  const auto top = [&](auto y16, const uint8_t* mask) {
    return hn::And(hn::BitCast(d8, y16), hn::Load(d8, mask));
  };
  const auto low =
      hn::Or(hn::And(x, hn::Load(d8, kLow)), hn::And(hn::ShiftRight<4>(x), hn::Load(d8, kHigh)));
  const auto high = hn::Or(hn::Or(top(hn::ShiftLeft<4>(y), kTop0), top(hn::ShiftLeft<2>(y), kTop1)),
                           hn::Or(top(y, kTop2), top(hn::ShiftRight<2>(y), kTop3)));
  HWY_ALIGN uint8_t scales[16];
  hn::Store(hn::Sub(hn::Or(low, high), hn::Set(d8, 32)), d8, scales);
  const DScale df;
  const auto d = hn::Set(df, F16At(b + kD));
  for (size_t s = 0; s < 16; s += hn::Lanes(df)) {
    hn::StoreU(hn::Mul(d, hn::ConvertTo(df, ScaleBytes<int8_t>(scales, s))), df, out.dl + s);
  }
}

// Q3_K: q = ((qs >> 2k) & 3) - (hmask bit (4h+k) ? 0 : 4).
HWY_INLINE void DecodeQ3K(const uint8_t* b, Decoded& out) {
  using namespace kq::q3k;
  const D32 d8;
  DecodeQ3KScales(b, out);
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

// Q4_K and Q5_K: factors d·sc_j, dmin·m_j per 32-element sub-block j (in
// dl[j], ml[j]: pass 2 indexes them per 32 elements). The eight 6-bit (sc, m)
// pairs (kq::ScaleMinK4) come out of the 12 scale bytes with two 16-byte
// shuffles: lanes 0..7 sc_j, 8..15 m_j; low bits from bytes X, bits 4..5 from
// the top two bits of bytes Y (lanes j >= 4 only). The 16-byte load stays in
// the block (the codes follow the scales).
HWY_INLINE void DecodeQ45KScales(const uint8_t* b, size_t scales_at, Decoded& out) {
  const D8 d8;
  const float d = F16At(b), dmin = F16At(b + 2);
  HWY_ALIGN static constexpr uint8_t kX[16] = {0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 8, 9, 10, 11};
  HWY_ALIGN static constexpr uint8_t kY[16] = {0, 0, 0, 0, 0, 1, 2, 3, 0, 0, 0, 0, 4, 5, 6, 7};
  HWY_ALIGN static constexpr uint8_t kLow[16] = {63, 63, 63, 63, 15, 15, 15, 15,
                                                 63, 63, 63, 63, 0,  0,  0,  0};
  HWY_ALIGN static constexpr uint8_t kHighNibble[16] = {0, 0, 0, 0, 0, 0, 0, 0,
                                                        0, 0, 0, 0, 15, 15, 15, 15};
  HWY_ALIGN static constexpr uint8_t kTop[16] = {0, 0, 0, 0, 0x30, 0x30, 0x30, 0x30,
                                                 0, 0, 0, 0, 0x30, 0x30, 0x30, 0x30};
  const auto raw = hn::LoadU(d8, b + scales_at);
  const auto x = hn::TableLookupBytes(raw, hn::Load(d8, kX));
  const auto y = hn::TableLookupBytes(raw, hn::Load(d8, kY));
  const auto low = hn::Or(hn::And(x, hn::Load(d8, kLow)),
                          hn::And(hn::ShiftRight<4>(x), hn::Load(d8, kHighNibble)));
  const auto pairs = hn::Or(low, hn::And(hn::ShiftRight<2>(y), hn::Load(d8, kTop)));
  HWY_ALIGN uint8_t sc_m[16];
  hn::Store(pairs, d8, sc_m);
  const hn::CappedTag<float, 8> df;
  const hn::RebindToSigned<decltype(df)> di;
  const hn::Rebind<uint8_t, decltype(df)> d8f;
  const auto as_f32 = [&](const uint8_t* p) {
    return hn::ConvertTo(df, hn::PromoteTo(di, hn::LoadU(d8f, p)));
  };
  for (size_t j = 0; j < 8; j += hn::Lanes(df)) {
    hn::StoreU(hn::Mul(hn::Set(df, d), as_f32(sc_m + j)), df, out.dl + j);
    hn::StoreU(hn::Mul(hn::Set(df, dmin), as_f32(sc_m + 8 + j)), df, out.ml + j);
  }
}

// Q4_K/Q5_K codes of sub-blocks 2c, 2c+1: nibble t of qs[32c+l] (Q5_K: | bit
// 2c+t of qh[l] << 4), one u8 pass at up to 32 lanes.
template <bool kQ5, int c>
HWY_INLINE void DecodeQ45KPair(const uint8_t* b, Decoded& out) {
  const D32 d8;
  const uint8_t* qs = b + (kQ5 ? kq::q5k::kQs : kq::q4k::kQs) + 32 * c;
  for (size_t l = 0; l < 32; l += hn::Lanes(d8)) {
    const auto v = hn::LoadU(d8, qs + l);
    auto lo = hn::And(v, hn::Set(d8, 15));
    auto hi = ShrAnd<4>(d8, v, 15);  // neighbour bits land at 4..7
    if constexpr (kQ5) {
      const auto qh = hn::LoadU(d8, b + kq::q5k::kQh + l);
      lo = hn::Or(lo, MoveBit<2 * c, 4>(d8, qh));
      hi = hn::Or(hi, MoveBit<2 * c + 1, 4>(d8, qh));
    }
    Put(d8, lo, out.q + 64 * c + l);
    Put(d8, hi, out.q + 64 * c + 32 + l);
  }
}

template <bool kQ5>
HWY_INLINE void DecodeQ45K(const uint8_t* b, Decoded& out) {
  DecodeQ45KScales(b, kQ5 ? kq::q5k::kScales : kq::q4k::kScales, out);
  DecodeQ45KPair<kQ5, 0>(b, out);
  DecodeQ45KPair<kQ5, 1>(b, out);
  DecodeQ45KPair<kQ5, 2>(b, out);
  DecodeQ45KPair<kQ5, 3>(b, out);
}

// Q6_K: q = (nibble (k>>1) of ql[64h+32(k&1)+l] | ((qh[32h+l] >> 2k) & 3) << 4)
// - 32; factor d·scales[y/16].
HWY_INLINE void DecodeQ6K(const uint8_t* b, Decoded& out) {
  using namespace kq::q6k;
  const D32 d8;
  const DScale df;
  const auto d = hn::Set(df, F16At(b + kD));
  for (size_t s = 0; s < 16; s += hn::Lanes(df)) {
    hn::StoreU(hn::Mul(d, hn::ConvertTo(df, ScaleBytes<int8_t>(b + kScales, s))), df, out.dl + s);
  }
  const auto fifteen = hn::Set(d8, 15), bias = hn::Set(d8, 32);
  for (size_t h = 0; h < 2; ++h) {
    for (size_t l = 0; l < 32; l += hn::Lanes(d8)) {
      const auto qh = hn::LoadU(d8, b + kQh + 32 * h + l);
      const auto ql0 = hn::LoadU(d8, b + kQl + 64 * h + l);
      const auto ql1 = hn::LoadU(d8, b + kQl + 64 * h + 32 + l);
      // Element 128h+32k+l: nibble k>>1 of ql[64h+32(k&1)+l], qh bits 2k, 2k+1
      // at bits 4, 5 (the u16-lane shifts' neighbour bits fall outside 0x30).
      // (No arrays of vectors: SVE vectors are sizeless.)
      const auto put = [&](int k, decltype(ql0) lo, decltype(ql0) hi) {
        Put(d8, hn::Sub(hn::Or(lo, hi), bias), out.q + 128 * h + 32 * k + l);
      };
      put(0, hn::And(ql0, fifteen), ShlAnd<4>(d8, qh, 0x30));
      put(1, hn::And(ql1, fifteen), ShlAnd<2>(d8, qh, 0x30));
      put(2, ShrAnd<4>(d8, ql0, 15), hn::And(qh, hn::Set(d8, 0x30)));
      put(3, ShrAnd<4>(d8, ql1, 15), ShrAnd<2>(d8, qh, 0x30));
    }
  }
}

// IQ4_XS factors: d·(ls_j-32) for sub-block j, in dl[2j] and dl[2j+1] (pass
// 2 indexes them per 16 elements).
HWY_INLINE void DecodeIq4XsScales(const uint8_t* b, Decoded& out) {
  using namespace kq::iq4xs;
  const float d = F16At(b + kD);
  const uint16_t scales_h = kq::LoadLe16(b + kScalesH);
  for (int j = 0; j < 8; ++j) {
    const int ls =
        ((b[kScalesL + j / 2] >> (4 * (j % 2))) & 15) | (((scales_h >> (2 * j)) & 3) << 4);
    out.dl[2 * j] = out.dl[2 * j + 1] = d * static_cast<float>(ls - 32);
  }
}

// IQ4_XS: sub-block j, q = K[nibble] (low nibbles of qs[16j..] first); factor
// d·(ls-32).
HWY_INLINE void DecodeIq4Xs(const uint8_t* b, Decoded& out) {
  using namespace kq::iq4xs;
  const D8 d8;
  DecodeIq4XsScales(b, out);
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

// TQ2_0's one factor d, in every slot.
HWY_INLINE void DecodeTq2Scales(const uint8_t* b, Decoded& out) {
  const float d = F16At(b + kq::tq2::kD);
  for (float& f : out.dl) f = d;
}

// TQ2_0: q = ((qs[32h+l] >> 2k) & 3) - 1.
HWY_INLINE void DecodeTq2(const uint8_t* b, Decoded& out) {
  DecodeTq2Scales(b, out);
  DecodeTwoBitPlanes<1>(b + kq::tq2::kQs, out.q);
}

// TQ1_0: base-3 digits, digit(x,k) = (((x·3^k) mod 256)·3) >> 8, minus 1;
// factor d. On u16 lanes (Highway 1.0.3 has no u8 Mul), 8 or 16 bytes at a
// time: elements 32k+l from qs[l] (l < 32), 160+16k+l from qs[32+l],
// 240+4k+l from qh[l] (k < 4, l < 4: one 4-byte chunk).
template <class D16>
HWY_INLINE void Tq1Digits(D16 d16, const uint8_t* src, int digits, size_t stride, int8_t* dst) {
  const hn::Rebind<int16_t, D16> di16;
  const hn::Rebind<int8_t, D16> di8;
  Tq1TableIndices(d16, src, digits, [&](int k, hn::Vec<D16> t) {  // t = digit + 1
    const auto digit = hn::Sub(hn::BitCast(di16, t), hn::Set(di16, 1));
    hn::StoreU(hn::DemoteTo(di8, digit), di8, dst + stride * k);
  });
}

HWY_INLINE void DecodeTq1(const uint8_t* b, Decoded& out) {
  using namespace kq::tq1;
  const float d = F16At(b + kD);
  for (float& f : out.dl) f = d;
  const hn::CappedTag<uint16_t, 16> d16;
  const size_t n = hn::Lanes(d16);  // 8 or 16 (every non-SCALAR target)
  for (size_t l = 0; l < 32; l += n) Tq1Digits(d16, b + kQs + l, 5, 32, out.q + l);
  for (size_t l = 0; l < 16; l += n) Tq1Digits(d16, b + kQs + 32 + l, 5, 16, out.q + 160 + l);
  Tq1Digits(hn::CappedTag<uint16_t, 4>(), b + kQh, 4, 4, out.q + 240);
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

// float(q) · dl (- ml) per lane, NaN pinned with kSpecial.
template <bool kHasMin, bool kSpecial, class DF>
HWY_INLINE hn::Vec<DF> ScaledCodes(DF df, hn::Vec<hn::RebindToSigned<DF>> q, hn::Vec<DF> dl,
                                   hn::Vec<DF> ml, uint32_t nan_bits) {
  auto r = hn::Mul(hn::ConvertTo(df, q), dl);
  if constexpr (kHasMin) r = hn::Sub(r, ml);
  return PinNan<kSpecial>(df, r, nan_bits);
}
// The same for one factor group.
template <bool kHasMin, bool kSpecial, class DF>
HWY_INLINE hn::Vec<DF> ScaledCodes(DF df, hn::Vec<hn::RebindToSigned<DF>> q, float dl, float ml,
                                   uint32_t nan_bits) {
  return ScaledCodes<kHasMin, kSpecial>(df, q, hn::Set(df, dl), hn::Set(df, ml), nan_bits);
}

// kGroupShift: log2 of the elements per factor (16; Q4_K/Q5_K 32).
template <bool kHasMin, bool kSpecial, int kBias, int kGroupShift = 4>
struct Scaled {
  template <class DF>
  HWY_INLINE hn::Vec<DF> operator()(DF df, const Decoded& dec, uint32_t nan_bits,
                                    size_t i) const {
    const hn::RebindToSigned<DF> di;
    const hn::Rebind<int8_t, DF> d8;
    auto q = hn::PromoteTo(di, hn::LoadU(d8, dec.codes + i));
    if constexpr (kBias != 0) q = hn::Sub(q, hn::Set(di, kBias));
    return ScaledCodes<kHasMin, kSpecial>(df, q, dec.dl[i >> kGroupShift],
                                          dec.ml[i >> kGroupShift], nan_bits);
  }
#if HWY_TARGET == HWY_NEON
  // Elements [i, i + 16) (i a multiple of 16: one factor group) as four
  // 4-lane vectors in r. NEON widens i8 to i32 in two SXTLs a vector: 16
  // codes widened together take one load and six SXTLs where four vectors
  // took four loads and eight, and the factor and min are broadcast once.
  HWY_INLINE void Sixteen(const Decoded& dec, uint32_t nan_bits, size_t i,
                          hn::Vec<hn::Full128<float>> (&r)[4]) const {
    const hn::Full128<float> df;
    const hn::Full128<int32_t> d32;
    const hn::Full128<int16_t> d16;
    const hn::Full64<int16_t> d16h;
    const hn::Full64<int8_t> d8h;
    const auto codes = hn::LoadU(hn::Full128<int8_t>(), dec.codes + i);
    hn::Vec<decltype(d16)> halves[2] = {hn::PromoteTo(d16, hn::LowerHalf(codes)),
                                        hn::PromoteTo(d16, hn::UpperHalf(d8h, codes))};
    const auto dl = hn::Set(df, dec.dl[i >> kGroupShift]);
    const auto ml = hn::Set(df, dec.ml[i >> kGroupShift]);
    for (size_t h = 0; h < 2; ++h) {
      // Codes minus the bias on 16-bit lanes: exact (|q| <= 128).
      if constexpr (kBias != 0) halves[h] = hn::Sub(halves[h], hn::Set(d16, kBias));
      const auto q0 = hn::PromoteTo(d32, hn::LowerHalf(halves[h]));
      const auto q1 = hn::PromoteTo(d32, hn::UpperHalf(d16h, halves[h]));
      r[2 * h] = ScaledCodes<kHasMin, kSpecial>(df, q0, dl, ml, nan_bits);
      r[2 * h + 1] = ScaledCodes<kHasMin, kSpecial>(df, q1, dl, ml, nan_bits);
    }
  }
#endif
};

// kUnrolled: fully unrolled like Store16 (32 vectors on AVX2, 64 on SSE4),
// so each vector's factor slot is a constant; rolled, each vector
// recomputes it and reloads dl/ml. KQuantUnrollsF32 says where.
template <class Value, bool kUnrolled = false>
HWY_INLINE void StoreF32(const Decoded& dec, uint32_t nan_bits, float* HWY_RESTRICT y) {
  const hn::CappedTag<float, 16> df;
#if HWY_TARGET == HWY_NEON
  // 16 elements a step (Value::Sixteen), unrolled where kUnrolled says.
  const auto store = [&](size_t i) {
    hn::Vec<decltype(df)> r[4];
    Value().Sixteen(dec, nan_bits, i, r);
    for (size_t v = 0; v < 4; ++v) hn::StoreU(r[v], df, y + i + 4 * v);
  };
  if constexpr (kUnrolled) {
    HWY_UNROLL(16)
    for (size_t i = 0; i < kQK; i += 16) store(i);
  } else {
    for (size_t i = 0; i < kQK; i += 16) store(i);
  }
#else
  const auto store = [&](size_t i) { hn::StoreU(Value()(df, dec, nan_bits, i), df, y + i); };
  if constexpr (kUnrolled) {
    HWY_UNROLL(64)
    for (size_t i = 0; i < kQK; i += hn::Lanes(df)) store(i);
  } else {
    for (size_t i = 0; i < kQK; i += hn::Lanes(df)) store(i);
  }
#endif
}

// BF16/F16 straight from the registers: two f32 vectors rounded and stored
// by Encode::StorePair (float_convert-inl.h, the reference's rounding).
template <class Value, class Encode>
HWY_INLINE void Store16(const Decoded& dec, uint32_t nan_bits, uint16_t* HWY_RESTRICT y) {
  const hn::CappedTag<uint32_t, 16> du;
  const hn::RebindToFloat<decltype(du)> df;
  const size_t n = hn::Lanes(du);
#if HWY_TARGET == HWY_NEON
  // 16 elements a step (Value::Sixteen), two pairs.
  HWY_UNROLL(16)
  for (size_t i = 0; i < kQK; i += 16) {
    hn::Vec<decltype(df)> r[4];
    Value().Sixteen(dec, nan_bits, i, r);
    Encode::StorePair(du, hn::BitCast(du, r[0]), hn::BitCast(du, r[1]), y + i);
    Encode::StorePair(du, hn::BitCast(du, r[2]), hn::BitCast(du, r[3]), y + i + 8);
  }
  (void)n;
#else
  // Fully unrolled (16 pairs on AVX2, 8 on AVX-512), so the sub-block index,
  // nibble shift and scale slot of each vector are constants: rolled, their
  // scalar arithmetic was half of the loop's instructions.
  HWY_UNROLL(16)
  for (size_t i = 0; i < kQK; i += 2 * n) {
    Encode::StorePair(du, hn::BitCast(du, Value()(df, dec, nan_bits, i)),
                      hn::BitCast(du, Value()(df, dec, nan_bits, i + n)), y + i);
  }
#endif
}

// The BF16 (kBf16) or F16 encoder; kMayBeNan false: the caller has proved
// no result of the block is NaN, and BF16/F16 are rounded without the NaN
// rule (ToBf16UpperNonNan, ToF16LowerNonNan; with F16C the F16 store is the
// same instruction).
template <bool kBf16, bool kMayBeNan>
using Encoder16 =
    std::conditional_t<kBf16, std::conditional_t<kMayBeNan, ToBf16Upper, ToBf16UpperNonNan>,
                       std::conditional_t<kMayBeNan, ToF16Lower, ToF16LowerNonNan>>;

// One decoded block to F32 (TOut float) or BF16/F16 (kBf16 picks).
template <class Value, typename TOut, bool kBf16, bool kMayBeNan, bool kUnrolledF32 = false>
HWY_INLINE void StoreBlock(const Decoded& dec, uint32_t nan_bits, TOut* HWY_RESTRICT y) {
  if constexpr (sizeof(TOut) == 4) {
    StoreF32<Value, kUnrolledF32>(dec, nan_bits, y);
  } else {
    Store16<Value, Encoder16<kBf16, kMayBeNan>>(dec, nan_bits, y);
  }
}

// Which types store F32 with the unrolled StoreF32 (the targets where it
// may: kUnrollsF32Here): Q2_K..Q6_K, and IQ1_S/IQ1_M (ggml_iquant-inl.h),
// on AVX2, SSE4 and SSSE3. Measured cache-resident 1.11-1.52x faster on
// AVX2 and 1.20-1.62x on SSE4, streaming 0.93-1.38x. Not IQ4_XS, TQ1_0,
// TQ2_0, Q8_K nor IQ2/IQ3: their cache-resident rows gained too, but the
// AVX2 streaming rows of IQ4_XS/TQ1_0/TQ2_0 measured 0.55-0.82x, in either
// run order (the cause is not found), IQ2/IQ3's 0.85-1.11x; not AVX-512
// (no gain). docs/performance/gguf-decode.md, "F32 pass 2 unrolled, and
// against ggml built for AVX2". NEON too: untimed, but 1.5-2.0x fewer
// instructions per element under emulation (docs/performance/arm.md, "NEON
// paths of the 128-bit x86 targets"); not SVE, whose vector length is
// known only at run time.
inline constexpr bool kUnrollsF32Here =
    (HWY_ARCH_X86 && HWY_TARGET >= HWY_AVX2 && HWY_TARGET <= HWY_SSSE3) || HWY_TARGET == HWY_NEON;
template <uint32_t kType>
constexpr bool KQuantUnrollsF32() {
  return kUnrollsF32Here &&
         (kType == kQ2K || kType == kQ3K || kType == kQ4K || kType == kQ5K || kType == kQ6K);
}

// log2 of the elements per factor slot of Decoded::dl/ml: 16, except
// Q4_K/Q5_K's per-32 factors.
template <uint32_t kType>
constexpr int GroupShiftOf() {
  return kType == kQ4K || kType == kQ5K ? 5 : 4;
}

// 16-bit outputs through byte tables (kernels/int4_byte_table-inl.h): where
// a sub-block's outputs take few distinct values, they are computed once
// (the arithmetic of Scaled, then the same encoder) and the codes looked up,
// giving the same bits as Store16. Q4_K/IQ4_XS (KQuantByteTableBlock): a
// 32-element sub-block has one factor (Q4_K: and a min) and 4-bit codes
// (IQ4_XS's mapped through its codebook), at most 16 outputs. Q2_K, Q3_K,
// TQ2_0 (PlaneByteTableBlock): 4, 8 and 4 outputs per 16-element factor
// slot (TQ2_0: per block), several slots to a table.
// Taken where it was faster (docs/performance/f16-on-sse4.md, "Per-block tables for
// 4-bit GGUF types" and "Q2_K, Q3_K and TQ2_0 through byte tables"):
// SSSE3/SSE4 for all five types (software F16 rounding; 1.5–6.4×); AVX2
// BF16 for all five (1.18–2.7×) and F16 for TQ2_0 (1.7×);
// AVX-512 BF16 of Q2_K and TQ2_0 (1.55×) and F16 of Q2_K (1.2×). The
// others keep Store16: Q4_K/IQ4_XS AVX2 F16 (0.97×, 0.83×) and AVX-512
// (BF16 1.0×, 0.96×; F16 0.65×, 0.64×), Q2_K AVX2 F16 (1.01–1.07×) and
// TQ2_0 AVX-512 F16 (1.02–1.18×), within noise, Q3_K AVX2 F16 and AVX-512
// (8 tables per block: 0.93–0.97×).
template <uint32_t kType, typename TOut, bool kBf16>
constexpr bool KQuantUsesByteTables() {
  constexpr bool kSse = kByteTables128;
  constexpr bool kAvx2 = HWY_TARGET == HWY_AVX2;
  constexpr bool kAvx3 = HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3;
  if constexpr (sizeof(TOut) != 2) return false;
  switch (kType) {
    case kQ4K:
    case kIq4Xs: return kSse || (kAvx2 && kBf16);
    case kQ2K: return kSse || kAvx3 || (kAvx2 && kBf16);
    case kQ3K: return kSse || (kAvx2 && kBf16);
    case kTq2: return kSse || kAvx2 || (kAvx3 && kBf16);
    default: return false;
  }
}

#if AMN_BYTE_TABLES
// The factors of a block taking byte tables, in Decoded::dl/ml.
template <uint32_t kType>
HWY_INLINE void DecodeByteTableScales(const uint8_t* b, Decoded& dec) {
  if constexpr (kType == kQ4K) DecodeQ45KScales(b, kq::q4k::kScales, dec);
  if constexpr (kType == kIq4Xs) DecodeIq4XsScales(b, dec);
  if constexpr (kType == kQ2K) DecodeQ2KScales(b, dec);
  if constexpr (kType == kQ3K) DecodeQ3KScales(b, dec);
  if constexpr (kType == kTq2) DecodeTq2Scales(b, dec);
}

// One block (factors already in dec) through the byte tables. Q4_K:
// sub-blocks 2c and 2c+1 are nibbles 0 and 1 of qs[32c .. 32c+31]; IQ4_XS:
// sub-block j's outputs 0..15 are the low nibbles of qs[16j .. 16j+15],
// 16..31 their high nibbles.
template <uint32_t kType, class Encode, bool kSpecial>
HWY_INLINE void KQuantByteTableBlock(const uint8_t* HWY_RESTRICT b, const Decoded& dec,
                                     uint32_t nan_bits, uint16_t* HWY_RESTRICT y) {
  const hn::ScalableTag<uint8_t> d8;
  const Int4Lookup32Tag d32;
  const auto sub_block = [&](size_t j, hn::Vec<Int4Lookup32Tag> c0, hn::Vec<Int4Lookup32Tag> c1) {
    const size_t slot = (32 * j) >> GroupShiftOf<kType>();
    const auto tables = MakeInt4ByteTables<Encode::kUpperHalf>(d8, [&](auto du, auto codes) {
      const hn::RebindToFloat<decltype(du)> df;
      if constexpr (kType == kIq4Xs) {
        codes = Codebook16(du, hn::BitCast(du, codes), kq::kIq4Values.data());
      }
      return Encode()(du, hn::BitCast(du, ScaledCodes<kType == kQ4K, kSpecial>(
                                              df, codes, dec.dl[slot], dec.ml[slot], nan_bits)));
    });
    StoreInt4ByteLookups32(Int4Tables32(tables), c0, c1, y + 32 * j);
  };
  if constexpr (kType == kQ4K) {
    for (size_t c = 0; c < 4; ++c) {
      const uint8_t* qs = b + kq::q4k::kQs + 32 * c;
      const auto q0 = hn::LoadDup128(d32, qs);
      const auto q1 = hn::LoadDup128(d32, qs + 16);
      sub_block(2 * c, Int4Nibbles<0>(d32, q0), Int4Nibbles<0>(d32, q1));
      sub_block(2 * c + 1, Int4Nibbles<1>(d32, q0), Int4Nibbles<1>(d32, q1));
    }
  } else {
    for (size_t j = 0; j < 8; ++j) {
      const auto q = hn::LoadDup128(d32, b + kq::iq4xs::kQs + 16 * j);
      sub_block(j, Int4Nibbles<0>(d32, q), Int4Nibbles<1>(d32, q));
    }
  }
}

// Q2_K, Q3_K and TQ2_0 keep 2-bit codes in bit-planes: element 128h+32k+l
// (32-element group g = 4h+k) is bits 2k, 2k+1 of qs[32h+l] (Q3_K: bit 2 of
// its code is bit 4h+k of hmask[l]), in factor slot 2g + (l >= 16). So one
// 16-entry table holds several slots' results, entry c being code
// c & (2^shift - 1) of slot s0 + (c >> shift): Q2_K 4 codes of 4 slots
// (groups g, g+1), Q3_K 8 codes of 2 slots (one group), TQ2_0 (one factor)
// its 4 codes, one table per block.
template <uint32_t kType>
constexpr int PlaneSlotShift() {
  return kType == kQ2K ? 2 : kType == kQ3K ? 3 : 4;
}
template <uint32_t kType>
constexpr size_t PlaneGroupsPerTable() {
  return kType == kTq2 ? 8 : size_t{8} >> PlaneSlotShift<kType>();
}

// f[s0 + (c >> kShift)] in each i32 lane of entry c (c < 16, f one of
// Decoded's 16 factor arrays): one slot a broadcast, two (Q3_K) a select
// (cheaper than the lookup: Q3_K 1.2x on SSE4), four (Q2_K) byte lookups in
// a 128-bit load of 4 factors around s0 (in bounds: it starts at s0
// rounded down to 4, and s0 + (15 >> kShift) lies in the same 4).
template <int kShift, class DF>
HWY_INLINE hn::Vec<DF> SlotFactors(DF df, hn::Vec<hn::RebindToSigned<DF>> c, const float* f,
                                   size_t s0) {
  if constexpr (kShift >= 4) {
    return hn::Set(df, f[s0]);
  } else if constexpr (kShift == 3) {
    const hn::RebindToSigned<DF> di;
    return hn::IfThenElse(hn::RebindMask(df, hn::Gt(c, hn::Set(di, 7))), hn::Set(df, f[s0 + 1]),
                          hn::Set(df, f[s0]));
  } else {
    const hn::Repartition<uint8_t, DF> d8;
    const hn::RebindToSigned<DF> di;
    alignas(16) static constexpr uint8_t kSpread[16] = {0, 0, 0, 0, 4,  4,  4,  4,
                                                        8, 8, 8, 8, 12, 12, 12, 12};
    alignas(16) static constexpr uint8_t kBytes[16] = {0, 1, 2, 3, 0, 1, 2, 3,
                                                       0, 1, 2, 3, 0, 1, 2, 3};
    const auto offset = hn::ShiftLeft<2>(
        hn::Add(hn::ShiftRight<kShift>(c), hn::Set(di, static_cast<int32_t>(s0 & 3))));
    const auto index = hn::Add(hn::TableLookupBytes(hn::BitCast(d8, offset),
                                                    hn::LoadDup128(d8, kSpread)),
                               hn::LoadDup128(d8, kBytes));
    const auto four = hn::LoadDup128(d8, reinterpret_cast<const uint8_t*>(f + (s0 & ~size_t{3})));
    return hn::BitCast(df, hn::TableLookupBytes(four, index));
  }
}

// Byte (0..3) shifted right by `shift` on u16 lanes, masked (the neighbour's
// bits land at 8 - shift and up, outside mask for shift <= 6 with mask 3).
HWY_INLINE hn::Vec<Int4Lookup32Tag> PlaneBits(hn::Vec<Int4Lookup32Tag> v, int shift,
                                              uint8_t mask) {
  const Int4Lookup32Tag d8;
  const hn::Repartition<uint16_t, Int4Lookup32Tag> d16;
  return hn::And(hn::BitCast(d8, hn::ShiftRightSame(hn::BitCast(d16, v), shift)),
                 hn::Set(d8, mask));
}

// Table indices of the 16 elements of group g = 4h+k whose qs bytes are v
// (and Q3_K's hmask bytes hm), half 0 (l < 16) or 1.
template <uint32_t kType>
HWY_INLINE hn::Vec<Int4Lookup32Tag> PlaneIndices(hn::Vec<Int4Lookup32Tag> v,
                                                 hn::Vec<Int4Lookup32Tag> hm, size_t g,
                                                 size_t half) {
  const Int4Lookup32Tag d8;
  const int k = static_cast<int>(g & 3);
  auto code = PlaneBits(v, 2 * k, 3);
  if constexpr (kType == kQ3K) {
    const hn::Repartition<uint16_t, Int4Lookup32Tag> d16;
    const auto bit = hn::ShiftLeft<2>(hn::ShiftRightSame(hn::BitCast(d16, hm), static_cast<int>(g)));
    code = hn::Or(code, hn::And(hn::BitCast(d8, bit), hn::Set(d8, 4)));
  }
  if constexpr (kType == kTq2) return code;
  const size_t slot = 2 * (g % PlaneGroupsPerTable<kType>()) + half;
  return hn::Add(code, hn::Set(d8, static_cast<uint8_t>(slot << PlaneSlotShift<kType>())));
}

// One Q2_K, Q3_K or TQ2_0 block (factors already in dec) through the byte
// tables: each table's entries are ScaledCodes of (c & mask) - bias with
// their slots' factors, then the encoder, as Scaled and Store16 do.
template <uint32_t kType, class Encode, bool kSpecial>
HWY_INLINE void PlaneByteTableBlock(const uint8_t* HWY_RESTRICT b, const Decoded& dec,
                                    uint32_t nan_bits, uint16_t* HWY_RESTRICT y) {
  constexpr int kShift = PlaneSlotShift<kType>();
  constexpr size_t kGroups = PlaneGroupsPerTable<kType>();
  constexpr bool kHasMin = kType == kQ2K;
  constexpr int32_t kBias = kType == kQ3K ? 4 : kType == kTq2 ? 1 : 0;
  const hn::ScalableTag<uint8_t> d8;
  const Int4Lookup32Tag d32;
  const uint8_t* qs = b + (kType == kQ2K ? kq::q2k::kQs : kType == kQ3K ? kq::q3k::kQs : kq::tq2::kQs);
  const uint8_t* hmask = b + kq::q3k::kHmask;  // read only for Q3_K
  for (size_t first = 0; first < 8; first += kGroups) {
    const size_t s0 = 2 * first;
    const auto tables = Int4Tables32(MakeInt4ByteTables<Encode::kUpperHalf>(d8, [&](auto du, auto c) {
      const hn::RebindToFloat<decltype(du)> df;
      const hn::RebindToSigned<decltype(du)> di;
      const auto q = hn::Sub(hn::And(c, hn::Set(di, (1 << kShift) - 1)), hn::Set(di, kBias));
      const auto dl = SlotFactors<kShift>(df, c, dec.dl, s0);
      const auto ml = kHasMin ? SlotFactors<kShift>(df, c, dec.ml, s0) : hn::Zero(df);
      return Encode()(du, hn::BitCast(du, ScaledCodes<kHasMin, kSpecial>(df, q, dl, ml, nan_bits)));
    }));
    for (size_t g = first; g < first + kGroups; ++g) {
      const size_t h = g >> 2;
      const auto v0 = hn::LoadDup128(d32, qs + 32 * h);
      const auto v1 = hn::LoadDup128(d32, qs + 32 * h + 16);
      const auto hm0 = kType == kQ3K ? hn::LoadDup128(d32, hmask) : v0;
      const auto hm1 = kType == kQ3K ? hn::LoadDup128(d32, hmask + 16) : v1;
      StoreInt4ByteLookups32(tables, PlaneIndices<kType>(v0, hm0, g, 0),
                             PlaneIndices<kType>(v1, hm1, g, 1), y + 32 * g);
    }
  }
}

// The byte-table path of kType (KQuantUsesByteTables).
template <uint32_t kType, class Encode, bool kSpecial>
HWY_INLINE void ByteTableBlock(const uint8_t* HWY_RESTRICT b, const Decoded& dec,
                               uint32_t nan_bits, uint16_t* HWY_RESTRICT y) {
  if constexpr (kType == kQ2K || kType == kQ3K || kType == kTq2) {
    PlaneByteTableBlock<kType, Encode, kSpecial>(b, dec, nan_bits, y);
  } else {
    KQuantByteTableBlock<kType, Encode, kSpecial>(b, dec, nan_bits, y);
  }
}
#endif

// The types whose F16 output takes ToF16LowerInRange on a block that
// passes KQuantF16InRange: the targets without F16C where the integer
// rounding exists, for the types whose results are one product
// float(q) * dl with |q| <= KQuantMaxAbsCode (Q8_K: int8 codes times d;
// Q6_K: q - 32 times d * scale). Q2_K, Q4_K and Q5_K subtract a min (their
// results can cancel towards 0) and the others take byte tables.
template <uint32_t kType, typename TOut, bool kBf16>
constexpr bool KQuantUsesF16InRange() {
  return kF16InRangeStore && sizeof(TOut) == 2 && !kBf16 && (kType == kQ8K || kType == kQ6K);
}
template <uint32_t kType>
constexpr float KQuantMaxAbsCode() {
  return kType == kQ8K ? 128.0f : 32.0f;
}

// Whether every result of a non-special decoded block is ±0 or in
// [2^-14, 2^16) (F16InRangeProducts on each factor slot; Q8_K's 16 slots
// all hold d).
template <uint32_t kType>
HWY_INLINE bool KQuantF16InRange(const Decoded& dec) {
  constexpr size_t kSlots = kType == kQ8K ? 1 : 16;
  bool in_range = true;
  for (size_t s = 0; s < kSlots; ++s) {
    in_range &= F16InRangeProducts(dec.dl[s], KQuantMaxAbsCode<kType>());
  }
  return in_range;
}

template <uint32_t kType>
HWY_INLINE void Decode(const uint8_t* b, Decoded& dec) {
  dec.codes = dec.q;
  if constexpr (kType == kQ2K) DecodeQ2K(b, dec);
  if constexpr (kType == kQ3K) DecodeQ3K(b, dec);
  if constexpr (kType == kQ4K) DecodeQ45K<false>(b, dec);
  if constexpr (kType == kQ5K) DecodeQ45K<true>(b, dec);
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
    if constexpr (kType == kTq1 && Tq1UsesTable<TOut>()) {
      if (HWY_LIKELY(!SpecialBlock<kType>(b))) {
        Tq1TableBlock<kBf16>(b, out + i * kQK);
        continue;
      }
    }
#if AMN_BYTE_TABLES
    if constexpr (KQuantUsesByteTables<kType, TOut, kBf16>()) {
      DecodeByteTableScales<kType>(b, dec);
      if (HWY_UNLIKELY(SpecialBlock<kType>(b))) {
        ByteTableBlock<kType, Encoder16<kBf16, true>, true>(b, dec, BlockNanBits<kType>(b),
                                                            out + i * kQK);
      } else {
        ByteTableBlock<kType, Encoder16<kBf16, false>, false>(b, dec, 0, out + i * kQK);
      }
      continue;
    }
#endif
    Decode<kType>(b, dec);
    constexpr int kShift = GroupShiftOf<kType>();
    using Plain = Scaled<kHasMin, false, 0, kShift>;
    using Special = Scaled<kHasMin, true, 0, kShift>;
    // The plain path's results are never NaN, for every bit pattern, so its
    // BF16 rounding skips the NaN rule: SpecialBlock is false only when d
    // (and dmin) are finite (an f16 with a non-all-ones exponent; Q8_K's f32
    // likewise). Then every factor dl = d * (integer scale, |sc| <= 127) and
    // min ml = dmin * m (m <= 63) is finite (at most 65504 * 127 for f16 d;
    // Q8_K's dl is d itself), and each result float(q) * dl (- ml) with an
    // integer code |q| <= 128 is finite * finite, which is finite or ±Inf
    // (only Q8_K's f32 d can overflow) and never NaN (that needs Inf * 0 or
    // a NaN operand), minus a finite ml, which cannot make a NaN either
    // (that needs Inf - Inf; with an f16 d nothing overflows at all).
    if (HWY_UNLIKELY(SpecialBlock<kType>(b))) {  // per block, never per element
      StoreBlock<Special, TOut, kBf16, true, KQuantUnrollsF32<kType>()>(dec, BlockNanBits<kType>(b),
                                                                        out + i * kQK);
      continue;
    }
    if constexpr (KQuantUsesF16InRange<kType, TOut, kBf16>()) {
      if (KQuantF16InRange<kType>(dec)) {
        Store16<Plain, ToF16LowerInRange>(dec, 0, out + i * kQK);
        continue;
      }
    }
    StoreBlock<Plain, TOut, kBf16, false, KQuantUnrollsF32<kType>()>(dec, 0, out + i * kQK);
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
