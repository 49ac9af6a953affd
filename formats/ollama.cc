// Resolving ollama:<model>[:tag] through Ollama's local manifest store.
#include "formats/ollama.h"

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "formats/byte_source.h"
#include "formats/json_access.h"

namespace amn::formats {
namespace fs = std::filesystem;

namespace {

constexpr uint64_t kMaxManifestBytes = 1 << 20;

bool SafeComponent(std::string_view s) {
  return !s.empty() && s != "." && s != ".." && s.find('/') == std::string_view::npos &&
         s.find('\0') == std::string_view::npos;
}

fs::path ModelsDir() {
  if (const char* dir = std::getenv("OLLAMA_MODELS"); dir != nullptr && *dir != '\0') return dir;
  const char* home = std::getenv("HOME");
  return fs::path(home != nullptr ? home : "") / ".ollama" / "models";
}

}  // namespace

Result<std::string> ReadOllamaModelDigest(const std::string& text, const fs::path& manifest) {
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    return Status(StatusCode::kInvalid, MessageSafe(manifest.string(), kMessagePathBytes) + ": " +
                                            JsonErrorText(e))
        .WithByteOffset(e.byte == 0 ? 0 : e.byte - 1);
  }
  const JsonAt root{manifest.string(), ""};
  AMN_ASSIGN_OR_RETURN(const nlohmann::json* layers_value, JsonRequired(json, root, "layers"));
  const JsonAt layers_at = root.Member("layers");
  AMN_ASSIGN_OR_RETURN(const nlohmann::json* layers, JsonArray(*layers_value, layers_at));
  for (size_t i = 0; i < layers->size(); ++i) {
    const nlohmann::json& layer = (*layers)[i];
    const JsonAt at = layers_at.Element(i);
    AMN_RETURN_IF_ERROR(JsonObject(layer, at).status());
    const auto media = layer.find("mediaType");
    if (media == layer.end()) continue;
    AMN_ASSIGN_OR_RETURN(const std::string media_type, JsonString(*media, at.Member("mediaType")));
    if (media_type != "application/vnd.ollama.image.model") continue;
    AMN_ASSIGN_OR_RETURN(const nlohmann::json* digest, JsonRequired(layer, at, "digest"));
    return JsonString(*digest, at.Member("digest"));
  }
  return std::string();
}

Result<fs::path> ResolveOllama(std::string_view spec) {
  if (!spec.starts_with(kOllamaPrefix)) {
    return Status(StatusCode::kInvalidArgument, "not an ollama: name");
  }
  std::string_view name = spec.substr(kOllamaPrefix.size());
  std::string_view tag = "latest";
  if (const size_t colon = name.rfind(':'); colon != std::string_view::npos) {
    tag = name.substr(colon + 1);
    name = name.substr(0, colon);
  }
  std::string_view space = "library";
  if (const size_t slash = name.find('/'); slash != std::string_view::npos) {
    space = name.substr(0, slash);
    name = name.substr(slash + 1);
  }
  if (!SafeComponent(name) || !SafeComponent(tag) || !SafeComponent(space)) {
    return Status(StatusCode::kInvalidArgument,
                  "'" + MessageSafe(spec) + "' is not ollama:<model>[:tag]");
  }
  const fs::path models = ModelsDir();
  const fs::path manifest =
      models / "manifests" / "registry.ollama.ai" / std::string(space) / std::string(name) / std::string(tag);
  std::error_code error;
  if (!fs::is_regular_file(manifest, error)) {
    return Status(StatusCode::kIo, "no Ollama manifest at " + manifest.string() +
                                       " (pull the model, or set OLLAMA_MODELS)");
  }
  if (fs::file_size(manifest, error) > kMaxManifestBytes) {
    return Status(StatusCode::kLimitExceeded, manifest.string() + ": manifest over 1 MiB");
  }
  std::ifstream in(manifest);
  std::stringstream text;
  text << in.rdbuf();
  AMN_ASSIGN_OR_RETURN(const std::string digest, ReadOllamaModelDigest(text.str(), manifest));
  if (digest.empty()) {
    return Status(StatusCode::kInvalid, manifest.string() + ": no model layer in the manifest");
  }
  std::string blob_name = digest;
  if (const size_t colon = blob_name.find(':'); colon != std::string::npos) blob_name[colon] = '-';
  if (!SafeComponent(blob_name)) {
    return Status(StatusCode::kInvalid, manifest.string() + ": bad digest '" + MessageSafe(digest) + "'");
  }
  const fs::path blob = models / "blobs" / blob_name;
  if (!fs::is_regular_file(blob, error)) {
    return Status(StatusCode::kIo, "the manifest " + manifest.string() + " names " + blob.string() +
                                       ", which is missing");
  }
  return blob;
}

}  // namespace amn::formats
