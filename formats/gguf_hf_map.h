// What a Hugging Face model becomes in GGUF (docs/gguf.md "Writing GGUF"):
// the architecture and the hyperparameters config.json states one to one,
// as llama.cpp's convert_hf_to_gguf.py names them, and the tensor names
// llama.cpp's loader knows for the Llama-family architectures.
#ifndef AMN_FORMATS_GGUF_HF_MAP_H_
#define AMN_FORMATS_GGUF_HF_MAP_H_

#include <string>
#include <string_view>

#include "amn/result.h"
#include "formats/gguf_writer.h"

namespace amn::formats {

// The GGUF architecture of a config.json: "llama" for LlamaForCausalLM and
// MistralForCausalLM (llama.cpp converts both as llama), "qwen2" for
// Qwen2ForCausalLM, else its model_type; "" when the text names neither.
std::string GgufArchitecture(std::string_view config_json);

// Sets general.architecture (when known) and the `<arch>.` hyperparameters
// present in config.json with a number of the right kind:
// context_length (max_position_embeddings), embedding_length
// (hidden_size), block_count (num_hidden_layers), feed_forward_length
// (intermediate_size), attention.head_count (num_attention_heads),
// attention.head_count_kv (num_key_value_heads), vocab_size, as u32;
// rope.freq_base (rope_theta) and attention.layer_norm_rms_epsilon
// (rms_norm_eps) as f32. A config that is not a JSON object adds nothing.
Status AddHfConfigMetadata(std::string_view config_json, GgufMetadata& metadata);

// Whether tensors of `architecture` are renamed for llama.cpp: llama
// (LlamaForCausalLM, MistralForCausalLM) and qwen2.
bool GgufRenamesTensors(std::string_view architecture);

// The heads by which llama.cpp's converter permutes the rows of a llama
// weight (LlamaModel.permute: q_proj by num_attention_heads, k_proj by
// num_key_value_heads, weights and biases) from Hugging Face's rotary
// layout to ggml's; 0 for every other tensor and architecture. kInvalid
// when a llama config.json lacks the head counts.
Result<uint64_t> GgufPermuteHeads(std::string_view config_json, std::string_view hf_name);

// model.embed_tokens.weight -> token_embd.weight,
// model.layers.N.self_attn.q_proj.weight -> blk.N.attn_q.weight (k, v,
// o_proj -> attn_output; biases too), mlp.gate_proj/up_proj/down_proj ->
// ffn_gate/ffn_up/ffn_down, input_layernorm -> attn_norm,
// post_attention_layernorm -> ffn_norm, model.norm -> output_norm, lm_head
// -> output. Any other name is returned unchanged.
std::string GgufTensorName(std::string_view hf_name);

}  // namespace amn::formats

#endif  // AMN_FORMATS_GGUF_HF_MAP_H_
