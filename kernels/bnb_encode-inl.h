// Per-target bitsandbytes encoders (amn/quantize.h QuantizeBnb4,
// QuantizeBnbInt8), Highway 1.0.3, bit-exact with
// kernels/ref/bnb_encode_ref.cc (formulas and deviations from CUDA there).
//
// 4-bit, per block of block_size flat elements: absmax = max |x| (vector
// Max, order-free) unless given; inv = 1.0f / absmax (one scalar F32
// division); xn = x == ±0 ? x : x * inv; then the CUDA decision tree in its
// pivot-count form (kernels/bnb_encode_tables.h): NF4 code = number of
// pivots p with xn > p; FP4 rank = number of pivots below |xn|, code =
// kFp4CodeOfRank[rank] (rank < 2: rank; else 8 - (rank & ~1) + (rank & 1))
// plus 8 when xn's sign bit is set. Two paths reach those counts:
//   * whole tiles (vectors of >= 8 F32 lanes, block_size a multiple of two
//     vectors and <= kEncodeTile): a tile of whole blocks at a time, the
//     count by a branchless binary search over the sorted pivots (two
//     steps by blends of constants, then table lookups), x' by a codebook
//     lookup times absmax, pairs of codes packed in registers, and the
//     tile's errors added at once;
//   * otherwise block by block: the count by one comparison per pivot,
//     codes to a byte tile, pairs of bytes (u16 lanes, little-endian)
//     packed to hi << 4 | lo; a trailing odd element pairs with 0. A block
//     of at most kEncodeTile elements is loaded once; a longer block is
//     read twice (max, then codes).
// Both end at the reference's codes and x' bit for bit (the search finds
// the same count; x' is the reference's one F32 product).
//
// INT8, per row: SCB = max |x| unless given; scale = 127.0f / SCB (scalar
// F32 division); code = x == ±0 ? 0 : Round(clamp(x * scale, -127, 127))
// (Round: to nearest even, as torch.round); x' = (f32(code) * SCB) * f32(1/127).
// Per row one pass takes max |x| and the non-finite check (AbsMaxBits),
// then the codes: the bulk straight from the input with the error sums in
// registers, a row's unaligned start and its last partial group through a
// stack tile.
//
// NaN/Inf input: the index of the first such element is returned. SCALAR
// runs the reference.
#if defined(AMN_KERNELS_BNB_ENCODE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef AMN_KERNELS_BNB_ENCODE_INL_H_
#undef AMN_KERNELS_BNB_ENCODE_INL_H_
#else
#define AMN_KERNELS_BNB_ENCODE_INL_H_
#endif

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "hwy/highway.h"
#include "kernels/bnb_encode_tables.h"
#include "kernels/bnb_layout.h"
#include "kernels/encode_common-inl.h"
#include "kernels/encode_args.h"
#include "kernels/encode_common.h"
#include "kernels/ref/bnb_encode_ref.h"

HWY_BEFORE_NAMESPACE();
namespace amn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR

// max |x| of the tile's first len elements (zero padding does not change it).
HWY_INLINE float TileAbsMax(const float* HWY_RESTRICT xs, size_t len) {
  const EncDF df;
  auto m = hn::Zero(df);
  for (size_t k = 0; k < len; k += hn::Lanes(df)) m = hn::Max(m, hn::Abs(hn::Load(df, xs + k)));
  return hn::GetLane(hn::MaxOfLanes(df, m));
}

