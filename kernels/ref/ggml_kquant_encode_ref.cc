// Scalar K-quant encoders in ggml's order: see ggml_kquant_encode_ref.h.
#include "kernels/ref/ggml_kquant_encode_ref.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include "kernels/ggml_kquant_blocks.h"
#include "kernels/ref/float_convert_ref.h"
#include "kernels/ref/ggml_kquant_ref.h"
#include "kernels/ref/ggml_quant_search.h"

namespace amn::ref {
namespace {

using gq::NearestInt;
constexpr int kQK = 256;

// ggml's GGML_FP32_TO_FP16 (IEEE round to nearest even) and back.
uint16_t ToF16(float v) { return F32BitsToF16(std::bit_cast<uint32_t>(v)); }
float FromF16(uint16_t h) { return std::bit_cast<float>(F16ToF32Bits(h)); }
void StoreLe16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
}

// ggml get_scale_min_k4: the j-th 6-bit scale and min of Q4_K/Q5_K.
void ScaleMinK4(int j, const uint8_t* q, uint8_t& d, uint8_t& m) {
  if (j < 4) {
    d = q[j] & 63;
    m = q[j + 4] & 63;
  } else {
    d = static_cast<uint8_t>((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
    m = static_cast<uint8_t>((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
  }
}

void FinishQ45KHeader(uint16_t d, uint16_t dmin, int nmax, uint8_t* block, KQuantSub& sub);
void FinishQ2KHeader(uint16_t d, uint16_t dmin, uint8_t* block, KQuantSub& sub);
void FinishQ3KHeader(uint16_t d, uint8_t* block, KQuantSub& sub);
void SearchIq4XsImpl(const float* x, const float* qw, uint8_t* block, KQuantSub& sub);

// Q4_K and Q5_K share everything but nmax and the search grid: 8 sub-blocks
// of 32 with weights av_x + |x|, av_x = sqrt(sum x^2 / 32) summed in order,
// then 6-bit scales and mins relative to the largest of each.
void SearchQ45K(const float* x, uint8_t* block, uint8_t* codes, KQuantSub& sub, int nmax,
                float rmin, int nstep) {
  float scales[8], mins[8], weights[32];
  uint8_t laux[32];
  for (int j = 0; j < 8; ++j) {
    const float* xb = x + 32 * j;
    float sum_x2 = 0.0f;
    for (int l = 0; l < 32; ++l) sum_x2 += xb[l] * xb[l];
    const float av_x = std::sqrt(sum_x2 / 32.0f);
    for (int l = 0; l < 32; ++l) weights[l] = av_x + std::fabs(xb[l]);
    scales[j] = gq::MakeQkx2Quants(32, nmax, xb, weights, codes + 32 * j, &mins[j], laux, rmin,
                                   0.1f, nstep, false);
  }
  FinishQ45K(scales, mins, nmax, block, sub);
}

}  // namespace

void FinishQ45K(const float* scales, const float* mins, int nmax, uint8_t* block,
                KQuantSub& sub) {
  float max_scale = 0.0f, max_min = 0.0f;
  for (int j = 0; j < 8; ++j) {
    if (scales[j] > max_scale) max_scale = scales[j];
    if (mins[j] > max_min) max_min = mins[j];
  }
  const float inv_scale = max_scale > 0.0f ? 63.0f / max_scale : 0.0f;
  const float inv_min = max_min > 0.0f ? 63.0f / max_min : 0.0f;
  uint8_t* s12 = block + kq::q4k::kScales;  // same offset in Q5_K
  for (int j = 0; j < 8; ++j) {
    // ggml stores nearest_int's int in a uint8_t (modulo 256) before the
    // MIN with 63.
    const uint8_t ls = std::min<uint8_t>(63, static_cast<uint8_t>(NearestInt(inv_scale * scales[j])));
    const uint8_t lm = std::min<uint8_t>(63, static_cast<uint8_t>(NearestInt(inv_min * mins[j])));
    if (j < 4) {
      s12[j] = ls;
      s12[j + 4] = lm;
    } else {
      s12[j + 4] = static_cast<uint8_t>((ls & 0xF) | ((lm & 0xF) << 4));
      s12[j - 4] |= static_cast<uint8_t>((ls >> 4) << 6);
      s12[j] |= static_cast<uint8_t>((lm >> 4) << 6);
    }
  }
  FinishQ45KHeader(ToF16(max_scale / 63.0f), ToF16(max_min / 63.0f), nmax, block, sub);
}

namespace {

// d and dmin stored, then every sub-block's (d_j, dm_j) read back from the
// stored F16 values and packed 6-bit scales, as ggml's requantization does.
void FinishQ45KHeader(uint16_t d, uint16_t dmin, int nmax, uint8_t* block, KQuantSub& sub) {
  const uint8_t* s12 = block + kq::q4k::kScales;
  StoreLe16(block + kq::q4k::kD, d);
  StoreLe16(block + kq::q4k::kDmin, dmin);
  sub.n_sub = 8;
  sub.sub_len = 32;
  sub.lo = 0;
  sub.hi = nmax;
  sub.off = 0;
  for (int j = 0; j < 8; ++j) {
    uint8_t sc, m;
    ScaleMinK4(j, s12, sc, m);
    sub.d[j] = FromF16(d) * static_cast<float>(sc);
    sub.dm[j] = FromF16(dmin) * static_cast<float>(m);
  }
}

// Two-bit planes of 128-element halves: byte l of half h holds elements
// 128h + l, +32, +64, +96 at bits 0, 2, 4, 6 (Q2_K and Q3_K's qs).
void Pack2BitPlanes(const uint8_t* codes, uint8_t* qs) {
  for (int j = 0; j < kQK; j += 128) {
    for (int l = 0; l < 32; ++l) {
      qs[j / 4 + l] = static_cast<uint8_t>(codes[j + l] | (codes[j + l + 32] << 2) |
                                           (codes[j + l + 64] << 4) | (codes[j + l + 96] << 6));
    }
  }
}

}  // namespace

void SearchQ2_K(const float* x, uint8_t* block, uint8_t* codes, KQuantSub& sub) {
  float scales[16], mins[16], weights[16];
  uint8_t laux[16];
  for (int j = 0; j < 16; ++j) {
    for (int l = 0; l < 16; ++l) weights[l] = std::fabs(x[16 * j + l]);
    scales[j] = gq::MakeQkx2Quants(16, 3, x + 16 * j, weights, codes + 16 * j, &mins[j], laux,
                                   -0.5f, 0.1f, 15, true);
  }
  FinishQ2K(scales, mins, block, sub);
}

void FinishQ2K(const float* scales, const float* mins, uint8_t* block, KQuantSub& sub) {
  float max_scale = 0.0f, max_min = 0.0f;
  for (int j = 0; j < 16; ++j) {
    if (scales[j] > max_scale) max_scale = scales[j];
    if (mins[j] > max_min) max_min = mins[j];
  }
  uint8_t* sc = block + kq::q2k::kScales;
  uint16_t d = 0, dmin = 0;  // F16 +0
  if (max_scale > 0.0f) {
    const float iscale = 15.0f / max_scale;
    for (int j = 0; j < 16; ++j) sc[j] = static_cast<uint8_t>(NearestInt(iscale * scales[j]));
    d = ToF16(max_scale / 15.0f);
  } else {
    std::memset(sc, 0, 16);
  }
  if (max_min > 0.0f) {
    const float iscale = 15.0f / max_min;
    for (int j = 0; j < 16; ++j) {
      sc[j] = static_cast<uint8_t>(sc[j] | (NearestInt(iscale * mins[j]) << 4));
    }
    dmin = ToF16(max_min / 15.0f);
  }
  FinishQ2KHeader(d, dmin, block, sub);
}

namespace {

// d and dmin stored, then (d_j, dm_j) from them and the 4-bit scales.
void FinishQ2KHeader(uint16_t d, uint16_t dmin, uint8_t* block, KQuantSub& sub) {
  const uint8_t* sc = block + kq::q2k::kScales;
  StoreLe16(block + kq::q2k::kD, d);
  StoreLe16(block + kq::q2k::kDmin, dmin);
  sub.n_sub = 16;
  sub.sub_len = 16;
  sub.lo = 0;
  sub.hi = 3;
  sub.off = 0;
  for (int j = 0; j < 16; ++j) {
    sub.d[j] = FromF16(d) * static_cast<float>(sc[j] & 0xF);
    sub.dm[j] = FromF16(dmin) * static_cast<float>(sc[j] >> 4);
  }
}

// Q3_K: d stored, then d_j = d * (6-bit signed scale j) read back from the
// packed scales.
void FinishQ3KHeader(uint16_t d, uint8_t* block, KQuantSub& sub) {
  const uint8_t* s12 = block + kq::q3k::kScales;
  StoreLe16(block + kq::q3k::kD, d);
  sub.n_sub = 16;
  sub.sub_len = 16;
  sub.lo = -4;
  sub.hi = 3;
  sub.off = 4;
  for (int j = 0; j < 16; ++j) {
    int8_t s = static_cast<int8_t>(j < 8 ? s12[j] & 0xF : s12[j - 8] >> 4);
    s = static_cast<int8_t>((s | (((s12[8 + j % 4] >> (2 * (j / 4))) & 3) << 4)) - 32);
    sub.d[j] = FromF16(d) * static_cast<float>(s);
    sub.dm[j] = 0.0f;
  }
}

}  // namespace

void SearchQ3_K(const float* x, uint8_t* block, uint8_t* codes, KQuantSub& sub) {
  float scales[16];
  int8_t L[kQK];
  for (int j = 0; j < 16; ++j) scales[j] = gq::MakeQ3QuantsRmse(16, 4, x + 16 * j, L + 16 * j);
  for (int i = 0; i < kQK; ++i) codes[i] = static_cast<uint8_t>(L[i]);
  FinishQ3K(scales, block, sub);
}

void FinishQ3K(const float* scales, uint8_t* block, KQuantSub& sub) {
  float max_scale = 0.0f, amax = 0.0f;
  for (int j = 0; j < 16; ++j) {
    const float a = std::fabs(scales[j]);
    if (a > amax) {
      amax = a;
      max_scale = scales[j];
    }
  }
  uint8_t* s12 = block + kq::q3k::kScales;
  std::memset(s12, 0, 12);
  uint16_t d = 0;
  if (max_scale != 0.0f) {
    const float iscale = -32.0f / max_scale;
    for (int j = 0; j < 16; ++j) {
      // ggml keeps the code in an int8_t: low 4 bits in s12[0..7] nibbles,
      // high 2 bits in s12[8..11] at bit 2 * (j / 4).
      int8_t l = static_cast<int8_t>(NearestInt(iscale * scales[j]));
      l = static_cast<int8_t>(std::max<int>(-32, std::min<int>(31, l)) + 32);
      if (j < 8) {
        s12[j] = static_cast<uint8_t>(l & 0xF);
      } else {
        s12[j - 8] = static_cast<uint8_t>(s12[j - 8] | ((l & 0xF) << 4));
      }
      l = static_cast<int8_t>(l >> 4);
      s12[j % 4 + 8] = static_cast<uint8_t>(s12[j % 4 + 8] | (l << (2 * (j / 4))));
    }
    d = ToF16(1.0f / iscale);
  }
  FinishQ3KHeader(d, block, sub);
}

void SearchQ4_K(const float* x, uint8_t* block, uint8_t* codes, KQuantSub& sub) {
  SearchQ45K(x, block, codes, sub, 15, -1.0f, 20);
}
void SearchQ5_K(const float* x, uint8_t* block, uint8_t* codes, KQuantSub& sub) {
  SearchQ45K(x, block, codes, sub, 31, -0.5f, 15);
}

void SearchQ6_K(const float* x, uint8_t* block, uint8_t* codes, KQuantSub& sub) {
  float scales[16];
  int8_t L[kQK];
  for (int ib = 0; ib < 16; ++ib) {
    scales[ib] = gq::MakeQxQuantsRmse1(16, 32, x + 16 * ib, L + 16 * ib);
  }
  for (int i = 0; i < kQK; ++i) codes[i] = static_cast<uint8_t>(L[i]);
  FinishQ6K(scales, block, codes, sub);
}

void FinishQ6K(const float* scales, uint8_t* block, uint8_t* codes, KQuantSub& sub) {
  float max_scale = 0.0f, max_abs_scale = 0.0f;
  for (int ib = 0; ib < 16; ++ib) {
    const float a = std::fabs(scales[ib]);
    if (a > max_abs_scale) {
      max_abs_scale = a;
      max_scale = scales[ib];
    }
  }
  sub.n_sub = 16;
  sub.sub_len = 16;
  sub.lo = -32;
  sub.hi = 31;
  sub.off = 32;
  int8_t* sc = reinterpret_cast<int8_t*>(block + kq::q6k::kScales);
  if (max_abs_scale < gq::kGroupMaxEps) {
    // ggml zeroes the whole block; zero codes pack to zero planes.
    std::memset(codes, 0, kQK);
    std::memset(sc, 0, 16);
    StoreLe16(block + kq::q6k::kD, 0);
    for (int j = 0; j < 16; ++j) sub.d[j] = sub.dm[j] = 0.0f;
    return;
  }
  const float iscale = -128.0f / max_scale;
  const uint16_t d = ToF16(1.0f / iscale);
  StoreLe16(block + kq::q6k::kD, d);
  for (int ib = 0; ib < 16; ++ib) {
    sc[ib] = static_cast<int8_t>(std::min(127, NearestInt(iscale * scales[ib])));
  }
  for (int j = 0; j < 16; ++j) {
    sub.d[j] = FromF16(d) * static_cast<float>(sc[j]);
    sub.dm[j] = 0.0f;
  }
}

void SearchIq4Xs(const float* x, uint8_t* block, uint8_t* codes, KQuantSub& sub) {
  SearchIq4XsImpl(x, nullptr, block, sub);
  (void)codes;
}

namespace {

// quantize_row_iq4_nl_impl(256, 32, ..., qw, ntry = 7) up to the sub-block
// scales; qw null: weights x^2.
void SearchIq4XsImpl(const float* x, const float* qw, uint8_t* block, KQuantSub& sub) {
  float scales[8], weights[kQK], sw[8];
  if (qw != nullptr) {
    ImatrixWeights(GgmlType::kIQ4_XS, x, qw, weights, sw);
  } else {
    for (int j = 0; j < kQK; ++j) weights[j] = x[j] * x[j];
  }
  // quantize_row_iq4_nl_impl's ntry = 7 search per sub-block; its codes are
  // discarded (stage 2 recomputes every sub-block), only the scale matters.
  for (int ib = 0; ib < 8; ++ib) scales[ib] = gq::Iq4NlScale(x + 32 * ib, weights + 32 * ib);
  FinishIq4Xs(scales, block, sub);
}

}  // namespace

void FinishIq4Xs(const float* scales, uint8_t* block, KQuantSub& sub) {
  float max_scale = 0.0f, amax_scale = 0.0f;
  for (int ib = 0; ib < 8; ++ib) {
    const float abs_d = std::fabs(scales[ib]);
    if (abs_d > amax_scale) {
      amax_scale = abs_d;
      max_scale = scales[ib];
    }
  }
  const float d = -max_scale / 32.0f;
  StoreLe16(block + kq::iq4xs::kD, ToF16(d));
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  uint16_t scales_h = 0;
  uint8_t* scales_l = block + kq::iq4xs::kScalesL;
  sub.n_sub = 8;
  sub.sub_len = 32;
  for (int ib = 0; ib < 8; ++ib) {
    int l = std::max(-32, std::min(31, NearestInt(id * scales[ib])));
    const float dl = d * static_cast<float>(l);
    sub.d[ib] = dl != 0.0f ? 1.0f / dl : 0.0f;
    sub.dm[ib] = 0.0f;
    l += 32;
    const uint8_t l_l = static_cast<uint8_t>(l & 0xF), l_h = static_cast<uint8_t>(l >> 4);
    if (ib % 2 == 0) {
      scales_l[ib / 2] = l_l;
    } else {
      scales_l[ib / 2] = static_cast<uint8_t>(scales_l[ib / 2] | (l_l << 4));
    }
    scales_h = static_cast<uint16_t>(scales_h | (l_h << (2 * (ib % 8))));
  }
  StoreLe16(block + kq::iq4xs::kScalesH, scales_h);
}

namespace {

// sum of x^2 over the super-block, in element order (ggml's sigma2 numerator).
float SumSquares256(const float* x) {
  float sum_x2 = 0.0f;
  for (int l = 0; l < kQK; ++l) sum_x2 += x[l] * x[l];
  return sum_x2;
}

}  // namespace

void ImatrixWeights(GgmlType type, const float* x, const float* qw, float* weights, float* sw) {
  const bool len32 =
      type == GgmlType::kQ4_K || type == GgmlType::kQ5_K || type == GgmlType::kIQ4_XS;
  const int sub_len = len32 ? 32 : 16;
  // Q4_K, Q5_K, Q3_K: (2 * sum) / 256, the int 2 converted, multiplied, then
  // divided; Q2_K: sum / 256; IQ4_XS: sum * (2.f / 256), one multiplication
  // (the same value unless 2 * sum overflows).
  const float sum_x2 = SumSquares256(x);
  const float sigma2 = type == GgmlType::kQ2_K     ? sum_x2 / 256.0f
                       : type == GgmlType::kIQ4_XS ? sum_x2 * (2.0f / 256.0f)
                                                   : 2.0f * sum_x2 / 256.0f;
  for (int j = 0; j < kQK / sub_len; ++j) {
    float sumw = 0.0f;
    for (int l = j * sub_len; l < (j + 1) * sub_len; ++l) {
      weights[l] = qw[l] * std::sqrt(sigma2 + x[l] * x[l]);
    }
    for (int l = j * sub_len; l < (j + 1) * sub_len; ++l) sumw += weights[l];
    sw[j] = sumw;
  }
}

void FinishQ45KW(const float* scales, const float* mins, const float* sw, int nmax,
                 uint8_t* block, KQuantSub& sub) {
  uint8_t ls_all[8], lm_all[8];
  const float d_block = gq::MakeQpQuants(8, 63, scales, ls_all, sw);
  const float m_block = gq::MakeQpQuants(8, 63, mins, lm_all, sw);
  uint8_t* s12 = block + kq::q4k::kScales;
  for (int j = 0; j < 8; ++j) {
    uint8_t ls = ls_all[j], lm = lm_all[j];
    if (nmax == 31) {  // Q5_K clamps to 63; Q4_K stores the codes as they are
      ls = std::min<uint8_t>(63, ls);
      lm = std::min<uint8_t>(63, lm);
    }
    if (j < 4) {
      s12[j] = ls;
      s12[j + 4] = lm;
    } else {
      s12[j + 4] = static_cast<uint8_t>((ls & 0xF) | ((lm & 0xF) << 4));
      s12[j - 4] = static_cast<uint8_t>(s12[j - 4] | ((ls >> 4) << 6));
      s12[j] = static_cast<uint8_t>(s12[j] | ((lm >> 4) << 6));
    }
  }
  FinishQ45KHeader(ToF16(d_block), ToF16(m_block), nmax, block, sub);
}

void FinishQ2KW(const float* scales, const float* mins, const float* sw, uint8_t* block,
                KQuantSub& sub) {
  uint8_t ls[16], lm[16];
  const float dm = gq::MakeQpQuants(16, 15, scales, ls, sw);
  const float mm = gq::MakeQpQuants(16, 15, mins, lm, sw);
  uint8_t* sc = block + kq::q2k::kScales;
  for (int j = 0; j < 16; ++j) sc[j] = static_cast<uint8_t>(ls[j] | (lm[j] << 4));
  FinishQ2KHeader(ToF16(dm), ToF16(mm), block, sub);
}

void FinishQ3KW(const float* scales, const float* sw, uint8_t* block, KQuantSub& sub) {
  int8_t ls[16];
  // The 16 scales are themselves make_qx_quants codes (nmax 32, weights the
  // sub-block weight sums): already offset by 32, packed as they are.
  const float d_block = gq::MakeQxQuantsRmse1(16, 32, scales, ls, sw);
  uint8_t* s12 = block + kq::q3k::kScales;
  std::memset(s12, 0, 12);
  for (int j = 0; j < 16; ++j) {
    int l = ls[j];
    if (j < 8) {
      s12[j] = static_cast<uint8_t>(l & 0xF);
    } else {
      s12[j - 8] = static_cast<uint8_t>(s12[j - 8] | ((l & 0xF) << 4));
    }
    l >>= 4;
    s12[j % 4 + 8] = static_cast<uint8_t>(s12[j % 4 + 8] | (l << (2 * (j / 4))));
  }
  FinishQ3KHeader(ToF16(d_block), block, sub);
}

namespace {

// Q4_K / Q5_K with an importance matrix (quantize_row_q{4,5}_K_impl): eight
// weighted make_qkx3_quants searches, then FinishQ45KW.
void SearchQ45KW(const float* x, const float* qw, uint8_t* block, uint8_t* codes,
                 KQuantSub& sub, int nmax) {
  float scales[8], mins[8], sw[8], weights[kQK];
  uint8_t laux[32];
  ImatrixWeights(nmax == 15 ? GgmlType::kQ4_K : GgmlType::kQ5_K, x, qw, weights, sw);
  for (int j = 0; j < 8; ++j) {
    scales[j] = gq::MakeQkx2Quants(32, nmax, x + 32 * j, weights + 32 * j, codes + 32 * j,
                                   &mins[j], laux, -0.9f, 0.05f, 36, false);
  }
  FinishQ45KW(scales, mins, sw, nmax, block, sub);
}

}  // namespace

void SearchQ4_KW(const float* x, const float* qw, uint8_t* block, uint8_t* codes,
                 KQuantSub& sub) {
  SearchQ45KW(x, qw, block, codes, sub, 15);
}
void SearchQ5_KW(const float* x, const float* qw, uint8_t* block, uint8_t* codes,
                 KQuantSub& sub) {
  SearchQ45KW(x, qw, block, codes, sub, 31);
}

void SearchQ6_KW(const float* x, const float* qw, uint8_t* block, uint8_t* codes,
                 KQuantSub& sub) {
  // ggml weighs Q6_K's search with the importance values alone (no sigma2
  // term), then finishes exactly as without them.
  float scales[16];
  int8_t L[kQK];
  for (int ib = 0; ib < 16; ++ib) {
    scales[ib] = gq::MakeQxQuantsRmse1(16, 32, x + 16 * ib, L + 16 * ib, qw + 16 * ib);
  }
  for (int i = 0; i < kQK; ++i) codes[i] = static_cast<uint8_t>(L[i]);
  FinishQ6K(scales, block, codes, sub);
}

void SearchQ2_KW(const float* x, const float* qw, uint8_t* block, uint8_t* codes,
                 KQuantSub& sub) {
  float scales[16], mins[16], sw[16], weights[kQK];
  uint8_t laux[16];
  ImatrixWeights(GgmlType::kQ2_K, x, qw, weights, sw);
  for (int j = 0; j < 16; ++j) {
    scales[j] = gq::MakeQkx2Quants(16, 3, x + 16 * j, weights + 16 * j, codes + 16 * j, &mins[j],
                                   laux, -0.9f, 0.05f, 36, false);
  }
  FinishQ2KW(scales, mins, sw, block, sub);
}

void SearchQ3_KW(const float* x, const float* qw, uint8_t* block, uint8_t* codes,
                 KQuantSub& sub) {
  float scales[16], sw[16], weights[kQK];
  int8_t L[kQK];
  ImatrixWeights(GgmlType::kQ3_K, x, qw, weights, sw);
  for (int j = 0; j < 16; ++j) {
    scales[j] = gq::MakeQxQuantsRmse1(16, 4, x + 16 * j, L + 16 * j, weights + 16 * j);
  }
  for (int i = 0; i < kQK; ++i) codes[i] = static_cast<uint8_t>(L[i]);
  FinishQ3KW(scales, sw, block, sub);
}

void SearchIq4XsW(const float* x, const float* qw, uint8_t* block, uint8_t* codes,
                  KQuantSub& sub) {
  SearchIq4XsImpl(x, qw, block, sub);
  (void)codes;
}

void QuantizeKQuantBlock(GgmlType type, const float* x, const float* qw, uint8_t* out) {
  uint8_t codes[kQK];
  KQuantSub sub;
  const bool w = qw != nullptr;
  switch (type) {
    case GgmlType::kQ2_K:
      w ? SearchQ2_KW(x, qw, out, codes, sub) : SearchQ2_K(x, out, codes, sub);
      RequantAffine(x, sub, codes);
      PackQ2_K(codes, out);
      break;
    case GgmlType::kQ3_K:
      w ? SearchQ3_KW(x, qw, out, codes, sub) : SearchQ3_K(x, out, codes, sub);
      RequantAffine(x, sub, codes);
      PackQ3_K(codes, out);
      break;
    case GgmlType::kQ4_K:
      w ? SearchQ4_KW(x, qw, out, codes, sub) : SearchQ4_K(x, out, codes, sub);
      RequantAffine(x, sub, codes);
      PackQ4_K(codes, out);
      break;
    case GgmlType::kQ5_K:
      w ? SearchQ5_KW(x, qw, out, codes, sub) : SearchQ5_K(x, out, codes, sub);
      RequantAffine(x, sub, codes);
      PackQ5_K(codes, out);
      break;
    case GgmlType::kQ6_K:
      w ? SearchQ6_KW(x, qw, out, codes, sub) : SearchQ6_K(x, out, codes, sub);
      RequantAffine(x, sub, codes);
      PackQ6_K(codes, out);
      break;
    case GgmlType::kIQ4_XS:
      w ? SearchIq4XsW(x, qw, out, codes, sub) : SearchIq4Xs(x, out, codes, sub);
      RequantIq4Xs(x, sub, codes);
      PackIq4Xs(codes, out);
      break;
    default: return;
  }
}

void RequantAffine(const float* x, const KQuantSub& sub, uint8_t* codes) {
  for (int j = 0; j < sub.n_sub; ++j) {
    const float d = sub.d[j];
    if (d == 0.0f) continue;
    const float dm = sub.dm[j];
    for (int i = j * sub.sub_len; i < (j + 1) * sub.sub_len; ++i) {
      const int l = std::max(sub.lo, std::min(sub.hi, NearestInt((x[i] + dm) / d)));
      codes[i] = static_cast<uint8_t>(l + sub.off);
    }
  }
}

void RequantIq4Xs(const float* x, const KQuantSub& sub, uint8_t* codes) {
  for (int j = 0; j < sub.n_sub; ++j) {
    for (int i = j * sub.sub_len; i < (j + 1) * sub.sub_len; ++i) {
      codes[i] = static_cast<uint8_t>(gq::BestIndexInt8(16, kq::kIq4Values.data(), sub.d[j] * x[i]));
    }
  }
}

void PackQ2_K(const uint8_t* codes, uint8_t* block) { Pack2BitPlanes(codes, block + kq::q2k::kQs); }

void PackQ3_K(const uint8_t* codes, uint8_t* block) {
  // Bit 2 of element j goes to hmask[j % 32] bit j / 32; the low two bits to
  // the 2-bit planes.
  uint8_t low[kQK];
  uint8_t* hmask = block + kq::q3k::kHmask;
  std::memset(hmask, 0, 32);
  for (int j = 0; j < kQK; ++j) {
    low[j] = codes[j];
    if (codes[j] > 3) {
      hmask[j % 32] = static_cast<uint8_t>(hmask[j % 32] | (1u << (j / 32)));
      low[j] = static_cast<uint8_t>(codes[j] - 4);
    }
  }
  Pack2BitPlanes(low, block + kq::q3k::kQs);
}

void PackQ4_K(const uint8_t* codes, uint8_t* block) {
  uint8_t* q = block + kq::q4k::kQs;
  for (int j = 0; j < kQK; j += 64, q += 32) {
    for (int l = 0; l < 32; ++l) q[l] = static_cast<uint8_t>(codes[j + l] | (codes[j + l + 32] << 4));
  }
}

void PackQ5_K(const uint8_t* codes, uint8_t* block) {
  uint8_t* qh = block + kq::q5k::kQh;
  uint8_t* ql = block + kq::q5k::kQs;
  std::memset(qh, 0, 32);
  // Bit 4 of elements 64n + j and 64n + j + 32 goes to qh[j] bits 2n, 2n + 1.
  for (int n = 0; n < kQK; n += 64, ql += 32) {
    const int shift = n / 32;
    for (int j = 0; j < 32; ++j) {
      int l1 = codes[n + j], l2 = codes[n + j + 32];
      if (l1 > 15) {
        l1 -= 16;
        qh[j] = static_cast<uint8_t>(qh[j] | (1u << shift));
      }
      if (l2 > 15) {
        l2 -= 16;
        qh[j] = static_cast<uint8_t>(qh[j] | (2u << shift));
      }
      ql[j] = static_cast<uint8_t>(l1 | (l2 << 4));
    }
  }
}

void PackQ6_K(const uint8_t* codes, uint8_t* block) {
  uint8_t* ql = block + kq::q6k::kQl;
  uint8_t* qh = block + kq::q6k::kQh;
  for (int j = 0; j < kQK; j += 128, ql += 64, qh += 32) {
    for (int l = 0; l < 32; ++l) {
      const uint8_t* c = codes + j + l;
      ql[l] = static_cast<uint8_t>((c[0] & 0xF) | ((c[64] & 0xF) << 4));
      ql[l + 32] = static_cast<uint8_t>((c[32] & 0xF) | ((c[96] & 0xF) << 4));
      qh[l] = static_cast<uint8_t>((c[0] >> 4) | ((c[32] >> 4) << 2) | ((c[64] >> 4) << 4) |
                                   ((c[96] >> 4) << 6));
    }
  }
}

void PackIq4Xs(const uint8_t* codes, uint8_t* block) {
  uint8_t* q4 = block + kq::iq4xs::kQs;
  for (int i = 0; i < 8; ++i) {
    for (int j = 0; j < 16; ++j) {
      q4[16 * i + j] = static_cast<uint8_t>(codes[32 * i + j] | (codes[32 * i + 16 + j] << 4));
    }
  }
}

size_t KQuantEncodeBlockBytes(GgmlType type) {
  switch (type) {
    case GgmlType::kQ2_K: return kq::q2k::kBytes;
    case GgmlType::kQ3_K: return kq::q3k::kBytes;
    case GgmlType::kQ4_K: return kq::q4k::kBytes;
    case GgmlType::kQ5_K: return kq::q5k::kBytes;
    case GgmlType::kQ6_K: return kq::q6k::kBytes;
    case GgmlType::kIQ4_XS: return kq::iq4xs::kBytes;
    default: return 0;
  }
}

void QuantizeKQuantRow(GgmlType type, const float* x, size_t n_elems, uint8_t* out,
                       const float* imatrix) {
  const size_t block_bytes = KQuantEncodeBlockBytes(type);
  for (size_t b = 0; b < n_elems / kQK; ++b, x += kQK, out += block_bytes) {
    QuantizeKQuantBlock(type, x, imatrix != nullptr ? imatrix + kQK * b : nullptr, out);
  }
}

void AddKQuantErrors(GgmlType type, const uint8_t* block, const float* x, uint64_t i0,
                     kernels::ErrorSums& errors) {
  float xq[kQK];
  DequantKQuantBlock(static_cast<uint32_t>(type), block, xq);
  for (int k = 0; k < kQK; ++k) kernels::AddError(errors, i0 + k, x[k], xq[k]);
}

uint64_t EncodeGgmlKQuantQuant(const kernels::GgmlQuantArgs& a, kernels::ErrorSums* errors) {
  const size_t block_bytes = KQuantEncodeBlockBytes(a.type);
  uint8_t* out = a.out;
  float x[kQK];
  // One super-block at a time: widen, refuse a non-finite element, encode.
  for (uint64_t i = 0; i < a.x.rows * a.x.cols; i += kQK, out += block_bytes) {
    for (int k = 0; k < kQK; ++k) {
      const uint32_t bits = kernels::LoadInputBits(a.x.in, a.x.type, i + k);
      if (!kernels::IsFiniteF32Bits(bits)) return i + k;
      x[k] = std::bit_cast<float>(bits);
    }
    // The importance values are per column: super-block i starts at column
    // i % cols (cols is a multiple of 256).
    QuantizeKQuantBlock(a.type, x, a.imatrix != nullptr ? a.imatrix + i % a.x.cols : nullptr, out);
    if (errors != nullptr) AddKQuantErrors(a.type, out, x, i, *errors);
  }
  return kernels::kAllFinite;
}

}  // namespace amn::ref
