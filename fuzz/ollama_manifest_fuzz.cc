// libFuzzer target: an Ollama manifest's JSON (ReadOllamaModelDigest), the
// untrusted file `ollama:<model>` names. Errors are expected; crashes,
// sanitizer reports, leaks, hangs and an uncaught exception are bugs.
#include <cstddef>
#include <cstdint>
#include <string>

#include "formats/ollama.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const auto digest = amn::formats::ReadOllamaModelDigest(text, "fuzz/manifest");
  if (!digest.ok() && digest.status().message().empty()) __builtin_trap();
  return 0;
}
