// config.json's architecture and model_type (model_config.h).
#include "formats/model_config.h"

#include <nlohmann/json.hpp>

namespace amn::formats {

ModelIdentity ReadModelIdentity(std::string_view config_json) {
  ModelIdentity identity;
  if (config_json.empty()) return identity;
  const nlohmann::json config = nlohmann::json::parse(config_json, nullptr, /*allow_exceptions=*/false);
  if (!config.is_object()) return identity;  // also a parse failure (discarded)
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
