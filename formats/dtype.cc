// Tensor dtypes: one traits table indexed by Dtype (safetensors spelling,
// element size in bytes, IEEE/bfloat float or not).
#include "formats/dtype.h"

#include <array>

namespace amn::formats {
namespace {

struct DtypeTraits {
  Dtype dtype;
  std::string_view name;
  size_t bytes;
  bool is_float;
};

// Same order as the enum: kDtypeTraits[static_cast<size_t>(d)].dtype == d.
constexpr std::array<DtypeTraits, 16> kDtypeTraits = {{
    {.dtype = Dtype::kF64, .name = "F64", .bytes = 8, .is_float = true},
    {.dtype = Dtype::kF32, .name = "F32", .bytes = 4, .is_float = true},
    {.dtype = Dtype::kF16, .name = "F16", .bytes = 2, .is_float = true},
    {.dtype = Dtype::kBf16, .name = "BF16", .bytes = 2, .is_float = true},
    {.dtype = Dtype::kI64, .name = "I64", .bytes = 8, .is_float = false},
    {.dtype = Dtype::kI32, .name = "I32", .bytes = 4, .is_float = false},
    {.dtype = Dtype::kI16, .name = "I16", .bytes = 2, .is_float = false},
    {.dtype = Dtype::kI8, .name = "I8", .bytes = 1, .is_float = false},
    {.dtype = Dtype::kU64, .name = "U64", .bytes = 8, .is_float = false},
    {.dtype = Dtype::kU32, .name = "U32", .bytes = 4, .is_float = false},
    {.dtype = Dtype::kU16, .name = "U16", .bytes = 2, .is_float = false},
    {.dtype = Dtype::kU8, .name = "U8", .bytes = 1, .is_float = false},
    {.dtype = Dtype::kBool, .name = "BOOL", .bytes = 1, .is_float = false},
    {.dtype = Dtype::kF8E4m3, .name = "F8_E4M3", .bytes = 1, .is_float = false},
    {.dtype = Dtype::kF8E5m2, .name = "F8_E5M2", .bytes = 1, .is_float = false},
    {.dtype = Dtype::kF8E8m0, .name = "F8_E8M0", .bytes = 1, .is_float = false},
}};

constexpr bool TableMatchesEnum() {
  for (size_t i = 0; i < kDtypeTraits.size(); ++i) {
    if (static_cast<size_t>(kDtypeTraits[i].dtype) != i) return false;
  }
  return true;
}
static_assert(TableMatchesEnum(), "kDtypeTraits must list the Dtype enum in order");
static_assert(static_cast<size_t>(Dtype::kF8E8m0) + 1 == kDtypeTraits.size(),
              "every Dtype needs a kDtypeTraits row");

// What an out-of-range enum value (a cast from a bad integer) reads as,
// rather than a read past the table: a name no file uses, one byte.
constexpr DtypeTraits kInvalidTraits = {
    .dtype = Dtype::kU8, .name = "INVALID", .bytes = 1, .is_float = false};

const DtypeTraits& TraitsOf(Dtype dtype) {
  const size_t index = static_cast<size_t>(dtype);
  return index < kDtypeTraits.size() ? kDtypeTraits[index] : kInvalidTraits;
}

}  // namespace

std::string_view DtypeName(Dtype dtype) { return TraitsOf(dtype).name; }

std::optional<Dtype> DtypeFromName(std::string_view name) {
  for (const DtypeTraits& traits : kDtypeTraits) {
    if (traits.name == name) return traits.dtype;
  }
  return std::nullopt;
}

size_t DtypeBytes(Dtype dtype) { return TraitsOf(dtype).bytes; }

bool IsFloat(Dtype dtype) { return TraitsOf(dtype).is_float; }

bool ConvertsWithTo(Dtype dtype) {
  return IsFloat(dtype) || dtype == Dtype::kF8E4m3 || dtype == Dtype::kF8E5m2;
}

}  // namespace amn::formats
