// What a directory output of `remember` holds besides its shards, in the
// layout transformers' save_pretrained writes: config.json rewritten to say
// what the shards hold, model.safetensors.index.json describing the output
// shards, and the input's other files (tokenizer, generation config, chat
// template, ...) copied unless they describe a quantization that is gone.
#ifndef AMN_FORMATS_MODEL_DIR_OUTPUT_H_
#define AMN_FORMATS_MODEL_DIR_OUTPUT_H_

#include <filesystem>
#include <string>

#include "amn/result.h"
#include "formats/dtype.h"
#include "formats/remember_plan.h"

namespace amn::formats {

// The torch dtype name of a float dtype: "float32", "float16", "bfloat16",
// "float64".
std::string TorchDtypeName(Dtype dtype);

// config.json for the output: quantization_config removed, torch_dtype set
// to `float_dtype` (and "dtype", the newer spelling, where the config has
// it); in sub-configs (objects under a "*_config" key, e.g. text_config)
// quantization_config removed and a stated torch_dtype/dtype replaced too.
// Key order kept. kInvalid when `text` is not a
// JSON object.
Result<std::string> RewriteConfigJson(const std::string& text, Dtype float_dtype);

// model.safetensors.index.json for `plan`: the input index's metadata
// (`input_metadata_json`, an object) with total_size set to the sum of the
// output shards' data bytes (total_parameters, where present, to their
// element count), and weight_map naming each output tensor's shard.
Result<std::string> IndexJson(const std::string& input_metadata_json, const RememberPlan& plan);

// Whether a companion file of a model directory is copied to the output:
// everything except, for a quantized model, the quantizers' own config files
// (GPTQ's quantize_config.json, AutoAWQ's quant_config.json), which would
// describe a quantization the output no longer has.
bool CopiedToOutput(const std::filesystem::path& file, bool quantized);

}  // namespace amn::formats

#endif  // AMN_FORMATS_MODEL_DIR_OUTPUT_H_
