// llama-quantize's --pure choice of tensors and fallback types.
#include "formats/gguf_quant_choice.h"

#include <algorithm>
#include <cctype>

#include "amn/ggml_dequant.h"
#include "amn/quantize.h"
#include "formats/byte_source.h"

namespace amn::formats {
namespace {

bool Has(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

uint32_t BlockOf(GgmlType type) {
  const GgmlTypeInfo* info = FindGgmlType(static_cast<uint32_t>(type));
  return info == nullptr ? 1 : info->block_elems;
}

}  // namespace

std::optional<GgmlType> GgufQuantScheme(const std::string& lower) {
  for (uint32_t id = 0; id < 64; ++id) {
    const GgmlTypeInfo* info = FindGgmlType(id);
    if (info == nullptr || !info->quantized || !CanQuantizeGgml(info->type)) continue;
    std::string name(info->name);
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (name == lower) return info->type;
  }
  return std::nullopt;
}

bool GgufNeedsImatrix(GgmlType type, const std::string& gguf_name) {
  if (GgmlQuantizeNeedsImatrix(type)) return true;
  if (gguf_name == "token_embd.weight" || gguf_name == "per_layer_token_embd.weight" ||
      gguf_name == "output.weight") {
    return false;
  }
  switch (type) {
    case GgmlType::kIQ3_XXS:
    case GgmlType::kIQ2_S:
    case GgmlType::kIQ1_M: return true;
    default: return false;
  }
}

uint32_t LlamaFileTypeOf(GgmlType type) {
  switch (type) {
    case GgmlType::kQ4_0: return 2;
    case GgmlType::kQ4_1: return 3;
    case GgmlType::kQ8_0: return 7;
    case GgmlType::kQ5_0: return 8;
    case GgmlType::kQ5_1: return 9;
    case GgmlType::kQ2_K: return 10;
    case GgmlType::kQ3_K: return 12;   // Q3_K_M
    case GgmlType::kQ4_K: return 15;   // Q4_K_M
    case GgmlType::kQ5_K: return 17;   // Q5_K_M
    case GgmlType::kQ6_K: return 18;
    case GgmlType::kIQ4_NL: return 25;
    case GgmlType::kIQ4_XS: return 30;
    case GgmlType::kIQ2_XXS: return 19;
    case GgmlType::kIQ2_XS: return 20;
    case GgmlType::kIQ1_S: return 24;
    case GgmlType::kIQ2_S: return 28;
    case GgmlType::kIQ1_M: return 31;
    case GgmlType::kIQ3_XXS: return 23;
    case GgmlType::kIQ3_S: return 26;
    case GgmlType::kTQ1_0: return 36;
    case GgmlType::kTQ2_0: return 37;
    case GgmlType::kMXFP4: return 38;  // MXFP4_MOE
    case GgmlType::kNVFP4: return 39;
    case GgmlType::kQ1_0: return 40;   // Q2_0 has no llama_ftype: GUESSED
    default: return 1024;              // LLAMA_FTYPE_GUESSED
  }
}

bool GgufQuantizes(const std::string& name, const std::vector<uint64_t>& shape) {
  // ggml_n_dims: ne with its trailing 1s dropped (shape's leading ones).
  size_t dims = shape.size();
  for (size_t i = 0; i < shape.size() && shape[i] == 1 && dims > 1; ++i) --dims;
  if (dims < 2 || !name.ends_with("weight")) return false;
  static const char* const kKept[] = {
      "_norm.weight", "ffn_gate_inp.weight", "ffn_gate_tid2eid.weight", "altup", "laurel",
      "per_layer_model_proj", "ssm_conv1d", "shortconv.conv.weight", "indexer.k_proj.weight",
      "indexer.q_proj.weight", "time_mix_first.weight", "time_mix_w0.weight",
      "time_mix_w1.weight", "time_mix_w2.weight", "time_mix_v0.weight", "time_mix_v1.weight",
      "time_mix_v2.weight", "time_mix_a0.weight", "time_mix_a1.weight", "time_mix_a2.weight",
      "time_mix_g1.weight", "time_mix_g2.weight", "time_mix_decay_w1.weight",
      "time_mix_decay_w2.weight", "time_mix_lerp_fused.weight", "attn_rel_b.weight",
      ".position_embd", "sam.pos_embd", "sam.neck.", "sam.net_", ".rel_pos", ".patch_embd",
      ".patch_merger", "a.rvq.codebook", "mm.a.code_embd"};
  for (const char* part : kKept) {
    if (Has(name, part)) return false;
  }
  // LLM_TENSOR_POS_EMBD and LLM_TENSOR_TOKEN_TYPES, whatever the architecture.
  return name != "position_embd.weight" && name != "token_types.weight";
}

Result<GgmlType> GgufRowType(GgmlType type, uint64_t cols, const std::string& gguf_name) {
  if (cols % BlockOf(type) == 0) return type;
  GgmlType fallback;
  switch (type) {
    case GgmlType::kIQ2_XXS:
    case GgmlType::kIQ2_XS:
    case GgmlType::kIQ2_S:
    case GgmlType::kIQ1_S:
    case GgmlType::kIQ1_M:
    case GgmlType::kIQ4_XS: fallback = GgmlType::kIQ4_NL; break;
    case GgmlType::kIQ3_XXS:
    case GgmlType::kIQ3_S: fallback = GgmlType::kIQ4_NL; break;
    case GgmlType::kQ2_K:
    case GgmlType::kQ3_K:
    case GgmlType::kTQ1_0:
    case GgmlType::kTQ2_0: fallback = GgmlType::kQ4_0; break;
    case GgmlType::kQ4_K: fallback = GgmlType::kQ5_0; break;
    case GgmlType::kQ5_K: fallback = GgmlType::kQ5_1; break;
    case GgmlType::kQ6_K: fallback = GgmlType::kQ8_0; break;
    default: {
      const GgmlTypeInfo* info = FindGgmlType(static_cast<uint32_t>(type));
      return Status(StatusCode::kUnsupported,
                    "tensor '" + MessageSafe(gguf_name) + "': rows of " + std::to_string(cols) +
                        " are not a multiple of " + std::string(info->name) + "'s block of " +
                        std::to_string(info->block_elems) +
                        " and llama-quantize has no fallback type for it; choose another --scheme");
    }
  }
  return cols % BlockOf(fallback) == 0 ? fallback : GgmlType::kF16;
}

}  // namespace amn::formats
