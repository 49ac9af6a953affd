// What a model's config.json (Hugging Face transformers) says the model is,
// for inspect: its architecture class and model_type.
#ifndef AMN_FORMATS_MODEL_CONFIG_H_
#define AMN_FORMATS_MODEL_CONFIG_H_

#include <string>
#include <string_view>

namespace amn::formats {

struct ModelIdentity {
  std::string architecture;  // architectures[0]: "Qwen3ForCausalLM"
  std::string model_type;    // "qwen3"
};

// The fields that are present and strings; empty ones otherwise, also when
// the text is not a JSON object (inspect reports what it can; remember's
// rewrite of config.json is where a broken one is an error).
ModelIdentity ReadModelIdentity(std::string_view config_json);

}  // namespace amn::formats

#endif  // AMN_FORMATS_MODEL_CONFIG_H_
