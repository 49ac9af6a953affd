// Writing a remember plan to disk as one file or as a directory (shards,
// index, config and side files), through formats/staged_output.h: partials
// of dead earlier runs are removed, free space is checked before anything is
// written, and the output is complete and fsynced, or absent.
#ifndef AMN_FORMATS_REMEMBER_OUTPUT_H_
#define AMN_FORMATS_REMEMBER_OUTPUT_H_

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "amn/status.h"
#include "formats/remember_engine.h"
#include "formats/remember_plan.h"

namespace amn::formats {

// Bytes and tensors written so far, over every shard.
using OutputProgress = std::function<void(uint64_t bytes, size_t tensors)>;

// What a directory output holds besides its shards.
struct DirectoryExtras {
  std::vector<std::filesystem::path> copies;                 // side files, copied as they are
  std::vector<std::pair<std::string, std::string>> texts;    // name, contents; written after copies
  std::string index_name;  // amn's index file name ("" when it writes none)
};

// The plan's only shard as the file `output` (an existing file is replaced
// only with `overwrite`; a directory never).
Status WriteFileOutput(const RememberPlan& plan, const std::filesystem::path& output,
                       bool overwrite, EngineOptions engine, const OutputProgress& progress);

// Every shard, then `extras`, as the directory `output`. With `overwrite`
// an existing directory is updated in place: amn's own files are replaced,
// stale shards of the same naming removed, anything else kept.
Status WriteDirectoryOutput(const RememberPlan& plan, const DirectoryExtras& extras,
                            const std::filesystem::path& output, bool overwrite,
                            EngineOptions engine, const OutputProgress& progress);

}  // namespace amn::formats

#endif  // AMN_FORMATS_REMEMBER_OUTPUT_H_
