// safetensors header parsing and validation (DESIGN.md §5, §7): an 8-byte
// little-endian length N, N bytes of JSON, then the data section. Parsing
// reads exactly 8 + N bytes, never the data.
#ifndef AMN_FORMATS_SAFETENSORS_HEADER_H_
#define AMN_FORMATS_SAFETENSORS_HEADER_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "amn/limits.h"
#include "amn/result.h"
#include "formats/byte_source.h"
#include "formats/dtype.h"

namespace amn::formats {

struct TensorEntry {
  std::string name;
  Dtype dtype = Dtype::kF32;
  std::vector<uint64_t> shape;  // row-major; [] is a scalar
  uint64_t data_begin = 0;      // relative to the data section
  uint64_t data_end = 0;
  uint64_t elements = 0;        // product of shape (checked)
  uint64_t bytes() const { return data_end - data_begin; }
};

struct SafetensorsHeader {
  uint64_t json_bytes = 0;   // N
  uint64_t data_offset = 0;  // 8 + N: where the data section starts in the file
  uint64_t data_bytes = 0;   // file size - data_offset
  std::vector<TensorEntry> tensors;  // in data order (ascending data_begin)
  std::map<std::string, std::string> metadata;  // "__metadata__", strings only
};

// Validates everything before allocating per-tensor state:
// * N <= limits.max_header_bytes and 8 + N <= file size (kTruncated/kLimitExceeded);
// * strict JSON: an object; each tensor {"dtype", "shape", "data_offsets"} with
//   no other keys; known dtype; shape of non-negative integers (parsed as
//   integers, never through a double); "__metadata__" a string-to-string map;
// * tensor count <= limits.max_item_count; element counts and byte sizes with
//   checked multiplication; data_offsets [begin, end) with begin <= end,
//   end - begin == elements * dtype size;
// * offsets inside the data section, no two tensors overlapping, and no holes:
//   sorted by begin, the tensors tile [0, data_bytes) exactly.
// Errors name the file, the tensor and a byte offset where they can.
Result<SafetensorsHeader> ReadSafetensorsHeader(ByteSource& source, const ParseLimits& limits);

}  // namespace amn::formats

#endif  // AMN_FORMATS_SAFETENSORS_HEADER_H_
