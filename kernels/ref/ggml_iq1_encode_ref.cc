// Scalar IQ1 encoders in ggml's order: see ggml_iq1_encode_ref.h.
#include "kernels/ref/ggml_iq1_encode_ref.h"

#include <algorithm>
#include <cfloat>
#include <span>
#include <cmath>
#include <cstring>
#include <numeric>
#include <vector>

#include "kernels/ref/ggml_iq2_grid_index.h"
#include "kernels/ref/ggml_iq_encode_common.h"
#include "kernels/ref/ggml_quant_search.h"

namespace amn::ref {
namespace {

using gq::NearestInt;
using iq2::GridIndex;
using iqe::CMax;
using iqe::Clamp;
using iqe::kQK;

constexpr float kDelta = 0.125f;  // ggml IQ1S_DELTA, IQ1M_DELTA
constexpr float kXp[3] = {-1 + kDelta, kDelta, 1 + kDelta};
constexpr float kXm[3] = {-1 - kDelta, -kDelta, 1 - kDelta};
constexpr float kEpsIq1S = 1e-12f;  // GROUP_MAX_EPS_IQ1_S
constexpr float kEpsIq1M = 1e-7f;   // GROUP_MAX_EPS_IQ1_M

// Indices 0 .. n-1 ordered by x, ties in index order (a stable sort, as
// glibc's merge-sort qsort leaves ggml's (value, index) pairs).
void SortedOrder(const float* x, int n, int* idx) {
  std::iota(idx, idx + n, 0);
  std::stable_sort(idx, idx + n, [x](int a, int b) { return x[a] < x[b]; });
}

// The IQ1 grid as floats g + delta for each delta sign (built once).
const float* Iq1Table(const float* xg) {
  static const std::vector<float> plus = iq2::GridTable(iq2::GetGridIndex(iq2::GridKind::kIq1), kXp);
  static const std::vector<float> minus =
      iq2::GridTable(iq2::GetGridIndex(iq2::GridKind::kIq1), kXm);
  return xg == kXp ? plus.data() : minus.data();
}

// ggml iq1_find_best_neighbour2: the listed neighbour with the least
// sum w_i (scale xg[level_i] - x_i)^2 (first on ties); its levels into L.
int BestNeighbour2(const GridIndex& grid, uint32_t u, const float* xb, const float* weight,
                   float scale, const float* xg, int8_t* L, iq2::NeighbourScoreFn score) {
  const std::span<const uint16_t> list = grid.Neighbours(u);
  float d2[2048];
  score(Iq1Table(xg), list.data(), list.size(), xb, weight, scale, d2);
  const int j = iq2::FirstLeast(d2, list.size());
  // With no distance below FLT_MAX ggml scans the whole grid, reading its
  // input out of bounds (x indexed by the grid index); reached only when
  // every distance overflows. The first neighbour keeps this defined.
  const int best_g = list[j < 0 ? 0 : j];
  const uint8_t* pg = grid.Point(best_g);
  for (int i = 0; i < 8; ++i) L[i] = static_cast<int8_t>((pg[i] - 1) / 2);
  return best_g;
}

uint32_t KeyOf(const int8_t* L) {
  uint32_t u = 0;
  for (int i = 0; i < 8; ++i) u |= static_cast<uint32_t>(L[i]) << (2 * i);
  return u;
}

// Levels of a sub-block from the best split of the sorted order.
void SplitLevels(const int* idx, int n, int i1, int i2, int8_t* L) {
  for (int j = 0; j < i1; ++j) L[idx[j]] = 0;
  for (int j = i1; j < i2; ++j) L[idx[j]] = 1;
  for (int j = i2; j < n; ++j) L[idx[j]] = 2;
}

}  // namespace

void QuantizeIq1SBlock(const float* xbl, const float* qwbl, uint8_t* out,
                       iq2::NeighbourScoreFn score) {
  constexpr int kBs = 32;
  const GridIndex& grid = iq2::GetGridIndex(iq2::GridKind::kIq1);
  std::memset(out, 0, 50);
  uint8_t* qs = out + 2;
  uint16_t qh[8] = {};
  float scales[8];
  int shifts[8];
  float max_scale = 0.0f;
  const float sigma2 = 2 * iqe::SumSquares(xbl) / kQK;
  for (int ib = 0; ib < 8; ++ib) {
    const float* xb = xbl + kBs * ib;
    float weight[kBs];
    for (int i = 0; i < kBs; ++i) {
      const float q = qwbl != nullptr ? qwbl[kBs * ib + i] : 1.0f;
      weight[i] = q * std::sqrt(sigma2 + xb[i] * xb[i]);
    }
    float max = std::fabs(xb[0]);
    for (int i = 1; i < kBs; ++i) max = CMax(max, std::fabs(xb[i]));
    if (max < kEpsIq1S) {
      scales[ib] = 0.0f;
      shifts[ib] = 1;
      continue;
    }
    int idx[kBs];
    SortedOrder(xb, kBs, idx);
    float sumx[kBs + 1], sumw[kBs + 1];
    sumx[0] = sumw[0] = 0.0f;
    for (int j = 0; j < kBs; ++j) {
      const int i = idx[j];
      sumx[j + 1] = sumx[j] + weight[i] * xb[i];
      sumw[j + 1] = sumw[j] + weight[i];
    }
    float best_score = -FLT_MAX, scale = max;
    int besti1 = -1, besti2 = -1, best_shift = 0;
    for (int i1 = 0; i1 <= kBs; ++i1) {
      for (int i2 = i1; i2 <= kBs; ++i2) {
        for (int shift : {1, -1}) {
          const float* xx = shift == 1 ? kXp : kXm;
          const float sumqx = (sumx[i1] - sumx[0]) * xx[0] + (sumx[i2] - sumx[i1]) * xx[1] +
                              (sumx[kBs] - sumx[i2]) * xx[2];
          const float sumq2 = (sumw[i1] - sumw[0]) * xx[0] * xx[0] +
                              (sumw[i2] - sumw[i1]) * xx[1] * xx[1] +
                              (sumw[kBs] - sumw[i2]) * xx[2] * xx[2];
          if (sumq2 > 0 && sumqx * sumqx > best_score * sumq2) {
            scale = sumqx / sumq2;
            best_score = scale * sumqx;
            besti1 = i1;
            besti2 = i2;
            best_shift = shift;
          }
        }
      }
    }
    if (besti1 < 0 || besti2 < 0 || best_shift == 0) {
      scales[ib] = 0.0f;
      shifts[ib] = 1;
      continue;
    }
    int8_t L[kBs];
    SplitLevels(idx, kBs, besti1, besti2, L);
    if (scale < 0) {
      for (int j = 0; j < kBs; ++j) L[j] = static_cast<int8_t>(2 - L[j]);
      scale = -scale;
      best_shift = -best_shift;
    }
    bool all_on_grid = true;
    const float* xx = best_shift == 1 ? kXp : kXm;
    int index[4];
    for (int k = 0; k < 4; ++k) {
      const uint32_t u = KeyOf(L + 8 * k);
      int g = grid.Map(u);
      if (g < 0) {
        all_on_grid = false;
        g = BestNeighbour2(grid, u, xb + 8 * k, weight + 8 * k, scale, xx, L + 8 * k, score);
      }
      index[k] = g;
    }
    if (!all_on_grid) {
      float sumqx = 0.0f, sumq2 = 0.0f;
      for (int k = 0; k < 4; ++k) {
        const uint8_t* pg = grid.Point(index[k]);
        for (int j = 0; j < 8; ++j) {
          const float w = weight[8 * k + j];
          const float q = xx[(pg[j] - 1) / 2];
          sumqx += w * q * xb[8 * k + j];
          sumq2 += w * q * q;
        }
      }
      if (sumqx > 0 && sumq2 > 0) scale = sumqx / sumq2;
    }
    uint16_t h = 0;
    for (int k = 0; k < 4; ++k) {
      qs[4 * ib + k] = static_cast<uint8_t>(index[k] & 255);
      h = static_cast<uint16_t>(h | ((index[k] >> 8) << (3 * k)));
    }
    qh[ib] = h;
    scales[ib] = scale;
    shifts[ib] = best_shift;
    max_scale = CMax(max_scale, scale);
  }
  if (max_scale == 0.0f) {
    // ggml writes the group indices before it knows; d = 0 keeps them.
    for (int ib = 0; ib < 8; ++ib) iqe::StoreLe16(out + 34 + 2 * ib, qh[ib]);
    return;
  }
  const float d = max_scale / 15;
  iqe::StoreLe16(out, iqe::ToF16(d * 1.125f));
  const float id = 1.0f / d;
  for (int ib = 0; ib < 8; ++ib) {
    int l = Clamp(NearestInt(0.5f * (id * scales[ib] - 1.0f)), 0, 7);
    if (shifts[ib] == -1) l |= 8;
    iqe::StoreLe16(out + 34 + 2 * ib, static_cast<uint16_t>(qh[ib] | (l << 12)));
  }
}

void QuantizeIq1MBlock(const float* xbl, const float* qwbl, uint8_t* out,
                       iq2::NeighbourScoreFn score) {
  constexpr int kBs = 16;
  constexpr uint8_t kMasks[4] = {0x00, 0x80, 0x08, 0x88};
  const GridIndex& grid = iq2::GetGridIndex(iq2::GridKind::kIq1);
  std::memset(out, 0, 56);
  uint8_t* qs = out;
  uint8_t* qh = out + 32;
  float scales[16];
  int shifts[16];
  float max_scale = 0.0f;
  const float sigma2 = 2 * iqe::SumSquares(xbl) / kQK;
  auto weights = [&](const float* xb, int ib, float* weight) {
    for (int i = 0; i < kBs; ++i) {
      weight[i] = qwbl != nullptr ? qwbl[kBs * ib + i] * std::sqrt(sigma2 + xb[i] * xb[i])
                                  : xb[i] * xb[i];
    }
  };
  // The delta table of group k under shift code s (0: +,+ 1: +,- 2: -,+ 3: -,-).
  auto table = [](int s, int k) -> const float* {
    if (k == 0) return s < 2 ? kXp : kXm;
    return s % 2 == 0 ? kXp : kXm;
  };
  for (int ib = 0; ib < 16; ++ib) {
    const float* xb = xbl + kBs * ib;
    float weight[kBs];
    weights(xb, ib, weight);
    float max = std::fabs(xb[0]);
    for (int i = 1; i < kBs; ++i) max = CMax(max, std::fabs(xb[i]));
    if (max < kEpsIq1M) {
      scales[ib] = 0.0f;
      shifts[ib] = 0;
      continue;
    }
    int idx[kBs];
    SortedOrder(xb, kBs, idx);
    float best_score = -FLT_MAX, scale = max;
    int besti1 = -1, besti2 = -1, best_k = -1;
    for (int i1 = 0; i1 <= kBs; ++i1) {
      for (int i2 = i1; i2 <= kBs; ++i2) {
        // Recomputed from scratch per split, in sorted order, as ggml does:
        // sum w x_lev x and sum w x_lev^2 for the four delta choices.
        float sumqx[4] = {}, sumq2[4] = {};
        for (int j = 0; j < kBs; ++j) {
          const int lev = j < i1 ? 0 : j < i2 ? 1 : 2;
          const int i = idx[j];
          const float w = weight[i];
          const float p = kXp[lev], m = kXm[lev];
          const float wpx = w * p * xb[i], wmx = w * m * xb[i];
          const float wpp = w * p * p, wmm = w * m * m;
          if (i < kBs / 2) {
            sumqx[0] += wpx; sumqx[1] += wpx; sumqx[2] += wmx; sumqx[3] += wmx;
            sumq2[0] += wpp; sumq2[1] += wpp; sumq2[2] += wmm; sumq2[3] += wmm;
          } else {
            sumqx[0] += wpx; sumqx[2] += wpx; sumqx[1] += wmx; sumqx[3] += wmx;
            sumq2[0] += wpp; sumq2[2] += wpp; sumq2[1] += wmm; sumq2[3] += wmm;
          }
        }
        for (int k = 0; k < 4; ++k) {
          if (sumq2[k] > 0 && sumqx[k] * sumqx[k] > best_score * sumq2[k]) {
            scale = sumqx[k] / sumq2[k];
            best_score = scale * sumqx[k];
            besti1 = i1;
            besti2 = i2;
            best_k = k;
          }
        }
      }
    }
    if (besti1 < 0 || besti2 < 0 || best_k < 0) {
      scales[ib] = 0.0f;
      shifts[ib] = 0;
      continue;
    }
    int8_t L[kBs];
    SplitLevels(idx, kBs, besti1, besti2, L);
    if (scale < 0) {
      for (int j = 0; j < kBs; ++j) L[j] = static_cast<int8_t>(2 - L[j]);
      scale = -scale;
      best_k = 3 - best_k;
    }
    bool all_on_grid = true;
    int index[2];
    for (int k = 0; k < 2; ++k) {
      const uint32_t u = KeyOf(L + 8 * k);
      int g = grid.Map(u);
      if (g < 0) {
        all_on_grid = false;
        g = BestNeighbour2(grid, u, xb + 8 * k, weight + 8 * k, scale, table(best_k, k),
                           L + 8 * k, score);
      }
      index[k] = g;
    }
    if (!all_on_grid) {
      float sumqx = 0.0f, sumq2 = 0.0f;
      for (int k = 0; k < 2; ++k) {
        const float* xx = table(best_k, k);
        const uint8_t* pg = grid.Point(index[k]);
        for (int j = 0; j < 8; ++j) {
          const float w = weight[8 * k + j];
          const float q = xx[(pg[j] - 1) / 2];
          sumqx += w * q * xb[8 * k + j];
          sumq2 += w * q * q;
        }
      }
      if (sumqx > 0 && sumq2 > 0) scale = sumqx / sumq2;
    }
    qs[2 * ib] = static_cast<uint8_t>(index[0] & 255);
    qs[2 * ib + 1] = static_cast<uint8_t>(index[1] & 255);
    qh[ib] = static_cast<uint8_t>((index[0] >> 8) | ((index[1] >> 8) << 4));
    scales[ib] = scale;
    shifts[ib] = best_k;
    max_scale = CMax(max_scale, scale);
  }
  if (max_scale == 0.0f) return;
  uint16_t sc[4] = {};
  float d = max_scale / 15;
  const float id = 1.0f / d;
  float sumqx = 0.0f, sumq2 = 0.0f;
  for (int ib = 0; ib < 16; ++ib) {
    const int l = Clamp(NearestInt(0.5f * (id * scales[ib] - 1.0f)), 0, 7);
    sc[ib / 4] = static_cast<uint16_t>(sc[ib / 4] | (l << (3 * (ib % 4))));
    qh[ib] = static_cast<uint8_t>(qh[ib] | kMasks[shifts[ib]]);
    const float* xb = xbl + kBs * ib;
    float weight[kBs];
    weights(xb, ib, weight);
    // The super-block scale refit: every group's grid point times its
    // sub-block code 2l + 1.
    for (int k = 0; k < 2; ++k) {
      const float* xx = table(shifts[ib], k);
      const int g = qs[2 * ib + k] + ((qh[ib] << (8 - 4 * k)) & 0x700);
      const uint8_t* pg = grid.Point(g);
      for (int j = 0; j < 8; ++j) {
        const float w = weight[8 * k + j];
        const float q = xx[(pg[j] - 1) / 2] * static_cast<float>(2 * l + 1);
        sumqx += w * q * xb[8 * k + j];
        sumq2 += w * q * q;
      }
    }
  }
  if (sumq2 > 0) d = sumqx / sumq2;
  const uint16_t s = iqe::ToF16(d * 1.1125f);
  sc[0] = static_cast<uint16_t>(sc[0] | ((s & 0x000f) << 12));
  sc[1] = static_cast<uint16_t>(sc[1] | ((s & 0x00f0) << 8));
  sc[2] = static_cast<uint16_t>(sc[2] | ((s & 0x0f00) << 4));
  sc[3] = static_cast<uint16_t>(sc[3] | (s & 0xf000));
  for (int j = 0; j < 4; ++j) iqe::StoreLe16(out + 48 + 2 * j, sc[j]);
}

}  // namespace amn::ref
