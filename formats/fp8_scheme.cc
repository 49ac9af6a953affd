// FP8 scheme detection from tensor names, dtypes, shapes and config.json.
#include "formats/fp8_scheme.h"

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string_view>

namespace amn::formats {
namespace {

constexpr uint64_t kDefaultBlock = 128;

// Quantization methods whose checkpoints store FP8 weights + scales.
bool IsFp8QuantMethod(std::string_view method) {
  return method == "fp8" || method == "fbgemm_fp8" || method == "compressed-tensors";
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

uint64_t CeilDiv(uint64_t a, uint64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

std::string ShapeText(const std::vector<uint64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

struct QuantConfig {
  std::string method;  // empty without quantization_config
  uint64_t block_rows = kDefaultBlock;
  uint64_t block_cols = kDefaultBlock;
  bool block_from_config = false;  // weight_block_size given explicitly
};

Result<QuantConfig> ReadQuantConfig(const ModelFiles& files) {
  QuantConfig config;
  if (files.config_json.empty()) return config;
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(files.config_json);
  } catch (const nlohmann::json::exception& e) {
    return Status(StatusCode::kInvalid, "config.json is not valid JSON: " + std::string(e.what()));
  }
  if (!json.is_object() || !json.contains("quantization_config")) return config;
  const nlohmann::json& q = json["quantization_config"];
  if (!q.is_object()) {
    return Status(StatusCode::kInvalid, "config.json: quantization_config is not an object");
  }
  if (q.contains("quant_method") && q["quant_method"].is_string()) {
    config.method = q["quant_method"].get<std::string>();
  }
  if (q.contains("weight_block_size") && !q["weight_block_size"].is_null()) {
    const nlohmann::json& b = q["weight_block_size"];
    if (!b.is_array() || b.size() != 2 || !b[0].is_number_unsigned() ||
        !b[1].is_number_unsigned() || b[0].get<uint64_t>() == 0 || b[1].get<uint64_t>() == 0) {
      return Status(StatusCode::kInvalid,
                    "config.json: quantization_config.weight_block_size must be two positive "
                    "integers, got " + b.dump());
    }
    config.block_rows = b[0].get<uint64_t>();
    config.block_cols = b[1].get<uint64_t>();
    config.block_from_config = true;
  }
  return config;
}

bool IsScaleDtype(Dtype d) { return d == Dtype::kF32 || d == Dtype::kBf16 || d == Dtype::kF16; }
bool IsFp8Dtype(Dtype d) { return d == Dtype::kF8E4m3 || d == Dtype::kF8E5m2; }

// Fills the layout of `w` from its scale's shape; an error names both.
Status ClassifyScale(const TensorEntry& weight, const TensorEntry& scale, bool inverse_name,
                     const QuantConfig& config, Fp8Weight& w) {
  if (!IsScaleDtype(scale.dtype)) {
    return Status(StatusCode::kInvalid, "scale has dtype " + std::string(DtypeName(scale.dtype)) +
                                            "; FP8 scales must be F32, BF16 or F16")
        .WithTensor(scale.name);
  }
  const std::vector<uint64_t>& shape = weight.shape;
  w.cols = shape.empty() ? 1 : shape.back();
  w.rows = w.cols == 0 ? 0 : weight.elements / w.cols;
  if (scale.elements == 1) {
    w.layout = Fp8Layout::kPerTensor;
    return Status::Ok();
  }
  const bool two_d = shape.size() == 2;
  const std::vector<uint64_t>& s = scale.shape;
  uint64_t block_rows = config.block_rows, block_cols = config.block_cols;
  auto fits = [&](uint64_t br, uint64_t bc) {
    return two_d && s.size() == 2 && s[0] == CeilDiv(w.rows, br) && s[1] == CeilDiv(w.cols, bc);
  };
  // Without weight_block_size in config.json, a block grid that is not
  // 128 x 128 gives its block size away: R = ceil(rows / grid rows).
  if (!config.block_from_config && inverse_name && !fits(block_rows, block_cols) &&
      s.size() == 2 && s[0] > 0 && s[1] > 0 && w.rows > 0 && w.cols > 0 && fits(CeilDiv(w.rows, s[0]), CeilDiv(w.cols, s[1]))) {
    block_rows = CeilDiv(w.rows, s[0]);
    block_cols = CeilDiv(w.cols, s[1]);
  }
  const bool grid_shape = fits(block_rows, block_cols);
  const bool channel_shape =
      two_d && ((s.size() == 1 && s[0] == w.rows) || (s.size() == 2 && s[0] == w.rows && s[1] == 1));
  if (inverse_name && grid_shape) {
    w.layout = Fp8Layout::kBlock;
  } else if (channel_shape) {
    w.layout = Fp8Layout::kPerChannel;
  } else if (grid_shape) {
    w.layout = Fp8Layout::kBlock;
  } else {
    return Status(StatusCode::kInvalid,
                  "scale shape " + ShapeText(s) + " fits neither one scale, per-channel [" +
                      std::to_string(w.rows) + "] / [" + std::to_string(w.rows) +
                      ", 1], nor " + std::to_string(config.block_rows) + "x" +
                      std::to_string(config.block_cols) + " blocks of weight " +
                      ShapeText(shape))
        .WithTensor(scale.name);
  }
  if (w.layout == Fp8Layout::kBlock) {
    w.block_rows = block_rows;
    w.block_cols = block_cols;
    w.scale_cols = s[1];
  }
  return Status::Ok();
}

// The first tensor whose name marks a packed-integer scheme, or "".
std::string PackedTensorName(const std::map<std::string, TensorRef, std::less<>>& by_name) {
  constexpr std::string_view kSuffixes[] = {
      ".qweight", ".qzeros", ".g_idx", ".absmax", ".quant_map", ".SCB", ".weight_packed",
      ".weight_zero_point", "_blocks", ".nested_absmax"};
  for (const auto& [name, ref] : by_name) {
    for (std::string_view suffix : kSuffixes) {
      if (EndsWith(name, suffix)) return name;
    }
    if (name.find(".quant_state.") != std::string::npos) return name;
  }
  return "";
}

std::string LayoutText(const Fp8Weight& w) {
  switch (w.layout) {
    case Fp8Layout::kPerTensor: return "Per-tensor FP8";
    case Fp8Layout::kPerChannel: return "Per-channel FP8";
    case Fp8Layout::kBlock:
      return "Fine-grained FP8, " + std::to_string(w.block_rows) + "x" +
             std::to_string(w.block_cols) + " blocks";
  }
  return "FP8";
}

}  // namespace

Result<ModelScheme> DetectScheme(const ModelFiles& files) {
  AMN_ASSIGN_OR_RETURN(const QuantConfig config, ReadQuantConfig(files));
  ModelScheme scheme;
  if (!config.method.empty() && !IsFp8QuantMethod(config.method)) {
    scheme.quantized = true;
    scheme.description = "quant_method '" + config.method + "' (not supported yet)";
    scheme.unsupported = "quantization method '" + config.method +
                         "' (config.json quantization_config) cannot be dequantized by this "
                         "build yet; FP8 checkpoints can";
  }

  std::map<std::string, TensorRef, std::less<>> by_name;
  for (size_t s = 0; s < files.shards.size(); ++s) {
    const auto& tensors = files.shards[s].header.tensors;
    scheme.roles.emplace_back(tensors.size(), TensorRole::kPassthrough);
    scheme.fp8_index.emplace_back(tensors.size(), -1);
    for (size_t i = 0; i < tensors.size(); ++i) by_name[tensors[i].name] = TensorRef{s, i};
  }
  auto entry = [&](TensorRef ref) -> const TensorEntry& {
    return files.shards[ref.shard].header.tensors[ref.index];
  };

  std::set<std::string> layouts;
  std::set<std::string> code_types;
  for (const auto& [name, ref] : by_name) {
    const TensorEntry& weight = entry(ref);
    if (!IsFp8Dtype(weight.dtype)) continue;
    Fp8Weight w;
    w.weight = ref;
    bool inverse = false;
    auto found = by_name.find(name + "_scale_inv");
    if (found != by_name.end()) {
      inverse = true;
    } else {
      found = by_name.find(name + "_scale");
    }
    if (found == by_name.end()) {
      return Status(StatusCode::kInvalid, "FP8 weight has no " + name + "_scale or " + name +
                                              "_scale_inv companion")
          .WithTensor(name);
    }
    w.scale = found->second;
    AMN_RETURN_IF_ERROR(ClassifyScale(weight, entry(w.scale), inverse, config, w));
    scheme.roles[ref.shard][ref.index] = TensorRole::kQuantized;
    scheme.roles[w.scale.shard][w.scale.index] = TensorRole::kScale;
    scheme.fp8_index[ref.shard][ref.index] = static_cast<int64_t>(scheme.fp8_weights.size());
    layouts.insert(LayoutText(w));
    code_types.insert(weight.dtype == Dtype::kF8E4m3 ? "E4M3" : "E5M2");
    scheme.fp8_weights.push_back(w);
  }

  if (!scheme.unsupported.empty()) return scheme;
  if (const std::string packed = PackedTensorName(by_name); !packed.empty()) {
    scheme.quantized = true;
    scheme.description = "packed integer quantization (GPTQ/AWQ/bitsandbytes style; not supported yet)";
    scheme.unsupported = "tensor '" + packed +
                         "' belongs to a packed quantization scheme (GPTQ, AWQ, bitsandbytes, "
                         "compressed-tensors, MXFP4) this build cannot dequantize yet";
    return scheme;
  }
  scheme.quantized = !scheme.fp8_weights.empty();
  if (!scheme.quantized) {
    if (!config.method.empty()) {
      scheme.quantized = true;
      scheme.description = "quant_method '" + config.method + "' without FP8 tensors";
      scheme.unsupported = "config.json declares quantization method '" + config.method +
                           "' but no tensor is FP8; this build dequantizes FP8 checkpoints only";
      return scheme;
    }
    scheme.description = "Unquantized";
    return scheme;
  }
  // Activation and KV-cache scales describe quantized inference; a
  // dequantized model has no use for them.
  for (const auto& [name, ref] : by_name) {
    if (scheme.RoleOf(ref) == TensorRole::kPassthrough &&
        (EndsWith(name, ".input_scale") || EndsWith(name, ".k_scale") ||
         EndsWith(name, ".v_scale"))) {
      scheme.roles[ref.shard][ref.index] = TensorRole::kDropped;
    }
  }
  for (const std::string& layout : layouts) {
    if (!scheme.description.empty()) scheme.description += " + ";
    scheme.description += layout;
  }
  std::string codes;
  for (const std::string& c : code_types) codes += (codes.empty() ? "" : "/") + c;
  scheme.description += " (" + codes + ")";
  return scheme;
}

}  // namespace amn::formats
