// ggml's IQ3_XXS and IQ3_S encoders in ggml's operation order
// (kernels/ref/ggml_iq3_encode_ref.h).
#include "kernels/ref/ggml_iq3_encode_ref.h"

#include <bit>
#include <cfloat>
#include <cmath>
#include <cstring>

#include "kernels/ggml_iq_blocks.h"
#include "kernels/ref/float_convert_ref.h"
#include "kernels/ref/ggml_iquant_ref.h"
#include "kernels/ref/ggml_quant_search.h"

namespace amn::ref {

namespace {

constexpr int kQK = 256;
constexpr int kMaxQ = 8;
constexpr int kSub = 32;  // elements per sub-block (IQ3S_BLOCK_SIZE too)
constexpr float kGroupMaxEpsIq3Xxs = 1e-8f;

// ggml's MAX / MIN macros (a > b ? a : b), NaN behaviour included.
inline float MaxF(float a, float b) { return a > b ? a : b; }
inline int ClampInt(int l, int hi) { return l < 0 ? 0 : l > hi ? hi : l; }

void Levels(float id, const float* xval, int8_t* l) {
  for (int i = 0; i < kSub; ++i) {
    l[i] = static_cast<int8_t>(ClampInt(gq::NearestInt(0.5f * (id * xval[i] - 1)), kMaxQ - 1));
  }
}

uint32_t PointOf(const int8_t* l) {
  uint32_t u = 0;
  for (int i = 0; i < 4; ++i) u |= static_cast<uint32_t>(l[i]) << (3 * i);
  return u;
}

// After the trials: groups left off the grid (IQ3_S: every group) placed
// again at the winning scale, and the scale refitted; then a negative scale
// made positive with flipped signs. Returns the sub-block scale.
float Refit(bool xxs, const Iq3Index& index, const float* xval, const float* weight,
            const float* waux, float scale, const bool* on_grid, int8_t* L, uint8_t* signs) {
  int n_not_on_grid = 0;
  for (int k = 0; k < 8; ++k) n_not_on_grid += on_grid[k] ? 0 : 1;
  if (n_not_on_grid > 0 && scale > 0) {
    const float id = 1 / scale;
    int8_t laux[kSub];
    Levels(id, xval, laux);
    for (int k = 0; k < 8; ++k) {
      if (xxs && on_grid[k]) continue;  // IQ3_S places every group again
      const uint32_t u = PointOf(laux + 4 * k);
      int g = index.GridIndex(u);
      if (g < 0) g = Iq3BestNeighbour(index, u, xval + 4 * k, waux + 4 * k, scale, L + 4 * k);
      for (int i = 0; i < 4; ++i) L[4 * k + i] = static_cast<int8_t>(index.Level(g, i));
    }
    float sumqx = 0, sumq2 = 0;
    for (int i = 0; i < kSub; ++i) {
      const float w = weight[i];
      const float q = static_cast<float>(2 * L[i] + 1);
      sumqx += w * xval[i] * q;
      sumq2 += w * q * q;
    }
    if (sumq2 > 0) scale = sumqx / sumq2;
  }
  if (scale < 0) {  // "should never happen" (ggml): positive scale, flipped signs
    scale = -scale;
    for (int k = 0; k < 4; ++k) signs[k] = static_cast<uint8_t>(xxs ? ~signs[k] & 127 : ~signs[k]);
  }
  return scale;
}

// Weights, |x| and signs of sub-block xb (ggml's order); returns max |x|
// (ggml's running MAX over xval, which for IQ3_XXS may hold one negated
// value per group of 8).
float PrepareSubBlock(bool xxs, const float* xb, const float* qw, float sigma2, float* weight,
                      float* waux, float* xval, uint8_t* signs) {
  for (int i = 0; i < kSub; ++i) {
    weight[i] = qw != nullptr ? qw[i] * std::sqrt(sigma2 + xb[i] * xb[i]) : xb[i] * xb[i];
  }
  for (int i = 0; i < kSub; ++i) waux[i] = std::sqrt(weight[i]);
  for (int k = 0; k < 4; ++k) {
    int nflip = 0;
    uint8_t s = 0;
    for (int i = 0; i < 8; ++i) {
      if (xb[8 * k + i] >= 0) {
        xval[8 * k + i] = xb[8 * k + i];
      } else {
        xval[8 * k + i] = -xb[8 * k + i];
        ++nflip;
        s = static_cast<uint8_t>(s | (1u << i));
      }
    }
    if (xxs && nflip % 2 != 0) {
      // An even number of negatives is stored: flip the cheapest element.
      int imin = 0;
      float min = weight[8 * k] * xb[8 * k] * xb[8 * k];
      for (int i = 1; i < 8; ++i) {
        const float ax = weight[8 * k + i] * xb[8 * k + i] * xb[8 * k + i];
        if (ax < min) {
          min = ax;
          imin = i;
        }
      }
      xval[8 * k + imin] = -xval[8 * k + imin];
      s = static_cast<uint8_t>(s ^ (1u << imin));
    }
    signs[k] = xxs ? static_cast<uint8_t>(s & 127) : s;
  }
  float max = xval[0];
  for (int i = 1; i < kSub; ++i) max = MaxF(max, xval[i]);
  return max;
}

float SigmaSquared(const float* x) {
  float sumx2 = 0;
  for (int i = 0; i < kQK; ++i) sumx2 += x[i] * x[i];
  return 2 * sumx2 / kQK;
}

uint16_t ToF16(float v) { return F32BitsToF16(std::bit_cast<uint32_t>(v)); }

void StoreLe16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
}

void StoreLe32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

void QuantizeIq3XxsBlock(const float* x, const float* qw, uint8_t* out, Iq3TrialsFn trials) {
  const Iq3Index& index = Iq3Index::Xxs();
  std::memset(out, 0, iq::iq3xxs::kBytes);
  uint8_t* q3 = out + iq::iq3xxs::kQs;
  uint32_t signs_scales[8] = {};
  float scales[8];
  float max_scale = 0;
  const float sigma2 = SigmaSquared(x);
  for (int ib = 0; ib < 8; ++ib) {
    float weight[kSub], waux[kSub], xval[kSub];
    int8_t L[kSub] = {};
    uint8_t signs[4];
    const float max = PrepareSubBlock(true, x + kSub * ib, qw != nullptr ? qw + kSub * ib : nullptr,
                                      sigma2, weight, waux, xval, signs);
    if (max < kGroupMaxEpsIq3Xxs) {
      scales[ib] = 0;
      continue;
    }
    bool on_grid[8] = {true, true, true, true, true, true, true, true};
    const float best_scale = trials(true, index, xval, weight, waux, max, L, on_grid);
    const float scale = Refit(true, index, xval, weight, waux, best_scale, on_grid, L, signs);
    for (int k = 0; k < 8; ++k) {
      q3[8 * ib + k] = static_cast<uint8_t>(index.GridIndex(PointOf(L + 4 * k)));
    }
    signs_scales[ib] = signs[0] | (static_cast<uint32_t>(signs[1]) << 7) |
                       (static_cast<uint32_t>(signs[2]) << 14) |
                       (static_cast<uint32_t>(signs[3]) << 21);
    scales[ib] = scale;
    max_scale = MaxF(max_scale, scale);
  }
  if (max_scale == 0) {  // ggml's !max_scale: the whole block stays zero
    std::memset(out, 0, iq::iq3xxs::kBytes);
    return;
  }
  const float d = max_scale / 31;
  StoreLe16(out + iq::iq3xxs::kD, ToF16(d * 1.0125f));
  const float id = 1 / d;
  for (int ib = 0; ib < 8; ++ib) {
    const int l = ClampInt(gq::NearestInt(0.5f * (id * scales[ib] - 1)), 15);
    signs_scales[ib] |= static_cast<uint32_t>(l) << 28;
    StoreLe32(out + iq::iq3xxs::kSignsScales + 4 * ib, signs_scales[ib]);
  }
}

void QuantizeIq3SBlock(const float* x, const float* qw, uint8_t* out, Iq3TrialsFn trials) {
  const Iq3Index& index = Iq3Index::S();
  std::memset(out, 0, iq::iq3s::kBytes);
  uint8_t* qs = out + iq::iq3s::kQs;
  uint8_t* qh = out + iq::iq3s::kQh;
  uint8_t* signs_out = out + iq::iq3s::kSigns;
  float scales[8];
  float max_scale = 0;
  const float sigma2 = SigmaSquared(x);
  for (int ib = 0; ib < 8; ++ib) {
    float weight[kSub], waux[kSub], xval[kSub];
    int8_t L[kSub] = {};
    uint8_t signs[4];
    const float max = PrepareSubBlock(false, x + kSub * ib, qw != nullptr ? qw + kSub * ib : nullptr,
                                      sigma2, weight, waux, xval, signs);
    if (max == 0) {
      // ggml's `continue` here also skips advancing qs and signs.
      scales[ib] = 0;
      continue;
    }
    bool on_grid[8] = {};
    const float best_scale = trials(false, index, xval, weight, waux, max, L, on_grid);
    const float scale = Refit(false, index, xval, weight, waux, best_scale, on_grid, L, signs);
    for (int k = 0; k < 8; ++k) {
      const int g = index.GridIndex(PointOf(L + 4 * k));
      qs[k] = static_cast<uint8_t>(g & 255);
      qh[ib] = static_cast<uint8_t>(qh[ib] | ((g >> 8) << k));
    }
    qs += 8;
    std::memcpy(signs_out, signs, 4);
    signs_out += 4;
    scales[ib] = scale;
    max_scale = MaxF(max_scale, scale);
  }
  if (max_scale == 0) return;
  const float d = max_scale / 31;
  StoreLe16(out + iq::iq3s::kD, ToF16(d * 1.033f));
  const float id = 1 / d;
  for (int ib = 0; ib < 8; ib += 2) {
    const int l1 = ClampInt(gq::NearestInt(0.5f * (id * scales[ib] - 1)), 15);
    const int l2 = ClampInt(gq::NearestInt(0.5f * (id * scales[ib + 1] - 1)), 15);
    out[iq::iq3s::kScales + ib / 2] = static_cast<uint8_t>(l1 | (l2 << 4));
  }
}

}  // namespace

