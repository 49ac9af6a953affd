// Scalar reference of the ggml simple-type encoders with an importance
// matrix (see the header).
#include "kernels/ref/ggml_encode_imatrix_ref.h"

#include <bit>
#include <cmath>
#include <cstring>

#include "kernels/ggml_blocks.h"
#include "kernels/ref/float_convert_ref.h"
#include "kernels/ref/ggml_encode_ref.h"

namespace amn::ref {

namespace {

constexpr size_t kQK = 32;

void StoreF16(float f, uint8_t* p) {
  const uint16_t h = F32BitsToF16(std::bit_cast<uint32_t>(f));
  p[0] = static_cast<uint8_t>(h);
  p[1] = static_cast<uint8_t>(h >> 8);
}

// ggml's nearest_int: the 1.5 * 2^23 trick, i.e. round half to even for
// |f| < 2^22 (the only range ggml calls it with).
int NearestInt(float f) {
  const float v = f + 12582912.0f;
  return static_cast<int>(std::bit_cast<uint32_t>(v) & 0x007FFFFFu) - 0x00400000;
}

int Clamp(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

// make_qx_quants(32, nmax, x, L, rmse_type = 1, weights): L in [0, 2 nmax).
float MakeQxQuants(int nmax, const float* x, const float* w, uint8_t* L) {
  float max = 0.0f, amax = 0.0f;
  for (size_t i = 0; i < kQK; ++i) {
    const float ax = std::fabs(x[i]);
    if (ax > amax) {
      amax = ax;
      max = x[i];
    }
  }
  if (amax < 1e-15f) {  // GROUP_MAX_EPS
    std::memset(L, 0, kQK);
    return 0.0f;
  }
  float iscale = static_cast<float>(-nmax) / max;
  float sumlx = 0.0f, suml2 = 0.0f;
  for (size_t i = 0; i < kQK; ++i) {
    const int l = Clamp(NearestInt(iscale * x[i]), -nmax, nmax - 1);
    L[i] = static_cast<uint8_t>(l + nmax);
    const float fl = static_cast<float>(l);
    sumlx += w[i] * x[i] * fl;
    suml2 += w[i] * fl * fl;
  }
  float scale = suml2 != 0.0f ? sumlx / suml2 : 0.0f;
  float best = scale * sumlx;
  for (int is = -9; is <= 9; ++is) {
    if (is == 0) continue;
    iscale = -(static_cast<float>(nmax) + 0.1f * static_cast<float>(is)) / max;
    sumlx = suml2 = 0.0f;
    for (size_t i = 0; i < kQK; ++i) {
      const float fl = static_cast<float>(Clamp(NearestInt(iscale * x[i]), -nmax, nmax - 1));
      sumlx += w[i] * x[i] * fl;
      suml2 += w[i] * fl * fl;
    }
    if (suml2 > 0.0f && sumlx * sumlx > best * suml2) {
      for (size_t i = 0; i < kQK; ++i) {
        L[i] = static_cast<uint8_t>(nmax + Clamp(NearestInt(iscale * x[i]), -nmax, nmax - 1));
      }
      scale = sumlx / suml2;
      best = scale * sumlx;
    }
  }
  return scale;
}

// make_qkx3_quants(32, nmax, x, w, L, &the_min, Laux, -0.9f, 0.05f, 36,
// false): returns the scale, *min_out = the (<= 0) min ggml stores as m.
float MakeQkx3Quants(int nmax, const float* x, const float* w, uint8_t* L, float* min_out) {
  constexpr float kRmin = -0.9f, kRdelta = 0.05f;
  constexpr int kNstep = 36;
  float min = x[0], max = x[0];
  float sum_w = w[0];
  float sum_x = sum_w * x[0];
  for (size_t i = 1; i < kQK; ++i) {
    if (x[i] < min) min = x[i];
    if (x[i] > max) max = x[i];
    sum_w += w[i];
    sum_x += w[i] * x[i];
  }
  if (min > 0.0f) min = 0.0f;
  if (max <= min) {
    std::memset(L, 0, kQK);
    *min_out = min;
    return 0.0f;
  }
  float iscale = static_cast<float>(nmax) / (max - min);
  float scale = 1.0f / iscale;
  float best_mad = 0.0f;
  for (size_t i = 0; i < kQK; ++i) {
    L[i] = static_cast<uint8_t>(Clamp(NearestInt(iscale * (x[i] - min)), 0, nmax));
    float diff = scale * static_cast<float>(L[i]) + min - x[i];
    diff = diff * diff;
    best_mad += w[i] * diff;
  }
  uint8_t laux[kQK];
  for (int is = 0; is <= kNstep; ++is) {
    iscale = (kRmin + kRdelta * static_cast<float>(is) + static_cast<float>(nmax)) / (max - min);
    float sum_l = 0.0f, sum_l2 = 0.0f, sum_xl = 0.0f;
    for (size_t i = 0; i < kQK; ++i) {
      const int l = Clamp(NearestInt(iscale * (x[i] - min)), 0, nmax);
      laux[i] = static_cast<uint8_t>(l);
      const float fl = static_cast<float>(l);
      sum_l += w[i] * fl;
      sum_l2 += w[i] * fl * fl;
      sum_xl += w[i] * fl * x[i];
    }
    const float det = sum_w * sum_l2 - sum_l * sum_l;
    if (det > 0.0f) {
      float this_scale = (sum_w * sum_xl - sum_x * sum_l) / det;
      float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / det;
      if (this_min > 0.0f) {
        this_min = 0.0f;
        this_scale = sum_xl / sum_l2;
      }
      float mad = 0.0f;
      for (size_t i = 0; i < kQK; ++i) {
        float diff = this_scale * static_cast<float>(laux[i]) + this_min - x[i];
        diff = diff * diff;
        mad += w[i] * diff;
      }
      if (mad < best_mad) {
        std::memcpy(L, laux, kQK);
        best_mad = mad;
        scale = this_scale;
        min = this_min;
      }
    }
  }
  *min_out = min;
  return scale;
}

void PackNibbles(const uint8_t* L, uint8_t* qs) {
  for (size_t j = 0; j < 16; ++j) qs[j] = static_cast<uint8_t>((L[j] & 0x0F) | (L[j + 16] & 0x0F) << 4);
}

void StoreQh(const uint8_t* L, uint8_t* qh) {
  uint32_t h = 0;
  for (size_t j = 0; j < kQK; ++j) h |= static_cast<uint32_t>((L[j] & 0x10u) >> 4) << j;
  for (size_t k = 0; k < 4; ++k) qh[k] = static_cast<uint8_t>(h >> (8 * k));
}

}  // namespace

float GgmlRowSumSquares(const float* x, size_t n) {
  float s = 0.0f;
  for (size_t j = 0; j < n; ++j) s += x[j] * x[j];
  return s;
}

bool QuantizeGgmlBlockImatrix(GgmlType type, const float* x, const float* qw, float sigma2,
                              uint8_t* out) {
  float w[kQK];
  uint8_t L[kQK];
  switch (type) {
    case GgmlType::kQ4_0:
    case GgmlType::kQ5_0: {
      for (size_t j = 0; j < kQK; ++j) w[j] = qw[j] * std::sqrt(sigma2 + x[j] * x[j]);
      const bool q4 = type == GgmlType::kQ4_0;
      StoreF16(MakeQxQuants(q4 ? 8 : 16, x, w, L), out);
      if (q4) {
        PackNibbles(L, out + 2);
      } else {
        StoreQh(L, out + 2);
        PackNibbles(L, out + 6);
      }
      return true;
    }
    case GgmlType::kQ4_1:
    case GgmlType::kQ5_1: {
      for (size_t j = 0; j < kQK; ++j) w[j] = qw[j] * std::sqrt(sigma2 + x[j] * x[j]);
      const bool q4 = type == GgmlType::kQ4_1;
      float min;
      StoreF16(MakeQkx3Quants(q4 ? 15 : 31, x, w, L, &min), out);
      StoreF16(min, out + 2);  // ggml: fp16(-the_min), the_min = -min
      if (q4) {
        PackNibbles(L, out + 4);
      } else {
        StoreQh(L, out + 4);
        PackNibbles(L, out + 8);
      }
      return true;
    }
    case GgmlType::kIQ4_NL: {
      // quantize_row_iq4_nl_impl's own sigma2: over this block, times 2/32.
      float s2 = 0.0f;
      for (size_t j = 0; j < kQK; ++j) s2 += x[j] * x[j];
      s2 *= 2.0f / 32.0f;
      for (size_t j = 0; j < kQK; ++j) w[j] = qw[j] * std::sqrt(s2 + x[j] * x[j]);
      (void)sigma2;
      QuantizeIq4NlBlockWeighted(x, w, out);
      return true;
    }
    default:
      return false;
  }
}

bool QuantizeGgmlRowImatrix(GgmlType type, const float* x, size_t n, const float* imatrix,
                            uint8_t* out) {
  switch (type) {
    case GgmlType::kQ8_0: case GgmlType::kMXFP4: case GgmlType::kTQ1_0: case GgmlType::kTQ2_0:
      return QuantizeGgmlRow(type, x, n, out);  // ggml ignores the weights
    default:
      break;
  }
  const size_t bb = GgmlEncodeBlockBytes(type);
  if (bb == 0) return false;
  const float sigma2 = GgmlRowSumSquares(x, n) / static_cast<float>(n);
  for (size_t b = 0; b < n / kQK; ++b) {
    if (!QuantizeGgmlBlockImatrix(type, x + b * kQK, imatrix + b * kQK, sigma2, out + b * bb)) {
      return false;
    }
  }
  return true;
}

}  // namespace amn::ref