// 4-bit codes (i32 lanes) of one vector of x, and their decoded values
// x' = table[code] (table[c] = cb[c] * absmax, computed once per block):
// each pivot comparison that counts a code also selects the next table
// entry, so the last true comparison leaves table[code] (the pivots are
// sorted); no arithmetic, so x' is the reference's product bit for bit.
template <bool kFp4>
HWY_INLINE hn::Vec<hn::RebindToSigned<EncDF>> Bnb4Codes(hn::Vec<EncDF> x, hn::Vec<EncDF> vinv,
                                                       const float* table,
                                                       hn::Vec<EncDF>* decoded) {
  const EncDF df;
  const hn::RebindToSigned<EncDF> di;
  const auto xn = hn::IfThenElse(hn::Eq(x, hn::Zero(df)), x, hn::Mul(x, vinv));
  auto count = hn::Zero(di);
  if constexpr (!kFp4) {
    auto value = hn::Set(df, table[0]);
    for (size_t j = 0; j < bnb::kNf4Pivots.size(); ++j) {
      const auto above = hn::Gt(xn, hn::Set(df, bnb::kNf4Pivots[j]));
      // A true mask is all ones (-1): subtracting it counts.
      count = hn::Sub(count, hn::VecFromMask(di, hn::RebindMask(di, above)));
      value = hn::IfThenElse(above, hn::Set(df, table[j + 1]), value);
    }
    *decoded = value;
    return count;
  } else {
    const auto a = hn::Abs(xn);
    const auto negative = hn::RebindMask(df, hn::Lt(hn::BitCast(di, xn), hn::Zero(di)));
    auto pos = hn::Set(df, table[bnb::kFp4CodeOfRank[0]]);
    auto neg = hn::Set(df, table[bnb::kFp4CodeOfRank[0] + 8]);
    for (size_t j = 0; j < bnb::kFp4Pivots.size(); ++j) {
      const auto above = hn::Gt(a, hn::Set(df, bnb::kFp4Pivots[j]));
      count = hn::Sub(count, hn::VecFromMask(di, hn::RebindMask(di, above)));
      pos = hn::IfThenElse(above, hn::Set(df, table[bnb::kFp4CodeOfRank[j + 1]]), pos);
      neg = hn::IfThenElse(above, hn::Set(df, table[bnb::kFp4CodeOfRank[j + 1] + 8]), neg);
    }
    *decoded = hn::IfThenElse(negative, neg, pos);
    const auto high = hn::Add(hn::Sub(hn::Set(di, 8), hn::And(count, hn::Set(di, ~1))),
                              hn::And(count, hn::Set(di, 1)));
    const auto code = hn::IfThenElse(hn::Lt(count, hn::Set(di, 2)), count, high);
    // The sign bit of xn (-0.0 included) adds 8.
    return hn::Or(code, hn::IfThenElseZero(hn::RebindMask(di, negative), hn::Set(di, 8)));
  }
}

// Elements [i0, i0 + len) of one block, already in xs (i0 even): packed
// bytes to packed[i0 / 2 ..], errors with x' = cb[code] * absmax.
template <bool kFp4>
HWY_INLINE void EncodeBnb4Tile(const float* HWY_RESTRICT xs, uint64_t i0, size_t len, float absmax,
                               uint8_t* HWY_RESTRICT packed, kernels::ErrorSums* errors) {
  const EncDF df;
  const hn::RebindToSigned<EncDF> di;
  const hn::Rebind<uint8_t, decltype(di)> d8;
  const hn::ScalableTag<uint16_t> d16;
  const hn::RebindToSigned<decltype(d16)> di16;
  const hn::Rebind<uint8_t, decltype(d16)> d8h;
  const size_t n = hn::Lanes(df);
  HWY_ALIGN uint8_t ct[kEncodeTile + 2 * kEncodePad];
  HWY_ALIGN uint8_t pt[kEncodeTile / 2 + 2 * kEncodePad];
  HWY_ALIGN float xq[kEncodeTile + kEncodePad];
  // x' per code: the reference's cb[code] * absmax, FP4 code 8 as -0.0.
  const auto& codebook = kFp4 ? bnb::kFp4Codebook : bnb::kNf4Codebook;
  float table[16];
  for (size_t c = 0; c < 16; ++c) table[c] = ((kFp4 && c == 8) ? -0.0f : codebook[c]) * absmax;
  const auto vinv = hn::Set(df, 1.0f / absmax);
  for (size_t k = 0; k < len; k += n) {
    hn::Vec<EncDF> decoded;
    const auto codes = Bnb4Codes<kFp4>(hn::Load(df, xs + k), vinv, table, &decoded);
    hn::StoreU(hn::DemoteTo(d8, codes), d8, ct + k);
    hn::Store(decoded, df, xq + k);
  }
  ct[len] = 0;  // the partner of a trailing odd element
  const size_t n_bytes = (len + 1) / 2;
  for (size_t j = 0; j < n_bytes; j += hn::Lanes(d16)) {
    uint16_t pairs[HWY_MAX_BYTES / 2];
    std::memcpy(pairs, ct + 2 * j, hn::Lanes(d16) * 2);
    const auto v = hn::LoadU(d16, pairs);
    const auto byte = hn::Or(hn::ShiftLeft<4>(hn::And(v, hn::Set(d16, 0xFF))), hn::ShiftRight<8>(v));
    hn::StoreU(hn::DemoteTo(d8h, hn::BitCast(di16, byte)), d8h, pt + j);
  }
  std::memcpy(packed + i0 / 2, pt, n_bytes);
  if (errors != nullptr) AddEncodeErrors(xs, xq, i0, len, *errors);
}

