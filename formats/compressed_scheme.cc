// compressed-tensors packed weights (quant_method "compressed-tensors").
// pack-quantized: PREFIX.weight_packed (I32, int4/int8 codes packed along
// the input dimension), PREFIX.weight_scale ([rows, 1] per channel or
// [rows, groups] per group), PREFIX.weight_zero_point when asymmetric, and
// PREFIX.weight_shape ([rows, cols] as integers).
// nvfp4-pack-quantized: PREFIX.weight_packed (U8, two E2M1 codes a byte),
// PREFIX.weight_scale (F8_E4M3, one per 16 inputs), PREFIX.weight_global_scale
// (F32, one value). Both become PREFIX.weight [rows, cols].
#include "formats/scheme_builder.h"

namespace amn::formats {
namespace {

constexpr std::string_view kPacked = ".weight_packed";

// The "int" weights arguments every config group agrees on.
Result<CompressedWeightsArgs> IntArgs(const SchemeBuilder& b, const std::string& name) {
  std::optional<CompressedWeightsArgs> found;
  for (const CompressedWeightsArgs& a : b.config().weights) {
    if (a.type != "int") continue;
    if (found && (found->num_bits != a.num_bits || found->symmetric != a.symmetric ||
                  found->strategy != a.strategy || found->group_size != a.group_size)) {
      return Status(StatusCode::kUnsupported,
                    "config groups " + MessageSafe(found->group) + " and " + MessageSafe(a.group) +
                        " quantize int weights differently; mixed config_groups are not supported")
          .WithTensor(name);
    }
    found = a;
  }
  if (!found) {
    return TensorError(name, "is pack-quantized but " + b.config().source +
                                 " has no config group with int weights");
  }
  return *found;
}

Result<std::vector<uint64_t>> WeightShape(const SchemeBuilder& b, const std::string& prefix,
                                          std::optional<TensorRef>& ref) {
  ref = b.Find(prefix + ".weight_shape");
  if (!ref) return std::vector<uint64_t>{};
  AMN_ASSIGN_OR_RETURN(const std::vector<int64_t> values, b.ReadInts(*ref));
  std::vector<uint64_t> shape;
  for (int64_t v : values) {
    if (v < 0) return TensorError(b.entry(*ref).name, "holds a negative size");
    shape.push_back(static_cast<uint64_t>(v));
  }
  if (shape.size() != 2) {
    return TensorError(b.entry(*ref).name, "must hold two sizes [rows, cols], got " + ShapeText(shape));
  }
  return shape;
}

Status AddPackedInt(SchemeBuilder& b, const std::string& name, TensorRef packed) {
  const std::string prefix = name.substr(0, name.size() - kPacked.size());
  AMN_ASSIGN_OR_RETURN(const CompressedWeightsArgs args, IntArgs(b, name));
  if (b.Find(prefix + ".weight_g_idx")) {
    b.Unsupported("compressed-tensors activation ordering (" + MessageSafe(prefix) +
                  ".weight_g_idx) is not supported");
    return Status::Ok();
  }
  if (args.num_bits != 4 && args.num_bits != 8) {
    return TensorError(name, "pack-quantized int" + std::to_string(args.num_bits) +
                                 ": this build dequantizes int4 and int8");
  }
  if (args.strategy != "channel" && args.strategy != "group" && args.strategy != "tensor") {
    b.Unsupported("compressed-tensors pack-quantized with strategy '" + MessageSafe(args.strategy) +
                  "' is not supported (tensor, channel and group are)");
    return Status::Ok();
  }
  if (args.strategy == "group" && args.group_size && *args.group_size <= 0) {
    return TensorError(name, "config_groups." + MessageSafe(args.group, 64) +
                                 ".weights.group_size is " + std::to_string(*args.group_size) +
                                 "; strategy group needs a positive group size");
  }
  QuantWeight w;
  w.kind = QuantKind::kPackedInt;
  w.weight = packed;
  w.bits = static_cast<uint32_t>(args.num_bits);
  std::optional<TensorRef> shape_ref;
  AMN_ASSIGN_OR_RETURN(const std::vector<uint64_t> shape, WeightShape(b, prefix, shape_ref));
  if (shape.empty()) return TensorError(name, "has no companion " + MessageSafe(prefix) + ".weight_shape");
  w.part(Part::kMeta) = shape_ref;
  w.out_features = shape[0];
  w.in_features = shape[1];
  const TensorEntry& p = b.entry(packed);
  const uint64_t per_word = 32 / w.bits;
  if (p.shape.size() != 2 || p.shape[0] != w.out_features ||
      p.shape[1] != CeilDiv(w.in_features, per_word)) {
    return TensorError(name, "shape " + ShapeText(p.shape) + " does not hold int" +
                                 std::to_string(w.bits) + " codes of weight_shape " + ShapeText(shape));
  }
  AMN_ASSIGN_OR_RETURN(const TensorRef scale, b.Require(name, prefix + ".weight_scale",
                                                        {Dtype::kF16, Dtype::kBf16, Dtype::kF32}));
  w.part(Part::kScale) = scale;
  const TensorEntry& se = b.entry(scale);
  const std::optional<TensorRef> zero = b.Find(prefix + ".weight_zero_point");
  if (!args.symmetric && !zero) {
    return TensorError(name, "is asymmetric but has no " + MessageSafe(prefix) + ".weight_zero_point");
  }
  if (args.strategy == "tensor") {
    if (se.elements != 1) return TensorError(se.name, "must hold one scale (strategy tensor), got " + ShapeText(se.shape));
    if (zero) return TensorError(b.entry(*zero).name, "a per-tensor scale has no zero point here");
    w.tensor_scale = true;
    w.groups = 1;
    w.group_size = w.in_features;
  } else {
    const std::vector<uint64_t>& s = se.shape;
    if (s.size() != 2 || s[0] != w.out_features || s[1] == 0) {
      return TensorError(se.name, "shape " + ShapeText(s) + " should be [" +
                                      std::to_string(w.out_features) + ", groups]");
    }
    if (args.strategy == "channel" && s[1] != 1) {
      return TensorError(se.name, "shape " + ShapeText(s) + " should be [" +
                                      std::to_string(w.out_features) + ", 1] (strategy channel)");
    }
    w.groups = s[1];
    w.group_size = w.in_features / w.groups;
    if (w.group_size == 0 || w.group_size * w.groups != w.in_features ||
        (args.strategy == "group" && args.group_size && *args.group_size > 0 &&
         static_cast<uint64_t>(*args.group_size) != w.group_size)) {
      return TensorError(se.name, std::to_string(w.groups) + " groups do not split " +
                                      std::to_string(w.in_features) + " inputs evenly" +
                                      (args.group_size ? " in groups of " + std::to_string(*args.group_size) : ""));
    }
  }
  if (zero) {
    const TensorEntry& z = b.entry(*zero);
    const std::vector<uint64_t> packed_shape = {CeilDiv(w.out_features, per_word), w.groups};
    const std::vector<uint64_t> plain_shape = {w.out_features, w.groups};
    w.zero_point_i8 = z.dtype == Dtype::kI8;
    if (!((z.dtype == Dtype::kI32 && z.shape == packed_shape) || (w.zero_point_i8 && z.shape == plain_shape))) {
      return TensorError(z.name, "must be I32 " + ShapeText(packed_shape) + " (packed along rows) or I8 " +
                                     ShapeText(plain_shape) + ", got " + std::string(DtypeName(z.dtype)) +
                                     " " + ShapeText(z.shape));
    }
    w.part(Part::kZeros) = *zero;
  }
  w.output_name = prefix + ".weight";
  w.output_shape = shape;
  w.output_elements = shape[0] * shape[1];
  w.description = "compressed-tensors pack-quantized int" + std::to_string(w.bits) + ", " +
                  (w.tensor_scale    ? std::string("per tensor")
                   : w.groups == 1 ? std::string("per channel")
                                   : "group " + std::to_string(w.group_size)) +
                  (zero ? ", asymmetric" : ", symmetric");
  return b.Add(std::move(w));
}

Status AddNvfp4(SchemeBuilder& b, const std::string& name, TensorRef packed) {
  const std::string prefix = name.substr(0, name.size() - kPacked.size());
  const TensorEntry& p = b.entry(packed);
  if (p.shape.size() != 2) return TensorError(name, "must be 2-D, got " + ShapeText(p.shape));
  QuantWeight w;
  w.kind = QuantKind::kNvfp4;
  w.weight = packed;
  w.out_features = p.shape[0];
  w.in_features = p.shape[1] * 2;
  std::optional<TensorRef> shape_ref;
  AMN_ASSIGN_OR_RETURN(const std::vector<uint64_t> shape, WeightShape(b, prefix, shape_ref));
  if (!shape.empty() && (shape[0] != w.out_features || shape[1] != w.in_features)) {
    return TensorError(name, "shape " + ShapeText(p.shape) + " does not hold E2M1 pairs of weight_shape " +
                                 ShapeText(shape));
  }
  w.part(Part::kMeta) = shape_ref;
  if (w.in_features % 16 != 0) {
    return TensorError(name, "NVFP4 needs a multiple of 16 inputs per row, got " + std::to_string(w.in_features));
  }
  AMN_ASSIGN_OR_RETURN(const TensorRef scale, b.Require(name, prefix + ".weight_scale", {Dtype::kF8E4m3}));
  const std::vector<uint64_t>& s = b.entry(scale).shape;
  if (s.size() != 2 || s[0] != w.out_features || s[1] != w.in_features / 16) {
    return TensorError(b.entry(scale).name, "shape " + ShapeText(s) + " should be [" +
                                                std::to_string(w.out_features) + ", " +
                                                std::to_string(w.in_features / 16) + "]");
  }
  AMN_ASSIGN_OR_RETURN(const TensorRef global, b.Require(name, prefix + ".weight_global_scale", {Dtype::kF32}));
  if (b.entry(global).elements != 1) {
    return TensorError(b.entry(global).name, "must hold one value, got " + ShapeText(b.entry(global).shape));
  }
  w.part(Part::kScale) = scale;
  w.part(Part::kGlobalScale) = global;
  w.output_name = prefix + ".weight";
  w.output_shape = {w.out_features, w.in_features};
  w.output_elements = w.out_features * w.in_features;
  w.description = "compressed-tensors NVFP4 (E2M1, E4M3 scale per 16, global scale)";
  return b.Add(std::move(w));
}

}  // namespace

Status DetectCompressedWeights(SchemeBuilder& b) {
  const std::string& method = b.config().method;
  for (const auto& [name, ref] : b.by_name()) {
    if (!EndsWith(name, kPacked)) continue;
    if (method != "" && method != "compressed-tensors") {
      return TensorError(name, "is a compressed-tensors tensor but " + b.config().source +
                                   " declares quant_method '" + method + "'");
    }
    const std::string& format = b.config().format;
    const Dtype dtype = b.entry(ref).dtype;
    if (dtype == Dtype::kU8 && (format.empty() || format == "nvfp4-pack-quantized")) {
      AMN_RETURN_IF_ERROR(AddNvfp4(b, name, ref));
    } else if (dtype == Dtype::kI32 && (format.empty() || format == "pack-quantized")) {
      AMN_RETURN_IF_ERROR(AddPackedInt(b, name, ref));
    } else if (format != "pack-quantized" && format != "nvfp4-pack-quantized") {
      b.Unsupported("compressed-tensors format '" + MessageSafe(format) +
                    "' is not supported (pack-quantized, nvfp4-pack-quantized and float-quantized are)");
      return Status::Ok();
    } else {
      return TensorError(name, "has dtype " + std::string(DtypeName(dtype)) + ", which format '" +
                                   format + "' does not use (I32 for pack-quantized, U8 for NVFP4)");
    }
  }
  return Status::Ok();
}

}  // namespace amn::formats
