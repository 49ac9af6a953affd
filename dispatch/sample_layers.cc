// The real-shaped sample layers (dispatch/sample_layers.h).
#include "dispatch/sample_layers.h"

#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <tuple>
#include <vector>

#include "dispatch/packed_chunk_rows.h"

namespace amn::internal {
namespace {

enum class Table { kF16Scales, kZeroBytes, kActOrderGIdx };

// Builds a table once per (kind, a, b); the vectors never move or die, so
// the pointers handed out stay valid.
template <class Fill>
const uint8_t* CachedTable(Table kind, size_t a, size_t b, size_t bytes, Fill fill) {
  static std::mutex mutex;
  static std::map<std::tuple<Table, size_t, size_t>, std::unique_ptr<std::vector<uint8_t>>> tables;
  std::lock_guard<std::mutex> lock(mutex);
  auto& table = tables[{kind, a, b}];
  if (!table) {
    table = std::make_unique<std::vector<uint8_t>>(bytes);
    for (size_t i = 0; i < bytes; ++i) (*table)[i] = fill(i);
  }
  return table->data();
}

}  // namespace

size_t RememberCallRows(size_t row_elems, ElemType out_type) {
  return PackedChunkRows(row_elems * ElemTypeBytes(out_type), kDefaultChunkBytes);
}

const uint8_t* LayerF16Scales(size_t groups, size_t n) {
  return CachedTable(Table::kF16Scales, groups, n, 2 * groups * n, [n](size_t byte) {
    const size_t j = byte / 2 % n;  // the column: every group alike
    // Exponent fields 6..10 (2^-9 .. 2^-5), mantissas spread over 0..1023.
    const uint32_t bits =
        static_cast<uint32_t>(((6 + (j * 7 + j / 64) % 5) << 10) | ((j * 97) % 1024));
    return static_cast<uint8_t>(byte % 2 == 0 ? bits : bits >> 8);
  });
}

const uint8_t* LayerZeroBytes(size_t groups, size_t row_bytes) {
  return CachedTable(Table::kZeroBytes, groups, row_bytes, groups * row_bytes,
                     [row_bytes](size_t i) {
                       const size_t j = i % row_bytes;  // every group alike
                       return static_cast<uint8_t>(0x78 + (j * 37) % 17 + (j / 251) % 7);
                     });
}

const uint8_t* LayerActOrderGIdx(size_t k, size_t group_size) {
  if (k == 0) return nullptr;  // (gcd(p, 0) = p: no p would do)
  uint64_t p = 40503;          // odd; the first from it coprime to k
  while (std::gcd(p, static_cast<uint64_t>(k)) != 1) p += 2;
  return CachedTable(Table::kActOrderGIdx, k, group_size, 4 * k, [k, group_size, p](size_t byte) {
    const uint64_t group = (byte / 4) * p % k / group_size;
    return static_cast<uint8_t>(group >> (8 * (byte % 4)));
  });
}

const uint8_t* GptOssExpertScales() {
  static const std::vector<uint8_t> table = [] {
    std::vector<uint8_t> t(kGptOssExpertRows * kGptOssExpertGroups);
    for (size_t i = 0; i < t.size(); ++i) t[i] = static_cast<uint8_t>(116 + (i * 5 + i / 90) % 9);
    return t;
  }();
  return table.data();
}

}  // namespace amn::internal
