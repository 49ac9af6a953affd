// Reading any element range of a tensor as the plan describes it: straight
// from the file, converted between float types, gathered from a
// strided/byte-swapped array, or dequantized (FP8, ggml blocks, packed
// schemes). Shared by the remember engine (row-permuted tensors) and by
// forget and quantized GGUF output, whose encoders and statistics pass read
// their floats this way: a quantized input is dequantized in the same pass
// as it is encoded again, with the bytes remember would have written.
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

// Scratch bytes ReadSourceElements needs for elements [first, first +
// count) of `src`: the raw input of a conversion, gathered array or ggml
// blocks, and for a range that starts or ends inside a ggml block or a
// packed row, those whole blocks or rows decoded.
uint64_t SourceScratchBytes(const OutputTensor& src, uint64_t first, uint64_t count);

// FP8 elements [first, first + count) of weight `w` (row-major, any range:
// rows split at scale blocks) from their `codes`, times `scales` (the
// weight's F32 scale grid), as `out_type`.
Status DequantFp8Elements(const Fp8Weight& w, std::span<const float> scales, ElemType code_type,
                          uint64_t first, std::span<const uint8_t> codes, ElemType out_type,
                          std::span<std::byte> out);

// Elements [first, first + count) of `src` (tensor index `tensor` in
// `inputs`; decode kCopy, kConvert, kArray, kFp8, kGgml or kPacked) in
// src.dtype, into `dst`; `scratch` as SourceScratchBytes says.
Status ReadSourceElements(EngineInputs& inputs, size_t tensor, const OutputTensor& src,
                          uint64_t first, uint64_t count, std::span<std::byte> scratch,
                          std::span<std::byte> dst);

}  // namespace amn::formats

#endif  // AMN_FORMATS_SOURCE_READS_H_
