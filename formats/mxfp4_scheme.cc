// gpt-oss MXFP4 weights (quant_method "mxfp4"): PREFIX_blocks (U8
// [..., rows, groups, 16], two E2M1 codes a byte, 32 values a group) and
// PREFIX_scales (U8 E8M0 [..., rows, groups]). The output is PREFIX laid out
// as transformers' convert_moe_packed_tensors returns it: the last two
// dimensions swapped, [..., groups * 32, rows].
#include "formats/checked_math.h"
#include "formats/scheme_builder.h"

namespace amn::formats {
namespace {

constexpr std::string_view kBlocks = "_blocks";

Status AddMxfp4(SchemeBuilder& b, const std::string& name, TensorRef blocks) {
  const std::string prefix = name.substr(0, name.size() - kBlocks.size());
  const TensorEntry& e = b.entry(blocks);
  if (e.dtype != Dtype::kU8 || e.shape.size() < 3 || e.shape.back() != 16) {
    return TensorError(name, "must be U8 [..., rows, groups, 16], got " +
                                 std::string(DtypeName(e.dtype)) + " " + ShapeText(e.shape));
  }
  AMN_ASSIGN_OR_RETURN(const TensorRef scales, b.Require(name, prefix + "_scales", {Dtype::kU8}));
  const std::vector<uint64_t> expected(e.shape.begin(), e.shape.end() - 1);
  if (b.entry(scales).shape != expected) {
    return TensorError(b.entry(scales).name, "shape " + ShapeText(b.entry(scales).shape) +
                                                 " should be " + ShapeText(expected));
  }
  QuantWeight w;
  w.kind = QuantKind::kMxfp4;
  w.weight = blocks;
  w.part(Part::kScale) = scales;
  const size_t n = e.shape.size();
  w.mx_rows = e.shape[n - 3];
  w.mx_groups = e.shape[n - 2];
  // Sub-products of the blocks tensor's shape, whose element count the
  // header reader checked: none overflows.
  w.experts = ElementCount(std::span(e.shape).first(n - 3)).value_or(0);
  w.output_name = prefix;
  w.output_shape.assign(e.shape.begin(), e.shape.end() - 3);
  w.output_shape.push_back(w.mx_groups * 32);
  w.output_shape.push_back(w.mx_rows);
  w.output_elements = w.experts * w.mx_rows * w.mx_groups * 32;
  w.description = "MXFP4 (E2M1, E8M0 scale per 32), transposed as transformers loads gpt-oss";
  return b.Add(std::move(w));
}

}  // namespace

Status DetectMxfp4Weights(SchemeBuilder& b) {
  const std::string& method = b.config().method;
  for (const auto& [name, ref] : b.by_name()) {
    if (!EndsWith(name, kBlocks) || !b.Find(name.substr(0, name.size() - kBlocks.size()) + "_scales")) {
      continue;
    }
    if (method != "" && method != "mxfp4") {
      return TensorError(name, "is an MXFP4 tensor but " + b.config().source +
                                   " declares quant_method '" + method + "'");
    }
    AMN_RETURN_IF_ERROR(AddMxfp4(b, name, ref));
  }
  return Status::Ok();
}

}  // namespace amn::formats
