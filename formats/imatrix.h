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
// allocated; errors name the file and the byte offset. The GGUF imatrix
// format (<name>.in_sum2 / <name>.counts tensors) is not read here.
#ifndef AMN_FORMATS_IMATRIX_H_
#define AMN_FORMATS_IMATRIX_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "amn/result.h"

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

}  // namespace amn

#endif  // AMN_FORMATS_IMATRIX_H_