// ---- The whole-tile path (vectors of 8 or more F32 lanes) ----------------
// A tile of whole blocks, each block a multiple of two vectors: per vector
// one block's absmax, the code by a branchless binary search over the
// sorted pivots (two steps by blends, then 2 (NF4) or 1 (FP4) table
// lookups, instead of 15 / 7 comparisons: the search ends at the same
// count of pivots below xn), x' as
// the codebook entry (table lookup) times absmax (the reference's one F32
// product), and pairs of codes packed in registers. The errors of the whole
// tile are added once, in index order (encode_common.h), so the sums are
// the same bytes as block by block.

// Up to 16 F32 (or I32) table entries, zero-padded to a whole vector.
template <class D>
struct Table16 {
  HWY_ALIGN hn::TFromD<D> v[HWY_MAX_BYTES / 4 > 16 ? HWY_MAX_BYTES / 4 : 16] = {};
};

// table[idx] per lane, idx in [0, 16); vectors of 8 lanes use two lookups.
template <class D>
HWY_INLINE hn::Vec<D> Lookup16(D d, const Table16<D>& table,
                               hn::Vec<hn::RebindToSigned<D>> idx) {
  const hn::RebindToSigned<D> di;
  const size_t n = hn::Lanes(d);
  if (n >= 16) return hn::TableLookupLanes(hn::Load(d, table.v), hn::IndicesFromVec(d, idx));
  const auto low = hn::And(idx, hn::Set(di, 7));
  const auto lo = hn::TableLookupLanes(hn::Load(d, table.v), hn::IndicesFromVec(d, low));
  const auto hi = hn::TableLookupLanes(hn::Load(d, table.v + 8), hn::IndicesFromVec(d, low));
  const auto upper = hn::RebindMask(d, hn::Ne(hn::And(idx, hn::Set(di, 8)), hn::Zero(di)));
  return hn::IfThenElse(upper, hi, lo);
}

// The tables of one format, built once per call.
template <bool kFp4>
struct Bnb4Tables {
  Table16<EncDF> pivots;    // sorted pivots (padding never read)
  // Per lookup step s (2 and 1 for NF4, 1 for FP4): the pivots the step can
  // reach, step_pivots[s / 2][j] = pivots[2 s j + s - 1], at most 8 of them
  // (one lookup even on 8-lane vectors; c is a multiple of 2 s there).
  Table16<EncDF> step_pivots[2];
  Table16<EncDF> codebook;  // x' / absmax per code (FP4 code 8: -0.0)
  Table16<hn::RebindToSigned<EncDF>> code_of_rank;  // FP4 only
  Bnb4Tables() {
    const auto& p = kFp4 ? std::span<const float>(bnb::kFp4Pivots)
                         : std::span<const float>(bnb::kNf4Pivots);
    for (size_t j = 0; j < p.size(); ++j) pivots.v[j] = p[j];
    for (size_t s = 1; s <= 2; s *= 2) {
      for (size_t j = 0; 2 * s * j + s - 1 < p.size(); ++j) {
        step_pivots[s / 2].v[j] = p[2 * s * j + s - 1];
      }
    }
    const auto& cb = kFp4 ? bnb::kFp4Codebook : bnb::kNf4Codebook;
    for (size_t c = 0; c < 16; ++c) codebook.v[c] = (kFp4 && c == 8) ? -0.0f : cb[c];
    for (size_t r = 0; r < bnb::kFp4CodeOfRank.size(); ++r) {
      code_of_rank.v[r] = bnb::kFp4CodeOfRank[r];
    }
  }
};

