// GPTQ and AWQ weights: PREFIX.qweight (I32) with PREFIX.qzeros (I32) and
// PREFIX.scales (F16, BF16 or F32), GPTQ optionally with PREFIX.g_idx (I32).
// quant_method tells them apart; without a config the shapes do (GPTQ packs
// qweight along in_features, [K*bits/32, N]; AWQ along out_features,
// [K, N/8]). The output is PREFIX.weight in nn.Linear orientation [N, K].
#include "formats/scheme_builder.h"

namespace amn::formats {
namespace {

constexpr std::string_view kQweight = ".qweight";


struct Companions {
  std::string prefix;
  TensorRef qweight, qzeros, scales;
  std::optional<TensorRef> g_idx;
};

Result<Companions> FindCompanions(const SchemeBuilder& b, const std::string& name, TensorRef ref) {
  Companions c;
  c.prefix = name.substr(0, name.size() - kQweight.size());
  c.qweight = ref;
  if (b.entry(ref).dtype != Dtype::kI32 || b.entry(ref).shape.size() != 2) {
    return TensorError(name, "must be a 2-D I32 tensor, got " +
                                 std::string(DtypeName(b.entry(ref).dtype)) + " " +
                                 ShapeText(b.entry(ref).shape));
  }
  AMN_ASSIGN_OR_RETURN(c.qzeros, b.Require(name, c.prefix + ".qzeros", {Dtype::kI32}));
  AMN_ASSIGN_OR_RETURN(c.scales, b.Require(name, c.prefix + ".scales", {Dtype::kF16, Dtype::kBf16, Dtype::kF32}));
  c.g_idx = b.Find(c.prefix + ".g_idx");
  for (TensorRef t : {c.qzeros, c.scales}) {
    if (b.entry(t).shape.size() != 2) {
      return TensorError(b.entry(t).name, "must be 2-D, got " + ShapeText(b.entry(t).shape));
    }
  }
  return c;
}

std::string GroupText(const QuantWeight& w) {
  return w.group_size >= w.in_features ? "one group" : "group " + std::to_string(w.group_size);
}

// The group size from the config (-1: one group; 0 or below is an error), else from safetensors
// metadata (GPTQ's "gptq_group_size"), else ceil(K / groups).
Result<uint64_t> GroupSize(const SchemeBuilder& b, const std::string& name, uint64_t k,
                           uint64_t groups) {
  std::optional<int64_t> configured = b.config().group_size;
  std::string origin = b.config().source + " group_size";
  if (!configured) {
    origin = "__metadata__ gptq_group_size";
    const auto& meta = b.files().shards.front().header.metadata;
    if (const auto it = meta.find("gptq_group_size"); it != meta.end()) {
      try {
        configured = std::stoll(it->second);
      } catch (const std::exception&) {
        return TensorError(name, "__metadata__ gptq_group_size is not an integer: " + MessageSafe(it->second));
      }
    }
  }
  if (configured) {
    // -1 is the canonical "one group over all inputs"; 0 and other negative
    // sizes are no layout GPTQModel or AutoAWQ writes.
    if (*configured == -1) return k;
    if (*configured <= 0) {
      return TensorError(name, origin + " is " + std::to_string(*configured) +
                                   "; it must be positive, or -1 for one group");
    }
    return static_cast<uint64_t>(*configured);
  }
  if (groups == 0) return TensorError(name, "has no groups (scales has 0 rows)");
  return CeilDiv(k, groups);
}

Status AddGptq(SchemeBuilder& b, const std::string& name, const Companions& c) {
  const std::vector<uint64_t>& qw = b.entry(c.qweight).shape;
  const std::vector<uint64_t>& sc = b.entry(c.scales).shape;
  const std::vector<uint64_t>& qz = b.entry(c.qzeros).shape;
  QuantWeight w;
  w.kind = QuantKind::kGptq;
  w.weight = c.qweight;
  w.out_features = sc[1];
  w.groups = sc[0];
  if (qw[1] != w.out_features) {
    return TensorError(name, "shape " + ShapeText(qw) + " does not match scales " + ShapeText(sc) +
                                 " (GPTQ: qweight [in*bits/32, out], scales [groups, out])");
  }
  // bits from the zero points' packing, checked against the config.
  uint64_t bits = w.out_features == 0 ? 0 : qz[1] * 32 / w.out_features;
  if (b.config().bits) {
    if (*b.config().bits != 2 && *b.config().bits != 3 && *b.config().bits != 4 &&
        *b.config().bits != 8) {
      return TensorError(name, "GPTQ with " + std::to_string(*b.config().bits) + " bits (" +
                                   b.config().source + "): the format holds 2, 3, 4 or 8");
    }
    bits = static_cast<uint64_t>(*b.config().bits);
  }
  if (bits != 2 && bits != 3 && bits != 4 && bits != 8) {
    return TensorError(name, "GPTQ qzeros " + ShapeText(qz) + " for " + std::to_string(w.out_features) +
                                 " outputs gives no bit width of 2, 3, 4 or 8");
  }
  w.bits = static_cast<uint32_t>(bits);
  if (qz[0] != w.groups || qz[1] * 32 != w.out_features * bits) {
    return TensorError(b.entry(c.qzeros).name,
                       "shape " + ShapeText(qz) + " does not fit " + std::to_string(bits) +
                           "-bit zero points of " + std::to_string(w.groups) + " groups x " +
                           std::to_string(w.out_features) + " outputs");
  }
  if (qw[0] * 32 % bits != 0) {
    return TensorError(name, "has " + std::to_string(qw[0]) + " packed rows, not a whole number of " +
                                 std::to_string(bits) + "-bit input features");
  }
  w.in_features = qw[0] * 32 / bits;
  AMN_ASSIGN_OR_RETURN(w.group_size, GroupSize(b, name, w.in_features, w.groups));
  if (c.g_idx) {
    const TensorEntry& g = b.entry(*c.g_idx);
    if (g.dtype != Dtype::kI32 || g.elements != w.in_features || g.shape.size() != 1) {
      return TensorError(g.name, "must be I32 [" + std::to_string(w.in_features) + "], got " +
                                     std::string(DtypeName(g.dtype)) + " " + ShapeText(g.shape));
    }
    w.part(Part::kGIdx) = *c.g_idx;
  } else if (w.groups != CeilDiv(w.in_features, w.group_size)) {
    return TensorError(name, std::to_string(w.groups) + " scale groups do not cover " +
                                 std::to_string(w.in_features) + " inputs in groups of " +
                                 std::to_string(w.group_size));
  }
  const std::string& format = b.config().checkpoint_format;
  if (!format.empty() && format != "gptq" && format != "gptq_v2") {
    b.Unsupported("GPTQ checkpoint_format '" + MessageSafe(format) +
                  "' cannot be dequantized (gptq and gptq_v2 can)");
  }
  w.zeros_plus_one = format != "gptq_v2";
  w.part(Part::kScale) = c.scales;
  w.part(Part::kZeros) = c.qzeros;
  w.output_name = c.prefix + ".weight";
  w.output_shape = {w.out_features, w.in_features};
  w.output_elements = w.out_features * w.in_features;
  w.description = "GPTQ " + std::to_string(bits) + "-bit, " + GroupText(w);
  if (b.config().desc_act.value_or(false)) w.description += ", act-order";
  if (b.config().sym) w.description += *b.config().sym ? ", symmetric" : ", asymmetric";
  w.description += w.zeros_plus_one ? ", v1 zero points" : ", v2 zero points";
  return b.Add(std::move(w));
}

Status AddAwq(SchemeBuilder& b, const std::string& name, const Companions& c) {
  const QuantConfig& config = b.config();
  if (!config.version.empty() && config.version != "gemm") {
    b.Unsupported("AWQ version '" + MessageSafe(config.version) +
                  "' is not supported; only the GEMM layout (version \"gemm\") is");
    return Status::Ok();
  }
  if (config.zero_point && !*config.zero_point) {
    b.Unsupported("AWQ without zero points (zero_point: false) is not supported");
    return Status::Ok();
  }
  if (config.bits && *config.bits != 4) {
    return TensorError(name, "AWQ with " + std::to_string(*config.bits) + " bits (" + config.source +
                                 "): the GEMM format holds 4");
  }
  if (c.g_idx) return TensorError(b.entry(*c.g_idx).name, "AWQ has no g_idx");
  const std::vector<uint64_t>& qw = b.entry(c.qweight).shape;
  const std::vector<uint64_t>& sc = b.entry(c.scales).shape;
  const std::vector<uint64_t>& qz = b.entry(c.qzeros).shape;
  QuantWeight w;
  w.kind = QuantKind::kAwq;
  w.weight = c.qweight;
  w.bits = 4;
  w.in_features = qw[0];
  w.out_features = qw[1] * 8;
  w.groups = sc[0];
  if (sc[1] != w.out_features) {
    return TensorError(name, "shape " + ShapeText(qw) + " does not match scales " + ShapeText(sc) +
                                 " (AWQ GEMM: qweight [in, out/8], scales [groups, out])");
  }
  if (qz[0] != w.groups || qz[1] != qw[1]) {
    return TensorError(b.entry(c.qzeros).name, "shape " + ShapeText(qz) + " should be [" +
                                                   std::to_string(w.groups) + ", " +
                                                   std::to_string(qw[1]) + "]");
  }
  AMN_ASSIGN_OR_RETURN(w.group_size, GroupSize(b, name, w.in_features, w.groups));
  if (w.groups != CeilDiv(w.in_features, w.group_size)) {
    return TensorError(name, std::to_string(w.groups) + " scale groups do not cover " +
                                 std::to_string(w.in_features) + " inputs in groups of " +
                                 std::to_string(w.group_size));
  }
  w.part(Part::kScale) = c.scales;
  w.part(Part::kZeros) = c.qzeros;
  w.output_name = c.prefix + ".weight";
  w.output_shape = {w.out_features, w.in_features};
  w.output_elements = w.out_features * w.in_features;
  w.description = "AWQ GEMM 4-bit, " + GroupText(w) + ", zero points";
  return b.Add(std::move(w));
}

}  // namespace

Status DetectGptqAwqWeights(SchemeBuilder& b) {
  const std::string& method = b.config().method;
  for (const auto& [name, ref] : b.by_name()) {
    if (!EndsWith(name, kQweight)) continue;
    if (method != "" && method != "gptq" && method != "awq") {
      return TensorError(name, "is a GPTQ/AWQ tensor but " + b.config().source +
                                   " declares quant_method '" + method + "'");
    }
    AMN_ASSIGN_OR_RETURN(const Companions c, FindCompanions(b, name, ref));
    bool awq = method == "awq";
    if (method.empty()) {
      const uint64_t qcols = b.entry(ref).shape[1], scols = b.entry(c.scales).shape[1];
      awq = !c.g_idx && qcols != scols && qcols * 8 == scols;
    }
    AMN_RETURN_IF_ERROR(awq ? AddAwq(b, name, c) : AddGptq(b, name, c));
  }
  return Status::Ok();
}

}  // namespace amn::formats
