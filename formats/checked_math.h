// Overflow-checked sizes: every shape product, stride product and byte size
// computed from an untrusted file goes through these (docs/limits.md).
#ifndef AMN_FORMATS_CHECKED_MATH_H_
#define AMN_FORMATS_CHECKED_MATH_H_

#include <cstdint>
#include <optional>
#include <span>

namespace amn::formats {

// a * b (a + b) into *out; false, with *out unspecified, when it overflows 64 bits.
inline bool CheckedMul(uint64_t a, uint64_t b, uint64_t* out) {
  return !__builtin_mul_overflow(a, b, out);
}
inline bool CheckedAdd(uint64_t a, uint64_t b, uint64_t* out) {
  return !__builtin_add_overflow(a, b, out);
}

inline std::optional<uint64_t> CheckedMul(uint64_t a, uint64_t b) {
  uint64_t out = 0;
  return CheckedMul(a, b, &out) ? std::optional(out) : std::nullopt;
}
inline std::optional<uint64_t> CheckedAdd(uint64_t a, uint64_t b) {
  uint64_t out = 0;
  return CheckedAdd(a, b, &out) ? std::optional(out) : std::nullopt;
}

// The element count of `shape`: 0 when any dimension is 0, whatever the
// others are (an empty tensor); nullopt when the product overflows 64 bits.
inline std::optional<uint64_t> ElementCount(std::span<const uint64_t> shape) {
  for (const uint64_t dim : shape) {
    if (dim == 0) return 0;
  }
  uint64_t elements = 1;
  for (const uint64_t dim : shape) {
    if (!CheckedMul(elements, dim, &elements)) return std::nullopt;
  }
  return elements;
}

// ElementCount(shape) * elem_bytes, or nullopt on overflow.
inline std::optional<uint64_t> ByteCount(std::span<const uint64_t> shape, uint64_t elem_bytes) {
  const std::optional<uint64_t> elements = ElementCount(shape);
  return elements ? CheckedMul(*elements, elem_bytes) : std::nullopt;
}

}  // namespace amn::formats

#endif  // AMN_FORMATS_CHECKED_MATH_H_
