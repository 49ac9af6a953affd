// Scalar reference for compressed-tensors pack-quantized int4/int8: element
// by element, in compressed-tensors' order (kernels/ref/packed_int_ref.h).
#include "kernels/ref/packed_int_ref.h"

#include <bit>

#include "kernels/ref/float_convert_ref.h"
#include "kernels/ref/fp8_dequant_ref.h"
#include "kernels/ref/packed_words.h"

namespace amn::ref {

uint32_t RoundToScaleType(uint32_t product_bits, ElemType scale_type) {
  switch (scale_type) {
    case ElemType::kBf16: return Bf16ToF32Bits(F32BitsToBf16(product_bits));
    case ElemType::kF16: return F16ToF32Bits(F32BitsToF16(product_bits));
    default: return product_bits;
  }
}

int32_t PackedIntUnsignedZero(const PackedIntMatrix& m, size_t r, size_t g) {
  const int32_t offset = 1 << (m.bits - 1);
  if (m.zero_points == nullptr) return offset;
  const size_t groups = m.cols / m.group_size;
  if (m.zero_points_i8) return static_cast<int8_t>(m.zero_points[r * groups + g]) + offset;
  const size_t per_word = 32 / m.bits;
  const uint32_t mask = (1u << m.bits) - 1;
  return static_cast<int32_t>(
      (LoadLe32(m.zero_points + 4 * ((r / per_word) * groups + g)) >> (m.bits * (r % per_word))) &
      mask);
}

uint32_t PackedIntValueF32Bits(const PackedIntMatrix& m, size_t r, size_t c) {
  const size_t per_word = 32 / m.bits;
  const uint32_t mask = (1u << m.bits) - 1;
  const size_t words = (m.cols + per_word - 1) / per_word;
  const size_t groups = m.cols / m.group_size;
  const size_t g = c / m.group_size;
  const uint32_t u =
      (LoadLe32(m.weight_packed + 4 * (r * words + c / per_word)) >> (m.bits * (c % per_word))) &
      mask;
  const int32_t uz = PackedIntUnsignedZero(m, r, g);
  const size_t scale_index = m.tensor_scale ? 0 : r * groups + g;
  const float scale = std::bit_cast<float>(ScaleF32Bits(m.scales, m.scale_type, scale_index));
  const float diff = static_cast<float>(static_cast<int32_t>(u) - uz);
  return RoundToScaleType(ScaledF32Bits(std::bit_cast<uint32_t>(diff), scale), m.scale_type);
}

void DequantPackedIntRows(const PackedIntMatrix& m, size_t row_begin, size_t row_end,
                          ElemType out_type, void* out) {
  for (size_t r = row_begin; r < row_end; ++r) {
    for (size_t c = 0; c < m.cols; ++c) {
      StoreOutBits(PackedIntValueF32Bits(m, r, c), out_type, out, (r - row_begin) * m.cols + c);
    }
  }
}

}  // namespace amn::ref
