// The IQ2/IQ1 encoder family entry: see ggml_iq2_iq1_encode_ref.h.
#include "kernels/ref/ggml_iq2_iq1_encode_ref.h"

#include <bit>

#include "kernels/ref/ggml_iq1_encode_ref.h"
#include "kernels/ref/ggml_iq2_encode_ref.h"
#include "kernels/ref/ggml_iquant_ref.h"

namespace amn::ref {

size_t Iq2Iq1EncodeBlockBytes(GgmlType type) {
  switch (type) {
    case GgmlType::kIQ2_XXS: return 66;
    case GgmlType::kIQ2_XS: return 74;
    case GgmlType::kIQ2_S: return 82;
    case GgmlType::kIQ1_S: return 50;
    case GgmlType::kIQ1_M: return 56;
    default: return 0;
  }
}

bool Iq2Iq1RequiresImatrix(GgmlType type) {
  return type == GgmlType::kIQ2_XXS || type == GgmlType::kIQ2_XS || type == GgmlType::kIQ1_S;
}

void QuantizeIq2Iq1Block(GgmlType type, const float* x, const float* qw, uint8_t* out,
                         iq2::NeighbourScoreFn score) {
  switch (type) {
    case GgmlType::kIQ2_XXS: QuantizeIq2XxsBlock(x, qw, out, score); break;
    case GgmlType::kIQ2_XS: QuantizeIq2XsBlock(x, qw, out, score); break;
    case GgmlType::kIQ2_S: QuantizeIq2SBlock(x, qw, out, score); break;
    case GgmlType::kIQ1_S: QuantizeIq1SBlock(x, qw, out, score); break;
    case GgmlType::kIQ1_M: QuantizeIq1MBlock(x, qw, out, score); break;
    default: break;
  }
}

uint64_t EncodeGgmlIq2Iq1Quant(const kernels::GgmlQuantArgs& a, kernels::ErrorSums* errors,
                               iq2::NeighbourScoreFn score) {
  constexpr int kQK = 256;
  const size_t block_bytes = Iq2Iq1EncodeBlockBytes(a.type);
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
    QuantizeIq2Iq1Block(a.type, x, a.imatrix != nullptr ? a.imatrix + i % a.x.cols : nullptr,
                        out, score);
    if (errors != nullptr) {
      float xq[kQK];
      DequantIQuantBlock(static_cast<uint32_t>(a.type), out, xq);
      for (int k = 0; k < kQK; ++k) kernels::AddError(*errors, i + k, x[k], xq[k]);
    }
  }
  return kernels::kAllFinite;
}

uint64_t EncodeGgmlIq2Iq1Quant(const kernels::GgmlQuantArgs& a, kernels::ErrorSums* errors) {
  return EncodeGgmlIq2Iq1Quant(a, errors, &iq2::ScoreNeighboursRef);
}

}  // namespace amn::ref
