// Reading quantization_config strictly.
#include "formats/quant_config.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "formats/byte_source.h"
#include "formats/json_bounded.h"

namespace amn::formats {
namespace {

using Json = nlohmann::json;

Status Invalid(const std::string& source, const std::string& key, const std::string& what) {
  return Status(StatusCode::kInvalid, source + ": quantization_config." + key + " " + what);
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// Optional typed fields: absent or null leaves `out` unset; a value of
// another type is an error naming the key.
Status GetInt(const Json& q, const std::string& source, const char* key,
              std::optional<int64_t>& out) {
  if (!q.contains(key) || q[key].is_null()) return Status::Ok();
  if (!q[key].is_number_integer()) return Invalid(source, key, "must be an integer, got " + MessageSafe(q[key].dump()));
  out = q[key].get<int64_t>();
  return Status::Ok();
}
Status GetBool(const Json& q, const std::string& source, const char* key, std::optional<bool>& out) {
  if (!q.contains(key) || q[key].is_null()) return Status::Ok();
  if (!q[key].is_boolean()) return Invalid(source, key, "must be true or false, got " + MessageSafe(q[key].dump()));
  out = q[key].get<bool>();
  return Status::Ok();
}
Status GetString(const Json& q, const std::string& source, const char* key, std::string& out) {
  if (!q.contains(key) || q[key].is_null()) return Status::Ok();
  if (!q[key].is_string()) return Invalid(source, key, "must be a string, got " + MessageSafe(q[key].dump()));
  out = q[key].get<std::string>();
  return Status::Ok();
}

Status ReadBlockSize(const Json& q, const std::string& source, QuantConfig& config) {
  if (!q.contains("weight_block_size") || q["weight_block_size"].is_null()) return Status::Ok();
  const Json& b = q["weight_block_size"];
  if (!b.is_array() || b.size() != 2 || !b[0].is_number_unsigned() || !b[1].is_number_unsigned() ||
      b[0].get<uint64_t>() == 0 || b[1].get<uint64_t>() == 0) {
    return Invalid(source, "weight_block_size", "must be two positive integers, got " + MessageSafe(b.dump()));
  }
  config.block_rows = b[0].get<uint64_t>();
  config.block_cols = b[1].get<uint64_t>();
  return Status::Ok();
}

Status ReadCompressedGroups(const Json& q, const std::string& source, QuantConfig& config) {
  AMN_RETURN_IF_ERROR(GetString(q, source, "format", config.format));
  config.format = Lower(config.format);
  if (!q.contains("config_groups") || q["config_groups"].is_null()) return Status::Ok();
  const Json& groups = q["config_groups"];
  if (!groups.is_object()) return Invalid(source, "config_groups", "must be an object");
  for (const auto& [name, group] : groups.items()) {
    const std::string key = "config_groups." + MessageSafe(name, 64);
    if (!group.is_object()) return Invalid(source, key, "must be an object");
    if (!group.contains("weights") || group["weights"].is_null()) continue;
    const Json& w = group["weights"];
    if (!w.is_object()) return Invalid(source, key + ".weights", "must be an object");
    CompressedWeightsArgs args;
    args.group = name;
    AMN_RETURN_IF_ERROR(GetString(group, source, "format", args.format));
    args.format = Lower(args.format);
    std::optional<int64_t> bits;
    AMN_RETURN_IF_ERROR(GetInt(w, source, "num_bits", bits));
    args.num_bits = bits.value_or(0);
    AMN_RETURN_IF_ERROR(GetString(w, source, "type", args.type));
    args.type = Lower(args.type);
    std::optional<bool> symmetric;
    AMN_RETURN_IF_ERROR(GetBool(w, source, "symmetric", symmetric));
    args.symmetric = symmetric.value_or(true);
    AMN_RETURN_IF_ERROR(GetString(w, source, "strategy", args.strategy));
    args.strategy = Lower(args.strategy);
    AMN_RETURN_IF_ERROR(GetInt(w, source, "group_size", args.group_size));
    config.weights.push_back(std::move(args));
  }
  return Status::Ok();
}

Status ReadFields(const Json& q, const std::string& source, QuantConfig& config) {
  AMN_RETURN_IF_ERROR(GetString(q, source, "quant_method", config.method));
  config.method = Lower(config.method);
  AMN_RETURN_IF_ERROR(ReadBlockSize(q, source, config));
  AMN_RETURN_IF_ERROR(GetInt(q, source, config.method == "awq" && q.contains("w_bit") ? "w_bit" : "bits", config.bits));
  AMN_RETURN_IF_ERROR(GetInt(q, source, q.contains("q_group_size") ? "q_group_size" : "group_size", config.group_size));
  AMN_RETURN_IF_ERROR(GetBool(q, source, "desc_act", config.desc_act));
  AMN_RETURN_IF_ERROR(GetBool(q, source, "sym", config.sym));
  AMN_RETURN_IF_ERROR(GetString(q, source, "checkpoint_format", config.checkpoint_format));
  config.checkpoint_format = Lower(config.checkpoint_format);
  AMN_RETURN_IF_ERROR(GetString(q, source, "version", config.version));
  config.version = Lower(config.version);
  AMN_RETURN_IF_ERROR(GetBool(q, source, "zero_point", config.zero_point));
  std::optional<bool> flag;
  AMN_RETURN_IF_ERROR(GetBool(q, source, "load_in_4bit", flag));
  config.load_in_4bit = flag.value_or(false);
  flag.reset();
  AMN_RETURN_IF_ERROR(GetBool(q, source, "load_in_8bit", flag));
  config.load_in_8bit = flag.value_or(false);
  flag.reset();
  AMN_RETURN_IF_ERROR(GetBool(q, source, "bnb_4bit_use_double_quant", flag));
  config.bnb_4bit_use_double_quant = flag.value_or(false);
  AMN_RETURN_IF_ERROR(GetString(q, source, "bnb_4bit_quant_type", config.bnb_4bit_quant_type));
  config.bnb_4bit_quant_type = Lower(config.bnb_4bit_quant_type);
  if (config.method == "compressed-tensors") AMN_RETURN_IF_ERROR(ReadCompressedGroups(q, source, config));
  return Status::Ok();
}

Result<Json> ParseObject(const std::string& text, const std::string& source) {
  AMN_ASSIGN_OR_RETURN(Json json, ParseBoundedJson<Json>(text, source));
  if (!json.is_object()) return Status(StatusCode::kInvalid, source + " is not a JSON object");
  return json;
}

}  // namespace

Result<QuantConfig> ReadQuantConfig(const std::string& config_json,
                                    const std::string& quantize_config_json) {
  QuantConfig config;
  if (!config_json.empty()) {
    AMN_ASSIGN_OR_RETURN(const Json json, ParseObject(config_json, "config.json"));
    if (json.contains("quantization_config") && !json["quantization_config"].is_null()) {
      const Json& q = json["quantization_config"];
      if (!q.is_object()) {
        return Status(StatusCode::kInvalid, "config.json: quantization_config is not an object");
      }
      config.source = "config.json";
      AMN_RETURN_IF_ERROR(ReadFields(q, config.source, config));
      return config;
    }
  }
  if (!quantize_config_json.empty()) {
    AMN_ASSIGN_OR_RETURN(const Json q, ParseObject(quantize_config_json, "quantize_config.json"));
    config.source = "quantize_config.json";
    AMN_RETURN_IF_ERROR(ReadFields(q, config.source, config));
    // GPTQ's own file has no quant_method.
    if (config.method.empty()) config.method = "gptq";
  }
  return config;
}

}  // namespace amn::formats
