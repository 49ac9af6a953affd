// llama-quantize's per-tensor type choice for a quantized GGUF (llama.cpp
// src/llama-quant.cpp llama_tensor_get_type and its helpers, as of the
// llama.cpp that node-llama-cpp 3.21.1 ships): the k-quant mixtures
// (Q2_K, Q3_K_S ... Q6_K), --tensor-type overrides, --pure for a plain
// ggml type, and the fallback types for rows a block does not divide.
// docs/cli.md "Quantized GGUF" says what amn takes from it.
#ifndef AMN_FORMATS_GGUF_QUANT_MIXTURE_H_
#define AMN_FORMATS_GGUF_QUANT_MIXTURE_H_

#include <cstdint>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "amn/ggml_type.h"
#include "amn/result.h"
#include "formats/gguf_writer.h"

namespace amn::formats {

// What a quantized GGUF scheme names: every quantizable tensor `base`
// (llama-quantize --pure), or with `mixture` llama-quantize's preset of
// LlamaFileType `file_type`, whose default type is `base`.
struct GgufQuantPreset {
  std::string name;  // lowercase, as --scheme names it ("q4_k_m", "q4_k")
  GgmlType base = GgmlType::kQ4_K;
  uint32_t file_type = 0;  // general.file_type
  bool mixture = false;
};

// The preset a lowercase scheme names: a ggml type amn encodes (pure), or
// a mixture: q3_k_s q3_k_m q3_k_l q4_k_s q4_k_m q5_k_s q5_k_m, and with
// llama.h's enum spelling mostly_q2_k ... mostly_q6_k (the only names for
// the Q2_K and Q6_K mixtures, since q2_k and q6_k are the pure types).
std::optional<GgufQuantPreset> FindGgufQuantPreset(const std::string& lower);

// One --tensor-type REGEX=TYPE: llama-quantize lowercases REGEX, compiles
// it as a std::regex (ECMAScript) and searches tensor names with it; TYPE
// is a ggml type name, any case.
struct GgufTensorTypeOverride {
  std::string pattern;
  std::regex regex;
  GgmlType type = GgmlType::kF32;
};

// Parses "REGEX=TYPE" (split at the first '='). kInvalidArgument for no
// '=', an empty side, a bad regex, an unknown type, or a block type amn has
// no encoder for; F32, F16 and BF16 are taken.
Result<GgufTensorTypeOverride> ParseGgufTensorType(const std::string& text);

// The hyperparameters llama-quantize's rules read, from GGUF metadata
// (<arch>.block_count, .attention.head_count(_kv) (an array: its first
// value), .expert_count); 0 where absent.
struct GgufQuantModel {
  std::string arch;
  uint32_t n_layer = 0, n_head = 0, n_head_kv = 0, n_expert = 0;
};
GgufQuantModel GgufQuantModelOf(const GgufMetadata& metadata);

// A tensor as the GGUF output names it; shape row-major (back() is ne0).
struct GgufTensorShape {
  std::string name;
  std::vector<uint64_t> shape;
};

struct GgufTypeChoice {
  bool quantize = false;           // false: written as the plan's float type
  GgmlType type = GgmlType::kF32;  // when quantize: a block type, or F32/F16/BF16
  std::string fallback;            // why the type is not the one chosen ("" when it is)
};

struct GgufQuantRecipe {
  GgufQuantPreset preset;
  std::vector<GgufTensorTypeOverride> overrides;
};

// llama-quantize's choice for every tensor, in `tensors`' order, made in
// its order (llama_model_loader's: by blk.N layer, then name), which its
// attn_v counter depends on. kInvalid naming the tensor where llama-
// quantize fails too (an expert tensor without a layer in its name, a
// layer outside block_count); kUnsupported for a row length that has no
// fallback (GgufRowType).
Result<std::vector<GgufTypeChoice>> ChooseGgufTypes(const std::vector<GgufTensorShape>& tensors,
                                                    const GgufQuantRecipe& recipe,
                                                    const GgufQuantModel& model);

}  // namespace amn::formats

#endif  // AMN_FORMATS_GGUF_QUANT_MIXTURE_H_
