// llama-quantize's tensor type rules (src/llama-quant.cpp), rewritten for
// the nine k-quant presets amn encodes; the IQ, TQ and MXFP4_MOE presets'
// branches are left out because amn offers none of those presets.
#include "formats/gguf_quant_mixture.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstring>
#include <numeric>

#include "amn/ggml_dequant.h"
#include "amn/quantize.h"
#include "formats/byte_source.h"
#include "formats/gguf_quant_choice.h"

namespace amn::formats {
namespace {

// llama.h LlamaFileType of the presets.
enum Ftype : uint32_t {
  kQ2_K = 10,
  kQ3_K_S = 11,
  kQ3_K_M = 12,
  kQ3_K_L = 13,
  kQ4_K_S = 14,
  kQ4_K_M = 15,
  kQ5_K_S = 16,
  kQ5_K_M = 17,
  kQ6_K = 18,
};

struct Mixture {
  const char* name;
  uint32_t ftype;
  GgmlType base;
};
constexpr Mixture kMixtures[] = {
    {"q2_k", kQ2_K, GgmlType::kQ2_K},     {"q3_k_s", kQ3_K_S, GgmlType::kQ3_K},
    {"q3_k_m", kQ3_K_M, GgmlType::kQ3_K}, {"q3_k_l", kQ3_K_L, GgmlType::kQ3_K},
    {"q4_k_s", kQ4_K_S, GgmlType::kQ4_K}, {"q4_k_m", kQ4_K_M, GgmlType::kQ4_K},
    {"q5_k_s", kQ5_K_S, GgmlType::kQ5_K}, {"q5_k_m", kQ5_K_M, GgmlType::kQ5_K},
    {"q6_k", kQ6_K, GgmlType::kQ6_K},
};

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

uint32_t BlockOf(GgmlType type) {
  const GgmlTypeInfo* info = FindGgmlType(static_cast<uint32_t>(type));
  return info == nullptr ? 1 : info->block_elems;
}

const char* NameOf(GgmlType type) {
  const GgmlTypeInfo* info = FindGgmlType(static_cast<uint32_t>(type));
  return info == nullptr ? "?" : info->name.data();
}

// llama_model_loader's weight_name_comparer reads the layer with
// sscanf(name, "blk.%d.", ...): a count of 1 needs only the number.
std::optional<int> LayerOf(const std::string& name) {
  if (!name.starts_with("blk.")) return std::nullopt;
  size_t i = 4;
  while (i < name.size() && std::isspace(static_cast<unsigned char>(name[i]))) ++i;
  bool negative = false;
  if (i < name.size() && (name[i] == '-' || name[i] == '+')) negative = name[i++] == '-';
  if (i >= name.size() || !std::isdigit(static_cast<unsigned char>(name[i]))) return std::nullopt;
  long long value = 0;
  for (; i < name.size() && std::isdigit(static_cast<unsigned char>(name[i])); ++i) {
    value = std::min<long long>(value * 10 + (name[i] - '0'), INT_MAX);
  }
  return static_cast<int>(negative ? -value : value);
}

// tensor_get_category.
enum class Category {
  kTokenEmbd,
  kAttnQ,
  kAttnV,
  kAttnK,
  kAttnQkv,
  kAttnKvB,
  kAttnOutput,
  kFfnUp,
  kFfnGate,
  kFfnDown,
  kOutput,
  kOther
};

Category CategoryOf(const std::string& name) {
  auto has = [&](const char* part) { return name.find(part) != std::string::npos; };
  if (name == "output.weight") return Category::kOutput;
  if (name == "token_embd.weight" || name == "per_layer_token_embd.weight") {
    return Category::kTokenEmbd;
  }
  if (has("attn_qkv.weight")) return Category::kAttnQkv;
  if (has("attn_kv_b.weight")) return Category::kAttnKvB;
  if (has("attn_v.weight")) return Category::kAttnV;
  if (has("attn_k.weight")) return Category::kAttnK;
  if (has("attn_q.weight")) return Category::kAttnQ;
  if (has("attn_output.weight")) return Category::kAttnOutput;
  if (has("ffn_up")) return Category::kFfnUp;
  if (has("ffn_gate")) return Category::kFfnGate;
  if (has("ffn_down")) return Category::kFfnDown;
  return Category::kOther;
}

bool IsAttnVLike(Category c) {
  return c == Category::kAttnV || c == Category::kAttnQkv || c == Category::kAttnKvB;
}

// The counters llama-quantize keeps while it walks the tensors.
struct State {
  int n_attention_wv = 0, i_attention_wv = 0;
  int n_ffn_down = 0, i_ffn_down = 0;
  int n_ffn_gate = 0, i_ffn_gate = 0, n_ffn_up = 0, i_ffn_up = 0;
  bool tied_embeddings = true;
};

bool UseMoreBits(int i_layer, int n_layers) {
  return i_layer < n_layers / 8 || i_layer >= 7 * n_layers / 8 || (i_layer - n_layers / 8) % 3 == 2;
}

// llama's LLM_TYPE_70B, the one model size the rules test: the
// architectures whose hparams loader says 70B for that block count.
bool Is70B(const GgufQuantModel& m) {
  if (m.arch == "llama") return m.n_layer == 80 && m.n_head != m.n_head_kv;
  if (m.arch == "qwen2" || m.arch == "deci" || m.arch == "olmo") return m.n_layer == 80;
  if (m.arch == "jais2") return m.n_layer == 68;
  return false;
}

// layer_info: the running counter, or with experts the layer in the name.
Result<int> LayerFor(int counter, const GgufQuantModel& m, const std::string& name) {
  if (std::max<uint32_t>(1, m.n_expert) <= 1) return counter;
  const std::optional<int> layer = LayerOf(name);
  if (!layer) {
    return Status(StatusCode::kInvalid, "tensor '" + MessageSafe(name) +
                                            "': no blk.N layer in its name, which llama-quantize "
                                            "needs for an expert model's mixture");
  }
  if (*layer < 0 || *layer >= static_cast<int>(m.n_layer)) {
    return Status(StatusCode::kInvalid,
                  "tensor '" + MessageSafe(name) + "': layer " + std::to_string(*layer) +
                      " is outside the model's block_count of " + std::to_string(m.n_layer));
  }
  return *layer;
}

// llama_tensor_get_type_impl for the k-quant presets.
Result<GgmlType> MixtureType(State& qs, GgmlType type, const GgufTensorShape& t, uint32_t ftype,
                             Category category, const GgufQuantModel& m) {
  const bool falcon = m.arch == "falcon";
  const uint32_t n_gqa = m.n_head_kv == 0 ? 0 : m.n_head / m.n_head_kv;
  if (category == Category::kOutput || (qs.tied_embeddings && category == Category::kTokenEmbd)) {
    if (falcon || t.shape.back() % BlockOf(type) != 0) return GgmlType::kQ8_0;
    return type == GgmlType::kQ8_0 ? type : GgmlType::kQ6_K;
  }
  if (category == Category::kTokenEmbd) return type;
  // attn_qkv ends here too: llama-quantize's own attn_qkv branch comes
  // after this one in its if/else chain and is never reached.
  if (IsAttnVLike(category)) {
    if (ftype == kQ2_K) {
      type = n_gqa >= 4 ? GgmlType::kQ4_K : GgmlType::kQ3_K;
    } else if (ftype == kQ3_K_M) {
      type = qs.i_attention_wv < 2 ? GgmlType::kQ5_K : GgmlType::kQ4_K;
    } else if (ftype == kQ3_K_L) {
      type = GgmlType::kQ5_K;
    } else if ((ftype == kQ4_K_M || ftype == kQ5_K_M) &&
               UseMoreBits(qs.i_attention_wv, qs.n_attention_wv)) {
      type = GgmlType::kQ6_K;
    } else if (ftype == kQ4_K_S && qs.i_attention_wv < 4) {
      type = GgmlType::kQ5_K;
    }
    if (Is70B(m) && (type == GgmlType::kQ3_K || type == GgmlType::kQ4_K)) type = GgmlType::kQ5_K;
    if (m.n_expert == 8) type = GgmlType::kQ8_0;
    ++qs.i_attention_wv;
    return type;
  }
  if (category == Category::kAttnK) return m.n_expert == 8 ? GgmlType::kQ8_0 : type;
  if (category == Category::kAttnQ) return type;
  if (category == Category::kFfnDown) {
    AMN_ASSIGN_OR_RETURN(const int i_layer, LayerFor(qs.i_ffn_down, m, t.name));
    const int n_layer = qs.n_ffn_down;
    if (ftype == kQ2_K) {
      type = GgmlType::kQ3_K;
    } else if (ftype == kQ3_K_M) {
      type = i_layer < n_layer / 16                     ? GgmlType::kQ5_K
             : !falcon || UseMoreBits(i_layer, n_layer) ? GgmlType::kQ4_K
                                                        : GgmlType::kQ3_K;
    } else if (ftype == kQ3_K_L) {
      type = falcon ? GgmlType::kQ4_K : GgmlType::kQ5_K;
    } else if (ftype == kQ4_K_M) {
      if (falcon) {
        type = i_layer < n_layer / 16          ? GgmlType::kQ6_K
               : UseMoreBits(i_layer, n_layer) ? GgmlType::kQ5_K
                                               : GgmlType::kQ4_K;
      } else if (UseMoreBits(i_layer, n_layer)) {
        type = GgmlType::kQ6_K;
      }
    } else if (ftype == kQ5_K_M && UseMoreBits(i_layer, n_layer)) {
      type = GgmlType::kQ6_K;
    } else if (ftype == kQ4_K_S && !falcon && i_layer < n_layer / 8) {
      type = GgmlType::kQ5_K;
    }
    ++qs.i_ffn_down;
    return type;
  }
  if (category == Category::kAttnOutput) {
    if (!falcon) {
      if (m.n_expert == 8) {
        if (ftype == kQ2_K || ftype == kQ3_K_S || ftype == kQ3_K_M || ftype == kQ4_K_S ||
            ftype == kQ4_K_M) {
          type = GgmlType::kQ5_K;
        }
      } else if (ftype == kQ2_K) {
        type = GgmlType::kQ3_K;
      } else if (ftype == kQ3_K_M) {
        type = GgmlType::kQ4_K;
      } else if (ftype == kQ3_K_L) {
        type = GgmlType::kQ5_K;
      }
    } else if (ftype == kQ3_K_L) {
      type = GgmlType::kQ4_K;
    }
    return type;
  }
  // ffn_gate and ffn_up only change for IQ3_XS, which amn does not offer,
  // but llama-quantize still checks their layer (an error for experts).
  if (category == Category::kFfnGate) {
    AMN_RETURN_IF_ERROR(LayerFor(qs.i_ffn_gate, m, t.name).status());
    ++qs.i_ffn_gate;
  } else if (category == Category::kFfnUp) {
    AMN_RETURN_IF_ERROR(LayerFor(qs.i_ffn_up, m, t.name).status());
    ++qs.i_ffn_up;
  }
  return type;
}

// A little-endian integer of GGUF value type `type` at `p` (size checked).
std::optional<uint64_t> IntOf(uint32_t type, const char* p, size_t size) {
  static constexpr size_t kBytes[] = {1, 1, 2, 2, 4, 4, 0, 0, 0, 0, 8, 8};
  if (type >= 12 || kBytes[type] == 0 || size < kBytes[type]) return std::nullopt;
  uint64_t v = 0;
  std::memcpy(&v, p, kBytes[type]);
  return v;
}

// A scalar integer key, or the first item of an integer array.
uint32_t U32Key(const GgufMetadata& metadata, const std::string& key) {
  const std::string* e = metadata.Encoded(key);
  if (e == nullptr || e->size() < 4) return 0;
  uint32_t type = 0;
  std::memcpy(&type, e->data(), 4);
  std::optional<uint64_t> v;
  if (type == static_cast<uint32_t>(GgufValueType::kArray) && e->size() >= 16) {
    uint32_t elem = 0;
    std::memcpy(&elem, e->data() + 4, 4);
    v = IntOf(elem, e->data() + 16, e->size() - 16);
  } else {
    v = IntOf(type, e->data() + 4, e->size() - 4);
  }
  return v ? static_cast<uint32_t>(std::min<uint64_t>(*v, UINT32_MAX)) : 0;
}

}  // namespace

std::optional<GgufQuantPreset> FindGgufQuantPreset(const std::string& lower) {
  const bool mostly = lower.starts_with("mostly_");
  const std::string name = mostly ? lower.substr(7) : lower;
  for (const Mixture& m : kMixtures) {
    // q2_k and q6_k alone are the pure ggml types; their mixtures need mostly_.
    const bool pure_name = m.base == GgmlType::kQ2_K || m.base == GgmlType::kQ6_K;
    if (name == m.name && (mostly || !pure_name)) {
      return GgufQuantPreset{lower, m.base, m.ftype, true};
    }
  }
  if (mostly) return std::nullopt;
  if (const std::optional<GgmlType> type = GgufQuantScheme(lower)) {
    return GgufQuantPreset{lower, *type, LlamaFileTypeOf(*type), false};
  }
  return std::nullopt;
}

Result<GgufTensorTypeOverride> ParseGgufTensorType(const std::string& text) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
    return Status(StatusCode::kInvalidArgument,
                  "--tensor-type '" + MessageSafe(text) + "': expected REGEX=TYPE (attn_v=q8_0)");
  }
  GgufTensorTypeOverride out;
  out.pattern = Lower(text.substr(0, eq));
  const std::string type = Lower(text.substr(eq + 1));
  try {
    out.regex = std::regex(out.pattern);
  } catch (const std::regex_error& e) {
    return Status(
        StatusCode::kInvalidArgument,
        "--tensor-type '" + MessageSafe(text) + "': not a regular expression (" + e.what() + ")");
  }
  for (uint32_t id = 0; id < 64; ++id) {
    const GgmlTypeInfo* info = FindGgmlType(id);
    if (info == nullptr || Lower(std::string(info->name)) != type) continue;
    const bool plain = info->type == GgmlType::kF32 || info->type == GgmlType::kF16 ||
                       info->type == GgmlType::kBF16;
    if (!plain && !(info->quantized && CanQuantizeGgml(info->type))) {
      return Status(StatusCode::kInvalidArgument,
                    "--tensor-type '" + MessageSafe(text) + "': amn cannot write " +
                        std::string(info->name) +
                        " (it takes f32, f16, bf16 and the block types --scheme takes)");
    }
    out.type = info->type;
    return out;
  }
  return Status(StatusCode::kInvalidArgument,
                "--tensor-type '" + MessageSafe(text) + "': '" + MessageSafe(type) +
                    "' is not a ggml type name (q8_0, q4_k, f16, ...)");
}

