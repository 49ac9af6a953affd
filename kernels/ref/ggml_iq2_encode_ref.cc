// Scalar IQ2 encoders in ggml's order: see ggml_iq2_encode_ref.h.
#include "kernels/ref/ggml_iq2_encode_ref.h"

#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/ref/ggml_iq2_grid_index.h"
#include "kernels/ref/ggml_iq_encode_common.h"
#include "kernels/ref/ggml_quant_search.h"

namespace amn::ref {
namespace {

using gq::NearestInt;
using iq2::GridIndex;
using iq2::GridKind;
using iqe::CMax;
using iqe::Clamp;
using iqe::kQK;

constexpr int kMaxQ = 3;  // 2-bit levels 0 .. kMaxQ - 1, values 2l + 1
constexpr float kEpsIq2S = 1e-8f;  // ggml GROUP_MAX_EPS_IQ2_S

// The sub-block's weights: qw_i sqrt(sigma2 + x_i^2), or (IQ2_S without
// importance) sigma2 / 4 + x_i^2; and their square roots, which weight
// the neighbour search.
void Weights(const float* xb, const float* qw, float sigma2, int n, bool no_imatrix_form,
             float* weight, float* waux) {
  for (int i = 0; i < n; ++i) {
    if (no_imatrix_form) {
      weight[i] = 0.25f * sigma2 + xb[i] * xb[i];
    } else {
      const float q = qw != nullptr ? qw[i] : 1.0f;
      weight[i] = q * std::sqrt(sigma2 + xb[i] * xb[i]);
    }
  }
  for (int i = 0; i < n; ++i) waux[i] = std::sqrt(weight[i]);
}

// |x| of a group of 8 into xval and its sign bits (bit i: x_i < 0; -0 counts
// as positive). With `even`, an odd count of negatives is made even by
// giving the element of least w x^2 (the first on ties) its sign back.
uint8_t FoldSigns(const float* xb, const float* weight, bool even, float* xval) {
  int nflip = 0;
  uint8_t s = 0;
  for (int i = 0; i < 8; ++i) {
    if (xb[i] >= 0) {
      xval[i] = xb[i];
    } else {
      xval[i] = -xb[i];
      ++nflip;
      s = static_cast<uint8_t>(s | (1u << i));
    }
  }
  if (even && nflip % 2 != 0) {
    int imin = 0;
    float min = weight[0] * xb[0] * xb[0];
    for (int i = 1; i < 8; ++i) {
      const float ax = weight[i] * xb[i] * xb[i];
      if (ax < min) {
        min = ax;
        imin = i;
      }
    }
    xval[imin] = -xval[imin];
    s = static_cast<uint8_t>(s ^ (1u << imin));
  }
  return s;
}

// The group's levels clamp(nearest_int((id x - 1) / 2), 0, 2) into L and
// their key u.
uint32_t RoundGroup(float id, const float* xval, int8_t* L) {
  uint32_t u = 0;
  for (int i = 0; i < 8; ++i) {
    const int l = Clamp(NearestInt(0.5f * (id * xval[i] - 1.0f)), 0, kMaxQ - 1);
    L[i] = static_cast<int8_t>(l);
    u |= static_cast<uint32_t>(l) << (2 * i);
  }
  return u;
}

// The grid as floats 2l + 1, for the scoring (built once per kind).
const float* Iq2Table(GridKind kind) {
  static constexpr float kQ[3] = {1.0f, 3.0f, 5.0f};
  static const std::vector<float> xxs = iq2::GridTable(iq2::GetGridIndex(GridKind::kIq2Xxs), kQ);
  static const std::vector<float> xs = iq2::GridTable(iq2::GetGridIndex(GridKind::kIq2Xs), kQ);
  static const std::vector<float> s = iq2::GridTable(iq2::GetGridIndex(GridKind::kIq2S), kQ);
  return kind == GridKind::kIq2Xxs ? xxs.data() : kind == GridKind::kIq2Xs ? xs.data() : s.data();
}

// What the searches share: the grid, its float table and the scorer.
struct Grid {
  const GridIndex& index;
  const float* table;
  iq2::NeighbourScoreFn score;
};

// ggml iq2_find_best_neighbour: the listed neighbour of u with the least
// sum waux_i (scale g_i - xval_i)^2 (the first on ties); its levels into L.
int BestNeighbour(const Grid& grid, uint32_t u, const float* xval, const float* waux,
                  float scale, int8_t* L) {
  const std::span<const uint16_t> list = grid.index.Neighbours(u);
  float d2[2048];
  grid.score(grid.table, list.data(), list.size(), xval, waux, scale, d2);
  const int j = iq2::FirstLeast(d2, list.size());
  // ggml aborts when no distance is below FLT_MAX (only for inputs whose
  // squares overflow); the first neighbour keeps this defined.
  const int best = list[j < 0 ? 0 : j];
  const uint8_t* pg = grid.index.Point(best);
  for (int i = 0; i < 8; ++i) L[i] = static_cast<int8_t>((pg[i] - 1) / 2);
  return best;
}

// Snaps group k of L (levels already rounded with key u) to the grid.
void Snap(const Grid& grid, uint32_t u, const float* xval, const float* waux, float scale,
          int8_t* L) {
  if (grid.index.Map(u) < 0) BestNeighbour(grid, u, xval, waux, scale, L);
}

// sum w x q and sum w q^2 with q = 2L + 1, in element order.
void LeastSquares(int n, const float* weight, const float* xval, const int8_t* L, float& sumqx,
                  float& sumq2) {
  sumqx = 0.0f;
  sumq2 = 0.0f;
  for (int i = 0; i < n; ++i) {
    const float w = weight[i];
    const float q = static_cast<float>(2 * L[i] + 1);
    sumqx += w * xval[i] * q;
    sumq2 += w * q * q;
  }
}

uint32_t KeyOf(const int8_t* L) {
  uint32_t u = 0;
  for (int i = 0; i < 8; ++i) u |= static_cast<uint32_t>(L[i]) << (2 * i);
  return u;
}

// The 5-bit-free part of IQ2_XS and IQ2_S: one 16-element sub-block's scale
// search (19 trial scales (5 + 0.1 is) / max), then the off-grid groups of
// the winner re-rounded with its scale. L: the levels (zero when no trial
// wins). Returns the scale (may be negative; the caller flips signs).
float Search16(const Grid& grid, const float* xval, const float* weight, const float* waux,
               float max, int8_t* L) {
  int8_t Laux[16];
  bool on_grid[2] = {true, true}, on_grid_aux[2];
  float best = 0.0f;
  float scale = max / (2 * kMaxQ - 1);
  for (int is = -9; is <= 9; ++is) {
    const float id = (static_cast<float>(2 * kMaxQ - 1) + static_cast<float>(is) * 0.1f) / max;
    const float this_scale = 1.0f / id;
    for (int k = 0; k < 2; ++k) {
      const uint32_t u = RoundGroup(id, xval + 8 * k, Laux + 8 * k);
      on_grid_aux[k] = grid.index.Map(u) >= 0;
      Snap(grid, u, xval + 8 * k, waux + 8 * k, this_scale, Laux + 8 * k);
    }
    float sumqx, sumq2;
    LeastSquares(16, weight, xval, Laux, sumqx, sumq2);
    if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
      scale = sumqx / sumq2;
      best = scale * sumqx;
      std::memcpy(L, Laux, 16);
      on_grid[0] = on_grid_aux[0];
      on_grid[1] = on_grid_aux[1];
    }
  }
  if ((!on_grid[0] || !on_grid[1]) && scale > 0) {
    const float id = 1.0f / scale;
    for (int k = 0; k < 2; ++k) {
      if (on_grid[k]) continue;
      const uint32_t u = RoundGroup(id, xval + 8 * k, L + 8 * k);
      Snap(grid, u, xval + 8 * k, waux + 8 * k, scale, L + 8 * k);
    }
    float sumqx, sumq2;
    LeastSquares(16, weight, xval, L, sumqx, sumq2);
    if (sumq2 > 0) scale = sumqx / sumq2;
  }
  return scale;
}

// The 4-bit sub-block scale code of ggml: clamp(nearest_int((id s - 1) / 2), 0, 15).
int ScaleCode(float id, float s) { return Clamp(NearestInt(0.5f * (id * s - 1.0f)), 0, 15); }

}  // namespace