// Codes (i32 lanes) of one vector of x; x' to *decoded.
template <bool kFp4>
HWY_INLINE hn::Vec<hn::RebindToSigned<EncDF>> Bnb4CodesSearch(
    hn::Vec<EncDF> x, hn::Vec<EncDF> vinv, hn::Vec<EncDF> vabsmax, const Bnb4Tables<kFp4>& t,
    hn::Vec<EncDF>* decoded) {
  const EncDF df;
  const hn::RebindToSigned<EncDF> di;
  const auto xn = hn::IfThenElse(hn::Eq(x, hn::Zero(df)), x, hn::Mul(x, vinv));
  // Steps 8, 4, 2, 1 (NF4, 15 pivots) or 4, 2, 1 (FP4, 7): after each,
  // c = number of pivots below xn among those the search has settled.
  const auto key = kFp4 ? hn::Abs(xn) : xn;
  // The first two steps choose among constants (a blend, no lookup).
  constexpr int kTop = kFp4 ? 4 : 8;
  const auto first = hn::Gt(key, hn::Set(df, t.pivots.v[kTop - 1]));
  const auto second = hn::Gt(
      key, hn::IfThenElse(first, hn::Set(df, t.pivots.v[kTop + kTop / 2 - 1]),
                          hn::Set(df, t.pivots.v[kTop / 2 - 1])));
  auto c = hn::Add(hn::IfThenElseZero(hn::RebindMask(di, first), hn::Set(di, kTop)),
                   hn::IfThenElseZero(hn::RebindMask(di, second), hn::Set(di, kTop / 2)));
  for (int step = kTop / 4; step >= 1; step /= 2) {
    // c / (2 step) < 8 <= lanes: one lookup.
    const auto j = step == 2 ? hn::ShiftRight<2>(c) : hn::ShiftRight<1>(c);
    const auto p = hn::TableLookupLanes(hn::Load(df, t.step_pivots[step / 2].v),
                                        hn::IndicesFromVec(df, j));
    c = hn::Add(c, hn::IfThenElseZero(hn::RebindMask(di, hn::Gt(key, p)), hn::Set(di, step)));
  }
  hn::Vec<hn::RebindToSigned<EncDF>> code;
  if constexpr (kFp4) {
    // The sign bit of xn (-0.0 included) adds 8.
    const auto negative = hn::Lt(hn::BitCast(di, xn), hn::Zero(di));
    const auto rank_code =
        hn::TableLookupLanes(hn::Load(di, t.code_of_rank.v), hn::IndicesFromVec(di, c));  // c < 8
    code = hn::Or(rank_code, hn::IfThenElseZero(negative, hn::Set(di, 8)));
  } else {
    code = c;
  }
  *decoded = hn::Mul(Lookup16(df, t.codebook, code), vabsmax);
  return code;
}

// Two vectors of codes (elements 0 .. 2N-1) -> N packed bytes (even element
// in the high nibble).
HWY_INLINE void StorePackedPairs(hn::Vec<hn::RebindToSigned<EncDF>> a,
                                 hn::Vec<hn::RebindToSigned<EncDF>> b, uint8_t* HWY_RESTRICT out) {
  const EncDU du;
  const hn::Repartition<uint64_t, EncDU> d64;
  const hn::Rebind<uint8_t, EncDU> d8;
  // As u64 lanes (even code low, odd code high): (w << 4) | (w >> 32) has
  // the byte in the low u32 half.
  const auto pack = [&](hn::Vec<hn::RebindToSigned<EncDF>> v) {
    const auto w = hn::BitCast(d64, v);
    return hn::BitCast(du, hn::Or(hn::ShiftLeft<4>(w), hn::ShiftRight<32>(w)));
  };
  const auto bytes = hn::And(hn::ConcatEven(du, pack(b), pack(a)), hn::Set(du, 0xFFu));
  hn::StoreU(hn::DemoteTo(d8, hn::BitCast(hn::RebindToSigned<EncDU>(), bytes)), d8, out);
}

