// Shared by the packed-integer references (AWQ, compressed-tensors
// pack-quantized): little-endian loads from file bytes, exact widening of a
// F32/F16/BF16 scale to F32 bits, and the store of one output element.
// Plain C++ (no Highway), so the Highway kernels use the same helpers for
// their per-tile scale tables and scalar tails.
#ifndef AMN_KERNELS_REF_PACKED_WORDS_H_
#define AMN_KERNELS_REF_PACKED_WORDS_H_

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "amn/elem_type.h"
#include "kernels/ref/float_convert_ref.h"

namespace amn::ref {

inline uint32_t LoadLe32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}

inline uint16_t LoadLe16(const uint8_t* p) {
  return static_cast<uint16_t>(p[0] | p[1] << 8);
}

// F32 bits of element `index` of a little-endian scale array of `type`
// (kF32, kF16 or kBf16): exact (BF16 is bits << 16, PyTorch's widening; F16
// is IEEE widening, signalling NaNs quieted as ref::F16ToF32Bits does).
inline uint32_t ScaleF32Bits(const uint8_t* scales, ElemType type, size_t index) {
  switch (type) {
    case ElemType::kF32: return LoadLe32(scales + 4 * index);
    case ElemType::kBf16: return Bf16ToF32Bits(LoadLe16(scales + 2 * index));
    default: return F16ToF32Bits(LoadLe16(scales + 2 * index));
  }
}

// Stores F32 bits as element `index` of `out` in out_type (kF32 as is,
// kBf16 / kF16 by ref::F32BitsToBf16 / F32BitsToF16); `out` may sit at any
// byte address.
inline void StoreOutBits(uint32_t bits, ElemType out_type, void* out, size_t index) {
  auto* bytes = static_cast<unsigned char*>(out);
  if (out_type == ElemType::kF32) {
    std::memcpy(bytes + 4 * index, &bits, 4);
    return;
  }
  const uint16_t half = out_type == ElemType::kBf16 ? F32BitsToBf16(bits) : F32BitsToF16(bits);
  std::memcpy(bytes + 2 * index, &half, 2);
}

}  // namespace amn::ref

#endif  // AMN_KERNELS_REF_PACKED_WORDS_H_
