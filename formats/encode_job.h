// What `forget` does to one weight: which encode kernel (amn/quantize.h),
// its parameters, and the F32 side values (FP8 scales, bnb absmax, INT8 SCB)
// it is always given, so the kernels never depend on how a tensor is split
// into chunks. Chunk boundaries are multiples of EncodeUnitElems and depend
// only on the chunk size, never on the thread count.
#ifndef AMN_FORMATS_ENCODE_JOB_H_
#define AMN_FORMATS_ENCODE_JOB_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "amn/elem_type.h"
#include "amn/quantize.h"
#include "amn/status.h"

namespace amn::formats {

struct LikeSide;  // formats/like_side.h

// kGgml: a ggml block type (convert to quantized GGUF), row by row through
// amn::QuantizeGgml; no side values (each block carries its own scales).
enum class EncodeKind : uint8_t { kFp8, kBnb4, kBnbInt8, kGgml };

struct EncodeJob {
  EncodeKind kind = EncodeKind::kFp8;
  ElemType source_type = ElemType::kBf16;  // the floats the source job makes
  uint64_t rows = 0, cols = 0;  // the weight as [rows, cols] (leading dims folded into rows)
  // FP8: the scale grid's group; per-tensor is (rows, cols), per-channel
  // (1, cols), fine-grained (128, 128).
  Fp8Format fp8_format = Fp8Format::kE4m3;
  uint64_t group_rows = 0, group_cols = 0;
  // bitsandbytes 4-bit.
  Bnb4Type bnb_type = Bnb4Type::kNf4;
  uint64_t block_size = 64;
  // Double quant: the offset, mean(absmax) over the whole tensor, measured
  // by the statistics pass (formats/forget_stats.h); the nested side
  // tensors are then made a few nested blocks at a time.
  float nested_offset = 0.0f;
  // Double quant: each nested block's absmax of (absmax - offset), made by
  // the statistics pass from the block absmax it holds anyway, so that the
  // `.nested_absmax` side tensor needs no read of the weight. One F32 per
  // kBnbNestedBlock bnb blocks: 1/8192 of a BF16 weight's bytes at block
  // 64, kept until the side tensor is written.
  std::vector<float> nested_absmax;
  // ggml: the block type; cols is a multiple of its block elements.
  GgmlType ggml_type = GgmlType::kQ8_0;
  // The F32 values the kernel is given: the FP8 scale grid (row-major), the
  // exact bnb block absmax, or the INT8 SCB (one per row). Held only where
  // a chunk cannot measure its own: FP8 per-tensor (one scale). Empty: each
  // chunk measures its groups (ChunkSideValues), so no tensor's side values
  // outlive its chunks.
  std::vector<float> side;
  // --like: where the like-model keeps this weight's side values; each
  // chunk reads its own share of them (ReadLikeSide) and is encoded with
  // them (EncodeChunkWithSide), so none is held for the whole weight.
  std::shared_ptr<const LikeSide> like;
  // ggml: the importance matrix's per-column values (convert --imatrix), one
  // vector for the whole tensor: cols values per matrix, the matrices
  // (experts, dims above the rows) stacked; rows / (imatrix.size() / cols)
  // rows each. Empty: none (amn::QuantizeGgml without one).
  std::vector<float> imatrix;
  // What quantization took, summed chunk by chunk in chunk order by the
  // engine's writing thread.
  QuantError error;
};

uint64_t Elements(const EncodeJob& job);
// FP8 with one scale for the whole tensor: each chunk's amax is one value,
// and the tensor's is their max.
bool PerTensorFp8(const EncodeJob& job);
// Entries of `side`: scale groups, bnb blocks or rows.
uint64_t SideCount(const EncodeJob& job);
// Chunk boundaries are multiples of this many elements: a row (FP8
// per-tensor and per-channel, INT8), a band of group_rows rows
// (fine-grained FP8) or a block (bnb 4-bit).
uint64_t EncodeUnitElems(const EncodeJob& job);
// Bytes of codes for elements [begin, end) (begin a multiple of the unit).
uint64_t EncodedBytes(const EncodeJob& job, uint64_t begin, uint64_t end);

// The statistics pass: max |x| over elements [begin, end) of the tensor
// (given as `floats`), per side group, into `amax`: entries
// [SideFirst(begin), SideFirst(begin) + SideSpan(begin, end)) of the side
// grid; FP8 per-tensor gives one value (the chunk's max), to be maxed.
Status AbsMaxChunk(const EncodeJob& job, uint64_t begin, uint64_t end,
                   std::span<const std::byte> floats, std::span<float> amax);
uint64_t SideFirst(const EncodeJob& job, uint64_t begin);
uint64_t SideSpan(const EncodeJob& job, uint64_t begin, uint64_t end);

// bitsandbytes' quantize_4bit compresses absmax in blocks of 256 (double quant).
inline constexpr uint64_t kBnbNestedBlock = 256;

// The side values of elements [begin, end) (as `floats`; whole encode
// units), SideSpan of them into `side`: the job's own when it holds them
// (FP8 per-tensor), else measured from the chunk: bnb absmax, INT8
// SCB, FP8 scales Fp8ScaleFromAmax(amax of each group). A NaN or infinity is
// kInvalid (the caller names the tensor). Max is exact, so the values do not
// depend on how the tensor is cut into chunks.
Status ChunkSideValues(const EncodeJob& job, uint64_t begin, uint64_t end,
                       std::span<const std::byte> floats, std::span<float> side);

// Encodes elements [begin, end) (as `floats`) into `codes`
// (EncodedBytes of them) with the chunk's side values (ChunkSideValues); `error` gets what was
// lost (may be null). Not for a job with `like` (its values are read).
Status EncodeChunk(const EncodeJob& job, uint64_t begin, uint64_t end,
                   std::span<const std::byte> floats, std::span<std::byte> codes, QuantError* error);
// The same with the chunk's side values given (SideSpan of them; ignored
// for kGgml): --like, whose values are read from the like-model's files.
Status EncodeChunkWithSide(const EncodeJob& job, uint64_t begin, uint64_t end,
                           std::span<const std::byte> floats, std::span<float> side,
                           std::span<std::byte> codes, QuantError* error);

}  // namespace amn::formats

#endif  // AMN_FORMATS_ENCODE_JOB_H_
