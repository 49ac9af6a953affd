// Scheme detection for safetensors checkpoints (DESIGN.md §5): which tensors
// are quantized weights, which companions (scales, zero points, g_idx,
// absmax, quant_state, ...) each one consumes, what each becomes in the
// output (name, shape), and which tensors pass through unchanged. Reads the
// headers, config.json's quantization_config and, where a scheme keeps its
// metadata in tensor data (bitsandbytes quant_state, compressed-tensors
// weight_shape), those few bytes.
#ifndef AMN_FORMATS_QUANT_SCHEME_H_
#define AMN_FORMATS_QUANT_SCHEME_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "amn/result.h"
#include "formats/fp8_scheme.h"
#include "formats/model_files.h"
#include "formats/quant_config.h"

namespace amn::formats {

enum class TensorRole : uint8_t {
  kPassthrough,  // written as it is
  kQuantized,    // a quantized weight: dequantized into the output
  kCompanion,    // consumed by a quantized weight (scales, zeros, g_idx, ...)
  kDropped,      // activation / KV-cache scales: meaningless once dequantized
};

enum class QuantKind : uint8_t {
  kFp8,        // FP8 E4M3/E5M2 codes times scales (also compressed-tensors float-quantized)
  kGptq,       // GPTQ qweight/qzeros/scales[/g_idx], 2/3/4/8-bit
  kAwq,        // AutoAWQ GEMM 4-bit
  kBnb4,       // bitsandbytes NF4/FP4, plain or double quant
  kBnbInt8,    // bitsandbytes LLM.int8 with row-wise SCB
  kPackedInt,  // compressed-tensors pack-quantized int4/int8
  kNvfp4,      // compressed-tensors nvfp4-pack-quantized
  kMxfp4,      // gpt-oss *_blocks + *_scales
};

// The companions a packed weight may consume, by role.
enum class Part : uint8_t {
  kScale,           // GPTQ/AWQ scales, weight_scale, SCB, MXFP4 *_scales
  kZeros,           // qzeros, weight_zero_point
  kGIdx,            // GPTQ g_idx
  kAbsmax,          // bnb absmax (f32, or u8 with double quant)
  kQuantMap,        // bnb codebook
  kNestedAbsmax,    // bnb double quant
  kNestedQuantMap,  // bnb double quant
  kGlobalScale,     // NVFP4 weight_global_scale
  kMeta,            // consumed metadata: bnb quant_state / weight_format, weight_shape
  kCount,
};
inline constexpr size_t kPartCount = static_cast<size_t>(Part::kCount);

struct QuantWeight {
  QuantKind kind = QuantKind::kFp8;
  TensorRef weight;  // the codes; its place in the output is this weight's
  std::array<std::optional<TensorRef>, kPartCount> parts;
  std::string output_name;
  std::vector<uint64_t> output_shape;
  uint64_t output_elements = 0;
  std::string description;  // e.g. "GPTQ 4-bit, group 128, act-order"
  // kFp8
  Fp8Weight fp8;
  Dtype code_dtype = Dtype::kU8;  // FP8: F8_E4M3 or F8_E5M2
  // kGptq, kAwq, kPackedInt: an [out_features, in_features] linear weight.
  uint32_t bits = 0;
  uint64_t in_features = 0, out_features = 0;
  uint64_t groups = 0, group_size = 0;
  bool zeros_plus_one = false;  // GPTQ v1
  bool tensor_scale = false;    // kPackedInt strategy "tensor": one scale
  bool zero_point_i8 = false;   // kPackedInt: I8 [rows, groups] zeros (pre-0.10)
  // kBnb4
  uint64_t block_size = 0;
  bool double_quant = false;
  uint64_t nested_block_size = 0;
  float nested_offset = 0.0f;
  // kMxfp4: blocks [experts..., rows, groups, 16]
  uint64_t experts = 1, mx_rows = 0, mx_groups = 0;

  const std::optional<TensorRef>& part(Part p) const { return parts[static_cast<size_t>(p)]; }
  std::optional<TensorRef>& part(Part p) { return parts[static_cast<size_t>(p)]; }
};

struct ModelScheme {
  bool quantized = false;
  std::string description;  // e.g. "GPTQ 4-bit, group 128, act-order, symmetric, v1 zero points"
  // Non-empty when the model is quantized in a way this build cannot
  // dequantize: headers can be listed, remember refuses with this text.
  std::string unsupported;
  std::vector<QuantWeight> weights;
  std::vector<std::vector<TensorRole>> roles;        // [shard][tensor]
  std::vector<std::vector<int64_t>> weight_index;    // [shard][tensor] -> weights, or -1
  TensorRole RoleOf(TensorRef ref) const { return roles[ref.shard][ref.index]; }
};

// Classifies every tensor of `files` (see docs/safetensors.md "Schemes" for
// the rules of each). Errors (kInvalid, naming the tensor): a quantized
// weight with missing, mis-shaped or mistyped companions, a config that
// contradicts the tensors, bits the format cannot hold. Schemes this build
// cannot dequantize set `unsupported` instead of failing, so inspect works.
Result<ModelScheme> DetectScheme(const ModelFiles& files);

}  // namespace amn::formats

#endif  // AMN_FORMATS_QUANT_SCHEME_H_
