// Reading a plain (unquantized) tensor's elements as the plan describes
// them: straight from the file, converted between float types, or gathered
// from a strided/byte-swapped array. Shared by the remember engine and by
// forget, whose encoders and statistics pass read their floats this way.
#ifndef AMN_FORMATS_SOURCE_READS_H_
#define AMN_FORMATS_SOURCE_READS_H_

#include <cstddef>
#include <cstdint>
#include <span>

#include "amn/array_copy.h"
#include "amn/status.h"
#include "formats/engine_inputs.h"
#include "formats/remember_plan.h"

namespace amn::formats {

FloatType FloatTypeOf(Dtype d);

// Row-major elements [first, first + count) of an array job, in the output
// dtype: gathered through the strides (byte-swapped when big-endian), then
// converted through `scratch` when the dtype changes.
Status GatherArrayChunk(const OutputTensor& out, std::span<const std::byte> storage, uint64_t first,
                        uint64_t count, std::span<std::byte> scratch, std::span<std::byte> dst);

// Scratch bytes ReadSourceElements needs for `count` elements of `src`.
uint64_t SourceScratchBytes(const OutputTensor& src, uint64_t count);

// Elements [first, first + count) of `src` (a kCopy, kConvert or kArray job
// of tensor index `tensor`) in src.dtype, into `dst`.
Status ReadSourceElements(EngineInputs& inputs, size_t tensor, const OutputTensor& src,
                          uint64_t first, uint64_t count, std::span<std::byte> scratch,
                          std::span<std::byte> dst);

}  // namespace amn::formats

#endif  // AMN_FORMATS_SOURCE_READS_H_
