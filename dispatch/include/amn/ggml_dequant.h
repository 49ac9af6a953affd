// ggml block-quantized tensors (GGUF) to plain F32/F16/BF16, bit-exact with
// gguf-py / ggml-quants.c dequantize_row_* (f32 arithmetic in ggml's order, no
// FMA) followed by the F32 -> BF16/F16 rounding of docs/formats.md.
#ifndef AMN_GGML_DEQUANT_H_
#define AMN_GGML_DEQUANT_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "amn/elem_type.h"
#include "amn/export.h"
#include "amn/ggml_type.h"
#include "amn/status.h"
#include "amn/targets.h"

namespace amn {

struct GgmlTypeInfo {
  GgmlType type;
  std::string_view name;  // "Q4_K", "F16", ...
  uint32_t block_elems;   // 1 for plain types
  uint32_t block_bytes;   // bytes of one block (element size for plain types)
  bool quantized;
};

// The traits of a GGUF type id; nullptr for ids this build does not know.
AMN_API const GgmlTypeInfo* FindGgmlType(uint32_t id);

// Dequantizes whole blocks of a quantized type: blocks.size() must be a
// multiple of block_bytes; writes (blocks.size() / block_bytes) * block_elems
// elements of out_type (kF32, kF16 or kBf16) to `out`, in ggml element order.
// kInvalidArgument (nothing written) for partial blocks, a short output or a
// plain type; kUnsupported for a quantized type this build cannot decode yet.
AMN_API Status DequantGgml(GgmlType type, std::span<const uint8_t> blocks, ElemType out_type,
                           std::span<std::byte> out);

// Whether DequantGgml can decode `type` in this build (plain types: false).
AMN_API bool GgmlTypeDecodable(GgmlType type);

// Probes: the target each ggml dispatch table runs now.
AMN_API TargetId GgmlLegacyTarget();  // Q4_0 … Q8_1, IQ4_NL, MXFP4, NVFP4, Q1_0, Q2_0
AMN_API TargetId GgmlKQuantTarget();  // Q2_K Q3_K Q4_K Q5_K Q6_K Q8_K IQ4_XS TQ1_0 TQ2_0
AMN_API TargetId GgmlIQuantTarget();  // IQ2_XXS IQ2_XS IQ2_S IQ3_XXS IQ3_S IQ1_S IQ1_M

}  // namespace amn

#endif  // AMN_GGML_DEQUANT_H_
