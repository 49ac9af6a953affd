// `ollama:[host/][namespace/]model[:tag]` names: the model-layer GGUF blob of
// a model pulled by Ollama, found through its manifest under $OLLAMA_MODELS
// or ~/.ollama/models (manifests/<host>/<namespace>/<model>/<tag>; host
// registry.ollama.ai, namespace "library" and tag "latest" when the name has
// none, so hf.co/ORG/REPO:TAG is manifests/hf.co/ORG/REPO/TAG; the layer
// whose mediaType is application/vnd.ollama.image.model names
// blobs/sha256-<digest>).
#ifndef AMN_FORMATS_OLLAMA_H_
#define AMN_FORMATS_OLLAMA_H_

#include <filesystem>
#include <string>
#include <string_view>

#include "amn/result.h"

namespace amn::formats {

inline constexpr std::string_view kOllamaPrefix = "ollama:";

// The blob path for `spec` ("ollama:llama3.2", "ollama:llama3.2:1b",
// "ollama:user/model:tag", "ollama:hf.co/org/repo:Q4_K_M"). kInvalidArgument for a malformed name, kIo when
// the manifest or blob is missing, kInvalid for a manifest without a model
// layer.
Result<std::filesystem::path> ResolveOllama(std::string_view spec);

// Recomputes the SHA-256 of a blob named sha256-<hex> and compares it with
// the name: kInvalid naming the blob on a mismatch, kUnsupported for a blob
// not named by a sha256.
Status VerifyOllamaBlob(const std::filesystem::path& blob);
// The digest of the model layer of a manifest's JSON `text` ("" when it has
// none); `manifest` names the file in messages. A wrong type or missing key
// is kInvalid naming it (`key "layers[3].digest": expected string, got
// number`).
Result<std::string> ReadOllamaModelDigest(const std::string& text,
                                          const std::filesystem::path& manifest);

}  // namespace amn::formats

#endif  // AMN_FORMATS_OLLAMA_H_
