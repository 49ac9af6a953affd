// Scalar reference for NVFP4 and gpt-oss MXFP4 dequantization: decode the
// E2M1 nibble, one F32 scale step, one F32 multiply, encode
// (kernels/ref/float_convert_ref), element by element.
#include "kernels/ref/fp4_ref.h"

#include <cstring>

#include "kernels/float_formats.h"
#include "kernels/ref/float_convert_ref.h"
#include "kernels/ref/fp8_dequant_ref.h"
#include "kernels/ref/fp8_ref.h"

namespace amn::ref {
namespace {

// compressed-tensors kE2M1ToFloat; transformers' FP4_VALUES holds the same
// magnitudes with the sign as bit 3.
constexpr float kE2m1Magnitudes[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};

bool IsF32NanBits(uint32_t bits) { return (bits & fmt::kF32AbsMask) > fmt::kF32ExpMask; }

uint32_t Bits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  return bits;
}
float FromBits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

uint32_t F32Identity(uint32_t bits) { return bits; }

template <typename TBits, auto kEncode>
void Store(void* out, size_t i, uint32_t f32_bits) {
  const TBits encoded = static_cast<TBits>(kEncode(f32_bits));
  std::memcpy(static_cast<unsigned char*>(out) + i * sizeof(TBits), &encoded, sizeof(encoded));
}

// Element 2k of a packed run is byte k's low nibble, 2k+1 its high nibble
// (unpack_fp4_from_uint8 and convert_moe_packed_tensors agree).
uint8_t NibbleAt(const uint8_t* packed, size_t i) {
  const uint8_t byte = packed[i / 2];
  return static_cast<uint8_t>(i % 2 == 0 ? byte & 0x0F : byte >> 4);
}

template <typename TBits, auto kEncode>
void Nvfp4Rows(const uint8_t* packed, const uint8_t* scales, float global_scale, size_t rows,
               size_t cols, void* out) {
  const size_t groups = cols / kNvfp4GroupElems;
  for (size_t r = 0; r < rows; ++r) {
    for (size_t c = 0; c < cols; ++c) {
      const float q = FromBits(
          Nvfp4GroupScaleBits(scales[r * groups + c / kNvfp4GroupElems], global_scale));
      const uint32_t value = E2m1ToF32Bits(NibbleAt(packed + r * (cols / 2), c));
      Store<TBits, kEncode>(out, r * cols + c, ScaledF32Bits(value, q));
    }
  }
}

template <typename TBits, auto kEncode>
void Mxfp4Rows(const uint8_t* blocks, const uint8_t* scales, size_t rows, size_t groups,
               void* out) {
  const size_t cols = groups * kMxfp4GroupElems;
  for (size_t r = 0; r < rows; ++r) {
    for (size_t c = 0; c < cols; ++c) {
      const size_t g = c / kMxfp4GroupElems;
      const float scale = FromBits(E8m0ToF32Bits(scales[r * groups + g]));
      const uint32_t value = E2m1ToF32Bits(NibbleAt(blocks + r * (cols / 2), c));
      Store<TBits, kEncode>(out, r * cols + c, ScaledF32Bits(value, scale));
    }
  }
}

// out[c - col_begin][r] = element [r][c] of the untransposed matrix.
template <typename TBits, auto kEncode>
void Mxfp4TransposedRows(const uint8_t* blocks, const uint8_t* scales, size_t rows, size_t groups,
                         size_t col_begin, size_t col_end, void* out) {
  const size_t cols = groups * kMxfp4GroupElems;
  for (size_t c = col_begin; c < col_end; ++c) {
    const size_t g = c / kMxfp4GroupElems;
    for (size_t r = 0; r < rows; ++r) {
      const float scale = FromBits(E8m0ToF32Bits(scales[r * groups + g]));
      const uint32_t value = E2m1ToF32Bits(NibbleAt(blocks + r * (cols / 2), c));
      Store<TBits, kEncode>(out, (c - col_begin) * rows + r, ScaledF32Bits(value, scale));
    }
  }
}

}  // namespace