int Iq3BestNeighbour(const Iq3Index& index, uint32_t u, const float* xval, const float* waux,
                     float scale, int8_t* l) {
  const Iq3Neighbours list = index.NeighboursOf(u);
  float best = FLT_MAX;
  int g = -1;
  for (int c = 0; c < list.n; ++c) {
    float d2 = 0;
    for (int i = 0; i < 4; ++i) {
      const float diff = scale * list.q[i * list.n_pad + c] - xval[i];
      d2 += waux[i] * diff * diff;
    }
    if (d2 < best) {
      best = d2;
      g = list.index[c];
    }
  }
  if (g < 0) g = list.index[0];
  for (int i = 0; i < 4; ++i) l[i] = static_cast<int8_t>(index.Level(g, i));
  return g;
}

float Iq3TrialsRef(bool xxs, const Iq3Index& index, const float* xval, const float* weight,
                   const float* waux, float max, int8_t* L, bool* on_grid) {
  int8_t laux[kSub];
  bool on_grid_aux[8];
  float best = 0;
  float scale = max / (2 * kMaxQ - 1);
  const int n_trials = xxs ? 15 : 9;
  for (int is = -n_trials; is <= n_trials; ++is) {
    const float id = (2 * kMaxQ - 1 + is * 0.2f) / max;
    const float this_scale = 1 / id;
    Levels(id, xval, laux);
    for (int k = 0; k < 8; ++k) {
      const uint32_t u = PointOf(laux + 4 * k);
      on_grid_aux[k] = index.GridIndex(u) >= 0;
      if (!on_grid_aux[k]) {
        Iq3BestNeighbour(index, u, xval + 4 * k, waux + 4 * k, this_scale, laux + 4 * k);
      }
    }
    float sumqx = 0, sumq2 = 0;
    for (int i = 0; i < kSub; ++i) {
      const float w = weight[i];
      const float q = static_cast<float>(2 * laux[i] + 1);
      sumqx += w * xval[i] * q;
      sumq2 += w * q * q;
    }
    if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
      scale = sumqx / sumq2;
      best = scale * sumqx;
      std::memcpy(L, laux, kSub);
      std::memcpy(on_grid, on_grid_aux, sizeof(on_grid_aux));
    }
  }
  return scale;
}

