// Names, quant_state JSON and quantization_config of forget's outputs.
#include "formats/forget_layout.h"

#include <charconv>
#include <nlohmann/json.hpp>

#include "formats/json_bounded.h"

namespace amn::formats {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::pair<ForgetScheme, const char*> kNames[] = {
    {ForgetScheme::kFp8, "fp8"},     {ForgetScheme::kFp8PerChannel, "fp8-per-channel"},
    {ForgetScheme::kFp8FineGrained, "fp8-fine-grained"},
    {ForgetScheme::kNf4, "nf4"},     {ForgetScheme::kNf4Dq, "nf4-dq"},
    {ForgetScheme::kFp4, "fp4"},     {ForgetScheme::kFp4Dq, "fp4-dq"},
    {ForgetScheme::kInt8, "int8"},
};

bool Contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

// compressed-tensors' weights-only FP8 scheme (llm-compressor writes these
// keys for FP8 / FP8_DYNAMIC weights; no activation scales are calibrated).
Json CompressedTensorsFp8(const char* strategy, const std::vector<std::string>& skipped) {
  Json weights = {{"actorder", nullptr}, {"block_structure", nullptr}, {"dynamic", false},
                  {"group_size", nullptr}, {"num_bits", 8}, {"observer", "minmax"},
                  {"observer_kwargs", Json::object()}, {"strategy", strategy},
                  {"symmetric", true}, {"type", "float"}};
  Json group = {{"input_activations", nullptr}, {"output_activations", nullptr},
                {"targets", {"Linear"}}, {"weights", weights}};
  Json ignore = Json::array();
  for (const std::string& s : skipped) ignore.push_back(s);
  return {{"config_groups", {{"group_0", group}}}, {"format", "float-quantized"},
          {"global_compression_ratio", nullptr}, {"ignore", ignore}, {"kv_cache_scheme", nullptr},
          {"quant_method", "compressed-tensors"}, {"quantization_status", "compressed"}};
}

// transformers' BitsAndBytesConfig.to_dict() (as saved in config.json).
Json BitsAndBytes(bool eight, const char* quant_type, bool double_quant,
                  const std::vector<std::string>& skipped) {
  Json skip = skipped.empty() ? Json(nullptr) : Json(skipped);
  return {{"_load_in_4bit", !eight}, {"_load_in_8bit", eight},
          {"bnb_4bit_compute_dtype", "bfloat16"}, {"bnb_4bit_quant_storage", "uint8"},
          {"bnb_4bit_quant_type", quant_type}, {"bnb_4bit_use_double_quant", double_quant},
          {"llm_int8_enable_fp32_cpu_offload", false}, {"llm_int8_has_fp16_weight", false},
          {"llm_int8_skip_modules", skip}, {"llm_int8_threshold", 6.0},
          {"load_in_4bit", !eight}, {"load_in_8bit", eight}, {"quant_method", "bitsandbytes"}};
}

}  // namespace

std::string ForgetSchemeName(ForgetScheme scheme) {
  for (const auto& [s, name] : kNames) {
    if (s == scheme) return name;
  }
  return "unknown";
}

std::optional<ForgetScheme> ForgetSchemeFromName(const std::string& name) {
  for (const auto& [s, n] : kNames) {
    if (name == n) return s;
  }
  return std::nullopt;
}

bool DefaultQuantized(const std::string& name, const std::vector<uint64_t>& shape) {
  if (shape.size() != 2 || !name.ends_with(".weight")) return false;
  return !(Contains(name, "embed") || Contains(name, "lm_head") || Contains(name, "norm") ||
           Contains(name, "wte.") || Contains(name, "wpe.") || Contains(name, "ln_") ||
           name == "output.weight" || Contains(name, "token_embd"));
}

