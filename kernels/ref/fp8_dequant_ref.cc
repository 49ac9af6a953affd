// Scalar reference for scaled FP8 dequantization: decode (kernels/ref/fp8_ref),
// one F32 multiply, encode (kernels/ref/float_convert_ref), element by element.
#include "kernels/ref/fp8_dequant_ref.h"

#include <cstring>

#include "kernels/float_formats.h"
#include "kernels/ref/float_convert_ref.h"
#include "kernels/ref/fp8_ref.h"

namespace amn::ref {
namespace {

bool IsF32NanBits(uint32_t bits) { return (bits & fmt::kF32AbsMask) > fmt::kF32ExpMask; }

uint32_t F32Identity(uint32_t bits) { return bits; }

// Rows of TBits-sized outputs (u32 F32 bits, or u16 BF16/F16 bits), each
// stored through memcpy because the public API lets `out` start at any byte.
template <uint32_t (*kDecode)(uint8_t), typename TBits, auto kEncode>
void DequantRows(const uint8_t* codes, size_t rows, size_t cols, const float* col_scales,
                 size_t block_cols, void* out) {
  auto* out_bytes = static_cast<unsigned char*>(out);
  for (size_t r = 0; r < rows; ++r) {
    for (size_t c = 0; c < cols; ++c) {
      const size_t i = r * cols + c;
      const uint32_t product = ScaledF32Bits(kDecode(codes[i]), col_scales[c / block_cols]);
      const TBits encoded = static_cast<TBits>(kEncode(product));
      std::memcpy(out_bytes + i * sizeof(TBits), &encoded, sizeof(encoded));
    }
  }
}

}  // namespace

uint32_t ScaledF32Bits(uint32_t value_bits, float scale) {
  float value;
  std::memcpy(&value, &value_bits, sizeof(value));
  // A separate multiply: nothing to fuse it with, and -ffp-contract=off.
  const float product = value * scale;
  uint32_t product_bits;
  std::memcpy(&product_bits, &product, sizeof(product_bits));
  if (!IsF32NanBits(product_bits)) return product_bits;
  if (IsF32NanBits(value_bits)) return value_bits;
  uint32_t scale_bits;
  std::memcpy(&scale_bits, &scale, sizeof(scale_bits));
  if (IsF32NanBits(scale_bits)) return scale_bits | fmt::kF32QuietBit;
  return kF32InvalidProductNan;
}

void DequantE4m3ToF32(const uint8_t* codes, size_t rows, size_t cols, const float* col_scales,
                      size_t block_cols, float* out) {
  DequantRows<E4m3ToF32Bits, uint32_t, F32Identity>(codes, rows, cols, col_scales, block_cols, out);
}
void DequantE4m3ToBf16(const uint8_t* codes, size_t rows, size_t cols, const float* col_scales,
                       size_t block_cols, uint16_t* out) {
  DequantRows<E4m3ToF32Bits, uint16_t, F32BitsToBf16>(codes, rows, cols, col_scales, block_cols,
                                                      out);
}
void DequantE4m3ToF16(const uint8_t* codes, size_t rows, size_t cols, const float* col_scales,
                      size_t block_cols, uint16_t* out) {
  DequantRows<E4m3ToF32Bits, uint16_t, F32BitsToF16>(codes, rows, cols, col_scales, block_cols,
                                                     out);
}
void DequantE5m2ToF32(const uint8_t* codes, size_t rows, size_t cols, const float* col_scales,
                      size_t block_cols, float* out) {
  DequantRows<E5m2ToF32Bits, uint32_t, F32Identity>(codes, rows, cols, col_scales, block_cols, out);
}
void DequantE5m2ToBf16(const uint8_t* codes, size_t rows, size_t cols, const float* col_scales,
                       size_t block_cols, uint16_t* out) {
  DequantRows<E5m2ToF32Bits, uint16_t, F32BitsToBf16>(codes, rows, cols, col_scales, block_cols,
                                                      out);
}
void DequantE5m2ToF16(const uint8_t* codes, size_t rows, size_t cols, const float* col_scales,
                      size_t block_cols, uint16_t* out) {
  DequantRows<E5m2ToF32Bits, uint16_t, F32BitsToF16>(codes, rows, cols, col_scales, block_cols,
                                                     out);
}

}  // namespace amn::ref
