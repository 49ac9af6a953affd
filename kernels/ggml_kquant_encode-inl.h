// Per-target body of family GgmlKQuantQuant (Highway 1.0.3): ggml's K-quant
// encoders (Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_XS) without and with an
// importance matrix, byte for byte the scalar reference kernels/ref/
// ggml_kquant_encode_ref.h, which is ggml's quantize_row_<type>_ref and,
// given quant_weights, quantize_row_<type>_impl. Layout, formulas and the order
// rules: that header and docs/schemes/ggml-encode-kquants.md.
//
// Bit-exactness decides what is vectorised. Per 256-element super-block:
//   * the input is widened to F32 with the non-finite check (LoadEncodeTile);
//   * the scale searches accumulate ordered sums: Q2_K, Q4_K, Q5_K and
//     Q6_K's run with one lane per sub-block (kernels/ggml_kquant_search-
//     inl.h), each lane doing exactly the scalar recurrence, so every sum
//     keeps its order, 32 sub-blocks per search (four super-blocks of
//     Q4_K/Q5_K, two of Q2_K: kQkx2Batch); so do Q3_K's (the coordinate descent too; without
//     importance matrix four super-blocks per search, kQ3Batch) and
//     IQ4_XS's (kernels/ggml_iq4xs_search-inl.h);
//   * the final requantization clamp(nearest_int((x + dm) / d)) is per
//     element, vectorised along the sub-block (IEEE Div and Add, the
//     1.5 * 2^23 rounding trick on integer lanes: exact on every target);
//   * packing is the reference's, except Q3_K's on byte vectors.
// The optional error sums decode each block with the reference decoder.
// SCALAR runs the reference. Non-finite input: the index of the first such
// element is returned; blocks before its super-block are written.
#if defined(AMN_KERNELS_GGML_KQUANT_ENCODE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef AMN_KERNELS_GGML_KQUANT_ENCODE_INL_H_
#undef AMN_KERNELS_GGML_KQUANT_ENCODE_INL_H_
#else
#define AMN_KERNELS_GGML_KQUANT_ENCODE_INL_H_
#endif

#include <cstddef>
#include <cstdint>

#include "hwy/highway.h"
#include "kernels/encode_args.h"
#include "kernels/encode_common-inl.h"
#include "kernels/encode_common.h"
#include "kernels/ggml_iq4xs_search-inl.h"
#include "kernels/ggml_kquant_blocks.h"
#include "kernels/ggml_kquant_search-inl.h"
#include "kernels/ref/ggml_kquant_encode_ref.h"

HWY_BEFORE_NAMESPACE();
namespace amn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR

// Stage 2 of ref::RequantAffine on whole vectors of one sub-block (16 or 32
// elements: at most 16 lanes, so a vector never spans two sub-blocks).
HWY_INLINE void RequantAffineVec(const float* HWY_RESTRICT x, const ref::KQuantSub& sub,
                                 uint8_t* HWY_RESTRICT codes) {
  const hn::CappedTag<float, 16> df;
  const hn::RebindToSigned<decltype(df)> di;
  const hn::Rebind<uint8_t, decltype(di)> d8;
  const size_t n = hn::Lanes(df);
  const auto lo = hn::Set(di, sub.lo), hi = hn::Set(di, sub.hi), off = hn::Set(di, sub.off);
  for (int j = 0; j < sub.n_sub; ++j) {
    if (sub.d[j] == 0.0f) continue;  // keeps the search's codes, as ggml
    const auto d = hn::Set(df, sub.d[j]), dm = hn::Set(df, sub.dm[j]);
    const size_t end = static_cast<size_t>((j + 1) * sub.sub_len);
    for (size_t i = static_cast<size_t>(j * sub.sub_len); i < end; i += n) {
      const auto q = NearestIntVec(df, hn::Div(hn::Add(hn::LoadU(df, x + i), dm), d));
      const auto l = hn::Add(hn::Min(hi, hn::Max(lo, q)), off);
      hn::StoreU(hn::DemoteTo(d8, l), d8, codes + i);
    }
  }
}