void QuantizeIq2XxsBlock(const float* xbl, const float* qwbl, uint8_t* out,
                         iq2::NeighbourScoreFn score) {
  const Grid grid{iq2::GetGridIndex(GridKind::kIq2Xxs), Iq2Table(GridKind::kIq2Xxs), score};
  uint32_t q2[16] = {};
  float scales[8];
  float max_scale = 0.0f;
  const float sigma2 = iqe::SumSquares(xbl) / kQK;
  for (int ib = 0; ib < 8; ++ib) {
    const float* xb = xbl + 32 * ib;
    float weight[32], waux[32], xval[32];
    // L stays all zero (an on-grid key) when no trial wins and the scale is
    // NaN: squares that overflow (|x| >= ~1.8e19) make every weight Inf.
    // ggml keeps make_qp_quants' levels there and then aborts (its grid
    // lookup or GGML_ASSERT(scale >= 0)); uninitialized, L read the grid
    // map out of bounds (found by kernels_diff_fuzz).
    int8_t L[32] = {}, Laux[32];
    uint8_t signs[4];
    Weights(xb, qwbl != nullptr ? qwbl + 32 * ib : nullptr, sigma2, 32, false, weight, waux);
    for (int k = 0; k < 4; ++k) {
      signs[k] = FoldSigns(xb + 8 * k, weight + 8 * k, true, xval + 8 * k) & 127;
    }
    float max = xval[0];
    for (int i = 1; i < 32; ++i) max = CMax(max, xval[i]);
    if (max < gq::kGroupMaxEps) {
      scales[ib] = 0.0f;
      continue;
    }
    // The starting scale: make_qp_quants with 4 levels (its codes unused).
    uint8_t Lqp[32];
    float scale = gq::MakeQpQuants(32, kMaxQ + 1, xval, Lqp, weight);
    const float eff_max = scale * kMaxQ;
    if (eff_max <= 0) {
      scales[ib] = 0.0f;
      continue;
    }
    float best = 0.0f;
    for (int is = -6; is <= 6; ++is) {
      const float id =
          (static_cast<float>(2 * kMaxQ - 1) + static_cast<float>(is) * 0.1f) / eff_max;
      const float this_scale = 1.0f / id;
      for (int k = 0; k < 4; ++k) {
        const uint32_t u = RoundGroup(id, xval + 8 * k, Laux + 8 * k);
        Snap(grid, u, xval + 8 * k, waux + 8 * k, this_scale, Laux + 8 * k);
      }
      float sumqx, sumq2;
      LeastSquares(32, weight, xval, Laux, sumqx, sumq2);
      if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
        scale = sumqx / sumq2;
        best = scale * sumqx;
        std::memcpy(L, Laux, 32);
      }
    }
    if (scale > 0) {
      // Every group re-rounded with the winning scale (on-grid or not).
      const float id = 1.0f / scale;
      for (int k = 0; k < 4; ++k) {
        const uint32_t u = RoundGroup(id, xval + 8 * k, L + 8 * k);
        Snap(grid, u, xval + 8 * k, waux + 8 * k, scale, L + 8 * k);
      }
      float sumqx, sumq2;
      LeastSquares(32, weight, xval, L, sumqx, sumq2);
      if (sumq2 > 0) scale = sumqx / sumq2;
    }
    if (scale < 0) {
      scale = -scale;
      for (int k = 0; k < 4; ++k) signs[k] = static_cast<uint8_t>(~signs[k] & 127);
    }
    for (int k = 0; k < 4; ++k) {
      const int g = grid.index.Map(KeyOf(L + 8 * k));
      q2[2 * ib] |= static_cast<uint32_t>(g) << (8 * k);
      q2[2 * ib + 1] |= static_cast<uint32_t>(signs[k]) << (7 * k);
    }
    scales[ib] = scale;
    max_scale = CMax(max_scale, scale);
  }
  std::memset(out, 0, 66);
  if (max_scale == 0.0f) return;
  const float d = max_scale / 31;
  iqe::StoreLe16(out, iqe::ToF16(d));
  const float id = 1.0f / d;
  for (int ib = 0; ib < 8; ++ib) {
    q2[2 * ib + 1] |= static_cast<uint32_t>(ScaleCode(id, scales[ib])) << 28;
  }
  for (int j = 0; j < 16; ++j) {
    for (int b = 0; b < 4; ++b) out[2 + 4 * j + b] = static_cast<uint8_t>(q2[j] >> (8 * b));
  }
}

