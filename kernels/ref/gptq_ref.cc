// Scalar reference for GPTQ dequantization: element by element, the
// formula of kernels/ref/gptq_ref.h.
#include "kernels/ref/gptq_ref.h"

#include <bit>
#include <cstring>

#include "kernels/ref/float_convert_ref.h"
#include "kernels/ref/fp8_dequant_ref.h"

namespace amn::ref {

uint32_t GptqValueBits(const gptq::LayerView& layer, size_t i, size_t j) {
  const size_t g = gptq::GroupOf(layer, i);
  const float q = static_cast<float>(gptq::WeightCode(layer, i, j));
  const float z = static_cast<float>(gptq::Zero(layer, g, j));
  const float difference = q - z;  // exact
  const float scale = std::bit_cast<float>(gptq::ScaleBits(layer, g, j));
  // The multiply and the NaN choice of the scaled-FP8 reference: the
  // difference is never NaN, so a NaN product is the scale's or 0 * Inf's.
  return ScaledF32Bits(std::bit_cast<uint32_t>(difference), scale);
}

void DequantGptq(const gptq::LayerView& layer, WeightOrientation orientation, size_t row_begin,
                 size_t row_end, ElemType out_type, void* out) {
  if (out_type != ElemType::kF32 && out_type != ElemType::kBf16 && out_type != ElemType::kF16) {
    return;
  }
  const bool out_in = orientation == WeightOrientation::kOutIn;
  const size_t row_elems = out_in ? layer.k : layer.n;
  auto* bytes = static_cast<unsigned char*>(out);
  size_t at = 0;
  for (size_t r = row_begin; r < row_end; ++r) {
    for (size_t c = 0; c < row_elems; ++c, ++at) {
      const uint32_t bits = out_in ? GptqValueBits(layer, c, r) : GptqValueBits(layer, r, c);
      if (out_type == ElemType::kF32) {
        std::memcpy(bytes + 4 * at, &bits, 4);
      } else {
        const uint16_t half = out_type == ElemType::kBf16 ? F32BitsToBf16(bits) : F32BitsToF16(bits);
        std::memcpy(bytes + 2 * at, &half, 2);
      }
    }
  }
}

}  // namespace amn::ref