// ref::PackQ3_K on byte vectors (codes 0..7): bit 2 of element 32m + k
// into hmask[k] bit m, the low two bits into the 2-bit planes (qs[32p + l]
// = codes 128p + l, + 32, + 64, + 96 at bits 0, 2, 4, 6). The scalar loop's
// data-dependent branch mispredicted on every other element.
HWY_INLINE void PackQ3KVec(const uint8_t* HWY_RESTRICT codes, uint8_t* HWY_RESTRICT block) {
  const hn::CappedTag<uint8_t, 32> d8;
  const size_t n = hn::Lanes(d8);
  const auto three = hn::Set(d8, 3), four = hn::Set(d8, 4);
  uint8_t* hmask = block + kq::q3k::kHmask;
  uint8_t* qs = block + kq::q3k::kQs;
  for (size_t k = 0; k < 32; k += n) {
    auto hm = hn::Zero(d8);
    for (size_t m = 0; m < 8; ++m) {
      const auto high = hn::TestBit(hn::LoadU(d8, codes + 32 * m + k), four);
      hm = hn::Or(hm, hn::IfThenElseZero(high, hn::Set(d8, static_cast<uint8_t>(1u << m))));
    }
    hn::StoreU(hm, d8, hmask + k);
    for (size_t p = 0; p < 2; ++p) {
      const uint8_t* c = codes + 128 * p + k;
      const auto q0 = hn::And(hn::LoadU(d8, c), three);
      const auto q1 = hn::ShiftLeft<2>(hn::And(hn::LoadU(d8, c + 32), three));
      const auto q2 = hn::ShiftLeft<4>(hn::And(hn::LoadU(d8, c + 64), three));
      const auto q3 = hn::ShiftLeft<6>(hn::And(hn::LoadU(d8, c + 96), three));
      hn::StoreU(hn::Or(hn::Or(q0, q1), hn::Or(q2, q3)), d8, qs + 32 * p + k);
    }
  }
}

// One super-block of `type` from the F32 tile xs with importance values qw
// (256, not null): the weighted searches (ggml's quantize_row_<type>_impl).
// Q2_K, Q4_K and Q5_K: EncodeKQuantBatched.
HWY_INLINE void EncodeKQuantBlockW(GgmlType type, const float* HWY_RESTRICT xs,
                                   const float* HWY_RESTRICT qw, uint8_t* HWY_RESTRICT block) {
  HWY_ALIGN uint8_t codes[256];
  ref::KQuantSub sub;
  switch (type) {
    case GgmlType::kQ3_K:
      SearchQ3KLanesW(xs, qw, block, codes, sub);
      RequantAffineVec(xs, sub, codes);
      PackQ3KVec(codes, block);
      break;
    case GgmlType::kQ6_K:
      SearchQ6KLanesW(xs, qw, block, codes, sub);
      RequantAffineVec(xs, sub, codes);
      ref::PackQ6_K(codes, block);
      break;
    case GgmlType::kIQ4_XS:
      SearchIq4XsLanesW(xs, qw, block, sub);
      RequantIq4XsVec(xs, sub, codes);
      ref::PackIq4Xs(codes, block);
      break;
    default: break;
  }
}

// One super-block of `type` from the F32 tile xs (Q2_K, Q3_K, Q4_K, Q5_K:
// EncodeKQuantBatched).
HWY_INLINE void EncodeKQuantBlock(GgmlType type, const float* HWY_RESTRICT xs,
                                  uint8_t* HWY_RESTRICT block) {
  HWY_ALIGN uint8_t codes[256];
  ref::KQuantSub sub;
  switch (type) {
    case GgmlType::kQ6_K:
      SearchQ6KLanes(xs, block, codes, sub);
      RequantAffineVec(xs, sub, codes);
      ref::PackQ6_K(codes, block);
      break;
    case GgmlType::kIQ4_XS:
      SearchIq4XsLanes(xs, block, sub);
      RequantIq4XsVec(xs, sub, codes);
      ref::PackIq4Xs(codes, block);
      break;
    default: break;
  }
}

// kBatch super-blocks per search: search(xs, qws, blocks, codes, sub) does
// stage 1 of the batch (qws: each super-block's importance values, or null
// without importance matrix), then each super-block is requantized and
// pack(codes, block) packs it. A short last batch marks its missing
// super-blocks (block and importance values null; their tiles zeros if
// kZeroMissing, else not to be read) and writes nothing for them. Non-finite input: the super-blocks before the bad one
// are written first, as elsewhere.
template <size_t kBatch, bool kZeroMissing, class Search, class Pack>
HWY_INLINE uint64_t EncodeKQuantBatched(const kernels::GgmlQuantArgs& a, kernels::ErrorSums* errors,
                                        const Search& search, const Pack& pack) {
  const size_t block_bytes = ref::KQuantEncodeBlockBytes(a.type);
  HWY_ALIGN float xs[kBatch][kEncodeTile + kEncodePad];
  HWY_ALIGN uint8_t codes[kBatch][256];
  ref::KQuantSub sub[kBatch];
  const float* xp[kBatch];
  const float* qw[kBatch];
  uint8_t* blocks[kBatch];
  for (size_t b = 0; b < kBatch; ++b) xp[b] = xs[b];
  const uint64_t n = a.x.rows * a.x.cols;
  for (uint64_t i = 0; i < n; i += kBatch * kEncodeTile) {
    uint64_t bad = kernels::kAllFinite;
    size_t nb = 0;
    for (; nb < kBatch && i + nb * kEncodeTile < n; ++nb) {
      const uint64_t i0 = i + nb * kEncodeTile;
      if (!LoadEncodeTile(a.x.in, a.x.type, i0, kEncodeTile, xs[nb])) {
        bad = FirstNonFinite(a.x.in, a.x.type, i0, kEncodeTile);
        break;
      }
      blocks[nb] = a.out + i0 / kEncodeTile * block_bytes;
      // Importance values are per column; cols is a multiple of 256.
      qw[nb] = a.imatrix != nullptr ? a.imatrix + i0 % a.x.cols : nullptr;
    }
    for (size_t b = nb; b < kBatch; ++b) {
      if (kZeroMissing) {
        for (size_t k = 0; k < kEncodeTile; ++k) xs[b][k] = 0.0f;
      }
      blocks[b] = nullptr;
      qw[b] = nullptr;
    }
    search(xp, a.imatrix != nullptr ? qw : nullptr, blocks, codes, sub);
    for (size_t b = 0; b < nb; ++b) {
      RequantAffineVec(xs[b], sub[b], codes[b]);
      pack(codes[b], blocks[b]);
      if (errors != nullptr) {
        ref::AddKQuantErrors(a.type, blocks[b], xs[b], i + b * kEncodeTile, *errors);
      }
    }
    if (bad != kernels::kAllFinite) return bad;
  }
  return kernels::kAllFinite;
}

