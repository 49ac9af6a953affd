// The FP8 weight layouts (DESIGN.md §5): how an FP8 weight's scales are laid
// out (per tensor, per output channel, or R x C blocks). Detection is in
// fp8_scheme.cc (DetectFp8Weights, formats/scheme_builder.h).
#ifndef AMN_FORMATS_FP8_SCHEME_H_
#define AMN_FORMATS_FP8_SCHEME_H_

#include <cstddef>
#include <cstdint>

namespace amn::formats {

enum class Fp8Layout : uint8_t { kPerTensor, kPerChannel, kBlock };

// Where a tensor lives: shards[shard].header.tensors[index].
struct TensorRef {
  size_t shard = 0;
  size_t index = 0;
};

struct Fp8Weight {
  TensorRef weight;
  TensorRef scale;
  Fp8Layout layout = Fp8Layout::kPerTensor;
  // The weight as a [rows, cols] matrix: cols is the last dimension, rows the
  // product of the others (per-channel and block layouts require 2-D).
  uint64_t rows = 0;
  uint64_t cols = 0;
  uint64_t block_rows = 0;  // kBlock only
  uint64_t block_cols = 0;
  uint64_t scale_cols = 0;  // kBlock: ceil(cols / block_cols)
};

}  // namespace amn::formats

#endif  // AMN_FORMATS_FP8_SCHEME_H_
