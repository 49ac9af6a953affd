// The remember plan: for every output shard, the tensors it will hold (one
// job per output tensor: its dtype, shape, byte range and source), computed
// from the headers alone so the output header is known before any data is
// produced (DESIGN.md §6).
#ifndef AMN_FORMATS_REMEMBER_PLAN_H_
#define AMN_FORMATS_REMEMBER_PLAN_H_

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "amn/elem_type.h"
#include "amn/result.h"
#include "formats/array_file.h"
#include "formats/encode_job.h"
#include "formats/gguf.h"
#include "formats/packed_decode.h"
#include "formats/quant_scheme.h"

namespace amn::formats {

// How an output tensor's bytes are made from its input bytes.
enum class Decode : uint8_t {
  kCopy,  // the input bytes as they are
  kFp8,   // FP8 codes times scales (fp8_layout, scale_*)
  kGgml,  // ggml blocks of type ggml_type
  kPacked,  // a packed safetensors scheme (packed), by output rows
  kArray,   // a strided / byte-swapped / converted plain array (array), by elements
  kConvert,  // contiguous floats of source_dtype converted to dtype, by elements
  kEncode,   // forget: the floats `source` makes, encoded per `encode` (codes only)
  kInline,   // forget: side tensor bytes computed before writing (`inline_bytes`)
  kSide,     // forget: a side tensor of `encode`, measured from `source` as it is written
};

// kSide: which side tensor of a weight (formats/forget_plan.h).
enum class SidePart : uint8_t {
  kValues,        // the job's F32 side values: FP8 scales, bnb absmax, INT8 SCB
  kNestedCodes,   // double quant: the U8 codes of absmax - offset
  kNestedAbsmax,  // double quant: F32 absmax of each nested block
};

// kArray: one array of an NPY/NPZ/PyTorch file and the member holding it.
struct ArrayJob {
  ArrayEntry entry;
  ArrayMember member;
};

struct OutputTensor {
  std::string name;
  Dtype dtype = Dtype::kF32;
  std::vector<uint64_t> shape;
  uint64_t data_begin = 0;  // in the output's data section
  uint64_t bytes = 0;
  Decode decode = Decode::kCopy;
  // The input bytes: RememberPlan::input_files[input_file] at absolute
  // offset input_offset.
  size_t input_file = 0;
  uint64_t input_offset = 0;
  uint64_t input_bytes = 0;
  // kConvert: the stored float dtype (F64, F32, F16 or BF16).
  Dtype source_dtype = Dtype::kF32;
  // kFp8: the weight's layout, code type and its scale tensor.
  Fp8Weight fp8_layout;
  ElemType code_type = ElemType::kF8E4m3;
  size_t scale_file = 0;
  uint64_t scale_offset = 0;
  Dtype scale_dtype = Dtype::kF32;
  uint64_t scale_elements = 0;
  // kGgml: the GGUF type id (amn::GgmlType).
  uint32_t ggml_type = 0;
  // kPacked: the weight and where each of its tensors lives.
  PackedJob packed;
  // kArray: the source array (read from input_files[input_file]).
  ArrayJob array;
  // kEncode: the job making the weight's floats (kCopy, kConvert, kArray,
  // or a quantized kFp8/kGgml/kPacked dequantized; dtype F32/F16/BF16) and what is done to them. The job is shared so the
  // writing thread can add each chunk's quantization error to it in order.
  // kSide: the weight's source and job too, and which of its side tensors
  // this is; the values are measured chunk by chunk as the tensor is
  // written and never held for the whole model.
  std::shared_ptr<const OutputTensor> source;
  std::shared_ptr<EncodeJob> encode;
  SidePart side_part = SidePart::kValues;
  // kInline: the bytes, complete before the shard is written.
  std::shared_ptr<const std::vector<std::byte>> inline_bytes;
  // A tensor of shape [rows, ...] whose decode formats/source_reads.h reads
  // (plain or dequantized): nonzero makes output row r
  // the input row LlamaPermutedRow(r, rows, permute_heads) (GGUF output of
  // llama q/k weights, formats/gguf_output_plan.h).
  uint64_t permute_heads = 0;
};

// llama.cpp's LlamaModel.permute as a row map: w.reshape(heads, 2,
// rows / heads / 2, cols).swapaxes(1, 2) puts input row h*hd + b*(hd/2) + a
// at output row h*hd + 2a + b (hd = rows / heads, even).
inline uint64_t LlamaPermutedRow(uint64_t row, uint64_t rows, uint64_t heads) {
  const uint64_t head_dim = rows / heads;
  const uint64_t h = row / head_dim, a = (row % head_dim) / 2, b = row % 2;
  return h * head_dim + b * (head_dim / 2) + a;
}

struct OutputShard {
  std::string file_name;  // the input shard's file name (directories) or empty
  size_t input_shard = 0;
  std::vector<OutputTensor> tensors;  // in data order once FinishShard ran
  // __metadata__; FinishShard sets "format": "pt" (transformers refuses
  // files without it), other keys are the input's.
  std::map<std::string, std::string> metadata;
  uint64_t data_bytes = 0;
  // The complete header: 8-byte length, JSON padded with spaces to a
  // multiple of 8 bytes so the data section starts aligned.
  std::string header_bytes;
};

struct RememberPlan {
  Dtype to = Dtype::kBf16;
  std::vector<std::filesystem::path> input_files;  // what OutputTensor::input_file indexes
  std::vector<OutputShard> shards;
  uint64_t total_bytes = 0;    // headers + data of every output shard
  size_t total_tensors = 0;
};

// Dtype for an ElemType output (kF32/kF16/kBf16).
Dtype DtypeOf(ElemType type);

// Planning loops over every tensor call this each time: every
// kCancelPollTensors tensors it reads `cancel` (EngineOptions::cancel, set
// by a signal) and ends the plan with kCancelled once it is set.
inline constexpr size_t kCancelPollTensors = 1024;
Status PollCancel(const std::atomic<bool>* cancel, size_t i);

// Quantized weights become `to`, named and shaped as the scheme says
// (QuantWeight::output_name/output_shape); the other float tensors (F64,
// F32, F16, BF16) are converted to `to` (Decode::kConvert) unless
// `keep_passthrough`, which copies them as they are; integer, bool and FP8
// tensors that are no quantized weight keep dtype and bytes; companions and
// dropped tensors are left out. Metadata is kept. Every size is checked
// (formats/checked_math.h): an output that overflows 64 bits is
// kLimitExceeded; `cancel` as PollCancel says.
Result<RememberPlan> PlanRemember(const ModelFiles& files, const ModelScheme& scheme, ElemType to,
                                  bool keep_passthrough, const std::atomic<bool>* cancel = nullptr);

// Makes a copied float tensor (F64, F32, F16, BF16) a conversion to `to`;
// other tensors, and tensors already of dtype `to`, are left as they are.
// kLimitExceeded when the converted size overflows 64 bits.
Status ConvertFloatTensor(OutputTensor& t, Dtype to);

// Completes a shard whose tensors are filled in, as the safetensors
// reference writer (huggingface/safetensors `prepare`) lays a file out:
// tensors sorted by dtype, widest first in its order (U64 I64 F64 F32 U32
// I32 BF16 F16 U16 I16 F8_E8M0 F8_E4M3 F8_E5M2 I8 U8 BOOL), then by name
// (bytewise), so every data offset is a multiple of its element size; data
// offsets contiguous from 0; __metadata__ "format": "pt"; the header.
// O(n log n) in tensors. kInvalid when two tensors share a name,
// kLimitExceeded when the data size overflows 64 bits.
Status FinishShard(OutputShard& shard, const std::atomic<bool>* cancel = nullptr);

// The float dtype a plan's output holds, for config.json's torch_dtype: the
// one dtype of every F64/F32/F16/BF16 output tensor. When they differ (only
// with keep_passthrough): plan.to, what the quantized weights were
// dequantized to; without quantized weights, the float dtype holding the
// most bytes (ties: the wider, in FinishShard's order). No float tensor:
// plan.to.
Dtype OutputFloatDtype(const RememberPlan& plan);

// Finishes `shard` and makes it the plan's only shard (single-file inputs).
Status AddOnlyShard(RememberPlan& plan, OutputShard shard, const std::atomic<bool>* cancel = nullptr);

// A GGUF file as one safetensors shard: tensor names kept, shapes in
// row-major order (GGUF lists the fastest dimension first), quantized types
// dequantized to `to`, plain float types (F32, F16, BF16, F64) converted to
// `to` unless `keep_passthrough` (then copied), integer types copied,
// string metadata copied into __metadata__. kUnsupported names a tensor
// whose type this build cannot decode.
Result<RememberPlan> PlanGgufRemember(const std::filesystem::path& file, const GgufHeader& header,
                                      ElemType to, bool keep_passthrough,
                                      const std::atomic<bool>* cancel = nullptr);

// An NPY/NPZ/PyTorch file as one safetensors shard: each array becomes a
// tensor of the same name and logical shape (laid out as FinishShard says),
// row-major and little-endian. Dtypes are kept unless `to` is set, which converts the
// float arrays (F64, F32, F16, BF16) to it; integer and bool arrays are
// always kept. Arrays that are contiguous, little-endian, unconverted and
// stored uncompressed are copied straight from the file (Decode::kCopy);
// the rest are gathered (Decode::kArray). Duplicate names and names
// safetensors reserves ("__metadata__") are kInvalid; metadata is kept.
Result<RememberPlan> PlanArrayRemember(const std::filesystem::path& file, const ArrayFile& arrays,
                                       std::optional<ElemType> to,
                                       const std::atomic<bool>* cancel = nullptr);

}  // namespace amn::formats

#endif  // AMN_FORMATS_REMEMBER_PLAN_H_
