// The scalar references' shared row loop for the 256-element ggml
// super-block families (K-quants, I-quants).
#ifndef AMN_KERNELS_REF_SUPERBLOCK_ROWS_H_
#define AMN_KERNELS_REF_SUPERBLOCK_ROWS_H_

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "kernels/ref/float_convert_ref.h"

namespace amn::ref {

// n_blocks blocks of GGUF type `type` to n_blocks * 256 outputs: each block
// decoded to F32 by decode_block(type, block, float[256]), then for uint16_t
// outputs rounded to BF16 (kBf16) or F16. False, nothing written, when
// block_bytes(type) is 0 (a type outside the family).
template <bool kBf16, typename TOut>
bool SuperBlockRows(size_t (*block_bytes)(uint32_t),
                    void (*decode_block)(uint32_t, const uint8_t*, float*), uint32_t type,
                    const uint8_t* blocks, size_t n_blocks, TOut* out) {
  constexpr size_t kElems = 256;
  const size_t bytes = block_bytes(type);
  if (bytes == 0) return false;
  for (size_t i = 0; i < n_blocks; ++i) {
    if constexpr (std::is_same_v<TOut, float>) {
      decode_block(type, blocks + i * bytes, out + i * kElems);
    } else {
      float tmp[kElems];
      decode_block(type, blocks + i * bytes, tmp);
      if constexpr (kBf16) {
        ConvertF32ToBf16(tmp, kElems, out + i * kElems);
      } else {
        ConvertF32ToF16(tmp, kElems, out + i * kElems);
      }
    }
  }
  return true;
}

}  // namespace amn::ref

#endif  // AMN_KERNELS_REF_SUPERBLOCK_ROWS_H_
