// Reader of llama.cpp's legacy importance-matrix file (`llama-imatrix
// --output-format dat`, tools/imatrix/imatrix.cpp save_imatrix_legacy): the
// per-column importance values that llama-quantize --imatrix passes to
// ggml_quantize_chunk. Layout, little-endian:
//   int32 n_entries
//   n_entries x { int32 name_len, name_len bytes name, int32 ncall,
//                 int32 nval, float32[nval] values }
//   optional: int32 last_call, int32 dataset_len, dataset_len bytes dataset
// The writer stores each value as (sum of squared activations / count) *
// ncall. Every length is checked against the bytes left before anything is
// allocated; errors name the file and the byte offset.
//
// The GGUF imatrix (llama-imatrix's default output, save_imatrix): F32
// tensors <name>.in_sum2 (ne = [cols, n_mat]: per column the sum of squared
// activations, per expert matrix) and <name>.counts (ne = [1, n_mat]: the
// activation rows each matrix saw), optional <name>.in_sum; metadata
// general.type = "imatrix", imatrix.chunk_count, imatrix.chunk_size (u32).
#ifndef AMN_FORMATS_IMATRIX_H_
#define AMN_FORMATS_IMATRIX_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "amn/limits.h"
#include "amn/result.h"
#include "formats/byte_source.h"

namespace amn {

struct ImatrixEntry {
  std::string name;  // the weight tensor's name, e.g. blk.0.attn_q.weight
  int32_t ncall = 0;
  std::vector<float> values;
};

struct ImatrixDat {
  std::vector<ImatrixEntry> entries;
  bool has_trailer = false;  // last_call and dataset present
  int32_t last_call = 0;
  std::string dataset;
};

// Limits on what one file may declare (a real model has a few hundred
// entries of at most a few hundred thousand columns).
inline constexpr int32_t kImatrixMaxEntries = 1 << 20;
inline constexpr int32_t kImatrixMaxNameBytes = 1 << 16;

// Parses `bytes` (the whole file); file_name only labels errors. Errors:
// kTruncated (a declared field or array runs past the end), kInvalid
// (negative count or length, bytes after the trailer), kLimitExceeded.
Result<ImatrixDat> ParseImatrixDat(std::span<const uint8_t> bytes, std::string_view file_name);

struct ImatrixGgufEntry {
  std::string name;  // the weight tensor's name (without .in_sum2)
  uint64_t cols = 0, n_mat = 0;
  std::vector<float> in_sum2;  // cols * n_mat, matrix-major
  std::vector<float> counts;   // n_mat
};

struct ImatrixGguf {
  std::vector<ImatrixGgufEntry> entries;  // in the file's tensor order
  uint32_t chunk_count = 0, chunk_size = 0;  // 0 when absent
};

// Reads the GGUF header (formats/gguf.h, its checks and limits), pairs every
// <name>.in_sum2 with its <name>.counts and reads both. Errors (kInvalid,
// naming the tensor): a tensor not F32, in_sum2 with more than two
// dimensions, counts missing or not n_mat elements, general.type present
// and not "imatrix".
Result<ImatrixGguf> ReadImatrixGguf(formats::ByteSource& source, const ParseLimits& limits);

// The per-column importance values llama-quantize hands to
// ggml_quantize_chunk for this weight (tools/quantize's loaders): legacy,
// value / ncall when ncall > 0 (else the values as stored); GGUF, per
// matrix in_sum2 / count when count > 0, else 1 for every column. One value
// per column of the weight (n_mat * cols for stacked experts), not per
// weight element.
std::vector<float> ImportanceValues(const ImatrixEntry& entry);
std::vector<float> ImportanceValues(const ImatrixGgufEntry& entry);

}  // namespace amn

#endif  // AMN_FORMATS_IMATRIX_H_