// Elements [i0, i0 + len) in xs, whole blocks of block_size (a multiple of
// 2N) except perhaps a last partial one whose length is a multiple of 2N;
// absmax[0..] their blocks' absmax (computed here unless given); each
// vector's x and x' (at xs + k) go to errors(k, x, x').
template <bool kFp4, class Errors>
HWY_INLINE void EncodeBnb4Search(const float* HWY_RESTRICT xs, uint64_t i0, size_t len,
                                 size_t block_size, bool absmax_given, float* HWY_RESTRICT absmax,
                                 const Bnb4Tables<kFp4>& t, uint8_t* HWY_RESTRICT packed,
                                 const Errors& errors) {
  const EncDF df;
  const size_t n = hn::Lanes(df);
  for (size_t b0 = 0, b = 0; b0 < len; b0 += block_size, ++b) {
    const size_t blen = std::min(block_size, len - b0);
    if (!absmax_given) absmax[b] = TileAbsMax(xs + b0, blen);
    const auto vabsmax = hn::Set(df, absmax[b]);
    const auto vinv = hn::Set(df, 1.0f / absmax[b]);
    for (size_t k = b0; k < b0 + blen; k += 2 * n) {
      hn::Vec<EncDF> qa, qb;
      const auto xa = hn::Load(df, xs + k), xb = hn::Load(df, xs + k + n);
      const auto ca = Bnb4CodesSearch<kFp4>(xa, vinv, vabsmax, t, &qa);
      const auto cb = Bnb4CodesSearch<kFp4>(xb, vinv, vabsmax, t, &qb);
      StorePackedPairs(ca, cb, packed + (i0 + k) / 2);
      errors(k, xa, qa);
      errors(k + n, xb, qb);
    }
  }
}

// EncodeBnb4Search with the errors added: in registers with AVX-512 (one
// vector of 8 doubles per sum; i0 + k is a multiple of 2N, so every vector
// starts at lane 0 of the sums), else through an x' tile. With 16 registers
// (AVX2) the search's constants and 2 x 3 sums do not fit: in registers it
// measured 11 % slower there.
template <bool kFp4>
HWY_INLINE void EncodeBnb4TileSearch(const float* HWY_RESTRICT xs, uint64_t i0, size_t len,
                                     size_t block_size, bool absmax_given,
                                     float* HWY_RESTRICT absmax, const Bnb4Tables<kFp4>& t,
                                     uint8_t* HWY_RESTRICT packed, kernels::ErrorSums* errors) {
  const auto no_errors = [](size_t, hn::Vec<EncDF>, hn::Vec<EncDF>) {};
  if (errors == nullptr) {
    return EncodeBnb4Search<kFp4>(xs, i0, len, block_size, absmax_given, absmax, t, packed,
                                  no_errors);
  }
#if HWY_HAVE_FLOAT64 && !HWY_HAVE_SCALABLE
  if constexpr (EncodeErrorRegs::kV == 1) {
    EncodeErrorRegs regs(*errors);
    EncodeBnb4Search<kFp4>(
        xs, i0, len, block_size, absmax_given, absmax, t, packed,
        [&](size_t, hn::Vec<EncDF> x, hn::Vec<EncDF> xq) { regs.template Add<0>(x, xq); });
    return regs.Store(*errors);
  }
#endif
  const EncDF df;
  HWY_ALIGN float xq[kEncodeTile + kEncodePad];
  EncodeBnb4Search<kFp4>(
      xs, i0, len, block_size, absmax_given, absmax, t, packed,
      [&](size_t k, hn::Vec<EncDF>, hn::Vec<EncDF> q) { hn::Store(q, df, xq + k); });
  AddEncodeErrors(xs, xq, i0, len, *errors);
}

