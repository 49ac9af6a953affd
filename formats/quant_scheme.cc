// DetectScheme: reads the quantization config, runs every per-scheme
// detector over the tensors, then names the model's scheme.
#include "formats/quant_scheme.h"

#include "formats/byte_source.h"
#include "formats/scheme_builder.h"

namespace amn::formats {

std::string ShapeText(const std::vector<uint64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

uint64_t CeilDiv(uint64_t a, uint64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

Status TensorError(std::string_view tensor, const std::string& what) {
  return Status(StatusCode::kInvalid, what).WithTensor(std::string(tensor));
}

SchemeBuilder::SchemeBuilder(const ModelFiles& files, const QuantConfig& config, ModelScheme& scheme)
    : files_(files), config_(config), scheme_(scheme) {
  for (size_t s = 0; s < files.shards.size(); ++s) {
    const auto& tensors = files.shards[s].header.tensors;
    scheme.roles.emplace_back(tensors.size(), TensorRole::kPassthrough);
    scheme.weight_index.emplace_back(tensors.size(), -1);
    for (size_t i = 0; i < tensors.size(); ++i) by_name_[tensors[i].name] = TensorRef{s, i};
  }
}

std::optional<TensorRef> SchemeBuilder::Find(std::string_view name) const {
  const auto found = by_name_.find(name);
  if (found == by_name_.end()) return std::nullopt;
  return found->second;
}

Result<TensorRef> SchemeBuilder::Require(std::string_view weight, const std::string& name,
                                         std::initializer_list<Dtype> dtypes) const {
  const std::optional<TensorRef> ref = Find(name);
  if (!ref) return TensorError(weight, "has no companion tensor " + MessageSafe(name));
  if (dtypes.size() == 0) return *ref;
  std::string allowed;
  for (Dtype d : dtypes) {
    if (entry(*ref).dtype == d) return *ref;
    allowed += (allowed.empty() ? "" : " or ") + std::string(DtypeName(d));
  }
  return TensorError(name, "has dtype " + std::string(DtypeName(entry(*ref).dtype)) + "; expected " +
                               allowed);
}

Result<std::string> SchemeBuilder::ReadData(TensorRef ref, uint64_t max_bytes) const {
  const TensorEntry& e = entry(ref);
  if (e.bytes() > max_bytes) {
    return Status(StatusCode::kLimitExceeded, "holds " + std::to_string(e.bytes()) +
                                                  " bytes; metadata tensors are read only up to " +
                                                  std::to_string(max_bytes))
        .WithTensor(e.name);
  }
  const Shard& shard = files_.shards[ref.shard];
  AMN_ASSIGN_OR_RETURN(std::unique_ptr<FileSource> source, FileSource::Open(shard.path));
  std::string bytes(e.bytes(), '\0');
  AMN_RETURN_IF_ERROR(source->ReadAt(shard.header.data_offset + e.data_begin,
                                     std::as_writable_bytes(std::span(bytes))));
  return bytes;
}

Result<std::vector<int64_t>> SchemeBuilder::ReadInts(TensorRef ref) const {
  const TensorEntry& e = entry(ref);
  if ((e.dtype != Dtype::kI32 && e.dtype != Dtype::kI64) || e.elements > 8) {
    return TensorError(e.name, "must be an I32 or I64 tensor of at most 8 elements, got " +
                                   std::string(DtypeName(e.dtype)) + " " + ShapeText(e.shape));
  }
  AMN_ASSIGN_OR_RETURN(const std::string bytes, ReadData(ref, 64));
  const size_t width = e.dtype == Dtype::kI32 ? 4 : 8;
  std::vector<int64_t> values;
  for (size_t at = 0; at + width <= bytes.size(); at += width) {
    uint64_t v = 0;
    for (size_t k = 0; k < width; ++k) v |= uint64_t{static_cast<uint8_t>(bytes[at + k])} << (8 * k);
    if (width == 4) v = static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(v)));
    values.push_back(static_cast<int64_t>(v));
  }
  return values;
}

Status SchemeBuilder::Add(QuantWeight weight) {
  const std::string& name = entry(weight.weight).name;
  if (Claimed(weight.weight)) return TensorError(name, "is claimed by two quantized weights");
  for (const std::optional<TensorRef>& part : weight.parts) {
    if (part && Claimed(*part)) {
      return TensorError(entry(*part).name, "is a companion of two quantized weights");
    }
  }
  if (!output_names_.insert(weight.output_name).second) {
    return TensorError(name, "would be written as " + MessageSafe(weight.output_name) +
                                 ", which another weight already produces");
  }
  if (const std::optional<TensorRef> same = Find(weight.output_name);
      same && !(same->shard == weight.weight.shard && same->index == weight.weight.index)) {
    return TensorError(name, "would be written as " + MessageSafe(weight.output_name) +
                                 ", which is already a tensor of the model");
  }
  scheme_.roles[weight.weight.shard][weight.weight.index] = TensorRole::kQuantized;
  scheme_.weight_index[weight.weight.shard][weight.weight.index] =
      static_cast<int64_t>(scheme_.weights.size());
  for (const std::optional<TensorRef>& part : weight.parts) {
    if (part) scheme_.roles[part->shard][part->index] = TensorRole::kCompanion;
  }
  scheme_.weights.push_back(std::move(weight));
  return Status::Ok();
}

void SchemeBuilder::Unsupported(const std::string& why) {
  scheme_.quantized = true;
  if (scheme_.unsupported.empty()) scheme_.unsupported = why;
}

namespace {

bool KnownMethod(const std::string& method) {
  return method.empty() || method == "fp8" || method == "fbgemm_fp8" ||
         method == "compressed-tensors" || method == "gptq" || method == "awq" ||
         method == "bitsandbytes" || method == "mxfp4";
}

// A tensor whose name marks a packed scheme but that no weight claimed.
std::string OrphanPackedTensor(const SchemeBuilder& b) {
  constexpr std::string_view kSuffixes[] = {
      ".qweight", ".qzeros", ".g_idx", ".absmax", ".quant_map", ".SCB", ".weight_packed",
      ".weight_zero_point", "_blocks", ".nested_absmax", ".weight_global_scale"};
  for (const auto& [name, ref] : b.by_name()) {
    if (b.Claimed(ref)) continue;
    for (std::string_view suffix : kSuffixes) {
      if (EndsWith(name, suffix)) return name;
    }
    if (name.find(".quant_state.") != std::string::npos) return name;
  }
  return "";
}

void DropActivationScales(SchemeBuilder& b) {
  for (const auto& [name, ref] : b.by_name()) {
    if (!b.Claimed(ref) &&
        (EndsWith(name, ".input_scale") || EndsWith(name, ".k_scale") ||
         EndsWith(name, ".v_scale") || EndsWith(name, ".input_global_scale") ||
         EndsWith(name, ".input_zero_point"))) {
      b.Drop(ref);
    }
  }
}

}  // namespace

Result<ModelScheme> DetectScheme(const ModelFiles& files) {
  Result<QuantConfig> read = ReadQuantConfig(files.config_json, files.quantize_config_json);
  if (!read.ok()) {
    // Its messages start with the file's name; put the model's directory
    // in front so that the user knows which config.json.
    const std::filesystem::path dir = files.is_directory ? files.input : files.input.parent_path();
    return Status(read.status().code(),
                  dir.empty() ? read.status().message()
                              : MessageSafe((dir / "").string(), kMessagePathBytes) +
                                    read.status().message());
  }
  const QuantConfig config = std::move(read).value();
  ModelScheme scheme;
  SchemeBuilder b(files, config, scheme);
  if (!KnownMethod(config.method)) {
    b.Unsupported("quantization method '" + MessageSafe(config.method) + "' (" + config.source +
                  " quantization_config) cannot be dequantized by this build");
    scheme.description = "quant_method '" + MessageSafe(config.method) + "' (not supported)";
    return scheme;
  }
  AMN_RETURN_IF_ERROR(DetectFp8Weights(b));
  AMN_RETURN_IF_ERROR(DetectGptqAwqWeights(b));
  AMN_RETURN_IF_ERROR(DetectBnbWeights(b));
  AMN_RETURN_IF_ERROR(DetectCompressedWeights(b));
  AMN_RETURN_IF_ERROR(DetectMxfp4Weights(b));
  if (scheme.unsupported.empty()) {
    if (const std::string orphan = OrphanPackedTensor(b); !orphan.empty()) {
      b.Unsupported("tensor '" + MessageSafe(orphan) +
                    "' looks like part of a packed quantization scheme, but no quantized weight "
                    "it belongs to was recognised");
    }
  }
  if (scheme.weights.empty()) {
    if (!config.method.empty() && scheme.unsupported.empty()) {
      b.Unsupported(config.source + " declares quantization method '" + config.method +
                    "' but no tensor of the model is quantized in a way this build recognises");
    }
    if (!scheme.unsupported.empty()) {
      scheme.description = config.method.empty() ? "packed quantization (not supported)"
                                                 : "quant_method '" + config.method + "' (not supported)";
    } else {
      scheme.description = "Unquantized";
    }
    return scheme;
  }
  scheme.quantized = true;
  DropActivationScales(b);
  std::set<std::string> seen;
  for (const QuantWeight& w : scheme.weights) {
    if (!seen.insert(w.description).second) continue;
    if (!scheme.description.empty()) scheme.description += " + ";
    scheme.description += w.description;
  }
  return scheme;
}

}  // namespace amn::formats
