// Finding a safetensors model's files: one file, or a directory of shards
// named by model.safetensors.index.json (the Hugging Face sharding
// convention) or else every *.safetensors in it, plus companion files and
// config.json. Every shard header is read and cross-checked with the index.
#include "formats/model_files.h"

#include <algorithm>
#include <exception>
#include <new>
#include <nlohmann/json.hpp>
#include <set>
#include <string_view>
#include <system_error>
#include <utility>

#include "formats/byte_source.h"
#include "formats/checked_math.h"
#include "formats/json_bounded.h"

namespace amn::formats {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

constexpr std::string_view kIndexName = "model.safetensors.index.json";
constexpr std::string_view kShardExtension = ".safetensors";
constexpr std::string_view kConfigName = "config.json";
constexpr std::string_view kQuantizeConfigName = "quantize_config.json";
// The index and config are flat JSON; this bound keeps a hostile one from
// nesting deep enough to hurt the recursive serializer.
constexpr int kMaxIndexDepth = 32;

std::string PathText(const fs::path& path) { return MessageSafe(path.string(), kMessagePathBytes); }

Status Error(StatusCode code, const fs::path& path, const std::string& message) {
  return Status(code, PathText(path) + ": " + message);
}

}  // namespace

Result<std::string> ReadSmallFile(const fs::path& path, uint64_t max_bytes) {
  AMN_ASSIGN_OR_RETURN(std::unique_ptr<FileSource> source, FileSource::Open(path));
  if (source->size() > max_bytes) {
    return Error(StatusCode::kLimitExceeded, path,
                 "the file is " + std::to_string(source->size()) + " bytes, over the limit of " +
                     std::to_string(max_bytes) + " (limits.max_header_bytes)");
  }
  std::string text(static_cast<size_t>(source->size()), '\0');
  AMN_RETURN_IF_ERROR(
      source->ReadAt(0, std::span(reinterpret_cast<std::byte*>(text.data()), text.size())));
  return text;
}

namespace {

// Parses strict JSON into a DOM, refusing duplicate keys in any object and
// nesting deeper than kMaxIndexDepth. JSON errors come back as kInvalid with
// the byte offset nlohmann reports.
Result<Json> ParseStrictJson(const fs::path& path, const std::string& text) {
  std::vector<std::set<std::string>> open_objects;
  std::string duplicate;
  const Json::parser_callback_t hook = [&](int, Json::parse_event_t event, Json& parsed) {
    // Once something is wrong the result is refused anyway: stop tracking and
    // keep nothing more.
    if (!duplicate.empty()) return false;
    switch (event) {
      case Json::parse_event_t::object_start:
        open_objects.emplace_back();
        break;
      case Json::parse_event_t::object_end:
        open_objects.pop_back();
        break;
      case Json::parse_event_t::key:
        if (!open_objects.back().insert(parsed.get_ref<const std::string&>()).second) {
          duplicate = parsed.get_ref<const std::string&>();
        }
        break;
      default:
        break;
    }
    return true;
  };
  AMN_ASSIGN_OR_RETURN(Json json, ParseBoundedJson<Json>(text, PathText(path), kMaxIndexDepth, hook));
  if (!duplicate.empty()) {
    return Error(StatusCode::kInvalid, path, "duplicate key \"" + MessageSafe(duplicate) + "\"");
  }
  return json;
}

// The tree a model's files must resolve into: the directory itself, or the
// models--ORG--NAME folder around a Hugging Face cache snapshot
// (models--ORG--NAME/snapshots/REV), whose files link into ../../blobs.
fs::path ModelTree(const fs::path& dir) {
  std::error_code error;
  fs::path tree = fs::canonical(dir, error);
  if (error) return fs::absolute(dir, error).lexically_normal();
  const fs::path snapshots = tree.parent_path();
  if (snapshots.filename() == "snapshots" &&
      snapshots.parent_path().filename().string().starts_with("models--")) {
    return snapshots.parent_path();
  }
  return tree;
}

// Where `path` leads once every symlink is resolved, when that is outside
// `tree`; empty when it stays inside (or cannot be resolved: opening it
// reports that).
fs::path OutsideTree(const fs::path& path, const fs::path& tree) {
  std::error_code error;
  const fs::path target = fs::canonical(path, error);
  if (error) return {};
  const fs::path relative = target.lexically_relative(tree);
  if (!relative.empty() && *relative.begin() != "..") return {};
  return target;
}

// A weight_map value must name a file in the index's own directory.
bool IsBareFileName(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos &&
         name.find('\0') == std::string::npos;
}

using Index = ShardIndex;

}  // namespace

