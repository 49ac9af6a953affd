// The packed GPTQ layer as the kernels see it (no Highway, no checks): raw
// pointers into the checkpoint's tensors plus the shape, and the scalar
// field readers both the reference and the kernels' table builds use.
// Packing (GPTQModel gptqmodel/nn_modules/qlinear/__init__.py,
// PackableQuantLinear.pack / dequantize_weight): every tensor is int32
// little-endian, read as one LSB-first bit stream per packed line:
//   qweight [K*bits/32][N]: value (i, j) is bits [bits*i, bits*i + bits) of
//     column j's stream, i.e. word row (bits*i)/32 at shift (bits*i)%32;
//   qzeros [groups][N*bits/32]: value (g, j) is bits [bits*j, ...) of row
//     g's stream.
// For 3 bits a field may straddle two words (the 11th and 22nd of every 32):
// its high bits continue at bit 0 of the next word of the same stream.
#ifndef AMN_KERNELS_GPTQ_LAYOUT_H_
#define AMN_KERNELS_GPTQ_LAYOUT_H_

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "amn/elem_type.h"
#include "kernels/ggml_blocks.h"
#include "kernels/ref/float_convert_ref.h"

namespace amn::gptq {

struct LayerView {
  uint32_t bits = 4;  // 2, 3, 4 or 8
  size_t k = 0;       // in_features
  size_t n = 0;       // out_features
  size_t groups = 0;
  size_t group_size = 0;       // used when g_idx == nullptr
  bool zeros_plus_one = true;  // v1: the stored field is zero - 1
  ElemType scale_type = ElemType::kF16;
  const uint8_t* qweight = nullptr;  // [k*bits/32][n] u32 LE
  const uint8_t* qzeros = nullptr;   // [groups][n*bits/32] u32 LE
  const uint8_t* scales = nullptr;   // [groups][n] of scale_type
  const uint8_t* g_idx = nullptr;    // [k] i32 LE, or nullptr: g = i / group_size
};

using ggml::LoadLe16;
using ggml::LoadLe32;

// Field `index` (width `bits`) of the LSB-first stream whose word w is at
// words + w * stride_bytes. Reads the next word only when the field
// straddles it, so the last field never reads past its stream.
inline uint32_t StreamField(const uint8_t* words, size_t stride_bytes, uint32_t bits,
                            size_t index) {
  const size_t bit = index * bits;
  const size_t word = bit / 32;
  const uint32_t shift = static_cast<uint32_t>(bit % 32);
  uint64_t value = LoadLe32(words + word * stride_bytes) >> shift;
  if (shift + bits > 32) {
    value |= static_cast<uint64_t>(LoadLe32(words + (word + 1) * stride_bytes)) << (32 - shift);
  }
  return static_cast<uint32_t>(value) & ((1u << bits) - 1);
}

inline uint32_t WeightCode(const LayerView& l, size_t i, size_t j) {
  return StreamField(l.qweight + 4 * j, 4 * l.n, l.bits, i);
}

// The effective zero: the field, + 1 for v1 checkpoints (GPTQModel
// convert_gptq_v1_to_v2_format adds 1 to each unpacked field, no carry).
inline uint32_t Zero(const LayerView& l, size_t g, size_t j) {
  const size_t row_bytes = l.n * l.bits / 32 * 4;
  return StreamField(l.qzeros + g * row_bytes, 4, l.bits, j) + (l.zeros_plus_one ? 1u : 0u);
}

// The scale as F32 bits: exact widening (BF16 << 16, IEEE F16 widening).
inline uint32_t ScaleBits(const LayerView& l, size_t g, size_t j) {
  const size_t at = g * l.n + j;
  switch (l.scale_type) {
    case ElemType::kF32:
      return LoadLe32(l.scales + 4 * at);
    case ElemType::kBf16:
      return ref::Bf16ToF32Bits(LoadLe16(l.scales + 2 * at));
    default:  // F16: = ref::F16ToF32Bits, inline for normal numbers
      return ggml::F16ScaleBits(LoadLe16(l.scales + 2 * at));
  }
}

inline size_t GroupOf(const LayerView& l, size_t i) {
  return l.g_idx != nullptr ? static_cast<size_t>(LoadLe32(l.g_idx + 4 * i)) : i / l.group_size;
}

}  // namespace amn::gptq

#endif  // AMN_KERNELS_GPTQ_LAYOUT_H_
