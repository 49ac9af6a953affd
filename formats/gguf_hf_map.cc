// config.json and tensor names to llama.cpp's GGUF names (facts read from
// llama.cpp's gguf-py constants.py / tensor_mapping.py and
// convert_hf_to_gguf.py).
#include "formats/gguf_hf_map.h"

#include <array>
#include <charconv>
#include <nlohmann/json.hpp>
#include <utility>

namespace amn::formats {
namespace {

nlohmann::json ParseObject(std::string_view text) {
  auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  return j.is_object() ? j : nlohmann::json::object();
}

}  // namespace

std::string GgufArchitecture(std::string_view config_json) {
  const nlohmann::json config = ParseObject(config_json);
  if (auto a = config.find("architectures");
      a != config.end() && a->is_array() && !a->empty() && a->front().is_string()) {
    const std::string name = a->front().get<std::string>();
    if (name == "LlamaForCausalLM" || name == "MistralForCausalLM") return "llama";
    if (name == "Qwen2ForCausalLM") return "qwen2";
  }
  if (auto t = config.find("model_type"); t != config.end() && t->is_string()) {
    return t->get<std::string>();
  }
  return "";
}

Status AddHfConfigMetadata(std::string_view config_json, GgufMetadata& metadata) {
  const nlohmann::json config = ParseObject(config_json);
  const std::string arch = GgufArchitecture(config_json);
  if (arch.empty()) return Status::Ok();
  GgufValue name;
  name.type = GgufValueType::kString;
  name.s = arch;
  AMN_RETURN_IF_ERROR(metadata.Set("general.architecture", name));
  static constexpr std::array<std::pair<const char*, const char*>, 7> kCounts = {{
      {"max_position_embeddings", "context_length"},
      {"hidden_size", "embedding_length"},
      {"num_hidden_layers", "block_count"},
      {"intermediate_size", "feed_forward_length"},
      {"num_attention_heads", "attention.head_count"},
      {"num_key_value_heads", "attention.head_count_kv"},
      {"vocab_size", "vocab_size"},
  }};
  for (const auto& [hf, gguf] : kCounts) {
    auto v = config.find(hf);
    if (v == config.end() || !v->is_number_unsigned() || v->get<uint64_t>() > UINT32_MAX) continue;
    GgufValue u;
    u.type = GgufValueType::kU32;
    u.u = v->get<uint64_t>();
    AMN_RETURN_IF_ERROR(metadata.Set(arch + "." + gguf, u));
  }
  static constexpr std::array<std::pair<const char*, const char*>, 2> kReals = {{
      {"rope_theta", "rope.freq_base"},
      {"rms_norm_eps", "attention.layer_norm_rms_epsilon"},
  }};
  for (const auto& [hf, gguf] : kReals) {
    auto v = config.find(hf);
    if (v == config.end() || !v->is_number()) continue;
    GgufValue f;
    f.type = GgufValueType::kF32;
    f.f = v->get<double>();
    AMN_RETURN_IF_ERROR(metadata.Set(arch + "." + gguf, f));
  }
  return Status::Ok();
}

bool GgufRenamesTensors(std::string_view architecture) {
  return architecture == "llama" || architecture == "qwen2";
}

Result<uint64_t> GgufPermuteHeads(std::string_view config_json, std::string_view name) {
  if (GgufArchitecture(config_json) != "llama" || !name.starts_with("model.layers.")) return 0;
  const bool q = name.ends_with(".self_attn.q_proj.weight") || name.ends_with(".self_attn.q_proj.bias");
  const bool k = name.ends_with(".self_attn.k_proj.weight") || name.ends_with(".self_attn.k_proj.bias");
  if (!q && !k) return 0;
  const nlohmann::json config = ParseObject(config_json);
  auto count = [&](const char* key) -> uint64_t {
    auto v = config.find(key);
    return v != config.end() && v->is_number_unsigned() ? v->get<uint64_t>() : 0;
  };
  const uint64_t heads = count("num_attention_heads");
  const uint64_t kv_heads = count("num_key_value_heads");
  const uint64_t n = q || kv_heads == 0 ? heads : kv_heads;  // no kv count: as many as heads
  if (n == 0) {
    return Status(StatusCode::kInvalid,
                  "config.json has no num_attention_heads, which the llama q/k row permutation "
                  "needs");
  }
  return n;
}

std::string GgufTensorName(std::string_view name) {
  if (name == "model.embed_tokens.weight") return "token_embd.weight";
  if (name == "model.norm.weight") return "output_norm.weight";
  if (name == "lm_head.weight") return "output.weight";
  constexpr std::string_view kLayers = "model.layers.";
  if (!name.starts_with(kLayers)) return std::string(name);
  const std::string_view rest = name.substr(kLayers.size());
  const size_t dot = rest.find('.');
  if (dot == std::string_view::npos || dot == 0) return std::string(name);
  const std::string_view layer = rest.substr(0, dot);
  unsigned n = 0;
  if (std::from_chars(layer.data(), layer.data() + layer.size(), n).ptr != layer.data() + layer.size()) {
    return std::string(name);
  }
  const std::string_view tail = rest.substr(dot + 1);  // "self_attn.q_proj.weight"
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 9> kModules = {{
      {"self_attn.q_proj.", "attn_q."},
      {"self_attn.k_proj.", "attn_k."},
      {"self_attn.v_proj.", "attn_v."},
      {"self_attn.o_proj.", "attn_output."},
      {"mlp.gate_proj.", "ffn_gate."},
      {"mlp.up_proj.", "ffn_up."},
      {"mlp.down_proj.", "ffn_down."},
      {"input_layernorm.", "attn_norm."},
      {"post_attention_layernorm.", "ffn_norm."},
  }};
  for (const auto& [hf, gguf] : kModules) {
    if (!tail.starts_with(hf)) continue;
    const std::string_view suffix = tail.substr(hf.size());
    if (suffix != "weight" && suffix != "bias") break;
    return "blk." + std::string(layer) + "." + std::string(gguf) + std::string(suffix);
  }
  return std::string(name);
}

}  // namespace amn::formats
