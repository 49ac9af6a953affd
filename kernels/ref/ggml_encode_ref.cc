// Scalar reference of the ggml simple-type encoders (see the header).
#include "kernels/ref/ggml_encode_ref.h"

#include <bit>
#include <cfloat>
#include <cmath>
#include <cstring>

#include "kernels/ggml_blocks.h"
#include "kernels/ggml_kquant_blocks.h"
#include "kernels/ref/float_convert_ref.h"
#include "kernels/ref/ggml_quant_search.h"
#include "kernels/ref/ggml_encode_imatrix_ref.h"
#include "kernels/ref/ggml_kquant_ref.h"
#include "kernels/ref/ggml_legacy_ref.h"

namespace amn::ref {

namespace {

constexpr size_t kQK = ggml::kQK;
constexpr size_t kQKK = 256;

void StoreF16(float f, uint8_t* p) {
  const uint16_t h = F32BitsToF16(std::bit_cast<uint32_t>(f));
  p[0] = static_cast<uint8_t>(h);
  p[1] = static_cast<uint8_t>(h >> 8);
}

// (int8_t)f and (uint8_t)f as x86-64 compiles them: truncate to int32, keep
// the low byte.
int8_t CastInt8(float f) { return static_cast<int8_t>(TruncToInt32X86(f) & 0xFF); }
uint8_t CastUint8(float f) { return static_cast<uint8_t>(TruncToInt32X86(f) & 0xFF); }

// glibc's lroundf on x86-64 (half away from zero; out of range or NaN:
// the 64-bit conversion's LONG_MIN), then ggml's `int xi = ... + 1`, which
// keeps the low 32 bits.
int TritPlusOne(float f) {
  int64_t l;
  if (!(std::fabs(f) < 9.2233720368547758e18f)) {
    l = INT64_MIN;
  } else {
    l = static_cast<int64_t>(std::round(f));
  }
  return static_cast<int>(static_cast<uint32_t>(static_cast<uint64_t>(l) + 1));
}

// The first element of largest magnitude, with its sign (strict `<`, so a
// later equal magnitude or -0.0 after 0 never replaces it): Q4_0, Q5_0.
float SignedAbsMax(const float* x, size_t n) {
  float amax = 0.0f, max = 0.0f;
  for (size_t j = 0; j < n; ++j) {
    if (amax < std::fabs(x[j])) {
      amax = std::fabs(x[j]);
      max = x[j];
    }
  }
  return max;
}

float AbsMax(const float* x, size_t n) {
  float amax = 0.0f;
  for (size_t j = 0; j < n; ++j) amax = amax > std::fabs(x[j]) ? amax : std::fabs(x[j]);
  return amax;
}

void MinMax(const float* x, size_t n, float* min, float* max) {
  *min = FLT_MAX;
  *max = -FLT_MAX;
  for (size_t j = 0; j < n; ++j) {
    if (x[j] < *min) *min = x[j];
    if (x[j] > *max) *max = x[j];
  }
}

}  // namespace

void QuantizeIq4NlBlockWeighted(const float* x, const float* weight, uint8_t* out) {
  const int8_t* values = ggml::kIq4NlValues.data();
  const float d = gq::Iq4NlScale(x, weight);  // quantize_iq4_nl's search, ntry 7
  StoreF16(d, out);
  // The codes are chosen again from the final scale (ntry > 0 branch of
  // ggml's impl); a zero scale gives id = 0, every element the code of 1.
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  uint8_t l[kQK];
  for (size_t j = 0; j < kQK; ++j) l[j] = static_cast<uint8_t>(gq::BestIndexInt8(16, values, id * x[j]));
  for (size_t j = 0; j < kQK / 2; ++j) out[2 + j] = static_cast<uint8_t>(l[j] | l[j + 16] << 4);
}

namespace {

// Without an imatrix the weights are x^2.
void Iq4NlBlock(const float* x, uint8_t* out) {
  float weight[kQK];
  for (size_t j = 0; j < kQK; ++j) weight[j] = x[j] * x[j];
  QuantizeIq4NlBlockWeighted(x, weight, out);
}

}  // namespace

uint8_t BestIndexFp4(float x, float e) {
  const int8_t* m = ggml::kMxfp4Values.data();
  uint8_t best = 0;
  float best_err = std::fabs(static_cast<float>(m[0]) * e - x);
  for (uint8_t c = 1; c < 16; ++c) {
    const float err = std::fabs(static_cast<float>(m[c]) * e - x);
    if (err < best_err) {
      best = c;
      best_err = err;
    }
  }
  return best;
}

uint8_t F32ToUe4m3(float x) {
  if (!(x > 0.0f)) return 0;
  if (x > 448.0f) x = 448.0f;
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  int exp = static_cast<int>((bits >> 23) & 0xFF) - 127 + 7;
  if (exp <= 0) {
    // x < 2^-6: x * 512 < 8 and the sum is one F32 rounding, as in ggml.
    const int man = static_cast<int>(x * 512.0f + 0.5f);
    return static_cast<uint8_t>(man > 7 ? 7 : man);  // man < 1 gives 0
  }
  if (exp >= 15) return 0x7E;
  int man = static_cast<int>((bits >> 20) & 7) + static_cast<int>((bits >> 19) & 1);
  if (man > 7) {
    man = 0;
    if (++exp >= 15) return 0x7E;
  }
  return static_cast<uint8_t>(exp << 3 | man);
}

int32_t TruncToInt32X86(float f) {
  if (!(f > -2147483904.0f && f < 2147483648.0f)) return INT32_MIN;
  return static_cast<int32_t>(f);
}

void QuantizeRowQ4_0(const float* x, size_t n, uint8_t* out) {
  for (size_t b = 0; b < n / kQK; ++b, x += kQK, out += ggml::kQ4_0Bytes) {
    // d = max / -8 keeps the sign of the largest-magnitude element; an
    // all-zero block gives d = -0.0 (0x8000).
    const float d = SignedAbsMax(x, kQK) / -8.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    StoreF16(d, out);
    for (size_t j = 0; j < kQK / 2; ++j) {
      const int8_t a = CastInt8(x[j] * id + 8.5f);
      const int8_t c = CastInt8(x[j + 16] * id + 8.5f);
      const uint8_t lo = static_cast<uint8_t>(a < 15 ? a : 15);
      const uint8_t hi = static_cast<uint8_t>(c < 15 ? c : 15);
      out[2 + j] = static_cast<uint8_t>(lo | hi << 4);
    }
  }
}

void QuantizeRowQ4_1(const float* x, size_t n, uint8_t* out) {
  for (size_t b = 0; b < n / kQK; ++b, x += kQK, out += ggml::kQ4_1Bytes) {
    float min, max;
    MinMax(x, kQK, &min, &max);
    const float d = (max - min) / 15.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    StoreF16(d, out);
    StoreF16(min, out + 2);
    for (size_t j = 0; j < kQK / 2; ++j) {
      const int8_t a = CastInt8((x[j] - min) * id + 0.5f);
      const int8_t c = CastInt8((x[j + 16] - min) * id + 0.5f);
      const uint8_t lo = static_cast<uint8_t>(a < 15 ? a : 15);
      const uint8_t hi = static_cast<uint8_t>(c < 15 ? c : 15);
      out[4 + j] = static_cast<uint8_t>(lo | hi << 4);
    }
  }
}

void QuantizeRowQ5_0(const float* x, size_t n, uint8_t* out) {
  for (size_t b = 0; b < n / kQK; ++b, x += kQK, out += ggml::kQ5_0Bytes) {
    const float d = SignedAbsMax(x, kQK) / -16.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    StoreF16(d, out);
    uint32_t qh = 0;
    for (size_t j = 0; j < kQK / 2; ++j) {
      const int8_t a = CastInt8(x[j] * id + 16.5f);
      const int8_t c = CastInt8(x[j + 16] * id + 16.5f);
      const uint8_t lo = static_cast<uint8_t>(a < 31 ? a : 31);
      const uint8_t hi = static_cast<uint8_t>(c < 31 ? c : 31);
      out[6 + j] = static_cast<uint8_t>((lo & 0x0F) | (hi & 0x0F) << 4);
      qh |= static_cast<uint32_t>((lo & 0x10u) >> 4) << j;
      qh |= static_cast<uint32_t>((hi & 0x10u) >> 4) << (j + 16);
    }
    for (size_t k = 0; k < 4; ++k) out[2 + k] = static_cast<uint8_t>(qh >> (8 * k));
  }
}

void QuantizeRowQ5_1(const float* x, size_t n, uint8_t* out) {
  for (size_t b = 0; b < n / kQK; ++b, x += kQK, out += ggml::kQ5_1Bytes) {
    float min, max;
    MinMax(x, kQK, &min, &max);
    const float d = (max - min) / 31.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    StoreF16(d, out);
    StoreF16(min, out + 2);
    uint32_t qh = 0;
    for (size_t j = 0; j < kQK / 2; ++j) {
      // No clamp to 31 here (ggml has none for Q5_1).
      const uint8_t lo = CastUint8((x[j] - min) * id + 0.5f);
      const uint8_t hi = CastUint8((x[j + 16] - min) * id + 0.5f);
      out[8 + j] = static_cast<uint8_t>((lo & 0x0F) | (hi & 0x0F) << 4);
      qh |= static_cast<uint32_t>((lo & 0x10u) >> 4) << j;
      qh |= static_cast<uint32_t>((hi & 0x10u) >> 4) << (j + 16);
    }
    for (size_t k = 0; k < 4; ++k) out[4 + k] = static_cast<uint8_t>(qh >> (8 * k));
  }
}

void QuantizeRowQ8_0(const float* x, size_t n, uint8_t* out) {
  for (size_t b = 0; b < n / kQK; ++b, x += kQK, out += ggml::kQ8_0Bytes) {
    const float d = AbsMax(x, kQK) / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    StoreF16(d, out);
    // roundf: half away from zero (std::round on float).
    for (size_t j = 0; j < kQK; ++j) {
      out[2 + j] = static_cast<uint8_t>(CastInt8(std::round(x[j] * id)));
    }
  }
}

void QuantizeRowIq4Nl(const float* x, size_t n, uint8_t* out) {
  for (size_t b = 0; b < n / kQK; ++b) Iq4NlBlock(x + b * kQK, out + b * ggml::kIq4NlBytes);
}

void QuantizeRowMxfp4(const float* x, size_t n, uint8_t* out) {
  for (size_t b = 0; b < n / kQK; ++b, x += kQK, out += ggml::kMxfp4Bytes) {
    float amax = 0.0f;
    for (size_t j = 0; j < kQK; ++j) {
      if (amax < std::fabs(x[j])) amax = std::fabs(x[j]);
    }
    // The shared exponent from the C library's log2f, as ggml computes it:
    // floorf(log2f(amax)) - 2 + 127 in F32, then a C cast to uint8_t. Just
    // below a power of two log2f rounds up to the integer, so this is not
    // always amax's binary exponent: only log2f itself reproduces it.
    const uint8_t e =
        amax > 0.0f ? CastUint8(std::floor(std::log2(amax)) - 2.0f + 127.0f) : uint8_t{0};
    const float half = std::bit_cast<float>(ggml::Mxfp4HalfScaleBits(e));
    out[0] = e;
    for (size_t j = 0; j < kQK / 2; ++j) {
      out[1 + j] =
          static_cast<uint8_t>(BestIndexFp4(x[j], half) | BestIndexFp4(x[j + 16], half) << 4);
    }
  }
}

void QuantizeRowTq1_0(const float* x, size_t n, uint8_t* out) {
  for (size_t b = 0; b < n / kQKK; ++b, x += kQKK, out += kq::tq1::kBytes) {
    const float d = AbsMax(x, kQKK);
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    StoreF16(d, out + kq::tq1::kD);
    // Five trits per byte, the first element the most significant trit,
    // then byte = ceil(value * 256 / 243): bytes 0..31 take elements
    // m + 32 k (k < 5), bytes 32..47 take 160 + m + 16 k.
    auto pack = [&](const float* base, size_t stride, size_t count) {
      uint8_t q = 0;
      for (size_t k = 0; k < count; ++k) {
        q = static_cast<uint8_t>(q * 3 + TritPlusOne(base[k * stride] * id));
      }
      return q;
    };
    auto ceil243 = [](uint8_t q) {
      return static_cast<uint8_t>((static_cast<uint16_t>(q) * 256 + 242) / 243);
    };
    for (size_t m = 0; m < 32; ++m) out[m] = ceil243(pack(x + m, 32, 5));
    for (size_t m = 0; m < 16; ++m) out[32 + m] = ceil243(pack(x + 160 + m, 16, 5));
    // Four trits per byte (elements 240 + j + 4 k), shifted up one trit.
    for (size_t j = 0; j < 4; ++j) {
      out[kq::tq1::kQh + j] = ceil243(static_cast<uint8_t>(pack(x + 240 + j, 4, 4) * 3));
    }
  }
}

void QuantizeRowTq2_0(const float* x, size_t n, uint8_t* out) {
  for (size_t b = 0; b < n / kQKK; ++b, x += kQKK, out += kq::tq2::kBytes) {
    const float d = AbsMax(x, kQKK);
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    StoreF16(d, out + kq::tq2::kD);
    for (size_t j = 0; j < 64; j += 32) {
      for (size_t m = 0; m < 32; ++m) {
        uint8_t q = 0;
        for (size_t k = 0; k < 4; ++k) {
          const int xi = TritPlusOne(x[4 * j + m + 32 * k] * id);
          q = static_cast<uint8_t>(q + ((xi & 3) << (2 * k)));
        }
        out[j + m] = q;
      }
    }
  }
}

void QuantizeRowNvfp4(const float* x, size_t n, uint8_t* out) {
  constexpr size_t kSub = ggml::kNvfp4SubElems;
  for (size_t b = 0; b < n / ggml::kNvfp4Elems; ++b, out += ggml::kNvfp4Bytes) {
    for (size_t s = 0; s < ggml::kNvfp4Elems / kSub; ++s, x += kSub) {
      float amax = 0.0f;
      for (size_t j = 0; j < kSub; ++j) {
        if (amax < std::fabs(x[j])) amax = std::fabs(x[j]);
      }
      const uint8_t ue = F32ToUe4m3(amax / 6.0f);
      out[s] = ue;
      const float d = std::bit_cast<float>(ggml::Ue4m3HalfBits(ue));
      for (size_t j = 0; j < kSub / 2; ++j) {
        out[4 + s * kSub / 2 + j] =
            static_cast<uint8_t>(BestIndexFp4(x[j], d) | BestIndexFp4(x[j + kSub / 2], d) << 4);
      }
    }
  }
}

void QuantizeRowQ1_0(const float* x, size_t n, uint8_t* out) {
  constexpr size_t kN = ggml::kQ1_0Elems;
  for (size_t b = 0; b < n / kN; ++b, x += kN, out += ggml::kQ1_0Bytes) {
    float sum_abs = 0.0f;  // sequential: the order fixes the rounding
    for (size_t j = 0; j < kN; ++j) sum_abs += std::fabs(x[j]);
    StoreF16(sum_abs / static_cast<float>(kN), out);
    for (size_t j = 0; j < kN / 8; ++j) out[2 + j] = 0;
    for (size_t j = 0; j < kN; ++j) {
      if (x[j] >= 0.0f) out[2 + j / 8] = static_cast<uint8_t>(out[2 + j / 8] | 1 << (j % 8));
    }
  }
}

void QuantizeRowQ2_0(const float* x, size_t n, uint8_t* out) {
  constexpr size_t kN = ggml::kQ2_0Elems;
  for (size_t b = 0; b < n / kN; ++b, x += kN, out += ggml::kQ2_0Bytes) {
    float amax = 0.0f;
    for (size_t j = 0; j < kN; ++j) {
      if (std::fabs(x[j]) > amax) amax = std::fabs(x[j]);
    }
    const float id = amax > 0.0f ? 1.0f / amax : 0.0f;
    StoreF16(amax, out);
    for (size_t j = 0; j < kN / 4; ++j) out[2 + j] = 0;
    for (size_t j = 0; j < kN; ++j) {
      // (int)roundf(w * id) + 1 clamped to [0, 3]; when 1/amax overflowed,
      // +-Inf and NaN products convert to x86's INT_MIN, so the code is 0.
      int q = TruncToInt32X86(std::round(x[j] * id)) + 1;
      q = q < 0 ? 0 : (q > 3 ? 3 : q);
      out[2 + j / 4] = static_cast<uint8_t>(out[2 + j / 4] | q << (2 * (j % 4)));
    }
  }
}

size_t GgmlEncodeBlockElems(GgmlType type) {
  switch (type) {
    case GgmlType::kQ4_0: case GgmlType::kQ4_1: case GgmlType::kQ5_0: case GgmlType::kQ5_1:
    case GgmlType::kQ8_0: case GgmlType::kIQ4_NL: case GgmlType::kMXFP4:
      return kQK;
    case GgmlType::kTQ1_0: case GgmlType::kTQ2_0:
      return kQKK;
    case GgmlType::kNVFP4: case GgmlType::kQ1_0: case GgmlType::kQ2_0:
      return GgmlLegacyBlockElems(type);
    default:
      return 0;
  }
}

size_t GgmlEncodeBlockBytes(GgmlType type) {
  switch (type) {
    case GgmlType::kTQ1_0: return kq::tq1::kBytes;
    case GgmlType::kTQ2_0: return kq::tq2::kBytes;
    default: return GgmlEncodeBlockElems(type) == 0 ? 0 : GgmlLegacyBlockBytes(type);
  }
}

bool QuantizeGgmlRow(GgmlType type, const float* x, size_t n, uint8_t* out) {
  switch (type) {
    case GgmlType::kQ4_0: QuantizeRowQ4_0(x, n, out); return true;
    case GgmlType::kQ4_1: QuantizeRowQ4_1(x, n, out); return true;
    case GgmlType::kQ5_0: QuantizeRowQ5_0(x, n, out); return true;
    case GgmlType::kQ5_1: QuantizeRowQ5_1(x, n, out); return true;
    case GgmlType::kQ8_0: QuantizeRowQ8_0(x, n, out); return true;
    case GgmlType::kIQ4_NL: QuantizeRowIq4Nl(x, n, out); return true;
    case GgmlType::kMXFP4: QuantizeRowMxfp4(x, n, out); return true;
    case GgmlType::kTQ1_0: QuantizeRowTq1_0(x, n, out); return true;
    case GgmlType::kTQ2_0: QuantizeRowTq2_0(x, n, out); return true;
    case GgmlType::kNVFP4: QuantizeRowNvfp4(x, n, out); return true;
    case GgmlType::kQ1_0: QuantizeRowQ1_0(x, n, out); return true;
    case GgmlType::kQ2_0: QuantizeRowQ2_0(x, n, out); return true;
    default: return false;
  }
}

bool DequantGgmlEncodedBlocks(GgmlType type, const uint8_t* blocks, size_t n_blocks, float* out) {
  if (type == GgmlType::kTQ1_0 || type == GgmlType::kTQ2_0) {
    return DequantKQuantToF32(static_cast<uint32_t>(type), blocks, n_blocks, out);
  }
  if (GgmlEncodeBlockElems(type) == 0) return false;
  return DequantGgmlLegacy(type, blocks, n_blocks, ElemType::kF32, out);
}

bool GgmlImatrixChangesBytes(GgmlType type) {
  switch (type) {
    case GgmlType::kQ4_0: case GgmlType::kQ4_1: case GgmlType::kQ5_0: case GgmlType::kQ5_1:
    case GgmlType::kIQ4_NL:
      return true;
    default:
      return false;  // Q8_0, MXFP4, TQ1_0, TQ2_0, NVFP4, Q1_0, Q2_0: no effect in ggml
  }
}

namespace {

// With an importance matrix: a pass over each row for its sum of squares
// (and the finite check, so the first non-finite element of the call is the
// one named), then its blocks.
uint64_t EncodeRowsImatrix(const kernels::GgmlQuantArgs& a, kernels::ErrorSums* errors) {
  const size_t bb = GgmlEncodeBlockBytes(a.type);
  const uint64_t cols = a.x.cols;
  float x[kQK], xq[kQK];
  for (uint64_t r = 0; r < a.x.rows; ++r) {
    const uint64_t row0 = r * cols;
    float sum = 0.0f;
    for (uint64_t c = 0; c < cols; ++c) {
      const uint32_t bits = kernels::LoadInputBits(a.x.in, a.x.type, row0 + c);
      if (!kernels::IsFiniteF32Bits(bits)) return row0 + c;
      const float v = std::bit_cast<float>(bits);
      sum += v * v;  // GgmlRowSumSquares' order
    }
    const float sigma2 = sum / static_cast<float>(cols);
    for (uint64_t c0 = 0; c0 < cols; c0 += kQK) {
      for (size_t k = 0; k < kQK; ++k) {
        x[k] = std::bit_cast<float>(kernels::LoadInputBits(a.x.in, a.x.type, row0 + c0 + k));
      }
      uint8_t* out = a.out + (row0 + c0) / kQK * bb;
      QuantizeGgmlBlockImatrix(a.type, x, a.imatrix + c0, sigma2, out);
      if (errors != nullptr) {
        DequantGgmlEncodedBlocks(a.type, out, 1, xq);
        for (size_t k = 0; k < kQK; ++k) kernels::AddError(*errors, row0 + c0 + k, x[k], xq[k]);
      }
    }
  }
  return kernels::kAllFinite;
}

}  // namespace

uint64_t EncodeGgmlLegacyQuant(const kernels::GgmlQuantArgs& a, kernels::ErrorSums* errors) {
  const size_t be = GgmlEncodeBlockElems(a.type);
  const size_t bb = GgmlEncodeBlockBytes(a.type);
  if (be == 0) return kernels::kAllFinite;
  if (a.imatrix != nullptr && GgmlImatrixChangesBytes(a.type)) return EncodeRowsImatrix(a, errors);
  // Every type here is block-local: one block at a time, in call order, so
  // the first non-finite element found is the first of the call.
  const uint64_t n_blocks = a.x.rows * a.x.cols / be;
  float x[kQKK], xq[kQKK];
  for (uint64_t b = 0; b < n_blocks; ++b) {
    const uint64_t i0 = b * be;
    for (size_t k = 0; k < be; ++k) {
      const uint32_t bits = kernels::LoadInputBits(a.x.in, a.x.type, i0 + k);
      if (!kernels::IsFiniteF32Bits(bits)) return i0 + k;
      x[k] = std::bit_cast<float>(bits);
    }
    uint8_t* out = a.out + b * bb;
    QuantizeGgmlRow(a.type, x, be, out);
    if (errors != nullptr) {
      DequantGgmlEncodedBlocks(a.type, out, 1, xq);
      for (size_t k = 0; k < be; ++k) kernels::AddError(*errors, i0 + k, x[k], xq[k]);
    }
  }
  return kernels::kAllFinite;
}

}  // namespace amn::ref
