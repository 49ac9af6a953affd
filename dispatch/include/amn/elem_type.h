// Element types the kernels read and write.
#ifndef AMN_ELEM_TYPE_H_
#define AMN_ELEM_TYPE_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "amn/export.h"

namespace amn {

enum class ElemType : uint8_t { kF32, kF16, kBf16, kF8E4m3, kF8E5m2 };

AMN_API std::string_view ElemTypeName(ElemType type);  // "f32", "e4m3", ...
AMN_API size_t ElemTypeBytes(ElemType type);

}  // namespace amn

#endif  // AMN_ELEM_TYPE_H_