template <bool kFp4>
HWY_INLINE uint64_t QuantizeBnb4Blocks(const uint8_t* HWY_RESTRICT in, ElemType type, uint64_t n,
                                       uint64_t block_size, bool absmax_given,
                                       float* HWY_RESTRICT absmax, uint8_t* HWY_RESTRICT packed,
                                       kernels::ErrorSums* errors) {
  HWY_ALIGN float xs[kEncodeTile + kEncodePad];
  uint64_t start = 0;
  const size_t lanes = hn::Lanes(EncDF());
  if (lanes >= 8 && block_size % (2 * lanes) == 0 && block_size <= kEncodeTile) {
    const Bnb4Tables<kFp4> tables;
    const uint64_t tile = kEncodeTile / block_size * block_size;
    for (; start < n; start += tile) {
      const size_t len = static_cast<size_t>(std::min<uint64_t>(tile, n - start));
      if (len % (2 * lanes) != 0) break;  // the rest (a partial block) goes block by block
      if (!LoadEncodeTile(in, type, start, len, xs)) return FirstNonFinite(in, type, start, len);
      EncodeBnb4TileSearch<kFp4>(xs, start, len, static_cast<size_t>(block_size), absmax_given,
                                 absmax + start / block_size, tables, packed, errors);
    }
  }
  for (uint64_t begin = start, b = start / block_size; begin < n; begin += block_size, ++b) {
    const uint64_t len = std::min(n - begin, block_size);
    const bool one_tile = len <= kEncodeTile;
    if (!absmax_given) {
      float m = 0.0f;
      for (uint64_t done = 0; done < len; done += kEncodeTile) {
        const size_t t = static_cast<size_t>(std::min<uint64_t>(kEncodeTile, len - done));
        if (!LoadEncodeTile(in, type, begin + done, t, xs)) {
          return FirstNonFinite(in, type, begin + done, t);
        }
        m = std::max(m, TileAbsMax(xs, t));
      }
      absmax[b] = m;
    }
    for (uint64_t done = 0; done < len; done += kEncodeTile) {
      const size_t t = static_cast<size_t>(std::min<uint64_t>(kEncodeTile, len - done));
      if ((absmax_given || !one_tile) && !LoadEncodeTile(in, type, begin + done, t, xs)) {
        return FirstNonFinite(in, type, begin + done, t);
      }
      EncodeBnb4Tile<kFp4>(xs, begin + done, t, absmax[b], packed, errors);
    }
  }
  return kernels::kAllFinite;
}

// ---- INT8 ------------------------------------------------------------------
// What a row's scale 127 / SCB asks of each code:
// * kWithin: finite, and max |x| <= SCB (SCB computed, or given at least
//   that large): |x * scale| <= 127 * (1 + 2^-24)^2 < 127.5, so the round
//   is within [-127, 127] and the clamp is left out;
// * kClamped: finite, with some |x| > SCB (a smaller SCB given): clamped;
// * kNotFinite (SCB 0 or tiny): clamped, and x = ±0, whose x * scale is
//   NaN, forced to code 0 as the reference does (with a finite scale it
//   is 0 anyway).
enum class Int8Scale { kWithin, kClamped, kNotFinite };

// One vector of x: the codes in the low byte of u32 lanes, and x' to
// *decoded. Round(clamp(x * scale, -127, 127)) is the sum with 1.5 * 2^23,
// whose F32 ulp is 1: the addition rounds to nearest even, as Round does,
// and the sum's bits are 0x4B400000 + code, so the low byte is the code in
// two's complement and sum - 1.5 * 2^23 is f32(code) exactly (+0 for
// code 0, as ConvertTo gives). kScale says which of the clamp and the
// zero mask a row needs (Int8Scale).
template <Int8Scale kScale>
HWY_INLINE hn::Vec<EncDU> Int8CodeLanes(hn::Vec<EncDF> x, hn::Vec<EncDF> vscale,
                                        hn::Vec<EncDF> vscb, hn::Vec<EncDF>* decoded) {
  const EncDF df;
  const auto magic = hn::Set(df, 12582912.0f);
  auto scaled = hn::Mul(x, vscale);
  if constexpr (kScale != Int8Scale::kWithin) {
    scaled = hn::Min(hn::Max(scaled, hn::Set(df, -127.0f)), hn::Set(df, 127.0f));
  }
  auto sum = hn::Add(scaled, magic);
  if constexpr (kScale == Int8Scale::kNotFinite) {
    sum = hn::IfThenElse(hn::Eq(x, hn::Zero(df)), magic, sum);
  }
  const auto inv127 = hn::Set(df, std::bit_cast<float>(bnb::kInv127Bits));
  *decoded = hn::Mul(hn::Mul(hn::Sub(sum, magic), vscb), inv127);
  return hn::BitCast(EncDU(), sum);
}