size_t Iq3EncodeBlockBytes(GgmlType type) {
  switch (type) {
    case GgmlType::kIQ3_XXS: return iq::iq3xxs::kBytes;
    case GgmlType::kIQ3_S: return iq::iq3s::kBytes;
    default: return 0;
  }
}

void QuantizeIq3Block(GgmlType type, const float* x, const float* qw, uint8_t* out,
                      Iq3TrialsFn trials) {
  if (type == GgmlType::kIQ3_XXS) {
    QuantizeIq3XxsBlock(x, qw, out, trials);
  } else {
    QuantizeIq3SBlock(x, qw, out, trials);
  }
}

void QuantizeIq3Row(GgmlType type, const float* x, size_t n_elems, uint8_t* out,
                    const float* imatrix) {
  const size_t block_bytes = Iq3EncodeBlockBytes(type);
  for (size_t b = 0; b < n_elems / kQK; ++b, x += kQK, out += block_bytes) {
    QuantizeIq3Block(type, x, imatrix != nullptr ? imatrix + kQK * b : nullptr, out, Iq3TrialsRef);
  }
}

void AddIq3Errors(GgmlType type, const uint8_t* block, const float* x, uint64_t i0,
                  kernels::ErrorSums& errors) {
  float xq[kQK];
  DequantIQuantBlock(static_cast<uint32_t>(type), block, xq);
  for (int k = 0; k < kQK; ++k) kernels::AddError(errors, i0 + k, x[k], xq[k]);
}

uint64_t EncodeGgmlIq3Quant(const kernels::GgmlQuantArgs& a, kernels::ErrorSums* errors) {
  const size_t block_bytes = Iq3EncodeBlockBytes(a.type);
  uint8_t* out = a.out;
  float x[kQK];
  for (uint64_t i = 0; i < a.x.rows * a.x.cols; i += kQK, out += block_bytes) {
    for (int k = 0; k < kQK; ++k) {
      const uint32_t bits = kernels::LoadInputBits(a.x.in, a.x.type, i + k);
      if (!kernels::IsFiniteF32Bits(bits)) return i + k;
      x[k] = std::bit_cast<float>(bits);
    }
    // Importance values are per column: super-block i starts at column
    // i % cols (cols is a multiple of 256).
    QuantizeIq3Block(a.type, x, a.imatrix != nullptr ? a.imatrix + i % a.x.cols : nullptr, out,
                     Iq3TrialsRef);
    if (errors != nullptr) AddIq3Errors(a.type, out, x, i, *errors);
  }
  return kernels::kAllFinite;
}

}  // namespace amn::ref