Status CheckInsideModelTree(const fs::path& path, const fs::path& tree) {
  const fs::path target = OutsideTree(path, tree);
  if (target.empty()) return Status::Ok();
  return Error(StatusCode::kInvalid, path,
               "is a symlink to " + PathText(target) + ", outside the model directory " +
                   PathText(tree) + "; refusing to read it");
}

Result<ShardIndex> ReadShardIndex(const fs::path& path, const ParseLimits& limits) {
  AMN_ASSIGN_OR_RETURN(std::string text, ReadSmallFile(path, limits.max_header_bytes));
  AMN_ASSIGN_OR_RETURN(Json json, ParseStrictJson(path, text));
  if (!json.is_object()) return Error(StatusCode::kInvalid, path, "the index is not a JSON object");
  Index index;
  if (const auto metadata = json.find("metadata"); metadata != json.end()) {
    if (!metadata->is_object()) {
      return Error(StatusCode::kInvalid, path, "\"metadata\" is not an object");
    }
    index.metadata_json = metadata->dump();
  }
  const auto weight_map = json.find("weight_map");
  if (weight_map == json.end() || !weight_map->is_object()) {
    return Error(StatusCode::kInvalid, path, "\"weight_map\" is missing or not an object");
  }
  if (weight_map->size() > limits.max_item_count) {
    return Error(StatusCode::kLimitExceeded, path,
                 "\"weight_map\" has " + std::to_string(weight_map->size()) + " entries, over " +
                     std::to_string(limits.max_item_count) + " (limits.max_item_count)");
  }
  std::set<std::string> shard_names;
  for (const auto& [tensor, file] : weight_map->items()) {
    if (!file.is_string()) {
      return Error(StatusCode::kInvalid, path, "the weight_map entry is not a string")
          .WithTensor(MessageSafe(tensor));
    }
    const auto& name = file.get_ref<const std::string&>();
    if (!IsBareFileName(name)) {
      return Error(StatusCode::kInvalid, path,
                   "weight_map names \"" + MessageSafe(name) +
                       "\", which is not a file name in the index's directory")
          .WithTensor(MessageSafe(tensor));
    }
    shard_names.insert(name);
    index.weight_map.emplace(tensor, name);
  }
  index.shard_names.assign(shard_names.begin(), shard_names.end());
  return index;
}

