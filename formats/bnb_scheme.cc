// bitsandbytes weights.
// 4-bit: NAME (U8 packed codes) with NAME.quant_state.bitsandbytes__nf4 (or
// __fp4; U8 bytes of a JSON object: shape, blocksize, quant_type, dtype and,
// with double quant, nested_blocksize and nested_offset), NAME.absmax,
// NAME.quant_map (F32 [16]) and, with double quant, NAME.nested_absmax and
// NAME.nested_quant_map (F32 [256]). The output keeps NAME with the
// quant_state's shape.
// INT8 (LLM.int8): bitsandbytes' Linear8bitLt._save_to_state_dict stores its
// extras at module level: MODULE.weight (I8 [rows, cols]), MODULE.SCB (F32
// [rows]) and MODULE.weight_format (U8 scalar, 0 = row-major; older releases
// wrote 1..3 for col32/col_turing/col_ampere tiles, which are refused). The
// output keeps MODULE.weight; SCB and weight_format are consumed.
#include <nlohmann/json.hpp>

#include "formats/byte_source.h"
#include "formats/checked_math.h"
#include "formats/json_bounded.h"
#include "formats/scheme_builder.h"

namespace amn::formats {
namespace {

constexpr std::string_view kQuantState = ".quant_state.bitsandbytes__";
constexpr uint64_t kMaxQuantStateBytes = 64 << 10;

struct QuantState {
  std::vector<uint64_t> shape;
  uint64_t elements = 1;
  uint64_t block_size = 0;
  std::string quant_type;
  uint64_t nested_block_size = 0;
  float nested_offset = 0.0f;
};

Result<QuantState> ParseQuantState(const std::string& text, const std::string& tensor) {
  const Result<nlohmann::json> parsed = ParseBoundedJson<nlohmann::json>(text, "quant_state");
  if (!parsed.ok()) return TensorError(tensor, parsed.status().message());
  nlohmann::json json = *parsed;
  auto bad = [&](const std::string& what) { return TensorError(tensor, "quant_state " + what); };
  if (!json.is_object()) return bad("is not a JSON object");
  QuantState s;
  if (!json.contains("shape") || !json["shape"].is_array() || json["shape"].empty()) {
    return bad("has no \"shape\" array");
  }
  for (const auto& d : json["shape"]) {
    if (!d.is_number_unsigned()) return bad("\"shape\" holds " + MessageSafe(d.dump()) + ", not a size");
    s.shape.push_back(d.get<uint64_t>());
  }
  // Bounded by half the 64-bit range: the output is at least 2 bytes per element.
  const std::optional<uint64_t> elements = ElementCount(s.shape);
  if (!elements || *elements > UINT64_MAX / 2) return bad("\"shape\" overflows");
  s.elements = *elements;
  if (!json.contains("blocksize") || !json["blocksize"].is_number_unsigned()) {
    return bad("has no integer \"blocksize\"");
  }
  s.block_size = json["blocksize"].get<uint64_t>();
  if (s.block_size == 0 || s.block_size % 2 != 0) {
    return bad("blocksize " + std::to_string(s.block_size) + " is not a positive even number");
  }
  if (!json.contains("quant_type") || !json["quant_type"].is_string()) return bad("has no \"quant_type\"");
  s.quant_type = json["quant_type"].get<std::string>();
  if (json.contains("nested_blocksize") && !json["nested_blocksize"].is_null()) {
    if (!json["nested_blocksize"].is_number_unsigned()) return bad("nested_blocksize is not a size");
    s.nested_block_size = json["nested_blocksize"].get<uint64_t>();
  }
  if (json.contains("nested_offset") && !json["nested_offset"].is_null()) {
    if (!json["nested_offset"].is_number()) return bad("nested_offset is not a number");
    // bitsandbytes adds the offset to an F32 tensor: it acts as an f32.
    s.nested_offset = static_cast<float>(json["nested_offset"].get<double>());
  }
  return s;
}

Status Expect(const SchemeBuilder& b, TensorRef ref, Dtype dtype, uint64_t elements) {
  const TensorEntry& e = b.entry(ref);
  if (e.dtype != dtype || e.elements != elements) {
    return TensorError(e.name, "must be " + std::string(DtypeName(dtype)) + " with " +
                                   std::to_string(elements) + " elements, got " +
                                   std::string(DtypeName(e.dtype)) + " " + ShapeText(e.shape));
  }
  return Status::Ok();
}

Status AddBnb4(SchemeBuilder& b, const std::string& state_name, TensorRef state_ref) {
  const size_t at = state_name.find(kQuantState);
  const std::string name = state_name.substr(0, at);
  const std::string type = state_name.substr(at + kQuantState.size());
  if (type != "nf4" && type != "fp4") {
    return TensorError(state_name, "names quant type '" + MessageSafe(type) + "'; bitsandbytes 4-bit is nf4 or fp4");
  }
  AMN_ASSIGN_OR_RETURN(const TensorRef weight, b.Require(state_name, name, {Dtype::kU8}));
  AMN_ASSIGN_OR_RETURN(const std::string text, b.ReadData(state_ref, kMaxQuantStateBytes));
  AMN_ASSIGN_OR_RETURN(const QuantState s, ParseQuantState(text, state_name));
  if (s.quant_type != type) {
    return TensorError(state_name, "says quant_type '" + MessageSafe(s.quant_type) + "' but is named __" + type);
  }
  QuantWeight w;
  w.kind = QuantKind::kBnb4;
  w.weight = weight;
  w.block_size = s.block_size;
  const uint64_t blocks = CeilDiv(s.elements, s.block_size);
  if (b.entry(weight).elements != CeilDiv(s.elements, 2)) {
    return TensorError(name, "holds " + std::to_string(b.entry(weight).elements) + " bytes; " +
                                 std::to_string(s.elements) + " 4-bit values of shape " +
                                 ShapeText(s.shape) + " need " + std::to_string(CeilDiv(s.elements, 2)));
  }
  AMN_ASSIGN_OR_RETURN(const TensorRef absmax, b.Require(name, name + ".absmax", {}));
  AMN_ASSIGN_OR_RETURN(const TensorRef quant_map, b.Require(name, name + ".quant_map", {}));
  AMN_RETURN_IF_ERROR(Expect(b, quant_map, Dtype::kF32, 16));
  const std::optional<TensorRef> nested_absmax = b.Find(name + ".nested_absmax");
  w.double_quant = nested_absmax.has_value();
  if (w.double_quant) {
    AMN_ASSIGN_OR_RETURN(const TensorRef nested_map, b.Require(name, name + ".nested_quant_map", {}));
    w.nested_block_size = s.nested_block_size == 0 ? 256 : s.nested_block_size;
    AMN_RETURN_IF_ERROR(Expect(b, absmax, Dtype::kU8, blocks));
    AMN_RETURN_IF_ERROR(Expect(b, *nested_absmax, Dtype::kF32, CeilDiv(blocks, w.nested_block_size)));
    AMN_RETURN_IF_ERROR(Expect(b, nested_map, Dtype::kF32, 256));
    w.nested_offset = s.nested_offset;
    w.part(Part::kNestedAbsmax) = *nested_absmax;
    w.part(Part::kNestedQuantMap) = nested_map;
  } else {
    AMN_RETURN_IF_ERROR(Expect(b, absmax, Dtype::kF32, blocks));
  }
  w.part(Part::kAbsmax) = absmax;
  w.part(Part::kQuantMap) = quant_map;
  w.part(Part::kMeta) = state_ref;
  w.output_name = name;
  w.output_shape = s.shape;
  w.output_elements = s.elements;
  w.description = "bitsandbytes " + std::string(type == "nf4" ? "NF4" : "FP4") + ", block " +
                  std::to_string(s.block_size) +
                  (w.double_quant ? ", double quant (nested block " +
                                        std::to_string(w.nested_block_size) + ")"
                                  : "");
  return b.Add(std::move(w));
}

Status AddBnbInt8(SchemeBuilder& b, const std::string& scb_name, TensorRef scb) {
  const std::string module = scb_name.substr(0, scb_name.size() - 3);  // keeps the '.'
  const std::string name = module + "weight";
  AMN_ASSIGN_OR_RETURN(const TensorRef weight, b.Require(scb_name, name, {Dtype::kI8}));
  const TensorEntry& e = b.entry(weight);
  if (e.shape.size() != 2) return TensorError(name, "must be 2-D, got " + ShapeText(e.shape));
  AMN_RETURN_IF_ERROR(Expect(b, scb, Dtype::kF32, e.shape[0]));
  QuantWeight w;
  w.kind = QuantKind::kBnbInt8;
  w.weight = weight;
  w.part(Part::kScale) = scb;
  if (const std::optional<TensorRef> format = b.Find(module + "weight_format")) {
    const TensorEntry& f = b.entry(*format);
    if (f.dtype != Dtype::kU8 || f.elements != 1) {
      return TensorError(f.name, "must be one U8 layout tag, got " + std::string(DtypeName(f.dtype)) +
                                     " " + ShapeText(f.shape));
    }
    AMN_ASSIGN_OR_RETURN(const std::string tag, b.ReadData(*format, 1));
    if (tag.size() != 1 || tag[0] != 0) {
      b.Unsupported("tensor '" + MessageSafe(f.name) + "' says weight layout " +
                    std::to_string(tag.empty() ? 0 : static_cast<uint8_t>(tag[0])) +
                    " (a bitsandbytes GPU tile layout: col32, col_turing or col_ampere); only "
                    "layout 0 (row-major) can be read");
      return Status::Ok();
    }
    w.part(Part::kMeta) = *format;
  }
  w.out_features = e.shape[0];
  w.in_features = e.shape[1];
  w.output_name = name;
  w.output_shape = e.shape;
  w.output_elements = e.elements;
  w.description = "bitsandbytes INT8 (LLM.int8, row-wise SCB)";
  return b.Add(std::move(w));
}

}  // namespace

Status DetectBnbWeights(SchemeBuilder& b) {
  const std::string& method = b.config().method;
  for (const auto& [name, ref] : b.by_name()) {
    const bool four = name.find(kQuantState) != std::string::npos;
    const bool eight = EndsWith(name, ".SCB");
    if (!four && !eight) continue;
    if (method != "" && method != "bitsandbytes") {
      return TensorError(name, "is a bitsandbytes tensor but " + b.config().source +
                                   " declares quant_method '" + method + "'");
    }
    AMN_RETURN_IF_ERROR(four ? AddBnb4(b, name, ref) : AddBnbInt8(b, name, ref));
  }
  return Status::Ok();
}

}  // namespace amn::formats
