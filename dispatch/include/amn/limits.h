// ParseLimits: bounds every parser checks declared sizes and counts against
// before allocating anything (DESIGN.md §7). Callers may only tighten them:
// Clamped() caps every field at the built-in maximum.
#ifndef AMN_LIMITS_H_
#define AMN_LIMITS_H_

#include <algorithm>
#include <cstdint>

namespace amn {

struct ParseLimits {
  // A safetensors JSON header (the spec's own cap is 100 MB).
  uint64_t max_header_bytes = uint64_t{100} << 20;
  // Tensors (or metadata entries, or array items) in one file.
  uint64_t max_item_count = uint64_t{1} << 20;
  // Largest single buffer a parser may allocate for the caller.
  uint64_t max_single_allocation = uint64_t{16} << 30;
  // Total bytes a model may declare (all shards together).
  uint64_t max_total_bytes = uint64_t{4} << 40;
  // Uncompressed / compressed ratio allowed when inflating.
  uint64_t max_decompression_ratio = 1000;

  // The built-in caps; a field above its cap is clamped to it.
  static ParseLimits BuiltIn() { return ParseLimits(); }
  ParseLimits Clamped() const {
    const ParseLimits cap = BuiltIn();
    ParseLimits out = *this;
    out.max_header_bytes = std::min(max_header_bytes, cap.max_header_bytes);
    out.max_item_count = std::min(max_item_count, cap.max_item_count);
    out.max_single_allocation = std::min(max_single_allocation, cap.max_single_allocation);
    out.max_total_bytes = std::min(max_total_bytes, cap.max_total_bytes);
    out.max_decompression_ratio = std::min(max_decompression_ratio, cap.max_decompression_ratio);
    return out;
  }
};

}  // namespace amn

#endif  // AMN_LIMITS_H_
