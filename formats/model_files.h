// A safetensors model on disk: one file, or a directory of shards
// (model.safetensors.index.json, or else every *.safetensors in it), plus
// the other files that travel with it (config.json, tokenizer files ...).
#ifndef AMN_FORMATS_MODEL_FILES_H_
#define AMN_FORMATS_MODEL_FILES_H_

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "amn/limits.h"
#include "amn/result.h"
#include "formats/safetensors_header.h"

namespace amn::formats {

struct Shard {
  std::filesystem::path path;
  SafetensorsHeader header;
  uint64_t file_bytes = 0;
};

struct ModelFiles {
  std::filesystem::path input;      // what the user named (file or directory)
  bool is_directory = false;
  // Sorted by file name: the files the index names, or without an index
  // every *.safetensors file of the directory.
  std::vector<Shard> shards;
  // From model.safetensors.index.json when present: its "metadata" object as
  // JSON text ("{}" when absent) and its weight_map (tensor -> shard file
  // name), which must agree with the shards' headers.
  std::string index_metadata_json = "{}";
  bool has_index = false;
  // Other regular files of the directory (not *.safetensors, not the index;
  // symlinks followed only inside the model's tree, see OpenModelFiles; not
  // recursive), sorted by name: copied to the output as they are
  // (config.json is rewritten). Empty for a single-file input.
  std::vector<std::filesystem::path> companion_files;
  // Things skipped on the way, one line each (a side file whose symlink
  // leaves the model's tree), for the caller to show.
  std::vector<std::string> warnings;
  // config.json as text, if the directory (or the file's directory, for a
  // single file) has one; empty otherwise.
  std::string config_json;
  // GPTQ's quantize_config.json beside it, likewise (bounded the same way).
  std::string quantize_config_json;
};

// Opens `path` (a .safetensors file or a directory) and reads every shard's
// header (ReadSafetensorsHeader) with `limits`; the sum of all shards' data
// must stay within limits.max_total_bytes (kLimitExceeded). The index and
// config.json are each bounded by limits.max_header_bytes; the index must be
// strict JSON (no duplicate keys, nesting <= 32) with a "weight_map" object
// of bare file names (no '/', no "..") and at most limits.max_item_count
// entries. Directory errors (kInvalid, naming the tensor where there is one):
// no shards, an index naming a missing shard, a tensor in two shards, a
// weight_map entry that disagrees with the headers, index JSON that is not
// an object. A missing path is kIo.
// The model directory is the boundary: every file is followed through
// symlinks only while its resolved target stays inside the model's tree (the
// directory itself, or for a Hugging Face cache snapshot
// .../models--ORG--NAME/snapshots/REV the whole models--ORG--NAME, whose
// snapshot files link to ../../blobs/HASH). A side file that leaves it is
// skipped with a warning; a shard, the index, config.json or
// quantize_config.json that leaves it is refused (kInvalid naming it).
Result<ModelFiles> OpenModelFiles(const std::filesystem::path& path, const ParseLimits& limits);

// A Hugging Face shard index (model.safetensors.index.json,
// pytorch_model.bin.index.json): its "metadata" object as JSON text and its
// weight_map (tensor -> bare shard file name), read as OpenModelFiles reads
// one (strict JSON, bounded by `limits`).
struct ShardIndex {
  std::string metadata_json = "{}";
  std::map<std::string, std::string> weight_map;  // tensor -> shard file name
  std::vector<std::string> shard_names;           // distinct values, sorted
};
Result<ShardIndex> ReadShardIndex(const std::filesystem::path& path, const ParseLimits& limits);

// A model directory's regular files, not recursive, symlinks followed only
// inside its tree (the directory itself, or around a Hugging Face cache
// snapshot the whole models--ORG--NAME). The index, config.json and
// quantize_config.json leaving the tree are refused (kInvalid naming them),
// side files leaving it skipped with a warning; shards are listed as they
// are (the caller checks the ones it reads with CheckInsideModelTree).
struct ModelDirNaming {
  std::string_view index_name;                // e.g. model.safetensors.index.json
  bool (*is_shard)(const std::string& name);  // a weight file's name
};
struct ModelDirListing {
  std::filesystem::path tree;
  bool has_index = false;
  std::vector<std::filesystem::path> shards;      // sorted by name
  std::vector<std::filesystem::path> companions;  // the other files, sorted by name
  std::vector<std::string> warnings;
};
Result<ModelDirListing> ListModelDir(const std::filesystem::path& dir,
                                     const ModelDirNaming& naming, const ParseLimits& limits);

// kInvalid naming `path` when it resolves outside `tree` (ModelDirListing::tree).
Status CheckInsideModelTree(const std::filesystem::path& path, const std::filesystem::path& tree);

// `name` (config.json by default) in `dir` as text, "" when there is none;
// refused when it leaves the model's tree; bounded by limits.max_header_bytes.
Result<std::string> ReadModelConfig(const std::filesystem::path& dir, const ParseLimits& limits,
                                    std::string_view name = "config.json");

// A whole small file (an index, config.json) of at most `max_bytes`
// (kLimitExceeded above it).
Result<std::string> ReadSmallFile(const std::filesystem::path& path, uint64_t max_bytes);

}  // namespace amn::formats

#endif  // AMN_FORMATS_MODEL_FILES_H_