Result<ModelDirListing> ListModelDir(const fs::path& dir, const ModelDirNaming& naming,
                                     const ParseLimits& limits) {
  ModelDirListing listing;
  listing.tree = ModelTree(dir);
  std::error_code error;
  fs::directory_iterator it(dir, error);
  uint64_t entries = 0;
  for (; !error && it != fs::directory_iterator(); it.increment(error)) {
    if (++entries > limits.max_item_count) {
      return Error(StatusCode::kLimitExceeded, dir,
                   "more than " + std::to_string(limits.max_item_count) +
                       " directory entries (limits.max_item_count)");
    }
    std::error_code type_error;
    if (!it->is_regular_file(type_error)) continue;
    const fs::path name = it->path().filename();
    // Shards are checked once the caller knows which of them it reads.
    const bool read_for_meaning = name == naming.index_name || name == kConfigName ||
                                  name == kQuantizeConfigName;
    const bool shard = !read_for_meaning && naming.is_shard(name.string());
    if (read_for_meaning) AMN_RETURN_IF_ERROR(CheckInsideModelTree(it->path(), listing.tree));
    if (const fs::path target = read_for_meaning || shard ? fs::path()
                                                           : OutsideTree(it->path(), listing.tree);
        !target.empty()) {
      listing.warnings.push_back(PathText(it->path()) + ": skipped: a symlink to " +
                                 PathText(target) + ", outside the model directory " +
                                 PathText(listing.tree));
      continue;
    }
    if (name == naming.index_name) {
      listing.has_index = true;
    } else if (shard) {
      listing.shards.push_back(it->path());
    } else {
      listing.companions.push_back(it->path());
    }
  }
  if (error) return Error(StatusCode::kIo, dir, "cannot list the directory: " + error.message());
  const auto by_name = [](const fs::path& a, const fs::path& b) {
    return a.filename().native() < b.filename().native();
  };
  std::sort(listing.shards.begin(), listing.shards.end(), by_name);
  std::sort(listing.companions.begin(), listing.companions.end(), by_name);
  return listing;
}

Result<std::string> ReadModelConfig(const fs::path& dir, const ParseLimits& limits,
                                    std::string_view name) {
  const fs::path path = dir / name;
  std::error_code error;
  if (!fs::is_regular_file(path, error)) return std::string();
  AMN_RETURN_IF_ERROR(CheckInsideModelTree(path, ModelTree(dir)));
  return ReadSmallFile(path, limits.max_header_bytes);
}

