// config.json's architecture and model_type (model_config.h).
#include "formats/model_config.h"

#include <nlohmann/json.hpp>

#include "formats/json_bounded.h"

namespace amn::formats {

ModelIdentity ReadModelIdentity(std::string_view config_json) {
  ModelIdentity identity;
  if (config_json.empty()) return identity;
  const Result<nlohmann::json> parsed = ParseBoundedJson<nlohmann::json>(config_json, "config.json");
  if (!parsed.ok() || !parsed->is_object()) return identity;  // unreadable: no identity
  const nlohmann::json& config = *parsed;
  if (const auto it = config.find("architectures");
      it != config.end() && it->is_array() && !it->empty() && it->front().is_string()) {
    identity.architecture = it->front().get<std::string>();
  }
  if (const auto it = config.find("model_type"); it != config.end() && it->is_string()) {
    identity.model_type = it->get<std::string>();
  }
  return identity;
}

}  // namespace amn::formats
