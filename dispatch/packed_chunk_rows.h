// Internal: how `amn remember` splits a packed (GPTQ, AWQ, bnb, FP4, ...)
// tensor into chunks of output rows. The engine (formats/engine_chunks.cc)
// plans its chunks with it and the bench samples (dispatch/sample_layers.h)
// call the kernels the same way, so the two cannot drift apart.
#ifndef AMN_DISPATCH_PACKED_CHUNK_ROWS_H_
#define AMN_DISPATCH_PACKED_CHUNK_ROWS_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace amn::internal {

// The engine's default output bytes per chunk (amn/model.h's chunk_bytes).
inline constexpr size_t kDefaultChunkBytes = size_t{4} << 20;

// Output rows of row_bytes each per chunk of at most chunk_bytes: whole
// units of 32 rows where a chunk holds that many (the kOutIn kernels work in
// tiles of up to 16 rows, GPTQ in blocks of 32, so no chunk but a tensor's
// last ends in a partial tile); at least one row.
inline uint64_t PackedChunkRows(uint64_t row_bytes, uint64_t chunk_bytes) {
  constexpr uint64_t kRowUnit = 32;
  uint64_t rows = std::max<uint64_t>(1, chunk_bytes / std::max<uint64_t>(1, row_bytes));
  if (rows >= kRowUnit) rows = rows / kRowUnit * kRowUnit;
  return rows;
}

}  // namespace amn::internal

#endif  // AMN_DISPATCH_PACKED_CHUNK_ROWS_H_
