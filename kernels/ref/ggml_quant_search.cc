// Scalar scale searches of ggml's K-quants: see ggml_quant_search.h. Each
// loop keeps ggml's operation order; the comments say where that matters.
#include "kernels/ref/ggml_quant_search.h"

#include <algorithm>
#include <cmath>

#include "kernels/ggml_blocks.h"

namespace amn::ref::gq {

int BestIndexInt8(int n, const int8_t* values, float v) {
  if (v <= values[0]) return 0;
  if (v >= values[n - 1]) return n - 1;
  int lo = 0, hi = n - 1;
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    if (v < values[mid]) {
      hi = mid;
    } else {
      lo = mid;
    }
  }
  // Strict <: a tie goes to the upper neighbour.
  return v - values[hi - 1] < values[hi] - v ? hi - 1 : hi;
}

namespace {

// The element of largest |x| (the first one on ties) and that |x|.
struct AbsMax {
  float amax = 0.0f, max = 0.0f;
};
AbsMax FindAbsMax(int n, const float* x) {
  AbsMax r;
  for (int i = 0; i < n; ++i) {
    const float ax = std::fabs(x[i]);
    if (ax > r.amax) {
      r.amax = ax;
      r.max = x[i];
    }
  }
  return r;
}

int ClampSym(int l, int nmax) { return std::max(-nmax, std::min(nmax - 1, l)); }

}  // namespace

float Iq4NlScale(const float* x, const float* weight) {
  const int8_t* values = ggml::kIq4NlValues.data();
  const AbsMax m = FindAbsMax(32, x);
  if (m.amax < kGroupMaxEps) return 0.0f;
  const float max = m.max;
  float d = -max / static_cast<float>(values[0]);
  float id = 1.0f / d;
  float sumqx = 0.0f, sumq2 = 0.0f;
  for (int j = 0; j < 32; ++j) {
    const float q = values[BestIndexInt8(16, values, id * x[j])];
    sumqx += weight[j] * q * x[j];  // ((w * q) * x), left to right
    sumq2 += weight[j] * q * q;
  }
  d = sumq2 > 0.0f ? sumqx / sumq2 : 0.0f;
  float best = d * sumqx;
  for (int itry = -7; itry <= 7; ++itry) {
    id = static_cast<float>(itry + values[0]) / max;
    sumqx = sumq2 = 0.0f;
    for (int j = 0; j < 32; ++j) {
      const float q = values[BestIndexInt8(16, values, id * x[j])];
      sumqx += weight[j] * q * x[j];
      sumq2 += weight[j] * q * q;
    }
    if (sumq2 > 0.0f && sumqx * sumqx > best * sumq2) {
      d = sumqx / sumq2;
      best = d * sumqx;
    }
  }
  return d;
}

float MakeQxQuantsRmse1(int n, int nmax, const float* x, int8_t* L, const float* qw) {
  const AbsMax m = FindAbsMax(n, x);
  if (m.amax < kGroupMaxEps) {
    for (int i = 0; i < n; ++i) L[i] = 0;
    return 0.0f;
  }
  // -nmax is negated as an int, then converted: (float)(-nmax) / max.
  float iscale = static_cast<float>(-nmax) / m.max;
  float sumlx = 0.0f, suml2 = 0.0f;
  for (int i = 0; i < n; ++i) {
    const int l = ClampSym(NearestInt(iscale * x[i]), nmax);
    L[i] = static_cast<int8_t>(l + nmax);
    const float w = qw != nullptr ? qw[i] : x[i] * x[i];
    const float lf = static_cast<float>(l);
    sumlx += w * x[i] * lf;  // ((w * x) * l)
    suml2 += w * lf * lf;    // ((w * l) * l)
  }
  float scale = suml2 != 0.0f ? sumlx / suml2 : 0.0f;
  float best = scale * sumlx;
  for (int is = -9; is <= 9; ++is) {
    if (is == 0) continue;
    // -(nmax + 0.1f * is) / max: the sum in float, negated, then divided.
    iscale = -(static_cast<float>(nmax) + 0.1f * static_cast<float>(is)) / m.max;
    sumlx = suml2 = 0.0f;
    for (int i = 0; i < n; ++i) {
      const float lf = static_cast<float>(ClampSym(NearestInt(iscale * x[i]), nmax));
      const float w = qw != nullptr ? qw[i] : x[i] * x[i];
      sumlx += w * x[i] * lf;
      suml2 += w * lf * lf;
    }
    if (suml2 > 0.0f && sumlx * sumlx > best * suml2) {
      for (int i = 0; i < n; ++i) {
        L[i] = static_cast<int8_t>(nmax + ClampSym(NearestInt(iscale * x[i]), nmax));
      }
      scale = sumlx / suml2;
      best = scale * sumlx;
    }
  }
  return scale;
}

