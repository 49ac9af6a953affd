// Which tensors a quantized GGUF output quantizes, and to what: the choice
// llama.cpp's llama-quantize makes for one type with --pure (src/llama-
// quant.cpp tensor_allows_quantization and tensor_type_fallback), and the
// general.file_type it records (llama.h LlamaFileType).
#ifndef AMN_FORMATS_GGUF_QUANT_CHOICE_H_
#define AMN_FORMATS_GGUF_QUANT_CHOICE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "amn/ggml_type.h"
#include "amn/result.h"

namespace amn::formats {

// The ggml type a lowercase scheme names ("q4_k"), where amn has an
// encoder for it (amn::CanQuantizeGgml); nullopt otherwise.
std::optional<GgmlType> GgufQuantScheme(const std::string& lower);

// llama.cpp's LlamaFileType for a file of `type`: the llama-quantize
// preset of that name (q4_k is Q4_K_M's 15, q3_k Q3_K_M's 12, q5_k
// Q5_K_M's 17, mxfp4 MXFP4_MOE's 38).
uint32_t LlamaFileTypeOf(GgmlType type);

// Whether a tensor quantized to `type` must have importance values: where
// ggml's encoder needs them (amn::GgmlQuantizeNeedsImatrix: IQ2_XXS,
// IQ2_XS, IQ1_S, any tensor), and where llama-quantize's
// tensor_requires_imatrix refuses without (also IQ2_S, IQ1_M, IQ3_XXS;
// not token_embd.weight, per_layer_token_embd.weight, output.weight).
bool GgufNeedsImatrix(GgmlType type, const std::string& gguf_name);

// tensor_allows_quantization: a tensor of 2 or more dimensions (trailing
// 1s in ne dropped) whose GGUF name ends in "weight" and is none of the
// ones llama-quantize keeps (norms, expert gates, position embeddings, ...).
bool GgufQuantizes(const std::string& gguf_name, const std::vector<uint64_t>& shape);

// The type a quantized tensor of `cols` elements a row gets: `type`, or
// where `cols` is not a multiple of its block, tensor_type_fallback's
// (Q2_K, Q3_K, TQ1_0, TQ2_0 -> Q4_0; Q4_K -> Q5_0; Q5_K -> Q5_1; Q6_K ->
// Q8_0; IQ4_XS, IQ3_XXS, IQ3_S, IQ2_XXS, IQ2_XS, IQ2_S, IQ1_S, IQ1_M -> IQ4_NL; F16 where
// that block does not divide either).
// kUnsupported naming the tensor for a type llama-quantize has no fallback
// for (the 32-element types: Q4_0, Q8_0, IQ4_NL, MXFP4, ...).
Result<GgmlType> GgufRowType(GgmlType type, uint64_t cols, const std::string& gguf_name);

}  // namespace amn::formats

#endif  // AMN_FORMATS_GGUF_QUANT_CHOICE_H_
