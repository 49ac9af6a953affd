// Test-side reading of an ArrayEntry, independent of the engine's
// amn::CopyStridedElements: an element-by-element odometer walk.
#ifndef AMN_TESTS_ARRAY_VIEW_BYTES_H_
#define AMN_TESTS_ARRAY_VIEW_BYTES_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <vector>

#include "formats/array_file.h"

namespace amn::test {

// The entry's elements in row-major order, little-endian: through
// data_offset, storage_offset and strides, each element's bytes reversed when
// big_endian. `member` holds the member's uncompressed data (data_offset is
// relative to its start). Empty (and a test failure) when a view leaves it.
inline std::vector<uint8_t> RowMajorLeBytes(const formats::ArrayEntry& entry,
                                            std::span<const uint8_t> member) {
  const size_t size = formats::DtypeBytes(entry.dtype);
  std::vector<uint8_t> out;
  if (entry.elements == 0) return out;
  std::vector<uint64_t> index(entry.shape.size(), 0);
  for (uint64_t n = 0; n < entry.elements; ++n) {
    uint64_t element = entry.storage_offset;
    for (size_t k = 0; k < index.size(); ++k) element += index[k] * entry.strides[k];
    const uint64_t at = entry.data_offset + element * size;
    EXPECT_LE(at + size, member.size()) << entry.name;
    if (at + size > member.size()) return {};
    for (size_t b = 0; b < size; ++b) out.push_back(member[at + (entry.big_endian ? size - 1 - b : b)]);
    for (size_t k = index.size(); k-- > 0;) {  // odometer, last index fastest
      if (++index[k] < entry.shape[k]) break;
      index[k] = 0;
    }
  }
  return out;
}

}  // namespace amn::test

#endif  // AMN_TESTS_ARRAY_VIEW_BYTES_H_