namespace {

bool IsSafetensorsShard(const std::string& name) { return name.ends_with(kShardExtension); }

Result<Shard> ReadShard(const fs::path& path, const ParseLimits& limits) {
  AMN_ASSIGN_OR_RETURN(std::unique_ptr<FileSource> source, FileSource::Open(path));
  Shard shard;
  shard.path = path;
  shard.file_bytes = source->size();
  AMN_ASSIGN_OR_RETURN(shard.header, ReadSafetensorsHeader(*source, limits));
  return shard;
}

// Across shards: no tensor twice, the data within max_total_bytes, and, with
// an index, weight_map naming exactly the tensors each shard holds.
Status CheckShards(const ModelFiles& files, const Index* index, const fs::path& index_path,
                   const ParseLimits& limits) {
  std::map<std::string_view, size_t> shard_of;  // views into the headers' names
  uint64_t total_bytes = 0;
  for (size_t s = 0; s < files.shards.size(); ++s) {
    const Shard& shard = files.shards[s];
    if (!CheckedAdd(total_bytes, shard.header.data_bytes, &total_bytes) ||
        total_bytes > limits.max_total_bytes) {
      return Error(StatusCode::kLimitExceeded, shard.path,
                   "the shards' data sections add up to more than " +
                       std::to_string(limits.max_total_bytes) + " bytes (limits.max_total_bytes)");
    }
    for (const TensorEntry& tensor : shard.header.tensors) {
      const auto [it, inserted] = shard_of.emplace(tensor.name, s);
      if (!inserted) {
        return Error(StatusCode::kInvalid, shard.path,
                     "tensor is also in " + PathText(files.shards[it->second].path.filename()))
            .WithTensor(MessageSafe(tensor.name));
      }
      if (index == nullptr) continue;
      const auto entry = index->weight_map.find(tensor.name);
      if (entry == index->weight_map.end()) {
        return Error(StatusCode::kInvalid, index_path,
                     "weight_map lacks a tensor that " + PathText(shard.path.filename()) + " holds")
            .WithTensor(MessageSafe(tensor.name));
      }
      if (entry->second != shard.path.filename().string()) {
        return Error(StatusCode::kInvalid, index_path,
                     "weight_map puts the tensor in " + MessageSafe(entry->second) + " but " +
                         PathText(shard.path.filename()) + " holds it")
            .WithTensor(MessageSafe(tensor.name));
      }
    }
  }
  if (index != nullptr) {
    for (const auto& [tensor, file] : index->weight_map) {
      if (!shard_of.contains(tensor)) {
        return Error(StatusCode::kInvalid, index_path,
                     "weight_map puts the tensor in " + MessageSafe(file) +
                         ", which does not hold it")
            .WithTensor(MessageSafe(tensor));
      }
    }
  }
  return Status::Ok();
}

Result<ModelFiles> OpenDirectory(const fs::path& dir, const ParseLimits& limits) {
  ModelFiles files;
  files.input = dir;
  files.is_directory = true;
  AMN_ASSIGN_OR_RETURN(ModelDirListing listing,
                       ListModelDir(dir, {kIndexName, IsSafetensorsShard}, limits));
  files.companion_files = std::move(listing.companions);
  files.warnings = std::move(listing.warnings);

  const fs::path index_path = dir / kIndexName;
  Index index;
  std::vector<fs::path> shard_paths;
  if (listing.has_index) {
    files.has_index = true;
    AMN_ASSIGN_OR_RETURN(index, ReadShardIndex(index_path, limits));
    files.index_metadata_json = index.metadata_json;
    for (const std::string& name : index.shard_names) {
      const fs::path path = dir / name;
      std::error_code error;
      if (!fs::is_regular_file(path, error)) {
        return Error(StatusCode::kInvalid, index_path,
                     "weight_map names the shard " + MessageSafe(name) + ", which is missing");
      }
      shard_paths.push_back(path);
    }
  } else {
    shard_paths = std::move(listing.shards);
  }
  if (shard_paths.empty()) {
    return Error(StatusCode::kInvalid, dir,
                 listing.has_index ? "the index names no shards" : "no *.safetensors files");
  }
  for (const fs::path& path : shard_paths) {
    AMN_RETURN_IF_ERROR(CheckInsideModelTree(path, listing.tree));
    AMN_ASSIGN_OR_RETURN(Shard shard, ReadShard(path, limits));
    files.shards.push_back(std::move(shard));
  }
  AMN_RETURN_IF_ERROR(CheckShards(files, listing.has_index ? &index : nullptr, index_path, limits));
  AMN_ASSIGN_OR_RETURN(files.config_json, ReadModelConfig(dir, limits));
  AMN_ASSIGN_OR_RETURN(files.quantize_config_json, ReadModelConfig(dir, limits, kQuantizeConfigName));
  return files;
}

Result<ModelFiles> OpenSingleFile(const fs::path& path, const ParseLimits& limits) {
  ModelFiles files;
  files.input = path;
  AMN_ASSIGN_OR_RETURN(Shard shard, ReadShard(path, limits));
  files.shards.push_back(std::move(shard));
  AMN_RETURN_IF_ERROR(CheckShards(files, nullptr, {}, limits));
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  AMN_ASSIGN_OR_RETURN(files.config_json, ReadModelConfig(dir, limits));
  AMN_ASSIGN_OR_RETURN(files.quantize_config_json, ReadModelConfig(dir, limits, kQuantizeConfigName));
  return files;
}

Result<ModelFiles> Open(const fs::path& path, const ParseLimits& limits) {
  std::error_code error;
  const fs::file_status status = fs::status(path, error);
  if (error) return Error(StatusCode::kIo, path, error.message());
  if (fs::is_directory(status)) return OpenDirectory(path, limits);
  if (fs::is_regular_file(status)) return OpenSingleFile(path, limits);
  return Error(StatusCode::kInvalidArgument, path, "neither a file nor a directory");
}

}  // namespace

Result<ModelFiles> OpenModelFiles(const fs::path& path, const ParseLimits& limits) {
  // Only allocation failure or a filesystem exception can get here; the
  // library never lets one out.
  try {
    return Open(path, limits.Clamped());
  } catch (const std::bad_alloc&) {
    return Error(StatusCode::kLimitExceeded, path, "out of memory");
  } catch (const std::exception& error) {
    return Error(StatusCode::kIo, path, JsonErrorText(error));
  }
}

}  // namespace amn::formats
