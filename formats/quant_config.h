// config.json `quantization_config` (or a GPTQ checkpoint's
// quantize_config.json): the fields scheme detection needs, read strictly
// (integers as integers, wrong types are errors naming the key).
#ifndef AMN_FORMATS_QUANT_CONFIG_H_
#define AMN_FORMATS_QUANT_CONFIG_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "amn/result.h"

namespace amn::formats {

// One compressed-tensors config group's "weights" quantization arguments.
struct CompressedWeightsArgs {
  std::string group;   // the config_groups key, for messages
  std::string format;  // the group's own "format", empty when it has none
  int64_t num_bits = 0;
  std::string type;      // "int" or "float"
  bool symmetric = true;
  std::string strategy;  // "tensor", "channel", "group", "tensor_group", "block"
  std::optional<int64_t> group_size;
};

struct QuantConfig {
  std::string source;  // "config.json" or "quantize_config.json" (empty: none)
  std::string method;  // quant_method, lower case; empty without a config
  // FP8: weight_block_size [R, C].
  std::optional<uint64_t> block_rows, block_cols;
  // GPTQ / AWQ.
  std::optional<int64_t> bits;
  std::optional<int64_t> group_size;  // -1: one group over all input features
  std::optional<bool> desc_act;
  std::optional<bool> sym;
  std::string checkpoint_format;  // GPTQ: "gptq" (v1) or "gptq_v2"
  std::string version;            // AWQ: "gemm", "gemv", ...
  std::optional<bool> zero_point;  // AWQ
  // bitsandbytes.
  bool load_in_4bit = false;
  bool load_in_8bit = false;
  std::string bnb_4bit_quant_type;  // "nf4" or "fp4"
  bool bnb_4bit_use_double_quant = false;
  // compressed-tensors.
  std::string format;  // "pack-quantized", "float-quantized", "nvfp4-pack-quantized", ...
  std::vector<CompressedWeightsArgs> weights;  // one per config group with "weights"
};

// Parses `config_json` (config.json text; may be empty) and, when it has no
// quantization_config, `quantize_config_json` (GPTQ's separate file; may be
// empty). No config at all gives an empty method.
Result<QuantConfig> ReadQuantConfig(const std::string& config_json,
                                    const std::string& quantize_config_json);

}  // namespace amn::formats

#endif  // AMN_FORMATS_QUANT_CONFIG_H_