// Elements [i0, i0 + count) of one row (known finite, any alignment)
// through a stack tile: codes to out[i0..], errors through memory.
template <Int8Scale kScale>
HWY_INLINE void EncodeInt8Tiles(const uint8_t* HWY_RESTRICT in, ElemType type, uint64_t i0,
                                size_t count, float scb, uint8_t* HWY_RESTRICT out,
                                kernels::ErrorSums* errors) {
  const EncDF df;
  const hn::Rebind<uint8_t, EncDU> d8;
  const size_t n = hn::Lanes(df);
  HWY_ALIGN float xs[kEncodeTile + kEncodePad];
  HWY_ALIGN float xq[kEncodeTile + kEncodePad];
  HWY_ALIGN uint8_t ct[kEncodeTile + kEncodePad];
  const auto vscale = hn::Set(df, 127.0f / scb);
  const auto vscb = hn::Set(df, scb);
  for (size_t done = 0; done < count; done += kEncodeTile) {
    const size_t t = std::min(kEncodeTile, count - done);
    (void)LoadEncodeTile(in, type, i0 + done, t, xs);
    for (size_t k = 0; k < t; k += n) {
      hn::Vec<EncDF> decoded;
      const auto code =
          CodesToBytes(d8, Int8CodeLanes<kScale>(hn::Load(df, xs + k), vscale, vscb, &decoded));
      // Whole vectors straight to the output; a last partial one via ct.
      if (k + n <= t) {
        hn::StoreU(code, d8, out + i0 + done + k);
      } else {
        hn::StoreU(code, d8, ct);
        std::memcpy(out + i0 + done + k, ct, t - k);
      }
      hn::Store(decoded, df, xq + k);
    }
    if (errors != nullptr) AddEncodeErrors(xs, xq, i0 + done, t, *errors);
  }
}

// Elements [i0, i0 + count) of one row (known finite): the bulk straight
// from the input, with the errors in registers from the first index that
// is a multiple of 8 in whole groups, or without errors four vectors per
// store (StoreLowBytes4); the elements before and after through
// EncodeInt8Tiles.
template <ElemType kType, Int8Scale kScale>
HWY_INLINE void EncodeInt8Row(const uint8_t* HWY_RESTRICT in, uint64_t i0, size_t count, float scb,
                              uint8_t* HWY_RESTRICT out, kernels::ErrorSums* errors) {
  size_t done = 0;
#if HWY_HAVE_FLOAT64 && !HWY_HAVE_SCALABLE
  const EncDF df;
  const hn::Rebind<uint8_t, EncDU> d8;
  const size_t head =
      errors == nullptr
          ? 0
          : std::min<size_t>(
                count, (kernels::kErrorLanes - i0 % kernels::kErrorLanes) % kernels::kErrorLanes);
  EncodeInt8Tiles<kScale>(in, kType, i0, head, scb, out, errors);
  done = head;
  const auto vscale = hn::Set(df, 127.0f / scb);
  const auto vscb = hn::Set(df, scb);
  if (errors == nullptr && hn::MaxLanes(df) >= 8) {
    // No error sums (the C ABI's error NULL): four vectors of codes per
    // store (with 4 lanes, SSE4 measured 0.95x: CodesToBytes is as short).
    const size_t n = hn::Lanes(df);
    const auto codes = [&](size_t k) {
      hn::Vec<EncDF> unused;
      return Int8CodeLanes<kScale>(hn::BitCast(df, LoadInputLanes<kType>(in, i0 + k)), vscale, vscb,
                                   &unused);
    };
    for (; done + 4 * n <= count; done += 4 * n) {
      StoreLowBytes4(codes(done), codes(done + n), codes(done + 2 * n), codes(done + 3 * n),
                     out + i0 + done);
    }
  }
  uint8_t* HWY_RESTRICT bulk = out + i0 + done;
  const auto encode = [&](hn::Vec<EncDF> x, size_t k) {
    hn::Vec<EncDF> decoded;
    hn::StoreU(CodesToBytes(d8, Int8CodeLanes<kScale>(x, vscale, vscb, &decoded)), d8, bulk + k);
    return decoded;
  };
  uint32_t bits_max;  // the row is known finite
  done += EncodeGroupsInRegisters<kType>(in, i0 + done, count - done, errors, encode, &bits_max);
#endif
  EncodeInt8Tiles<kScale>(in, kType, i0 + done, count - done, scb, out, errors);
}

