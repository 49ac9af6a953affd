// Reading plain arrays out of foreign containers (NPY, NPZ, PyTorch): a
// strided, possibly byte-swapped view copied into row-major order, and float
// conversions between F64/F32/F16/BF16 (and from FP8 E4M3/E5M2). Memory movement, not arithmetic: the
// element loops are plain C++ (memcpy runs and byte swaps the compiler
// vectorizes); the float narrowing calls the Highway kernels of convert.h.
#ifndef AMN_ARRAY_COPY_H_
#define AMN_ARRAY_COPY_H_

#include <cstddef>
#include <cstdint>
#include <span>

#include "amn/export.h"
#include "amn/status.h"

namespace amn {

// Element (i0, ..., in-1) of the view is at
//   storage + (offset + sum_k i_k * strides[k]) * elem_bytes.
struct StridedView {
  const std::byte* storage = nullptr;
  size_t elem_bytes = 1;  // 1, 2, 4 or 8
  std::span<const uint64_t> shape;
  std::span<const uint64_t> strides;  // in elements, one per dimension
  uint64_t offset = 0;                // in elements
};

// Copies the view's row-major elements [first, first + count) into out
// (count * elem_bytes bytes), reversing each element's bytes when
// swap_bytes. The caller has checked that every index lies in the storage.
// kInvalidArgument when out is too small, elem_bytes is not 1/2/4/8, or the
// ranks differ.
AMN_API Status CopyStridedElements(const StridedView& view, uint64_t first, uint64_t count,
                                   bool swap_bytes, std::span<std::byte> out);

enum class FloatType : uint8_t { kF64, kF32, kF16, kBf16, kF8E4m3, kF8E5m2 };

// Converts count floats from `from` to `to` (raw little-endian bit patterns).
// F32/F16/BF16 pairs use convert.h's kernels and rules (docs/formats.md);
// F64 is first rounded to F32 (round to nearest even, NaN kept quiet with its
// top payload bits, as a C cast does), which is also what PyTorch's
// .to(torch.bfloat16/float16) does with doubles. FP8 E4M3/E5M2 widen with
// convert.h's exact FP8 kernels. The same type copies. Conversions to F64 or
// to FP8 are not offered (kInvalidArgument).
AMN_API Status ConvertFloats(FloatType from, std::span<const std::byte> in, FloatType to,
                             std::span<std::byte> out);

}  // namespace amn

#endif  // AMN_ARRAY_COPY_H_
