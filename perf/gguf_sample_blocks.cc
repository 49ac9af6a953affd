// See gguf_sample_blocks.h.
#include "perf/gguf_sample_blocks.h"

#include <cctype>
#include <cstddef>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "amn/ggml_dequant.h"
#include "amn/quantize.h"

namespace amn::perf {
namespace {

// The GGUF type of a decoder kernel of a ggml decode family, named
// "<type>_to_<out>" ("nvfp4_gguf_to_<out>": "nvfp4" is the safetensors
// scheme's).
std::optional<GgmlType> DecodedGgmlType(const KernelInfo& kernel) {
  if (kernel.family != "ggml_legacy" && kernel.family != "ggml_kquant" &&
      kernel.family != "ggml_iquant") {
    return std::nullopt;
  }
  const size_t to = kernel.name.find("_to_");
  if (to == std::string_view::npos) return std::nullopt;
  std::string_view type_name = kernel.name.substr(0, to);
  if (type_name.ends_with("_gguf")) type_name.remove_suffix(5);
  std::string name(type_name);
  for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (uint32_t id = 0; id < 256; ++id) {
    const GgmlTypeInfo* info = FindGgmlType(id);
    if (info != nullptr && info->name == name) return info->type;
  }
  return std::nullopt;
}

// Weight-like values: roughly normal (a sum of four uniforms), standard
// deviation about 0.02, as in the linear layers of language models.
std::vector<float> WeightLikeValues() {
  std::vector<float> values(kSampleElems);
  uint64_t state = 0x9E3779B97F4A7C15ull;
  const auto uniform = [&state] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<float>(state >> 40) * 0x1.0p-24f - 0.5f;  // [-0.5, 0.5)
  };
  for (float& v : values) v = (uniform() + uniform() + uniform() + uniform()) * 0.035f;
  return values;
}

std::vector<uint8_t> Encode(GgmlType type) {
  const GgmlTypeInfo* info = FindGgmlType(static_cast<uint32_t>(type));
  if (info == nullptr || !CanQuantizeGgml(type) || kSampleElems % info->block_elems != 0) {
    return {};
  }
  const std::vector<float> values = WeightLikeValues();
  const std::vector<float> imatrix(GgmlQuantizeNeedsImatrix(type) ? kSampleElems : 0, 1.0f);
  std::vector<uint8_t> blocks(kSampleElems / info->block_elems * info->block_bytes);
  const FloatRows in{ElemType::kF32, std::as_bytes(std::span(values)), 1, kSampleElems};
  const Status status =
      QuantizeGgml(type, in, imatrix, std::as_writable_bytes(std::span(blocks)), nullptr);
  return status.ok() ? blocks : std::vector<uint8_t>{};
}

}  // namespace

std::span<const uint8_t> GgufSampleBlocks(const KernelInfo& kernel) {
  const std::optional<GgmlType> type = DecodedGgmlType(kernel);
  if (!type) return {};
  static std::mutex mutex;
  static std::map<GgmlType, std::vector<uint8_t>> samples;
  const std::lock_guard lock(mutex);
  auto it = samples.find(*type);
  if (it == samples.end()) it = samples.emplace(*type, Encode(*type)).first;
  return it->second;
}

}  // namespace amn::perf
