// GGUF header parsing (versions 1-3): magic, version, metadata key/values of
// every type (nested arrays included), tensor infos, general.alignment and
// the data section, all validated before anything is allocated (DESIGN.md
// §5, §7). Reads the header through a 64 KiB read-ahead window; tensor data
// is never parsed.
#ifndef AMN_FORMATS_GGUF_H_
#define AMN_FORMATS_GGUF_H_

#include <cstdint>
#include <string>
#include <vector>

#include "amn/limits.h"
#include "amn/result.h"
#include "formats/byte_source.h"

namespace amn::formats {

enum class GgufValueType : uint32_t {
  kU8 = 0, kI8 = 1, kU16 = 2, kI16 = 3, kU32 = 4, kI32 = 5, kF32 = 6, kBool = 7,
  kString = 8, kArray = 9, kU64 = 10, kI64 = 11, kF64 = 12,
};

std::string_view GgufValueTypeName(GgufValueType type);

// One metadata value. Scalars use the member of their kind; arrays keep their
// element type, full count and only the first kKeptItems items (a tokenizer's
// 150,000 strings are parsed and checked, not stored).
struct GgufValue {
  static constexpr size_t kKeptItems = 16;
  GgufValueType type = GgufValueType::kU8;
  uint64_t u = 0;     // kU8, kU16, kU32, kU64
  int64_t i = 0;      // kI8, kI16, kI32, kI64
  double f = 0;       // kF32, kF64 (widened exactly)
  bool b = false;     // kBool
  std::string s;      // kString
  GgufValueType elem_type = GgufValueType::kU8;  // kArray
  uint64_t count = 0;                            // kArray: all items
  std::vector<GgufValue> items;                  // kArray: the first kKeptItems
};

struct GgufKeyValue {
  std::string key;
  GgufValue value;
  // Where the value lies in the file, from its u32 type to its end: the
  // GGUF writer copies a v2/v3 source's value bytes from here, so arrays
  // of any length (a tokenizer's) pass through without being parsed twice.
  uint64_t value_begin = 0;
  uint64_t value_end = 0;
};

struct GgufTensorInfo {
  std::string name;
  std::vector<uint64_t> dims;  // GGUF order: fastest-varying first (ne[0])
  uint32_t type = 0;           // ggml type id (amn::GgmlType)
  uint64_t offset = 0;         // relative to the data section, aligned
  uint64_t elements = 0;
  uint64_t bytes = 0;
};

struct GgufHeader {
  uint32_t version = 0;
  std::vector<GgufKeyValue> metadata;  // in file order
  std::vector<GgufTensorInfo> tensors;  // in file order
  uint64_t alignment = 32;              // general.alignment, default 32
  uint64_t data_offset = 0;             // absolute start of the data section
  uint64_t data_bytes = 0;              // file size - data_offset

  const GgufValue* Find(std::string_view key) const;
};

// Errors name the file, the key or tensor, and the byte offset:
// kInvalid (bad magic, values of the wrong type, dims, misaligned or
// overlapping data), kUnsupported (big-endian files, versions above 3,
// unknown tensor types), kTruncated (anything running past the file),
// kLimitExceeded (counts, string lengths, nesting, item totals over limits).
Result<GgufHeader> ReadGgufHeader(ByteSource& source, const ParseLimits& limits);

}  // namespace amn::formats

#endif  // AMN_FORMATS_GGUF_H_
