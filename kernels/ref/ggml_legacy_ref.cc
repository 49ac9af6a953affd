// Scalar reference for the ggml legacy block quants (see the header).
#include "kernels/ref/ggml_legacy_ref.h"

#include <bit>
#include <cstring>

#include "kernels/ggml_blocks.h"
#include "kernels/ref/float_convert_ref.h"

namespace amn::ref {
namespace {

using ggml::kQK;

float F16At(const uint8_t* p) { return std::bit_cast<float>(F16ToF32Bits(ggml::LoadLe16(p))); }

bool IsNan(float x) { return (std::bit_cast<uint32_t>(x) & 0x7FFFFFFFu) > 0x7F800000u; }
const float kInvalidNan = std::bit_cast<float>(ggml::kInvalidNan);

// The NaN rule: only d (already quiet) can be a NaN operand of a product;
// an invalid product (Inf * 0) is ggml::kInvalidNan.
float Product(float product, float d) {
  return IsNan(product) ? (IsNan(d) ? d : kInvalidNan) : product;
}
// A NaN sum is the product's NaN, else m's, else ggml::kInvalidNan (Inf - Inf):
// the compiler may swap the operands of an addition, so the hardware's choice
// between two NaNs is not used.
float Sum(float product, float m) {
  const float sum = product + m;
  if (!IsNan(sum)) return sum;
  return IsNan(product) ? product : (IsNan(m) ? m : kInvalidNan);
}

// Q4_0 / Q4_1 / IQ4_NL / MXFP4 nibble order: byte l holds y[l] (low nibble)
// and y[l + 16] (high nibble).
void Dequant4Bit(const uint8_t* qs, float d, float* y, int bias) {
  for (size_t l = 0; l < kQK / 2; ++l) {
    const int x0 = (qs[l] & 0x0F) - bias;
    const int x1 = (qs[l] >> 4) - bias;
    y[l] = Product(static_cast<float>(x0) * d, d);
    y[l + kQK / 2] = Product(static_cast<float>(x1) * d, d);
  }
}

}  // namespace

void DequantQ4_0(const uint8_t* blocks, size_t n_blocks, float* out) {
  for (size_t b = 0; b < n_blocks; ++b) {
    const uint8_t* x = blocks + b * ggml::kQ4_0Bytes;
    Dequant4Bit(x + 2, F16At(x), out + b * kQK, 8);
  }
}

void DequantQ4_1(const uint8_t* blocks, size_t n_blocks, float* out) {
  for (size_t b = 0; b < n_blocks; ++b) {
    const uint8_t* x = blocks + b * ggml::kQ4_1Bytes;
    const float d = F16At(x), m = F16At(x + 2);
    const uint8_t* qs = x + 4;
    float* y = out + b * kQK;
    for (size_t l = 0; l < kQK / 2; ++l) {
      const float p0 = Product(static_cast<float>(qs[l] & 0x0F) * d, d);
      const float p1 = Product(static_cast<float>(qs[l] >> 4) * d, d);
      y[l] = Sum(p0, m);
      y[l + kQK / 2] = Sum(p1, m);
    }
  }
}

void DequantQ5_0(const uint8_t* blocks, size_t n_blocks, float* out) {
  for (size_t b = 0; b < n_blocks; ++b) {
    const uint8_t* x = blocks + b * ggml::kQ5_0Bytes;
    const float d = F16At(x);
    const uint32_t qh = ggml::LoadLe32(x + 2);
    const uint8_t* qs = x + 6;
    float* y = out + b * kQK;
    for (size_t l = 0; l < kQK / 2; ++l) {
      const int x0 = static_cast<int>((qs[l] & 0x0F) | ((qh >> l) & 1) << 4) - 16;
      const int x1 = static_cast<int>((qs[l] >> 4) | ((qh >> (l + 16)) & 1) << 4) - 16;
      y[l] = Product(static_cast<float>(x0) * d, d);
      y[l + kQK / 2] = Product(static_cast<float>(x1) * d, d);
    }
  }
}

void DequantQ5_1(const uint8_t* blocks, size_t n_blocks, float* out) {
  for (size_t b = 0; b < n_blocks; ++b) {
    const uint8_t* x = blocks + b * ggml::kQ5_1Bytes;
    const float d = F16At(x), m = F16At(x + 2);
    const uint32_t qh = ggml::LoadLe32(x + 4);
    const uint8_t* qs = x + 8;
    float* y = out + b * kQK;
    for (size_t l = 0; l < kQK / 2; ++l) {
      const uint32_t x0 = (qs[l] & 0x0F) | ((qh >> l) & 1) << 4;
      const uint32_t x1 = (qs[l] >> 4) | ((qh >> (l + 16)) & 1) << 4;
      const float p0 = Product(static_cast<float>(x0) * d, d);
      const float p1 = Product(static_cast<float>(x1) * d, d);
      y[l] = Sum(p0, m);
      y[l + kQK / 2] = Sum(p1, m);
    }
  }
}

void DequantQ8_0(const uint8_t* blocks, size_t n_blocks, float* out) {
  for (size_t b = 0; b < n_blocks; ++b) {
    const uint8_t* x = blocks + b * ggml::kQ8_0Bytes;
    const float d = F16At(x);
    for (size_t l = 0; l < kQK; ++l) {
      out[b * kQK + l] = Product(static_cast<float>(static_cast<int8_t>(x[2 + l])) * d, d);
    }
  }
}

void DequantQ8_1(const uint8_t* blocks, size_t n_blocks, float* out) {
  for (size_t b = 0; b < n_blocks; ++b) {
    const uint8_t* x = blocks + b * ggml::kQ8_1Bytes;
    const float d = F16At(x);
    for (size_t l = 0; l < kQK; ++l) {
      out[b * kQK + l] = Product(d * static_cast<float>(static_cast<int8_t>(x[4 + l])), d);
    }
  }
}

void DequantIq4Nl(const uint8_t* blocks, size_t n_blocks, float* out) {
  for (size_t b = 0; b < n_blocks; ++b) {
    const uint8_t* x = blocks + b * ggml::kIq4NlBytes;
    const float d = F16At(x);
    float* y = out + b * kQK;
    for (size_t l = 0; l < kQK / 2; ++l) {
      y[l] = Product(d * static_cast<float>(ggml::kIq4NlValues[x[2 + l] & 0x0F]), d);
      y[l + kQK / 2] = Product(d * static_cast<float>(ggml::kIq4NlValues[x[2 + l] >> 4]), d);
    }
  }
}

void DequantMxfp4(const uint8_t* blocks, size_t n_blocks, float* out) {
  for (size_t b = 0; b < n_blocks; ++b) {
    const uint8_t* x = blocks + b * ggml::kMxfp4Bytes;
    const float s = std::bit_cast<float>(ggml::Mxfp4HalfScaleBits(x[0]));
    float* y = out + b * kQK;
    for (size_t l = 0; l < kQK / 2; ++l) {
      // s is a finite power of two: no NaN can arise.
      y[l] = static_cast<float>(ggml::kMxfp4Values[x[1 + l] & 0x0F]) * s;
      y[l + kQK / 2] = static_cast<float>(ggml::kMxfp4Values[x[1 + l] >> 4]) * s;
    }
  }
}

void DequantNvfp4Gguf(const uint8_t* blocks, size_t n_blocks, float* out) {
  constexpr size_t kSub = ggml::kNvfp4SubElems;
  for (size_t b = 0; b < n_blocks; ++b) {
    const uint8_t* x = blocks + b * ggml::kNvfp4Bytes;
    for (size_t s = 0; s < ggml::kNvfp4Elems / kSub; ++s) {
      const float d = std::bit_cast<float>(ggml::Ue4m3HalfBits(x[s]));
      const uint8_t* qs = x + 4 + s * (kSub / 2);
      float* y = out + b * ggml::kNvfp4Elems + s * kSub;
      for (size_t l = 0; l < kSub / 2; ++l) {
        // d is finite: no NaN can arise.
        y[l] = static_cast<float>(ggml::kMxfp4Values[qs[l] & 0x0F]) * d;
        y[l + kSub / 2] = static_cast<float>(ggml::kMxfp4Values[qs[l] >> 4]) * d;
      }
    }
  }
}

void DequantQ1_0(const uint8_t* blocks, size_t n_blocks, float* out) {
  for (size_t b = 0; b < n_blocks; ++b) {
    const uint8_t* x = blocks + b * ggml::kQ1_0Bytes;
    const uint32_t d = F16ToF32Bits(ggml::LoadLe16(x));
    for (size_t j = 0; j < ggml::kQ1_0Elems; ++j) {
      const bool set = (x[2 + j / 8] >> (j % 8)) & 1;
      out[b * ggml::kQ1_0Elems + j] = std::bit_cast<float>(set ? d : d ^ 0x80000000u);
    }
  }
}

void DequantQ2_0(const uint8_t* blocks, size_t n_blocks, float* out) {
  for (size_t b = 0; b < n_blocks; ++b) {
    const uint8_t* x = blocks + b * ggml::kQ2_0Bytes;
    const float d = F16At(x);
    for (size_t j = 0; j < ggml::kQ2_0Elems; ++j) {
      const int q = (x[2 + j / 4] >> (2 * (j % 4))) & 3;
      out[b * ggml::kQ2_0Elems + j] = Product(static_cast<float>(q - 1) * d, d);
    }
  }
}

size_t GgmlLegacyBlockElems(GgmlType type) {
  switch (type) {
    case GgmlType::kNVFP4: return ggml::kNvfp4Elems;
    case GgmlType::kQ1_0: return ggml::kQ1_0Elems;
    case GgmlType::kQ2_0: return ggml::kQ2_0Elems;
    default: return GgmlLegacyBlockBytes(type) == 0 ? 0 : kQK;
  }
}

size_t GgmlLegacyBlockBytes(GgmlType type) {
  switch (type) {
    case GgmlType::kQ4_0: return ggml::kQ4_0Bytes;
    case GgmlType::kQ4_1: return ggml::kQ4_1Bytes;
    case GgmlType::kQ5_0: return ggml::kQ5_0Bytes;
    case GgmlType::kQ5_1: return ggml::kQ5_1Bytes;
    case GgmlType::kQ8_0: return ggml::kQ8_0Bytes;
    case GgmlType::kQ8_1: return ggml::kQ8_1Bytes;
    case GgmlType::kIQ4_NL: return ggml::kIq4NlBytes;
    case GgmlType::kMXFP4: return ggml::kMxfp4Bytes;
    case GgmlType::kNVFP4: return ggml::kNvfp4Bytes;
    case GgmlType::kQ1_0: return ggml::kQ1_0Bytes;
    case GgmlType::kQ2_0: return ggml::kQ2_0Bytes;
    default: return 0;
  }
}

bool DequantGgmlLegacy(GgmlType type, const uint8_t* blocks, size_t n_blocks, ElemType out_type,
                       void* out) {
  void (*to_f32)(const uint8_t*, size_t, float*) = nullptr;
  const size_t block_bytes = GgmlLegacyBlockBytes(type);
  switch (type) {
    case GgmlType::kQ4_0: to_f32 = DequantQ4_0; break;
    case GgmlType::kQ4_1: to_f32 = DequantQ4_1; break;
    case GgmlType::kQ5_0: to_f32 = DequantQ5_0; break;
    case GgmlType::kQ5_1: to_f32 = DequantQ5_1; break;
    case GgmlType::kQ8_0: to_f32 = DequantQ8_0; break;
    case GgmlType::kQ8_1: to_f32 = DequantQ8_1; break;
    case GgmlType::kIQ4_NL: to_f32 = DequantIq4Nl; break;
    case GgmlType::kMXFP4: to_f32 = DequantMxfp4; break;
    case GgmlType::kNVFP4: to_f32 = DequantNvfp4Gguf; break;
    case GgmlType::kQ1_0: to_f32 = DequantQ1_0; break;
    case GgmlType::kQ2_0: to_f32 = DequantQ2_0; break;
    default: return false;
  }
  if (out_type != ElemType::kF32 && out_type != ElemType::kF16 && out_type != ElemType::kBf16) {
    return false;
  }
  // One block at a time through a stack buffer: reference kernels allocate
  // nothing either.
  auto* bytes = static_cast<unsigned char*>(out);
  const size_t elems = GgmlLegacyBlockElems(type);
  float values[ggml::kQ1_0Elems];  // the longest block
  for (size_t b = 0; b < n_blocks; ++b) {
    to_f32(blocks + b * block_bytes, 1, values);
    for (size_t j = 0; j < elems; ++j) {
      const size_t i = b * elems + j;
      const uint32_t bits = std::bit_cast<uint32_t>(values[j]);
      if (out_type == ElemType::kF32) {
        std::memcpy(bytes + 4 * i, &bits, 4);
      } else {
        const uint16_t h = out_type == ElemType::kBf16 ? F32BitsToBf16(bits) : F32BitsToF16(bits);
        std::memcpy(bytes + 2 * i, &h, 2);
      }
    }
  }
  return true;
}

}  // namespace amn::ref
