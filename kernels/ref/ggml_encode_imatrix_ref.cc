// Scalar reference of the ggml simple-type encoders with an importance
// matrix (see the header).
#include "kernels/ref/ggml_encode_imatrix_ref.h"

#include <bit>
#include <cmath>
#include <cstring>

#include "kernels/ggml_blocks.h"
#include "kernels/ref/float_convert_ref.h"
#include "kernels/ref/ggml_encode_ref.h"
#include "kernels/ref/ggml_quant_search.h"

namespace amn::ref {

namespace {

constexpr size_t kQK = 32;

void StoreF16(float f, uint8_t* p) {
  const uint16_t h = F32BitsToF16(std::bit_cast<uint32_t>(f));
  p[0] = static_cast<uint8_t>(h);
  p[1] = static_cast<uint8_t>(h >> 8);
}

// The searches are ggml's make_qx_quants (rmse_type 1) and make_qkx3_quants
// with weights, shared with the K-quants (kernels/ref/ggml_quant_search.h).
float MakeQxQuants(int nmax, const float* x, const float* w, uint8_t* L) {
  int8_t codes[kQK];
  const float scale = gq::MakeQxQuantsRmse1(static_cast<int>(kQK), nmax, x, codes, w);
  std::memcpy(L, codes, kQK);  // in [0, 2 nmax): the same bytes unsigned
  return scale;
}

// Returns the scale; *min_out = the (<= 0) min ggml stores as m.
float MakeQkx3Quants(int nmax, const float* x, const float* w, uint8_t* L, float* min_out) {
  uint8_t laux[kQK];
  float the_min = 0.0f;
  const float scale = gq::MakeQkx2Quants(static_cast<int>(kQK), nmax, x, w, L, &the_min, laux,
                                         -0.9f, 0.05f, 36, /*use_mad=*/false);
  *min_out = -the_min;
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
    case GgmlType::kNVFP4: case GgmlType::kQ1_0: case GgmlType::kQ2_0:
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
