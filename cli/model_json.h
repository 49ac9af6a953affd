// The JSON that `amn inspect --json` and `amn remember --json` print.
#ifndef AMN_CLI_MODEL_JSON_H_
#define AMN_CLI_MODEL_JSON_H_

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "amn/model.h"

namespace amn::cli {

// JSON text, indented; bytes that are not UTF-8 (names from a hostile file)
// become U+FFFD instead of failing.
std::string DumpJson(const nlohmann::json& json);

// The inspect summary with only the keys that mean something for this model:
// GGUF fields for GGUF, architecture / model_type when known, companion and
// dropped counts when there are some, "unsupported" only when remember would
// refuse (and then no remembered size), lethe_took_bytes only when quantized.
nlohmann::json InspectJson(const std::string& path, const InspectInfo& info);

// What remember wrote, once it succeeded.
struct RememberSummary {
  std::string input;
  std::filesystem::path output;
  std::string to;             // "BF16", "F16", "F32" or "kept"
  std::string target;         // the ISA target the kernels ran on
  size_t tensors = 0;
  uint64_t shard_bytes = 0;   // the safetensors shards written: headers and tensor data
  double seconds = 0;
};

// {input, output, files, tensors, shard_bytes, bytes_written, seconds, to,
// target}: files and bytes_written count the output's regular files (the
// file itself, or every file of the output directory).
nlohmann::json RememberJson(const RememberSummary& summary);

}  // namespace amn::cli

#endif  // AMN_CLI_MODEL_JSON_H_
