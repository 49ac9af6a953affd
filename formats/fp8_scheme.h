// FP8 checkpoint scheme detection (DESIGN.md §5): which tensors are FP8
// weights, which scale companion each uses and how its scales are laid out
// (per tensor, per output channel, or R x C blocks), which tensors are
// consumed, and which pass through unchanged.
#ifndef AMN_FORMATS_FP8_SCHEME_H_
#define AMN_FORMATS_FP8_SCHEME_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "amn/result.h"
#include "formats/model_files.h"

namespace amn::formats {

enum class TensorRole : uint8_t {
  kPassthrough,  // written as it is
  kQuantized,    // an FP8 weight, dequantized
  kScale,        // the scale companion of a quantized weight (consumed)
  kDropped,      // activation / KV-cache scales: meaningless once dequantized
};

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

struct ModelScheme {
  bool quantized = false;
  std::string description;  // e.g. "Fine-grained FP8, 128x128 blocks (E4M3)"
  // Non-empty when the model is quantized in a way this build cannot
  // dequantize yet: headers can be listed, remember refuses with this text.
  std::string unsupported;
  std::vector<Fp8Weight> fp8_weights;
  std::vector<std::vector<TensorRole>> roles;          // [shard][tensor]
  std::vector<std::vector<int64_t>> fp8_index;         // [shard][tensor] -> fp8_weights, or -1
  TensorRole RoleOf(TensorRef ref) const { return roles[ref.shard][ref.index]; }
};

// Classifies every tensor of `files`. An F8_E4M3/F8_E5M2 tensor NAME needs a
// companion NAME_scale (per-tensor: one element; per-channel: [rows] or
// [rows, 1]) or NAME_scale_inv (blocks [ceil(rows/R), ceil(cols/C)], R x C
// from config.json quantization_config.weight_block_size, else 128 x 128,
// else inferred from the grid as R = ceil(rows / grid rows), C likewise;
// one element is per-tensor), of dtype F32, BF16 or F16; the scale is
// multiplied, never divided. Errors (kInvalid, naming the tensor): a missing
// or mis-shaped scale, a scale of another dtype, a bad weight_block_size.
// Schemes this build cannot dequantize yet (a quantization_config.quant_method
// other than FP8, or GPTQ/AWQ/bitsandbytes/packed tensor names) are not an
// error here: they set `unsupported`.
Result<ModelScheme> DetectScheme(const ModelFiles& files);

}  // namespace amn::formats

#endif  // AMN_FORMATS_FP8_SCHEME_H_