uint32_t E2m1ToF32Bits(uint8_t nibble) {
  // values = kE2M1[abs] * where(sign, -1.0, 1.0): a separate F32 multiply,
  // which is what makes code 8 -0.0.
  const float sign = (nibble & 0x08) != 0 ? -1.0f : 1.0f;
  return Bits(kE2m1Magnitudes[nibble & 0x07] * sign);
}

uint32_t E8m0ToF32Bits(uint8_t e) {
  // 2^(e - 127): biased exponent e for e >= 1 (255 is +Inf, as F32 pow
  // overflows); e = 0 is 2^-127, the F32 subnormal with mantissa 2^22.
  return e == 0 ? 0x00400000u : static_cast<uint32_t>(e) << fmt::kF32MantBits;
}

uint32_t Nvfp4GroupScaleBits(uint8_t e4m3, float global_scale) {
  const uint32_t scale_bits = E4m3ToF32Bits(e4m3);
  // A separate division: nothing to fuse it with, and -ffp-contract=off.
  const uint32_t q = Bits(FromBits(scale_bits) / global_scale);
  if (!IsF32NanBits(q)) return q;
  if (IsF32NanBits(scale_bits)) return scale_bits;  // decoded NaNs are quiet
  const uint32_t global_bits = Bits(global_scale);
  if (IsF32NanBits(global_bits)) return global_bits | fmt::kF32QuietBit;
  return kF32InvalidProductNan;  // 0 / 0
}

void DequantNvfp4ToF32(const uint8_t* packed, const uint8_t* scales, float global_scale,
                       size_t rows, size_t cols, float* out) {
  Nvfp4Rows<uint32_t, F32Identity>(packed, scales, global_scale, rows, cols, out);
}
void DequantNvfp4ToBf16(const uint8_t* packed, const uint8_t* scales, float global_scale,
                        size_t rows, size_t cols, uint16_t* out) {
  Nvfp4Rows<uint16_t, F32BitsToBf16>(packed, scales, global_scale, rows, cols, out);
}
void DequantNvfp4ToF16(const uint8_t* packed, const uint8_t* scales, float global_scale,
                       size_t rows, size_t cols, uint16_t* out) {
  Nvfp4Rows<uint16_t, F32BitsToF16>(packed, scales, global_scale, rows, cols, out);
}

void DequantMxfp4StToF32(const uint8_t* blocks, const uint8_t* scales, size_t rows, size_t groups,
                       float* out) {
  Mxfp4Rows<uint32_t, F32Identity>(blocks, scales, rows, groups, out);
}
void DequantMxfp4StToBf16(const uint8_t* blocks, const uint8_t* scales, size_t rows, size_t groups,
                        uint16_t* out) {
  Mxfp4Rows<uint16_t, F32BitsToBf16>(blocks, scales, rows, groups, out);
}
void DequantMxfp4StToF16(const uint8_t* blocks, const uint8_t* scales, size_t rows, size_t groups,
                       uint16_t* out) {
  Mxfp4Rows<uint16_t, F32BitsToF16>(blocks, scales, rows, groups, out);
}

void DequantMxfp4StTransposedToF32(const uint8_t* blocks, const uint8_t* scales, size_t rows,
                                 size_t groups, size_t col_begin, size_t col_end, float* out) {
  Mxfp4TransposedRows<uint32_t, F32Identity>(blocks, scales, rows, groups, col_begin, col_end,
                                             out);
}
void DequantMxfp4StTransposedToBf16(const uint8_t* blocks, const uint8_t* scales, size_t rows,
                                  size_t groups, size_t col_begin, size_t col_end, uint16_t* out) {
  Mxfp4TransposedRows<uint16_t, F32BitsToBf16>(blocks, scales, rows, groups, col_begin, col_end,
                                               out);
}
void DequantMxfp4StTransposedToF16(const uint8_t* blocks, const uint8_t* scales, size_t rows,
                                 size_t groups, size_t col_begin, size_t col_end, uint16_t* out) {
  Mxfp4TransposedRows<uint16_t, F32BitsToF16>(blocks, scales, rows, groups, col_begin, col_end,
                                              out);
}

}  // namespace amn::ref
