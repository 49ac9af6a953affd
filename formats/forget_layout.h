// How the ecosystem lays out a quantized weight on disk, for forget: tensor
// names, dtypes and shapes of the codes and their side tensors, the
// bitsandbytes quant_state JSON, and config.json's quantization_config.
// Checked against:
// * bitsandbytes nn/modules.py (Linear4bit/Params4bit._save_to_state_dict,
//   Linear8bitLt._save_to_state_dict), functional.py QuantState.as_dict
//   (packed=True) and utils.py pack_dict_to_tensor (json.dumps);
// * transformers utils/quantization_config.py (BitsAndBytesConfig,
//   FineGrainedFP8Config) and integrations/finegrained_fp8.py
//   (weight_scale_inv);
// * compressed-tensors quantization/lifecycle/initialize.py (weight_scale
//   shapes: [1] per tensor, [rows, 1] per channel) and quant_config.py.
#ifndef AMN_FORMATS_FORGET_LAYOUT_H_
#define AMN_FORMATS_FORGET_LAYOUT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "amn/model.h"
#include "amn/result.h"
#include "formats/dtype.h"

namespace amn::formats {

// "fp8", "fp8-per-channel", ..., the CLI's --scheme names.
std::string ForgetSchemeName(ForgetScheme scheme);
std::optional<ForgetScheme> ForgetSchemeFromName(const std::string& name);

// Whether quantizers leave this tensor alone by default: what real
// quantizers convert is the 2-D weight of a linear layer, so anything else
// (biases, norms, 1-D or 3-D tensors), embeddings and the output head stay.
bool DefaultQuantized(const std::string& name, const std::vector<uint64_t>& shape);

// Python's repr() of a float64 (the shortest round-trip digits, fixed
// notation for exponents -4..15, else d.ddde±XX): json.dumps writes floats so.
std::string PythonFloatRepr(double value);

// The bytes of QuantState.as_dict(packed=True)'s quant_state tensor: json.dumps of
// {quant_type, blocksize, dtype, shape[, nested_blocksize, nested_dtype,
// nested_offset]} in that order. `dtype` is the torch name of the input
// ("bfloat16").
std::string Bnb4QuantStateJson(bool fp4, uint64_t block_size, const std::string& dtype,
                               const std::vector<uint64_t>& shape, bool double_quant,
                               uint64_t nested_block_size, float nested_offset);

// config.json's quantization_config for `scheme` (JSON text). `skipped`
// lists the linear modules (names without ".weight") left unquantized.
std::string QuantizationConfigJson(ForgetScheme scheme, Fp8Format format,
                                   const std::vector<std::string>& skipped);

// config.json with `quantization_config` (JSON text) set; key order kept.
Result<std::string> AddQuantizationConfig(const std::string& config_json,
                                          const std::string& quantization_config);

}  // namespace amn::formats

#endif  // AMN_FORMATS_FORGET_LAYOUT_H_
