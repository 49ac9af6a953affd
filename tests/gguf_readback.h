// Reading back the GGUF files `amn convert` writes with the real loaders,
// for the convert tests: ggml's own gguf_init_from_file (through the oracle
// library, tests/ggml_oracle.h), @huggingface/gguf through node
// (tests/gguf_readback.mjs) and `amn parse --json`; plus the small models
// and fixture readers those tests share.
#ifndef AMN_TESTS_GGUF_READBACK_H_
#define AMN_TESTS_GGUF_READBACK_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fixtures/safetensors_builder.h"
#include "tests/cli_files.h"
#include "tests/cli_runner.h"
#include "tests/fixtures.h"
#include "tests/ggml_oracle.h"

namespace amn::test {

inline void WriteText(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

inline void WriteBytes(const std::filesystem::path& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

inline std::vector<uint8_t> F32Bytes(size_t n, float scale) {
  std::vector<uint8_t> out(n * 4);
  for (size_t i = 0; i < n; ++i) {
    const float v = scale * static_cast<float>(static_cast<int>((i * 2654435761u) % 2001) - 1000) / 997.0f;
    std::memcpy(out.data() + 4 * i, &v, 4);
  }
  return out;
}

// ---- ggml's own GGUF loader, through the oracle library ----------------

struct GgmlTensorPrefix {  // the head of ggml.h's struct ggml_tensor
  int32_t type;
  void* buffer;
  int64_t ne[4];
};

struct GgmlView {
  uint32_t version = 0;
  uint64_t alignment = 0, data_offset = 0;
  nlohmann::json metadata = nlohmann::json::object();  // as `amn parse --json` spells it
  std::vector<std::string> keys;   // in file order
  struct Tensor {
    std::string name;
    int type = -1;
    uint64_t offset = 0, size = 0;
    std::vector<uint64_t> ne;  // ne0 first, trailing 1s dropped
  };
  std::vector<Tensor> tensors;
};

inline const char* TypeName(int t) {
  static const char* kNames[] = {"u8", "i8",  "u16",   "i16", "u32", "i32", "f32",
                                 "bool", "string", "array", "u64", "i64", "f64"};
  return t >= 0 && t < 13 ? kNames[t] : "?";
}

// Loads `path` with ggml (no_alloc) into a GgmlView; false when ggml refuses.
inline bool LoadWithGgml(const GgmlOracle& ggml, const std::filesystem::path& path, GgmlView& view) {
  struct InitParams { bool no_alloc; void** ctx; };
  using Ctx = void*;
  auto sym = [&](const char* name) {
    void* p = ggml.Symbol(name);
    EXPECT_NE(p, nullptr) << name;
    return p;
  };
  auto init = reinterpret_cast<Ctx (*)(const char*, InitParams)>(sym("gguf_init_from_file"));
  auto free_ctx = reinterpret_cast<void (*)(Ctx)>(sym("gguf_free"));
  auto ggml_free = reinterpret_cast<void (*)(void*)>(sym("ggml_free"));
  auto get_tensor = reinterpret_cast<void* (*)(void*, const char*)>(sym("ggml_get_tensor"));
  auto version = reinterpret_cast<uint32_t (*)(Ctx)>(sym("gguf_get_version"));
  auto alignment = reinterpret_cast<size_t (*)(Ctx)>(sym("gguf_get_alignment"));
  auto data_offset = reinterpret_cast<size_t (*)(Ctx)>(sym("gguf_get_data_offset"));
  auto n_kv = reinterpret_cast<int64_t (*)(Ctx)>(sym("gguf_get_n_kv"));
  auto key = reinterpret_cast<const char* (*)(Ctx, int64_t)>(sym("gguf_get_key"));
  auto kv_type = reinterpret_cast<int (*)(Ctx, int64_t)>(sym("gguf_get_kv_type"));
  auto arr_type = reinterpret_cast<int (*)(Ctx, int64_t)>(sym("gguf_get_arr_type"));
  auto arr_n = reinterpret_cast<size_t (*)(Ctx, int64_t)>(sym("gguf_get_arr_n"));
  auto arr_data = reinterpret_cast<const void* (*)(Ctx, int64_t)>(sym("gguf_get_arr_data"));
  auto arr_str = reinterpret_cast<const char* (*)(Ctx, int64_t, size_t)>(sym("gguf_get_arr_str"));
  auto val_data = reinterpret_cast<const void* (*)(Ctx, int64_t)>(sym("gguf_get_val_data"));
  auto val_str = reinterpret_cast<const char* (*)(Ctx, int64_t)>(sym("gguf_get_val_str"));
  auto n_tensors = reinterpret_cast<int64_t (*)(Ctx)>(sym("gguf_get_n_tensors"));
  auto t_name = reinterpret_cast<const char* (*)(Ctx, int64_t)>(sym("gguf_get_tensor_name"));
  auto t_type = reinterpret_cast<int (*)(Ctx, int64_t)>(sym("gguf_get_tensor_type"));
  auto t_offset = reinterpret_cast<size_t (*)(Ctx, int64_t)>(sym("gguf_get_tensor_offset"));
  auto t_size = reinterpret_cast<size_t (*)(Ctx, int64_t)>(sym("gguf_get_tensor_size"));
  if (::testing::Test::HasFailure()) return false;

  void* tensors_ctx = nullptr;
  Ctx ctx = init(path.c_str(), InitParams{true, &tensors_ctx});
  if (ctx == nullptr) return false;
  view.version = version(ctx);
  view.alignment = alignment(ctx);
  view.data_offset = data_offset(ctx);
  // One element of a scalar type at `p`, as amn parse writes it.
  auto scalar = [](int type, const void* p) -> nlohmann::json {
    switch (type) {
      case 0: return *static_cast<const uint8_t*>(p);
      case 1: return *static_cast<const int8_t*>(p);
      case 2: return *static_cast<const uint16_t*>(p);
      case 3: return *static_cast<const int16_t*>(p);
      case 4: return *static_cast<const uint32_t*>(p);
      case 5: return *static_cast<const int32_t*>(p);
      case 6: return static_cast<double>(*static_cast<const float*>(p));
      case 7: return *static_cast<const bool*>(p);
      case 10: return *static_cast<const uint64_t*>(p);
      case 11: return *static_cast<const int64_t*>(p);
      case 12: return *static_cast<const double*>(p);
    }
    return nullptr;
  };
  auto elem_size = [](int type) -> size_t {
    static const size_t kSizes[] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
    return kSizes[type];
  };
  for (int64_t k = 0; k < n_kv(ctx); ++k) {
    const std::string name = key(ctx, k);
    view.keys.push_back(name);
    const int type = kv_type(ctx, k);
    nlohmann::json value;
    if (type == 8) {
      value = val_str(ctx, k);
    } else if (type == 9) {
      const int et = arr_type(ctx, k);
      const size_t n = arr_n(ctx, k);
      nlohmann::json first = nlohmann::json::array();
      for (size_t i = 0; i < n && i < 16; ++i) {
        first.push_back(et == 8 ? nlohmann::json(arr_str(ctx, k, i))
                                : scalar(et, static_cast<const char*>(arr_data(ctx, k)) + i * elem_size(et)));
      }
      value = {{"type", TypeName(et)}, {"count", n}, {"first", first}};
    } else {
      value = scalar(type, val_data(ctx, k));
    }
    view.metadata[name] = {{"type", TypeName(type)}, {"value", value}};
  }
  for (int64_t t = 0; t < n_tensors(ctx); ++t) {
    GgmlView::Tensor info;
    info.name = t_name(ctx, t);
    info.type = t_type(ctx, t);
    info.offset = t_offset(ctx, t);
    info.size = t_size(ctx, t);
    const auto* tensor = static_cast<const GgmlTensorPrefix*>(get_tensor(tensors_ctx, info.name.c_str()));
    if (tensor != nullptr) {
      int dims = 4;
      while (dims > 1 && tensor->ne[dims - 1] == 1) --dims;
      for (int d = 0; d < dims; ++d) info.ne.push_back(static_cast<uint64_t>(tensor->ne[d]));
    }
    view.tensors.push_back(std::move(info));
  }
  ggml_free(tensors_ctx);
  free_ctx(ctx);
  return true;
}

// ---- @huggingface/gguf through node -------------------------------------

// The node reader's view, or null (skipped/failed through the macro below).
inline nlohmann::json ReadWithHuggingFace(const std::filesystem::path& path, std::string* why) {
  const std::filesystem::path modules = std::filesystem::path(AMN_PROJECT_ROOT) / "build" / "oracles" / "node_modules";
  if (!std::filesystem::exists(modules / "@huggingface" / "gguf" / "package.json")) {
    *why = (modules / "@huggingface/gguf").string() + " absent (bash .ci/install-deps oracles)";
    return nullptr;
  }
  const std::filesystem::path script = std::filesystem::path(AMN_PROJECT_ROOT) / "tests" / "gguf_readback.mjs";
  const CliResult r = RunCommand("node", Quote(script) + " " + Quote(modules) + " " + Quote(path));
  if (r.exit_code != 0) {
    *why = "node failed: " + r.err;
    return nullptr;
  }
  return nlohmann::json::parse(r.out);
}

#define AMN_HF_GGUF_OR_SKIP(view, path)                                          \
  std::string hf_why;                                                            \
  const nlohmann::json view = ::amn::test::ReadWithHuggingFace(path, &hf_why);   \
  if (view.is_null()) {                                                          \
    if (::amn::test::GgmlOracle::Required() || hf_why.starts_with("node failed")) { \
      FAIL() << hf_why;                                                          \
    }                                                                            \
    GTEST_SKIP() << hf_why;                                                      \
  }

inline nlohmann::json Parse(const std::filesystem::path& path) {
  const CliResult r = RunAmn("parse --json " + Quote(path));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json();
}

inline std::vector<uint8_t> FileBytes(const std::filesystem::path& path) { return ReadBytes(path); }

inline std::vector<uint8_t> Slice(const std::vector<uint8_t>& file, uint64_t at, uint64_t n) {
  EXPECT_LE(at + n, file.size());
  if (at + n > file.size()) return {};
  return {file.begin() + static_cast<long>(at), file.begin() + static_cast<long>(at + n)};
}

// A small Qwen2-shaped model directory: F32 and BF16 weights, config.json.
inline void WriteQwen2Model(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  auto bf16 = [](const std::vector<uint8_t>& f32) {
    std::vector<uint8_t> out;
    for (size_t i = 0; i < f32.size(); i += 4) {
      uint32_t bits;
      std::memcpy(&bits, f32.data() + i, 4);
      bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16;
      out.push_back(static_cast<uint8_t>(bits));
      out.push_back(static_cast<uint8_t>(bits >> 8));
    }
    return out;
  };
  fixtures::SafetensorsBuilder()
      .Add("model.embed_tokens.weight", "BF16", {40, 32}, bf16(F32Bytes(40 * 32, 1.0f)))
      .Add("model.layers.0.self_attn.q_proj.weight", "BF16", {32, 32}, bf16(F32Bytes(32 * 32, 0.5f)))
      .Add("model.layers.0.self_attn.q_proj.bias", "F32", {32}, F32Bytes(32, 0.25f))
      // 5 x 7 F16 is 70 bytes: the next tensor starts after 26 bytes of padding.
      .Add("model.layers.0.mlp.down_proj.weight", "F32", {5, 7}, F32Bytes(5 * 7, 0.125f))
      .Add("model.layers.0.input_layernorm.weight", "BF16", {32}, bf16(F32Bytes(32, 2.0f)))
      .Add("model.norm.weight", "F32", {32}, F32Bytes(32, 3.0f))
      .Add("lm_head.weight", "BF16", {40, 32}, bf16(F32Bytes(40 * 32, 0.75f)))
      .Write(dir / "model.safetensors");
  WriteText(dir / "config.json",
            R"({"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": 32,
                "num_hidden_layers": 1, "num_attention_heads": 4, "num_key_value_heads": 2,
                "intermediate_size": 48, "max_position_embeddings": 4096,
                "rope_theta": 1000000.0, "rms_norm_eps": 1e-06, "vocab_size": 40,
                "torch_dtype": "bfloat16"})");
}

// ---- GGUF -> GGUF, from a real Q4_K block dump ---------------------------

struct GgufFixture {
  std::vector<uint8_t> blocks, golden_bf16;
  uint32_t type = 0, n = 0;
};

inline bool ReadGgufFixture(const std::string& name, GgufFixture& f) {
  const std::filesystem::path path = FixturesDir() / "gguf_reference" / name;
  if (!std::filesystem::exists(path)) return false;
  const std::vector<uint8_t> bytes = ReadBytes(path);
  f.type = LoadLe32(bytes.data());
  f.n = LoadLe32(bytes.data() + 4);
  const uint32_t raw = LoadLe32(bytes.data() + 8), golden = LoadLe32(bytes.data() + 12);
  f.blocks.assign(bytes.begin() + 16, bytes.begin() + 16 + raw);
  f.golden_bf16.assign(bytes.begin() + 16 + raw, bytes.begin() + 16 + raw + golden);
  return true;
}


// A one-layer Llama model of real SmolLM2 weights (a gguf_reference
// fixture's golden BF16): q/k/down/embedding/lm_head slices and norms;
// `odd` adds an up_proj whose rows (48) fit no 32-element block.
inline void WriteRealLlama(const std::filesystem::path& dir, const std::vector<uint8_t>& golden, bool odd) {
  std::filesystem::create_directories(dir);
  auto part = [&](uint64_t first, uint64_t n) {  // n BF16 values from element `first`
    return std::vector<uint8_t>(golden.begin() + 2 * first, golden.begin() + 2 * (first + n));
  };
  fixtures::SafetensorsBuilder b;
  b.Add("model.embed_tokens.weight", "BF16", {64, 256}, part(0, 64 * 256))
      .Add("model.layers.0.self_attn.q_proj.weight", "BF16", {256, 256}, part(0, 256 * 256))
      .Add("model.layers.0.self_attn.k_proj.weight", "BF16", {128, 256}, part(16384, 128 * 256))
      .Add("model.layers.0.mlp.down_proj.weight", "BF16", {256, 96}, part(8192, 256 * 96))
      .Add("model.layers.0.input_layernorm.weight", "BF16", {256}, part(512, 256))
      .Add("model.norm.weight", "BF16", {256}, part(1024, 256))
      .Add("lm_head.weight", "BF16", {64, 256}, part(49152, 64 * 256));
  if (odd) b.Add("model.layers.0.mlp.up_proj.weight", "BF16", {16, 48}, part(4096, 16 * 48));
  b.Write(dir / "model.safetensors");
  WriteText(dir / "config.json",
            R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 256,
                "num_hidden_layers": 1, "num_attention_heads": 4, "num_key_value_heads": 2,
                "intermediate_size": 96, "vocab_size": 64, "rms_norm_eps": 1e-05})");
}

// The F32 values of little-endian F32 bytes.
inline std::vector<float> Floats(const std::vector<uint8_t>& bytes) {
  std::vector<float> out(bytes.size() / 4);
  std::memcpy(out.data(), bytes.data(), out.size() * 4);
  return out;
}

}  // namespace amn::test

#endif  // AMN_TESTS_GGUF_READBACK_H_
