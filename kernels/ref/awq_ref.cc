// Scalar reference for AWQ GEMM 4-bit: element by element, in AutoAWQ's
// order (kernels/ref/awq_ref.h).
#include "kernels/ref/awq_ref.h"

#include <bit>

#include "kernels/ref/fp8_dequant_ref.h"
#include "kernels/ref/packed_words.h"

namespace amn::ref {

uint32_t AwqValueF32Bits(const AwqMatrix& m, size_t i, size_t j) {
  const size_t words = m.out_features / 8;
  const size_t g = i / m.group_size;
  const uint32_t q = (LoadLe32(m.qweight + 4 * (i * words + j / 8)) >> AwqNibbleShift(j)) & 0xF;
  const uint32_t z = (LoadLe32(m.qzeros + 4 * (g * words + j / 8)) >> AwqNibbleShift(j)) & 0xF;
  const float scale = std::bit_cast<float>(ScaleF32Bits(m.scales, m.scale_type, g * m.out_features + j));
  // f32(q) - f32(z): exact, then one multiply with the NaN rule.
  const float diff = static_cast<float>(q) - static_cast<float>(z);
  return ScaledF32Bits(std::bit_cast<uint32_t>(diff), scale);
}

void DequantAwqRows(const AwqMatrix& m, bool out_in, size_t row_begin, size_t row_end,
                    ElemType out_type, void* out) {
  const size_t row_len = out_in ? m.in_features : m.out_features;
  for (size_t r = row_begin; r < row_end; ++r) {
    for (size_t k = 0; k < row_len; ++k) {
      const uint32_t bits = out_in ? AwqValueF32Bits(m, k, r) : AwqValueF32Bits(m, r, k);
      StoreOutBits(bits, out_type, out, (r - row_begin) * row_len + k);
    }
  }
}

}  // namespace amn::ref
