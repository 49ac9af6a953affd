// config.json, the index and the companion files of a directory output.
#include "formats/model_dir_output.h"

#include <map>
#include <nlohmann/json.hpp>

#include "formats/byte_source.h"

namespace amn::formats {
namespace {

using Json = nlohmann::ordered_json;

// Sets the dtype keys of one config object (top level or a sub-config).
void StateDtype(Json& config, const std::string& name, bool always) {
  config.erase("quantization_config");
  if (always || config.contains("torch_dtype")) config["torch_dtype"] = name;
  if (const auto it = config.find("dtype"); it != config.end() && it->is_string()) *it = name;
}

}  // namespace

std::string TorchDtypeName(Dtype dtype) {
  switch (dtype) {
    case Dtype::kF64:
      return "float64";
    case Dtype::kF16:
      return "float16";
    case Dtype::kBf16:
      return "bfloat16";
    default:
      return "float32";
  }
}

Result<std::string> RewriteConfigJson(const std::string& text, Dtype float_dtype) {
  Json config;
  try {
    config = Json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    return Status(StatusCode::kInvalid, "config.json is not valid JSON: " + JsonErrorText(e));
  }
  if (!config.is_object()) return Status(StatusCode::kInvalid, "config.json is not an object");
  const std::string name = TorchDtypeName(float_dtype);
  StateDtype(config, name, /*always=*/true);
  for (auto& [key, value] : config.items()) {
    if (value.is_object() && key.ends_with("_config")) StateDtype(value, name, /*always=*/false);
  }
  return config.dump(2) + "\n";
}

Result<std::string> IndexJson(const std::string& input_metadata_json, const RememberPlan& plan) {
  Json metadata;
  try {
    metadata = Json::parse(input_metadata_json);
  } catch (const nlohmann::json::exception& e) {
    return Status(StatusCode::kInvalid,
                  "index metadata is not valid JSON: " + JsonErrorText(e));
  }
  if (!metadata.is_object()) metadata = Json::object();
  uint64_t total_bytes = 0, total_elements = 0;
  std::map<std::string, std::string> weight_map;
  for (const OutputShard& shard : plan.shards) {
    total_bytes += shard.data_bytes;
    for (const OutputTensor& t : shard.tensors) {
      weight_map[t.name] = shard.file_name;
      total_elements += t.bytes / DtypeBytes(t.dtype);
    }
  }
  metadata["total_size"] = total_bytes;
  if (metadata.contains("total_parameters")) metadata["total_parameters"] = total_elements;
  Json index = Json::object();
  index["metadata"] = std::move(metadata);
  index["weight_map"] = weight_map;
  return index.dump(2) + "\n";
}

bool CopiedToOutput(const std::filesystem::path& file, bool quantized) {
  const std::filesystem::path name = file.filename();
  return !(quantized && (name == "quantize_config.json" || name == "quant_config.json"));
}

}  // namespace amn::formats
