// Tensor dtypes as safetensors names them, with their sizes.
#ifndef AMN_FORMATS_DTYPE_H_
#define AMN_FORMATS_DTYPE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace amn::formats {

enum class Dtype : uint8_t {
  kF64, kF32, kF16, kBf16,
  kI64, kI32, kI16, kI8,
  kU64, kU32, kU16, kU8,
  kBool,
  kF8E4m3, kF8E5m2, kF8E8m0,
};

// The safetensors spelling: "F32", "BF16", "F8_E4M3", "BOOL", ...
std::string_view DtypeName(Dtype dtype);
std::optional<Dtype> DtypeFromName(std::string_view name);  // exact, case-sensitive
size_t DtypeBytes(Dtype dtype);
bool IsFloat(Dtype dtype);  // F64, F32, F16, BF16 (not FP8)
// What `remember --to` converts in NPY/NPZ/PyTorch files: IsFloat and FP8
// E4M3/E5M2 (E8M0, a scale type without a conversion kernel, is kept).
bool ConvertsWithTo(Dtype dtype);

}  // namespace amn::formats

#endif  // AMN_FORMATS_DTYPE_H_
