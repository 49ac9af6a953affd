// A remember plan re-laid as one GGUF v3 file (docs/gguf.md "Writing
// GGUF"): every tensor of every planned shard, in a chosen order, each at
// an offset aligned to general.alignment, with the GGUF header as the
// shard's header bytes. The remember engine then streams the data, padding
// each tensor (formats/remember_engine.h), so memory stays O(threads x
// chunk) and the bytes are the same for any -j.
#ifndef AMN_FORMATS_GGUF_OUTPUT_PLAN_H_
#define AMN_FORMATS_GGUF_OUTPUT_PLAN_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "amn/ggml_type.h"
#include "amn/result.h"
#include "formats/gguf_quant_mixture.h"
#include "formats/gguf_writer.h"
#include "formats/remember_plan.h"

namespace amn::formats {

// A tensor that got a type other than the one asked for, and why.
struct GgufFallback {
  std::string name;    // as written
  std::string type;    // "Q5_0", "F16"
  std::string reason;  // "rows of 96 are not a multiple of Q4_K's block of 256"
};

struct GgufOutputOptions {
  // The float type of the weights (kF32, kF16 or kBf16). As llama.cpp's
  // converter does, float tensors of one dimension (norms, biases) are
  // written as F32 whatever `to` is ("except 1d tensors").
  Dtype to = Dtype::kF16;
  // Output name of a planned tensor (identity when empty).
  std::function<std::string(const std::string&)> rename;
  // Names (as planned, before renaming) in the order to write them; names
  // not listed follow in plan order.
  std::vector<std::string> order;
  // For each planned tensor (before renaming): the heads by which its rows
  // are permuted as llama.cpp's LlamaModel.permute does, or 0 (formats/
  // gguf_hf_map.h GgufPermuteHeads). Null: no tensor is permuted.
  std::function<Result<uint64_t>(const OutputTensor&)> permute_heads;
  // A quantized GGUF: the tensors llama-quantize would quantize for that
  // preset and --tensor-type overrides (formats/gguf_quant_mixture.h, by
  // output name, with the model's hyperparameters from `metadata`) become
  // encode jobs of their type, row by row (F16/BF16 overrides: written as
  // that float type); the rest are written as `to` says (F32 expected).
  // Null: no tensor is quantized.
  std::optional<GgufQuantRecipe> quantize;
  // Filled (when not null) with the tensors given a fallback type.
  std::vector<GgufFallback>* fallbacks = nullptr;
  // An importance matrix (convert --imatrix): per-column values by output
  // (GGUF) name, as llama-quantize looks them up. A quantized tensor with an
  // entry gets it (EncodeJob::imatrix) when it has cols x the matrices above
  // its rows values; one without an entry is quantized without, as is
  // token_embd.weight with a wrong-sized one; any other wrong size is
  // kInvalid naming imatrix_file and the tensor. imatrix_used (when not
  // null) gets the tensors given one; a given entry is moved into its job
  // (one copy of the values in memory). Null: none.
  std::map<std::string, std::vector<float>>* imatrix = nullptr;
  std::string imatrix_file;
  size_t* imatrix_used = nullptr;
};

// The ggml type id of a plain dtype: F32 0, F16 1, BF16 30, I8 24, I16 25,
// I32 26, I64 27, F64 28; nullopt for the rest (unsigned, bool, FP8),
// which GGUF cannot hold.
std::optional<uint32_t> GgmlTypeOfDtype(Dtype dtype);

// One shard, file_name empty, header from `metadata`; a permuted tensor
// gets OutputTensor::permute_heads, which the engine reads rows by.
// Quantized inputs (FP8, ggml blocks, packed schemes) are dequantized in
// the pass, to be permuted or quantized again row by row.
// kUnsupported naming a tensor whose dtype GGUF cannot hold; kInvalid for
// two tensors renamed alike or rows the heads do not divide into even
// halves; kInvalidArgument for a bad general.alignment.
Result<RememberPlan> PlanGgufOutput(RememberPlan plan, GgufMetadata metadata,
                                    const GgufOutputOptions& options,
                                    const std::atomic<bool>* cancel = nullptr);

}  // namespace amn::formats

#endif  // AMN_FORMATS_GGUF_OUTPUT_PLAN_H_
