// JSON output of inspect and remember (model_json.h).
#include "cli/model_json.h"

#include <system_error>

#include "formats/utf8.h"

namespace amn::cli {
namespace {

std::string TypeLabel(ElemType t) {
  return t == ElemType::kF32 ? "F32" : t == ElemType::kF16 ? "F16" : "BF16";
}

}  // namespace

// Strings and keys that are not UTF-8 (file names, GGUF strings) written by
// the \xNN rule, so the JSON is valid and nothing is lost or replaced.
nlohmann::json Utf8Safe(const nlohmann::json& json) {
  if (json.is_string()) return formats::EscapeInvalidUtf8(json.get_ref<const std::string&>());
  if (json.is_array()) {
    nlohmann::json out = nlohmann::json::array();
    for (const nlohmann::json& item : json) out.push_back(Utf8Safe(item));
    return out;
  }
  if (json.is_object()) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [key, value] : json.items()) out[formats::EscapeInvalidUtf8(key)] = Utf8Safe(value);
    return out;
  }
  return json;
}

std::string DumpJson(const nlohmann::json& json) {
  return Utf8Safe(json).dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

nlohmann::json InspectJson(const std::string& path, const InspectInfo& info) {
  const bool arrays = info.format == "npy" || info.format == "npz" || info.format == "pytorch";
  const bool gguf = info.format == "gguf";
  nlohmann::json out = {{"path", path}, {"format", info.format}};
  if (!info.architecture.empty()) out["architecture"] = info.architecture;
  if (!info.model_type.empty()) out["model_type"] = info.model_type;
  if (gguf) {
    out["gguf_version"] = info.gguf_version;
    out["alignment"] = info.alignment;
    out["metadata_keys"] = info.metadata_keys;
  }
  if (!arrays && !gguf) {
    out["shards"] = info.shards;
    out["sharded"] = info.sharded;
  }
  out["scheme"] = info.scheme;
  out["quantized"] = info.quantized;
  if (!arrays) out["quantized_tensors"] = info.quantized_tensors;
  if (info.companion_tensors > 0) {
    out["companion_tensors"] = info.companion_tensors;
    out["companion_dtypes"] = info.companion_dtypes;
  }
  out["passthrough_tensors"] = info.passthrough_tensors;
  out["converted_tensors"] = info.converted_tensors;
  if (info.keep_passthrough) out["keep_passthrough"] = true;
  if (info.dropped_tensors > 0) out["dropped_tensors"] = info.dropped_tensors;
  nlohmann::json dtypes = nlohmann::json::array();
  for (const DtypeStat& d : info.dtypes) {
    dtypes.push_back({{"dtype", d.dtype}, {"tensors", d.tensors}, {"bytes", d.bytes}});
  }
  out["dtypes"] = std::move(dtypes);
  out["current_bytes"] = info.current_bytes;
  if (!info.unsupported.empty()) {
    out["unsupported"] = info.unsupported;
    return out;
  }
  out["to"] = info.to ? TypeLabel(*info.to) : "kept";
  out["remembered_bytes"] = info.remembered_bytes;
  if (info.quantized) {
    out["lethe_took_bytes"] =
        info.remembered_bytes > info.current_bytes ? info.remembered_bytes - info.current_bytes : 0;
  }
  return out;
}

nlohmann::json RememberJson(const RememberSummary& s) {
  namespace fs = std::filesystem;
  size_t files = 0;
  uint64_t bytes = 0;
  std::error_code error;
  auto count = [&](const fs::path& p) {
    if (!fs::is_regular_file(p, error)) return;
    const uintmax_t size = fs::file_size(p, error);
    ++files;
    if (!error) bytes += size;
  };
  if (fs::is_directory(s.output, error)) {
    for (const fs::directory_entry& entry : fs::recursive_directory_iterator(s.output, error)) {
      count(entry.path());
    }
  } else {
    count(s.output);
  }
  return {{"input", s.input},        {"output", s.output.string()}, {"files", files},
          {"tensors", s.tensors},    {"shard_bytes", s.shard_bytes}, {"bytes_written", bytes},
          {"seconds", s.seconds},    {"to", s.to},                  {"target", s.target}};
}

}  // namespace amn::cli
