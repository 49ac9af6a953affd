// FP8 weights: an F8_E4M3/F8_E5M2 tensor NAME and its scale companion
// NAME_scale (per-tensor: one element; per-channel: [rows] or [rows, 1];
// compressed-tensors group strategy: [rows, k] with k dividing cols) or
// NAME_scale_inv (blocks [ceil(rows/R), ceil(cols/C)], R x C from
// quantization_config.weight_block_size, else 128 x 128, else a grid
// dividing the weight into equal whole blocks; any other grid is refused; one
// element is per-tensor), of dtype F32, BF16 or F16. The scale
// is multiplied, never divided.
#include <string_view>

#include "formats/scheme_builder.h"

namespace amn::formats {
namespace {

constexpr uint64_t kDefaultBlock = 128;

bool IsScaleDtype(Dtype d) { return d == Dtype::kF32 || d == Dtype::kBf16 || d == Dtype::kF16; }
bool IsFp8Dtype(Dtype d) { return d == Dtype::kF8E4m3 || d == Dtype::kF8E5m2; }

// Fills the layout of `w` from its scale's shape; an error names the scale.
Status ClassifyScale(const TensorEntry& weight, const TensorEntry& scale, bool inverse_name,
                     const QuantConfig& config, Fp8Weight& w) {
  if (!IsScaleDtype(scale.dtype)) {
    return TensorError(scale.name, "scale has dtype " + std::string(DtypeName(scale.dtype)) +
                                       "; FP8 scales must be F32, BF16 or F16");
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
  // Blocks come from weight_block_size, else the canonical 128 x 128.
  uint64_t block_rows = config.block_rows.value_or(kDefaultBlock);
  uint64_t block_cols = config.block_cols.value_or(kDefaultBlock);
  auto fits = [&](uint64_t br, uint64_t bc) {
    return two_d && s.size() == 2 && s[0] == CeilDiv(w.rows, br) && s[1] == CeilDiv(w.cols, bc);
  };
  // Without weight_block_size, a grid that tiles the weight into equal whole
  // blocks names its block (the safetensors reference's [8, 8] weight with a
  // [2, 2] grid: 4 x 4). A grid that does not ([3, 3] over 256 x 256 would
  // need 86 x 86 blocks with a ragged edge) is refused, never guessed.
  if (!config.block_rows && inverse_name && !fits(block_rows, block_cols) && two_d &&
      s.size() == 2 && s[0] > 0 && s[1] > 0 && w.rows % s[0] == 0 && w.cols % s[1] == 0) {
    block_rows = w.rows / s[0];
    block_cols = w.cols / s[1];
  }
  // compressed-tensors' group strategy: one scale per row and group.
  const bool group_shape = !inverse_name && two_d && s.size() == 2 && s[0] == w.rows && s[1] > 1 &&
                           w.cols % s[1] == 0;
  const bool grid_shape = fits(block_rows, block_cols);
  const bool channel_shape =
      two_d && ((s.size() == 1 && s[0] == w.rows) || (s.size() == 2 && s[0] == w.rows && s[1] == 1));
  if (inverse_name && grid_shape) {
    w.layout = Fp8Layout::kBlock;
  } else if (channel_shape) {
    w.layout = Fp8Layout::kPerChannel;
  } else if (group_shape) {
    w.layout = Fp8Layout::kBlock;
    block_rows = 1;
    block_cols = w.cols / s[1];
  } else if (grid_shape) {
    w.layout = Fp8Layout::kBlock;
  } else {
    return TensorError(scale.name,
                       "scale shape " + ShapeText(s) + " fits neither one scale, per-channel [" +
                           std::to_string(w.rows) + "] / [" + std::to_string(w.rows) +
                           ", 1], per-group [" + std::to_string(w.rows) + ", k], nor " +
                           std::to_string(block_rows) + "x" + std::to_string(block_cols) +
                           " blocks (" +
                           (config.block_rows ? "weight_block_size of " + config.source
                                              : std::string("no weight_block_size declared")) +
                           ") of weight " + MessageSafe(weight.name) + " " + ShapeText(shape));
  }
  if (w.layout == Fp8Layout::kBlock) {
    w.block_rows = block_rows;
    w.block_cols = block_cols;
    w.scale_cols = s[1];
  }
  return Status::Ok();
}

std::string LayoutText(const Fp8Weight& w, Dtype code) {
  const std::string codes = code == Dtype::kF8E5m2 ? " (E5M2)" : " (E4M3)";
  switch (w.layout) {
    case Fp8Layout::kPerTensor: return "Per-tensor FP8" + codes;
    case Fp8Layout::kPerChannel: return "Per-channel FP8" + codes;
    case Fp8Layout::kBlock:
      if (w.block_rows == 1) return "Per-group FP8, group " + std::to_string(w.block_cols) + codes;
      return "Fine-grained FP8, " + std::to_string(w.block_rows) + "x" +
             std::to_string(w.block_cols) + " blocks" + codes;
  }
  return "FP8" + codes;
}

}  // namespace

Status DetectFp8Weights(SchemeBuilder& b) {
  const std::string& method = b.config().method;
  const bool fp8_method = method.empty() || method == "fp8" || method == "fbgemm_fp8" ||
                          method == "compressed-tensors";
  for (const auto& [name, ref] : b.by_name()) {
    const TensorEntry& weight = b.entry(ref);
    if (!IsFp8Dtype(weight.dtype)) continue;
    // NVFP4's E4M3 block scales are FP8 tensors too; they are companions.
    if (EndsWith(name, "_scale") || EndsWith(name, "_scale_inv")) continue;
    if (!fp8_method) {
      return TensorError(name, "is FP8 but " + b.config().source + " declares quant_method '" +
                                   method + "'");
    }
    QuantWeight q;
    q.kind = QuantKind::kFp8;
    q.weight = ref;
    q.code_dtype = weight.dtype;
    q.fp8.weight = ref;
    bool inverse = false;
    std::optional<TensorRef> scale = b.Find(name + "_scale_inv");
    if (scale) {
      inverse = true;
    } else {
      scale = b.Find(name + "_scale");
    }
    if (!scale) {
      return TensorError(name, "FP8 weight has no " + name + "_scale or " + name +
                                   "_scale_inv companion");
    }
    q.fp8.scale = *scale;
    q.part(Part::kScale) = *scale;
    AMN_RETURN_IF_ERROR(ClassifyScale(weight, b.entry(*scale), inverse, b.config(), q.fp8));
    q.output_name = name;
    q.output_shape = weight.shape;
    q.output_elements = weight.elements;
    q.description = LayoutText(q.fp8, weight.dtype);
    if (method == "compressed-tensors") q.description = "compressed-tensors float-quantized: " + q.description;
    AMN_RETURN_IF_ERROR(b.Add(std::move(q)));
  }
  return Status::Ok();
}

}  // namespace amn::formats