#endif  // HWY_TARGET != HWY_SCALAR

inline uint64_t QuantizeBnb4Body(const uint8_t* HWY_RESTRICT in, ElemType type, uint64_t n,
                                 uint64_t block_size, bool fp4, bool absmax_given,
                                 float* HWY_RESTRICT absmax, uint8_t* HWY_RESTRICT packed,
                                 kernels::ErrorSums* errors) {
#if HWY_TARGET == HWY_SCALAR
  return ref::QuantizeBnb4Ref(in, type, n, block_size, fp4, absmax_given, absmax, packed, errors);
#else
  return fp4 ? QuantizeBnb4Blocks<true>(in, type, n, block_size, absmax_given, absmax, packed,
                                        errors)
             : QuantizeBnb4Blocks<false>(in, type, n, block_size, absmax_given, absmax, packed,
                                         errors);
#endif
}

inline uint64_t QuantizeBnbInt8Body(const uint8_t* HWY_RESTRICT in, ElemType type, uint64_t rows,
                                    uint64_t cols, bool scb_given, float* HWY_RESTRICT scb,
                                    int8_t* HWY_RESTRICT codes, kernels::ErrorSums* errors) {
#if HWY_TARGET == HWY_SCALAR
  return ref::QuantizeBnbInt8Ref(in, type, rows, cols, scb_given, scb, codes, errors);
#else
  const size_t n = static_cast<size_t>(cols);
  for (uint64_t r = 0; r < rows; ++r) {
    const uint64_t row0 = r * cols;
    const uint32_t bits = WithInputType(
        type, [&](auto t) { return AbsMaxBits<decltype(t)::value>(in, row0, n); });
    if (bits >= 0x7F800000u) return FirstNonFinite(in, type, row0, n);
    if (!scb_given) scb[r] = std::bit_cast<float>(bits);
    uint8_t* out = reinterpret_cast<uint8_t*>(codes);
    WithInputType(type, [&](auto t) {
      constexpr ElemType kType = decltype(t)::value;
      if (!std::isfinite(127.0f / scb[r])) {
        EncodeInt8Row<kType, Int8Scale::kNotFinite>(in, row0, n, scb[r], out, errors);
      } else if (std::bit_cast<float>(bits) <= scb[r]) {
        EncodeInt8Row<kType, Int8Scale::kWithin>(in, row0, n, scb[r], out, errors);
      } else {
        EncodeInt8Row<kType, Int8Scale::kClamped>(in, row0, n, scb[r], out, errors);
      }
    });
  }
  return kernels::kAllFinite;
#endif
}

// The kernel table's entry points (kernels/encode_args.h).
inline uint64_t EncodeBnb4Quant(const kernels::Bnb4QuantArgs& a, kernels::ErrorSums* errors) {
  return QuantizeBnb4Body(a.x.in, a.x.type, a.x.rows * a.x.cols, a.block_size, a.fp4,
                          a.absmax_given, a.absmax, a.packed, errors);
}
inline uint64_t EncodeBnbInt8Quant(const kernels::BnbInt8QuantArgs& a,
                                   kernels::ErrorSums* errors) {
  return QuantizeBnbInt8Body(a.x.in, a.x.type, a.x.rows, a.x.cols, a.scb_given, a.scb, a.codes,
                             errors);
}

}  // namespace HWY_NAMESPACE
}  // namespace amn
HWY_AFTER_NAMESPACE();

#endif  // include guard
