// How the streaming engine cuts a shard's output tensors into chunks: the
// unit of work the writers hand to worker threads and of bounded memory
// (formats/remember_engine.cc).
#ifndef AMN_FORMATS_ENGINE_CHUNKS_H_
#define AMN_FORMATS_ENGINE_CHUNKS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "formats/remember_plan.h"

namespace amn::formats {

// A piece of one output tensor. FP8: rows [row_begin, row_end) and columns
// [col_begin, col_end) (a column range only within a single row). Copy and
// ggml: the input bytes [in_begin, in_begin + in_bytes) of the tensor.
// Packed: output rows [row_begin, row_end). Array: row-major elements
// [row_begin, row_end), in_bytes of them in the source dtype when converted.
// Convert: the input bytes [in_begin, in_begin + in_bytes), whole elements.
struct Chunk {
  size_t tensor = 0;
  uint64_t row_begin = 0, row_end = 0, col_begin = 0, col_end = 0;
  uint64_t in_begin = 0, in_bytes = 0;
  uint64_t out_bytes = 0;
  uint64_t scratch_bytes = 0;  // encode, permuted: what ReadSourceElements needs
  bool last_of_tensor = false;
};

// The chunks of every tensor of `shard`, in output order, each at most about
// `chunk_bytes` of output (whole rows, blocks or FP8 scale groups); an empty
// tensor gets one empty chunk, and each tensor's last chunk is marked.
std::vector<Chunk> MakeChunks(const OutputShard& shard, size_t chunk_bytes);

}  // namespace amn::formats

#endif  // AMN_FORMATS_ENGINE_CHUNKS_H_
