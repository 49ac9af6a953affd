// forget --like: where a weight's side values (FP8 scales, bnb absmax,
// INT8 SCB) lie in the like-model's files, and the read of one chunk's share
// of them while the chunk is encoded. Nothing is read up front, so the
// memory forget --like holds does not grow with the model (issue 15): a
// chunk reads its SideSpan values (bnb 4-bit block 64: 1/32 of the chunk's
// BF16 bytes, 64 KiB for a default chunk), never a whole weight's: one
// weight's absmax is not bounded by the chunk (1/32 of the weight at block
// 64, as large as it at block 2).
#ifndef AMN_FORMATS_LIKE_SIDE_H_
#define AMN_FORMATS_LIKE_SIDE_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "amn/status.h"
#include "formats/dtype.h"
#include "formats/engine_inputs.h"

namespace amn::formats {

// One side tensor of the like-model, as its header places it.
struct LikeSideTensor {
  size_t file = 0;      // index into the plan's input_files
  uint64_t offset = 0;  // of its first byte in that file
  Dtype dtype = Dtype::kF32;
  uint64_t elements = 0;
  std::string path;  // the file, for messages (MessageSafe)
  std::string name;  // the tensor, for messages (MessageSafe)
};

// A --like weight's side values: `values` holds them as floats (F32, F16 or
// BF16), or with double quant the U8 codes of the absmax, recovered as
// bitsandbytes' dequantize_4bit does: nested_map[code] *
// nested_absmax[block / nested_block_size] + nested_offset, two F32
// roundings.
struct LikeSide {
  LikeSideTensor values;
  bool nested = false;
  LikeSideTensor nested_absmax, nested_map;
  uint64_t nested_block_size = 0;
  float nested_offset = 0.0f;
  bool positive = false;  // FP8 scales: 0 is refused too (it would divide by 0)
};

// kInvalidArgument naming the file and tensor when `like`'s tensors cannot
// hold `count` side values (wrong dtype or element count, nested state that
// does not cover them). Checked once, before anything is written.
Status CheckLikeSide(const LikeSide& like, uint64_t count);

// Side values [first, first + side.size()) of `like`, read from `inputs`
// into `side`. A value the encoders refuse (NaN, infinite, negative; 0 where
// `positive`): a corrupt file, kInvalid naming the file, the tensor and the
// value's byte offset. A short read names the file.
Status ReadLikeSide(EngineInputs& inputs, const LikeSide& like, uint64_t first,
                    std::span<float> side);

}  // namespace amn::formats

#endif  // AMN_FORMATS_LIKE_SIDE_H_
