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
  std::vector<TensorEntry> tensors;  // in data order (by data_begin, data_end, name)
  std::map<std::string, std::string> metadata;  // "__metadata__", strings only
};

// Validates everything before allocating per-tensor state (limits are
// Clamped() first):
// * N <= limits.max_header_bytes (kLimitExceeded), 8 + N <= file size
//   (kTruncated), data section <= limits.max_total_bytes (kLimitExceeded);
// * strict JSON (kInvalid): an object; no duplicate keys anywhere; no NUL
//   byte or byte-order mark; each tensor {"dtype", "shape", "data_offsets"}
//   with no other keys; shape and offsets of non-negative integers that fit
//   u64 (parsed as integers, never through a double); "__metadata__" a
//   string-to-string map. A dtype name not in Dtype is kUnsupported;
// * tensor count, metadata entries and shape rank each <=
//   limits.max_item_count (kLimitExceeded); element counts and byte sizes with
//   checked multiplication; data_offsets [begin, end) with begin <= end,
//   end - begin == elements * dtype size (kInvalid);
// * end inside the data section (kTruncated), no two tensors overlapping, and
//   no holes: sorted by begin, the tensors tile [0, data_bytes) exactly
//   (kInvalid).
// Errors name the file, the tensor and a byte offset where they can: the
// JSON token for header errors, the file offset for data-layout errors.
Result<SafetensorsHeader> ReadSafetensorsHeader(ByteSource& source, const ParseLimits& limits);

}  // namespace amn::formats

#endif  // AMN_FORMATS_SAFETENSORS_HEADER_H_
