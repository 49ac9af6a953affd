// The checked GPTQ API of amn/gptq_dequant.h (DequantGptq): layout and
// g_idx checks, then the dispatched Gptq decoder of the kernel table.
#include <string>

#include "amn/gptq_dequant.h"
#include "dispatch/dispatch_policy.h"
#include "dispatch/family_decoders.h"

namespace amn {

namespace {

Status InvalidArgument(std::string message) {
  return Status(StatusCode::kInvalidArgument, "DequantGptq: " + std::move(message));
}

// a * b, or false on overflow.
bool Mul(uint64_t a, uint64_t b, uint64_t* product) {
  return !__builtin_mul_overflow(a, b, product);
}

bool IsFloatType(ElemType type) {
  return type == ElemType::kF32 || type == ElemType::kF16 || type == ElemType::kBf16;
}

// `name` must be exactly count * unit bytes.
Status CheckSpan(const char* name, size_t size, uint64_t count, uint64_t unit) {
  uint64_t want = 0;
  if (!Mul(count, unit, &want)) return InvalidArgument(std::string(name) + " size overflows");
  if (size != want) {
    return InvalidArgument(std::string(name) + " holds " + std::to_string(size) +
                           " bytes, the shape needs " + std::to_string(want));
  }
  return Status::Ok();
}

Status CheckLayer(const GptqLayer& layer) {
  const uint64_t bits = layer.bits;
  if (bits != 2 && bits != 3 && bits != 4 && bits != 8) {
    return InvalidArgument("bits must be 2, 3, 4 or 8, not " + std::to_string(bits));
  }
  if (!IsFloatType(layer.scale_type)) {
    return InvalidArgument("scale_type must be f32, f16 or bf16, not " +
                           std::string(ElemTypeName(layer.scale_type)));
  }
  const uint64_t k = layer.in_features;
  const uint64_t n = layer.out_features;
  uint64_t k_bits = 0, n_bits = 0;
  if (!Mul(k, bits, &k_bits) || k_bits % 32 != 0) {
    return InvalidArgument("in_features " + std::to_string(k) + " times bits " +
                           std::to_string(bits) + " is not a whole number of int32 words");
  }
  if (!Mul(n, bits, &n_bits) || n_bits % 32 != 0) {
    return InvalidArgument("out_features " + std::to_string(n) + " times bits " +
                           std::to_string(bits) + " is not a whole number of int32 words");
  }
  uint64_t weight_words = 0, zero_words = 0;
  if (!Mul(k_bits / 32, n, &weight_words)) return InvalidArgument("qweight size overflows");
  AMN_RETURN_IF_ERROR(CheckSpan("qweight", layer.qweight.size(), weight_words, 4));
  if (!Mul(layer.groups, n_bits / 32, &zero_words)) return InvalidArgument("qzeros size overflows");
  AMN_RETURN_IF_ERROR(CheckSpan("qzeros", layer.qzeros.size(), zero_words, 4));
  uint64_t scale_count = 0;
  if (!Mul(layer.groups, n, &scale_count)) return InvalidArgument("scales size overflows");
  AMN_RETURN_IF_ERROR(
      CheckSpan("scales", layer.scales.size(), scale_count, ElemTypeBytes(layer.scale_type)));
  if (layer.groups == 0 && k > 0) return InvalidArgument("groups is 0 for in_features > 0");
  if (layer.g_idx.empty()) {
    if (layer.group_size == 0) return InvalidArgument("group_size is 0 and there is no g_idx");
    const uint64_t needed = k / layer.group_size + (k % layer.group_size != 0 ? 1 : 0);
    if (layer.groups < needed) {
      return InvalidArgument("groups " + std::to_string(layer.groups) + " < ceil(in_features / " +
                             "group_size) = " + std::to_string(needed));
    }
    return Status::Ok();
  }
  AMN_RETURN_IF_ERROR(CheckSpan("g_idx", layer.g_idx.size(), k, 4));
  const auto* g_idx = reinterpret_cast<const uint8_t*>(layer.g_idx.data());
  for (uint64_t i = 0; i < k; ++i) {
    const auto g = static_cast<int32_t>(gptq::LoadLe32(g_idx + 4 * i));
    if (g < 0 || static_cast<uint64_t>(g) >= layer.groups) {
      return InvalidArgument("g_idx[" + std::to_string(i) + "] = " + std::to_string(g) +
                             " is outside [0, groups = " + std::to_string(layer.groups) + ")");
    }
  }
  return Status::Ok();
}

// The group size g_idx follows when it is the sequential i / group_size
// that GPTQ checkpoints without act-order still ship (every fixture's
// is), or 0 for an act-order mapping. Tried: the layer's group_size, else
// the length of the leading run of group 0. Equal g for every i means equal
// results, so the kernels may then use their faster sequential-group paths.
uint64_t SequentialGroupSize(const GptqLayer& layer) {
  const auto* g_idx = reinterpret_cast<const uint8_t*>(layer.g_idx.data());
  const uint64_t k = layer.in_features;
  uint64_t size = layer.group_size;
  if (size == 0) {
    while (size < k && gptq::LoadLe32(g_idx + 4 * size) == 0) ++size;
  }
  if (size == 0) return 0;
  for (uint64_t i = 0; i < k; ++i) {
    if (gptq::LoadLe32(g_idx + 4 * i) != i / size) return 0;
  }
  return size;
}

}  // namespace

Status DequantGptq(const GptqLayer& layer, WeightOrientation orientation, uint64_t row_begin,
                   uint64_t row_end, ElemType out_type, std::span<std::byte> out) {
  AMN_RETURN_IF_ERROR(internal::PrepareDispatch());
  if (!IsFloatType(out_type)) {
    return InvalidArgument("output type must be f32, f16 or bf16, not " +
                           std::string(ElemTypeName(out_type)));
  }
  if (orientation != WeightOrientation::kOutIn && orientation != WeightOrientation::kInOut) {
    return InvalidArgument("orientation is neither kOutIn nor kInOut");
  }
  AMN_RETURN_IF_ERROR(CheckLayer(layer));
  const bool out_in = orientation == WeightOrientation::kOutIn;
  const uint64_t rows = out_in ? layer.out_features : layer.in_features;
  const uint64_t row_elems = out_in ? layer.in_features : layer.out_features;
  if (row_begin > row_end || row_end > rows) {
    return InvalidArgument("rows [" + std::to_string(row_begin) + ", " + std::to_string(row_end) +
                           ") are outside the " + std::to_string(rows) + " rows of the " +
                           (out_in ? "[out, in]" : "[in, out]") + " weight");
  }
  uint64_t out_elems = 0, out_bytes = 0;
  if (!Mul(row_end - row_begin, row_elems, &out_elems) ||
      !Mul(out_elems, ElemTypeBytes(out_type), &out_bytes)) {
    return InvalidArgument("output size overflows");
  }
  if (out.size() < out_bytes) {
    return InvalidArgument("out holds " + std::to_string(out.size()) + " bytes, rows need " +
                           std::to_string(out_bytes));
  }
  if (out_elems == 0) return Status::Ok();

  gptq::LayerView view;
  view.bits = layer.bits;
  view.k = layer.in_features;
  view.n = layer.out_features;
  view.groups = layer.groups;
  view.group_size = layer.group_size;
  view.zeros_plus_one = layer.zeros_plus_one;
  view.scale_type = layer.scale_type;
  view.qweight = reinterpret_cast<const uint8_t*>(layer.qweight.data());
  view.qzeros = reinterpret_cast<const uint8_t*>(layer.qzeros.data());
  view.scales = reinterpret_cast<const uint8_t*>(layer.scales.data());
  view.g_idx = layer.g_idx.empty() ? nullptr : reinterpret_cast<const uint8_t*>(layer.g_idx.data());
  if (view.g_idx != nullptr) {
    if (const uint64_t size = SequentialGroupSize(layer); size != 0) {
      view.g_idx = nullptr;
      view.group_size = size;
    }
  }
  internal::DecodeGptq(kernels::GptqArgs{view, orientation}, row_begin, row_end, out_type,
                       out.data());
  return Status::Ok();
}

}  // namespace amn