std::string PythonFloatRepr(double value) {
  if (value == 0) return std::signbit(value) ? "-0.0" : "0.0";
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::scientific);
  const std::string sci(buf, end);  // shortest digits: "-d.ddde-XX"
  const size_t e = sci.find('e');
  std::string mantissa = sci.substr(0, e);
  const int exponent = std::stoi(sci.substr(e + 1));
  const bool negative = mantissa[0] == '-';
  if (negative) mantissa.erase(0, 1);
  std::string digits;
  for (const char c : mantissa) {
    if (c != '.') digits += c;
  }
  std::string out;
  if (exponent >= -4 && exponent < 16) {
    if (exponent < 0) {
      out = "0." + std::string(static_cast<size_t>(-exponent - 1), '0') + digits;
    } else if (static_cast<int>(digits.size()) <= exponent + 1) {
      out = digits + std::string(static_cast<size_t>(exponent + 1) - digits.size(), '0') + ".0";
    } else {
      out = digits.substr(0, static_cast<size_t>(exponent + 1)) + "." +
            digits.substr(static_cast<size_t>(exponent + 1));
    }
  } else {
    out = digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    const int abs_exp = exponent < 0 ? -exponent : exponent;
    out += std::string(exponent < 0 ? "e-" : "e+") + (abs_exp < 10 ? "0" : "") +
           std::to_string(abs_exp);
  }
  return negative ? "-" + out : out;
}

std::string Bnb4QuantStateJson(bool fp4, uint64_t block_size, const std::string& dtype,
                               const std::vector<uint64_t>& shape, bool double_quant,
                               uint64_t nested_block_size, float nested_offset) {
  // json.dumps' default separators: ", " and ": ".
  std::string text = std::string("{\"quant_type\": \"") + (fp4 ? "fp4" : "nf4") +
                     "\", \"blocksize\": " + std::to_string(block_size) + ", \"dtype\": \"" +
                     dtype + "\", \"shape\": [";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  text += "]";
  if (double_quant) {
    text += ", \"nested_blocksize\": " + std::to_string(nested_block_size) +
            ", \"nested_dtype\": \"float32\", \"nested_offset\": " +
            PythonFloatRepr(static_cast<double>(nested_offset));
  }
  return text + "}";
}

std::string QuantizationConfigJson(ForgetScheme scheme, Fp8Format format,
                                   const std::vector<std::string>& skipped) {
  Json config;
  switch (scheme) {
    case ForgetScheme::kFp8: config = CompressedTensorsFp8("tensor", skipped); break;
    case ForgetScheme::kFp8PerChannel: config = CompressedTensorsFp8("channel", skipped); break;
    case ForgetScheme::kFp8FineGrained:
      // Qwen3-FP8 / DeepSeek-V3 config.json keys.
      config = {{"activation_scheme", "dynamic"},
                {"fmt", format == Fp8Format::kE5m2 ? "e5m2" : "e4m3"},
                {"quant_method", "fp8"},
                {"weight_block_size", {128, 128}}};
      if (!skipped.empty()) config["modules_to_not_convert"] = skipped;
      break;
    case ForgetScheme::kNf4: config = BitsAndBytes(false, "nf4", false, skipped); break;
    case ForgetScheme::kNf4Dq: config = BitsAndBytes(false, "nf4", true, skipped); break;
    case ForgetScheme::kFp4: config = BitsAndBytes(false, "fp4", false, skipped); break;
    case ForgetScheme::kFp4Dq: config = BitsAndBytes(false, "fp4", true, skipped); break;
    case ForgetScheme::kInt8: config = BitsAndBytes(true, "fp4", false, skipped); break;
  }
  return config.dump();
}

Result<std::string> AddQuantizationConfig(const std::string& config_json,
                                          const std::string& quantization_config) {
  AMN_ASSIGN_OR_RETURN(Json config, ParseBoundedJson<Json>(config_json, "config.json"));
  if (!config.is_object()) return Status(StatusCode::kInvalid, "config.json is not an object");
  AMN_ASSIGN_OR_RETURN(Json quant, ParseBoundedJson<Json>(quantization_config, "quantization_config"));
  config["quantization_config"] = std::move(quant);
  return config.dump(2) + "\n";
}

}  // namespace amn::formats