// The batched types: Q3_K without importance matrix (SearchQ3KBatch), Q2_K,
// Q4_K and Q5_K (SearchQkx2Batch). Returns false for the others.
HWY_INLINE bool EncodeBatchedType(const kernels::GgmlQuantArgs& a, kernels::ErrorSums* errors,
                                  uint64_t& result) {
  using Codes = uint8_t(*)[256];
  switch (a.type) {
    case GgmlType::kQ2_K:
      result = EncodeKQuantBatched<kQkx2Batch<GgmlType::kQ2_K>, false>(
          a, errors, SearchQkx2Batch<GgmlType::kQ2_K>, ref::PackQ2_K);
      return true;
    case GgmlType::kQ3_K:
      if (a.imatrix != nullptr) return false;
      result = EncodeKQuantBatched<kQ3Batch, true>(
          a, errors,
          [](const float* const* xs, const float* const*, uint8_t* const* blocks, Codes codes,
             ref::KQuantSub* sub) { SearchQ3KBatch(xs, blocks, codes, sub); },
          PackQ3KVec);
      return true;
    case GgmlType::kQ4_K:
      result = EncodeKQuantBatched<kQkx2Batch<GgmlType::kQ4_K>, false>(
          a, errors, SearchQkx2Batch<GgmlType::kQ4_K>, ref::PackQ4_K);
      return true;
    case GgmlType::kQ5_K:
      result = EncodeKQuantBatched<kQkx2Batch<GgmlType::kQ5_K>, false>(
          a, errors, SearchQkx2Batch<GgmlType::kQ5_K>, ref::PackQ5_K);
      return true;
    default: return false;
  }
}

#endif  // HWY_TARGET != HWY_SCALAR

inline uint64_t EncodeGgmlKQuantQuant(const kernels::GgmlQuantArgs& a,
                                      kernels::ErrorSums* errors) {
#if HWY_TARGET == HWY_SCALAR
  return ref::EncodeGgmlKQuantQuant(a, errors);
#else
  uint64_t batched = kernels::kAllFinite;
  if (EncodeBatchedType(a, errors, batched)) return batched;
  const size_t block_bytes = ref::KQuantEncodeBlockBytes(a.type);
  HWY_ALIGN float xs[kEncodeTile + kEncodePad];
  uint8_t* out = a.out;
  const uint64_t n = a.x.rows * a.x.cols;
  for (uint64_t i = 0; i < n; i += kEncodeTile, out += block_bytes) {
    if (!LoadEncodeTile(a.x.in, a.x.type, i, kEncodeTile, xs)) {
      return FirstNonFinite(a.x.in, a.x.type, i, kEncodeTile);
    }
    if (a.imatrix != nullptr) {
      // Importance values are per column; cols is a multiple of 256.
      EncodeKQuantBlockW(a.type, xs, a.imatrix + i % a.x.cols, out);
    } else {
      EncodeKQuantBlock(a.type, xs, out);
    }
    // The sums' order is by element index (kernels/encode_common.h): the
    // reference's scalar loop, shared.
    if (errors != nullptr) ref::AddKQuantErrors(a.type, out, xs, i, *errors);
  }
  return kernels::kAllFinite;
#endif
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace amn
HWY_AFTER_NAMESPACE();

#endif  // AMN_KERNELS_GGML_KQUANT_ENCODE_INL_H_