float MakeQ3QuantsRmse(int n, int nmax, const float* x, int8_t* L) {
  const AbsMax m = FindAbsMax(n, x);
  if (m.amax < kGroupMaxEps) {
    for (int i = 0; i < n; ++i) L[i] = 0;
    return 0.0f;
  }
  const float iscale = static_cast<float>(-nmax) / m.max;
  float sumlx = 0.0f, suml2 = 0.0f;
  for (int i = 0; i < n; ++i) {
    const int l = ClampSym(NearestInt(iscale * x[i]), nmax);
    L[i] = static_cast<int8_t>(l);
    const float w = x[i] * x[i];
    sumlx += w * x[i] * static_cast<float>(l);
    suml2 += w * static_cast<float>(l) * static_cast<float>(l);
  }
  // Coordinate descent: each element in turn tries the code that is best
  // with the others fixed; sums are updated in place, so the visiting order
  // (increasing i, at most five sweeps) is part of the result.
  for (int itry = 0; itry < 5; ++itry) {
    int n_changed = 0;
    for (int i = 0; i < n; ++i) {
      const float w = x[i] * x[i];
      const float li = static_cast<float>(L[i]);
      float slx = sumlx - w * x[i] * li;
      if (slx > 0.0f) {
        float sl2 = suml2 - w * li * li;
        const int new_l = ClampSym(NearestInt(x[i] * sl2 / slx), nmax);  // (x * sl2) / slx
        if (new_l != L[i]) {
          const float nl = static_cast<float>(new_l);
          slx += w * x[i] * nl;
          sl2 += w * nl * nl;
          if (sl2 > 0.0f && slx * slx * suml2 > sumlx * sumlx * sl2) {
            L[i] = static_cast<int8_t>(new_l);
            sumlx = slx;
            suml2 = sl2;
            ++n_changed;
          }
        }
      }
    }
    if (n_changed == 0) break;
  }
  for (int i = 0; i < n; ++i) L[i] = static_cast<int8_t>(L[i] + nmax);
  return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

float MakeQkx2Quants(int n, int nmax, const float* x, const float* weights, uint8_t* L,
                     float* the_min, uint8_t* laux, float rmin, float rdelta, int nstep,
                     bool use_mad) {
  float min = x[0], max = x[0];
  float sum_w = weights[0];
  float sum_x = sum_w * x[0];
  for (int i = 1; i < n; ++i) {
    if (x[i] < min) min = x[i];
    if (x[i] > max) max = x[i];
    const float w = weights[i];
    sum_w += w;
    sum_x += w * x[i];
  }
  if (min > 0.0f) min = 0.0f;
  if (max == min) {
    for (int i = 0; i < n; ++i) L[i] = 0;
    *the_min = -min;
    return 0.0f;
  }
  const float nmaxf = static_cast<float>(nmax);
  float iscale = nmaxf / (max - min);
  float scale = 1.0f / iscale;  // ggml's 1/iscale, not (max - min) / nmax
  float best_error = 0.0f;
  for (int i = 0; i < n; ++i) {
    const int l = NearestInt(iscale * (x[i] - min));
    L[i] = static_cast<uint8_t>(std::max(0, std::min(nmax, l)));
    float diff = scale * static_cast<float>(L[i]) + min - x[i];  // ((s * L) + min) - x
    diff = use_mad ? std::fabs(diff) : diff * diff;
    best_error += weights[i] * diff;
  }
  if (nstep < 1) {
    *the_min = -min;
    return scale;
  }
  for (int is = 0; is <= nstep; ++is) {
    iscale = (rmin + rdelta * static_cast<float>(is) + nmaxf) / (max - min);
    float sum_l = 0.0f, sum_l2 = 0.0f, sum_xl = 0.0f;
    for (int i = 0; i < n; ++i) {
      const int l = std::max(0, std::min(nmax, NearestInt(iscale * (x[i] - min))));
      laux[i] = static_cast<uint8_t>(l);
      const float w = weights[i];
      const float lf = static_cast<float>(l);
      sum_l += w * lf;
      sum_l2 += w * lf * lf;     // ((w * l) * l)
      sum_xl += w * lf * x[i];   // ((w * l) * x)
    }
    const float det = sum_w * sum_l2 - sum_l * sum_l;
    if (det > 0.0f) {
      float this_scale = (sum_w * sum_xl - sum_x * sum_l) / det;
      float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / det;
      if (this_min > 0.0f) {
        this_min = 0.0f;
        this_scale = sum_xl / sum_l2;
      }
      float cur_error = 0.0f;
      for (int i = 0; i < n; ++i) {
        float diff = this_scale * static_cast<float>(laux[i]) + this_min - x[i];
        diff = use_mad ? std::fabs(diff) : diff * diff;
        cur_error += weights[i] * diff;
      }
      if (cur_error < best_error) {
        for (int i = 0; i < n; ++i) L[i] = laux[i];
        best_error = cur_error;
        scale = this_scale;
        min = this_min;
      }
    }
  }
  *the_min = -min;
  return scale;
}

float MakeQpQuants(int n, int nmax, const float* x, uint8_t* L, const float* qw) {
  float max = 0.0f;
  for (int i = 0; i < n; ++i) max = std::max(max, x[i]);
  if (max < kGroupMaxEps) {
    for (int i = 0; i < n; ++i) L[i] = 0;
    return 0.0f;
  }
  const float nmaxf = static_cast<float>(nmax);
  float iscale = nmaxf / max;
  // The first codes are not clamped to nmax (x <= max keeps them there).
  for (int i = 0; i < n; ++i) L[i] = static_cast<uint8_t>(NearestInt(iscale * x[i]));
  const float scale = 1.0f / iscale;
  float best_mse = 0.0f;
  for (int i = 0; i < n; ++i) {
    const float diff = x[i] - scale * static_cast<float>(L[i]);
    best_mse += qw[i] * diff * diff;  // ((w * diff) * diff)
  }
  for (int is = -4; is <= 4; ++is) {
    if (is == 0) continue;
    // (0.1f * is + nmax) / max: the product first, then the sum.
    const float iscale_is = (0.1f * static_cast<float>(is) + nmaxf) / max;
    const float scale_is = 1.0f / iscale_is;
    float mse = 0.0f;
    for (int i = 0; i < n; ++i) {
      const int l = std::min(nmax, NearestInt(iscale_is * x[i]));
      const float diff = x[i] - scale_is * static_cast<float>(l);
      mse += qw[i] * diff * diff;
    }
    if (mse < best_mse) {
      best_mse = mse;
      iscale = iscale_is;
    }
  }
  float sumlx = 0.0f, suml2 = 0.0f;
  for (int i = 0; i < n; ++i) {
    const int l = std::min(nmax, NearestInt(iscale * x[i]));
    L[i] = static_cast<uint8_t>(l);
    const float lf = static_cast<float>(l);
    sumlx += qw[i] * x[i] * lf;  // ((w * x) * l)
    suml2 += qw[i] * lf * lf;    // ((w * l) * l)
  }
  // Coordinate descent as in MakeQ3QuantsRmse, but codes are the uint8_t
  // L[i] (read back as stored) and both partial sums must be positive.
  for (int itry = 0; itry < 5; ++itry) {
    int n_changed = 0;
    for (int i = 0; i < n; ++i) {
      const float w = qw[i];
      const float li = static_cast<float>(L[i]);
      float slx = sumlx - w * x[i] * li;
      float sl2 = suml2 - w * li * li;
      if (slx > 0.0f && sl2 > 0.0f) {
        const int new_l = std::min(nmax, NearestInt(x[i] * sl2 / slx));  // (x * sl2) / slx
        if (new_l != L[i]) {
          const float nl = static_cast<float>(new_l);
          slx += w * x[i] * nl;
          sl2 += w * nl * nl;
          if (slx * slx * suml2 > sumlx * sumlx * sl2) {
            L[i] = static_cast<uint8_t>(new_l);
            sumlx = slx;
            suml2 = sl2;
            ++n_changed;
          }
        }
      }
    }
    if (n_changed == 0) break;
  }
  return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

}  // namespace amn::ref::gq