GgufQuantModel GgufQuantModelOf(const GgufMetadata& metadata) {
  GgufQuantModel m;
  if (const std::string* a = metadata.Encoded("general.architecture");
      a != nullptr && a->size() > 12) {
    m.arch = a->substr(12);  // after the u32 type and the u64 length
  }
  m.n_layer = U32Key(metadata, m.arch + ".block_count");
  m.n_head = U32Key(metadata, m.arch + ".attention.head_count");
  m.n_head_kv = U32Key(metadata, m.arch + ".attention.head_count_kv");
  if (!metadata.Has(m.arch + ".attention.head_count_kv")) m.n_head_kv = m.n_head;
  m.n_expert = U32Key(metadata, m.arch + ".expert_count");
  return m;
}

Result<std::vector<GgufTypeChoice>> ChooseGgufTypes(const std::vector<GgufTensorShape>& tensors,
                                                    const GgufQuantRecipe& recipe,
                                                    const GgufQuantModel& model) {
  if (recipe.preset.mixture && model.n_layer == 0) {
    return Status(StatusCode::kInvalidArgument,
                  "--scheme " + MessageSafe(recipe.preset.name) +
                      " needs the model's layer count ('" + MessageSafe(model.arch) +
                      ".block_count' in the GGUF metadata, which llama-"
                      "quantize reads too); add it with --gguf-kv");
  }
  std::vector<GgufTypeChoice> out(tensors.size());
  State qs;
  for (const GgufTensorShape& t : tensors) {
    const Category c = CategoryOf(t.name);
    if (IsAttnVLike(c)) ++qs.n_attention_wv;
    if (c == Category::kOutput) qs.tied_embeddings = false;
  }
  qs.n_ffn_down = qs.n_ffn_gate = qs.n_ffn_up = static_cast<int>(model.n_layer);
  // llama_model_loader's weights_map order: layer (none: -1), then name.
  std::vector<size_t> order(tensors.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const int la = LayerOf(tensors[a].name).value_or(-1);
    const int lb = LayerOf(tensors[b].name).value_or(-1);
    return la != lb ? la < lb : tensors[a].name < tensors[b].name;
  });
  for (const size_t i : order) {
    const GgufTensorShape& t = tensors[i];
    if (!GgufQuantizes(t.name, t.shape)) continue;
    GgmlType type = recipe.preset.base;
    bool manual = false;
    for (const GgufTensorTypeOverride& o : recipe.overrides) {
      if (std::regex_search(t.name, o.regex)) {
        type = o.type;
        manual = true;
        break;
      }
    }
    if (!manual && recipe.preset.mixture) {
      AMN_ASSIGN_OR_RETURN(
          type, MixtureType(qs, type, t, recipe.preset.file_type, CategoryOf(t.name), model));
    }
    AMN_ASSIGN_OR_RETURN(const GgmlType row_type, GgufRowType(type, t.shape.back(), t.name));
    out[i].quantize = true;
    out[i].type = row_type;
    if (row_type != type) {
      out[i].fallback = "rows of " + std::to_string(t.shape.back()) + " are not a multiple of " +
                        NameOf(type) + "'s block of " + std::to_string(BlockOf(type));
    }
  }
  return out;
}

}  // namespace amn::formats
