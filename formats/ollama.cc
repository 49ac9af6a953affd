// Resolving ollama:[host/][namespace/]model[:tag] through Ollama's local manifest store.
#include "formats/ollama.h"

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "formats/byte_source.h"
#include "formats/sha256.h"
#include "formats/json_bounded.h"
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
  AMN_ASSIGN_OR_RETURN(const nlohmann::json json,
                       ParseBoundedJson<nlohmann::json>(
                           text, MessageSafe(manifest.string(), kMessagePathBytes)));
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
  // Ollama's names: [host/][namespace/]model[:tag], host registry.ollama.ai
  // and namespace "library" by default (hf.co/ORG/REPO:TAG for models pulled
  // from Hugging Face). The tag is after the last ':' that follows the last
  // '/', so a host:port is never taken for a tag.
  std::string_view name = spec.substr(kOllamaPrefix.size());
  std::string_view tag = "latest";
  const size_t last_slash = name.rfind('/');
  if (const size_t colon = name.rfind(':');
      colon != std::string_view::npos && (last_slash == std::string_view::npos || colon > last_slash)) {
    tag = name.substr(colon + 1);
    name = name.substr(0, colon);
  }
  std::vector<std::string_view> parts;
  for (size_t at = 0;;) {
    const size_t slash = name.find('/', at);
    parts.push_back(name.substr(at, slash == std::string_view::npos ? std::string_view::npos : slash - at));
    if (slash == std::string_view::npos) break;
    at = slash + 1;
  }
  std::string_view host = "registry.ollama.ai", space = "library";
  if (parts.size() == 3) {
    host = parts[0];
    space = parts[1];
  } else if (parts.size() == 2) {
    space = parts[0];
  }
  name = parts.back();
  if (parts.size() > 3 || !SafeComponent(name) || !SafeComponent(tag) || !SafeComponent(space) ||
      !SafeComponent(host)) {
    return Status(StatusCode::kInvalidArgument,
                  "'" + MessageSafe(spec) + "' is not ollama:[host/][namespace/]model[:tag]");
  }
  const fs::path models = ModelsDir();
  const fs::path manifest =
      models / "manifests" / std::string(host) / std::string(space) / std::string(name) / std::string(tag);
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

Status VerifyOllamaBlob(const fs::path& blob) {
  const std::string name = blob.filename().string();
  constexpr std::string_view kSha = "sha256-";
  const bool hex = name.size() == kSha.size() + 64 &&
                   name.find_first_not_of("0123456789abcdefABCDEF", kSha.size()) == std::string::npos;
  if (!name.starts_with(kSha) || !hex) {
    return Status(StatusCode::kUnsupported, MessageSafe(blob.string(), kMessagePathBytes) +
                                                ": not named sha256-<64 hex digits>; nothing to verify against");
  }
  return VerifyBlobSha256(blob, std::string_view(name).substr(kSha.size()));
}

}  // namespace amn::formats