namespace {

// IQ2_XS and IQ2_S: sixteen 16-element sub-blocks of the shared search;
// they differ in the sign folding, the weights without importance, the
// empty-group threshold, the packing and d's fudge factor.
void QuantizeIq2Sixteen(bool is_s, const float* xbl, const float* qwbl, uint8_t* out,
                        iq2::NeighbourScoreFn score) {
  const GridKind kind = is_s ? GridKind::kIq2S : GridKind::kIq2Xs;
  const Grid grid{iq2::GetGridIndex(kind), Iq2Table(kind), score};
  const size_t bytes = is_s ? 82 : 74;
  std::memset(out, 0, bytes);
  float scales[16];
  float max_scale = 0.0f;
  const float sumx2 = iqe::SumSquares(xbl);
  const float sigma2 = is_s ? 2 * sumx2 / kQK : sumx2 / kQK;
  for (int ib = 0; ib < 16; ++ib) {
    const float* xb = xbl + 16 * ib;
    float weight[16], waux[16], xval[16];
    int8_t L[16] = {};
    uint8_t signs[2];
    Weights(xb, qwbl != nullptr ? qwbl + 16 * ib : nullptr, sigma2, 16, is_s && qwbl == nullptr,
            weight, waux);
    for (int k = 0; k < 2; ++k) {
      const uint8_t s = FoldSigns(xb + 8 * k, weight + 8 * k, !is_s, xval + 8 * k);
      signs[k] = is_s ? s : static_cast<uint8_t>(s & 127);
    }
    float max = xval[0];
    for (int i = 1; i < 16; ++i) max = CMax(max, xval[i]);
    if (max < (is_s ? kEpsIq2S : gq::kGroupMaxEps)) {
      scales[ib] = 0.0f;
      continue;
    }
    float scale = Search16(grid, xval, weight, waux, max, L);
    if (scale < 0) {
      scale = -scale;
      for (int k = 0; k < 2; ++k) {
        signs[k] = static_cast<uint8_t>(is_s ? ~signs[k] : ~signs[k] & 127);
      }
    }
    for (int k = 0; k < 2; ++k) {
      const int g = grid.index.Map(KeyOf(L + 8 * k));
      const int i8 = 2 * ib + k;
      if (is_s) {
        out[2 + i8] = static_cast<uint8_t>(g & 255);
        out[66 + i8 / 4] = static_cast<uint8_t>(out[66 + i8 / 4] | ((g >> 8) << (2 * (i8 % 4))));
        out[2 + 32 + i8] = signs[k];
      } else {
        iqe::StoreLe16(out + 2 + 2 * i8, static_cast<uint16_t>(g | (signs[k] << 9)));
      }
    }
    scales[ib] = scale;
    max_scale = CMax(max_scale, scale);
  }
  if (max_scale == 0.0f) {
    // IQ2_XS zeroes its codes then; IQ2_S keeps them (ggml does both).
    if (!is_s) std::memset(out, 0, bytes);
    return;
  }
  const float d = max_scale / 31;
  iqe::StoreLe16(out, iqe::ToF16(is_s ? d * 0.9875f : d));
  const float id = 1.0f / d;
  uint8_t* sc = out + (is_s ? 74 : 66);
  for (int ib = 0; ib < 16; ++ib) {
    const int l = ScaleCode(id, scales[ib]);
    sc[ib / 2] = static_cast<uint8_t>(ib % 2 == 0 ? l : sc[ib / 2] | (l << 4));
  }
}

}  // namespace

void QuantizeIq2XsBlock(const float* x, const float* qw, uint8_t* out,
                        iq2::NeighbourScoreFn score) {
  QuantizeIq2Sixteen(false, x, qw, out, score);
}

void QuantizeIq2SBlock(const float* x, const float* qw, uint8_t* out,
                       iq2::NeighbourScoreFn score) {
  QuantizeIq2Sixteen(true, x, qw, out, score);
}

}  // namespace amn::ref
