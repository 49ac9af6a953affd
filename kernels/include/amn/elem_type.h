// Element types the kernels read and write: vocabulary shared by kernels/,
// dispatch/ and every public header (header-only, no Highway).
#ifndef AMN_ELEM_TYPE_H_
#define AMN_ELEM_TYPE_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace amn {

enum class ElemType : uint8_t { kF32, kF16, kBf16, kF8E4m3, kF8E5m2 };

// "f32", "f16", "bf16", "e4m3", "e5m2".
constexpr std::string_view ElemTypeName(ElemType type) {
  switch (type) {
    case ElemType::kF32: return "f32";
    case ElemType::kF16: return "f16";
    case ElemType::kBf16: return "bf16";
    case ElemType::kF8E4m3: return "e4m3";
    case ElemType::kF8E5m2: return "e5m2";
  }
  return "unknown";
}

constexpr size_t ElemTypeBytes(ElemType type) {
  switch (type) {
    case ElemType::kF32: return 4;
    case ElemType::kF16:
    case ElemType::kBf16: return 2;
    case ElemType::kF8E4m3:
    case ElemType::kF8E5m2: return 1;
  }
  return 0;
}

// The three dequantizer outputs.
constexpr bool IsDequantOutput(ElemType type) {
  return type == ElemType::kF32 || type == ElemType::kF16 || type == ElemType::kBf16;
}

}  // namespace amn

#endif  // AMN_ELEM_TYPE_H_
