// Hugging Face PyTorch checkpoint directories (pytorch_dir.h).
#include "formats/pytorch_dir.h"

#include <algorithm>
#include <map>
#include <set>
#include <system_error>

#include "formats/byte_source.h"
#include "formats/checked_math.h"
#include "formats/file_format.h"
#include "formats/model_files.h"

namespace amn::formats {
namespace fs = std::filesystem;

namespace {

constexpr std::string_view kSingleName = "pytorch_model.bin";
constexpr std::string_view kShardPrefix = "pytorch_model-";

std::string PathText(const fs::path& path) { return MessageSafe(path.string(), kMessagePathBytes); }

Status Error(StatusCode code, const fs::path& path, const std::string& message) {
  return Status(code, PathText(path) + ": " + message);
}

bool IsShardName(const std::string& name) {
  return name == kSingleName || (name.starts_with(kShardPrefix) && name.ends_with(".bin"));
}

uint64_t ArrayBytes(const ArrayFile& file) {
  uint64_t total = 0;
  for (const ArrayEntry& a : file.arrays) total += a.elements * DtypeBytes(a.dtype);
  return total;
}

}  // namespace

bool IsPytorchDir(const fs::path& dir) {
  std::error_code error;
  bool torch = false;
  for (fs::directory_iterator it(dir, error); !error && it != fs::directory_iterator();
       it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (it->path().extension() == ".safetensors" || name == "model.safetensors.index.json") {
      return false;
    }
    torch = torch || IsShardName(name) || name == kPytorchIndexName;
  }
  return torch && !error;
}

std::string SafetensorsShardName(const std::string& bin_name) {
  std::string stem = bin_name.ends_with(".bin") ? bin_name.substr(0, bin_name.size() - 4) : bin_name;
  if (stem == "pytorch_model") return "model.safetensors";
  if (stem.starts_with(kShardPrefix)) stem = "model-" + stem.substr(kShardPrefix.size());
  return stem + ".safetensors";
}

Result<PytorchDir> OpenPytorchDir(const fs::path& dir, const ParseLimits& limits) {
  PytorchDir out;
  out.dir = dir;
  AMN_ASSIGN_OR_RETURN(ModelDirListing listing,
                       ListModelDir(dir, {kPytorchIndexName, IsShardName}, limits));
  out.has_index = listing.has_index;
  out.companion_files = std::move(listing.companions);
  out.warnings = std::move(listing.warnings);
  std::error_code error;
  const fs::path index_path = dir / kPytorchIndexName;
  ShardIndex index;
  if (out.has_index) {
    AMN_ASSIGN_OR_RETURN(index, ReadShardIndex(index_path, limits));
    out.index_metadata_json = index.metadata_json;
    for (const std::string& name : index.shard_names) {
      const fs::path path = dir / name;
      if (!fs::is_regular_file(path, error)) {
        return Error(StatusCode::kInvalid, index_path,
                     "weight_map names the shard " + MessageSafe(name) + ", which is missing");
      }
      out.shards.push_back(path);
    }
    // Shards the index does not name are neither converted nor copied, as
    // in a safetensors directory.
  } else {
    out.shards = std::move(listing.shards);
  }
  if (out.shards.empty()) {
    return Error(StatusCode::kInvalid, dir,
                 out.has_index ? "the index names no shards" : "no pytorch_model*.bin files");
  }
  std::map<std::string, size_t> shard_of;
  uint64_t total_bytes = 0;
  for (size_t s = 0; s < out.shards.size(); ++s) {
    const fs::path& path = out.shards[s];
    AMN_RETURN_IF_ERROR(CheckInsideModelTree(path, listing.tree));
    AMN_ASSIGN_OR_RETURN(const FileFormat format, DetectFileFormat(path, limits));
    if (format != FileFormat::kPytorch) {
      return Error(StatusCode::kInvalid, path,
                   "a shard of a PyTorch checkpoint directory, but it is " +
                       std::string(FileFormatName(format)) + ", not a torch.save zip");
    }
    AMN_ASSIGN_OR_RETURN(ArrayFile file, ReadArrayFile(path, format, limits));
    if (__builtin_add_overflow(total_bytes, ArrayBytes(file), &total_bytes) ||
        total_bytes > limits.max_total_bytes) {
      return Error(StatusCode::kLimitExceeded, path,
                   "the shards' tensors add up to more than " +
                       std::to_string(limits.max_total_bytes) + " bytes (limits.max_total_bytes)");
    }
    const std::string file_name = path.filename().string();
    for (const ArrayEntry& a : file.arrays) {
      const auto [it, inserted] = shard_of.emplace(a.name, s);
      if (!inserted) {
        return Error(StatusCode::kInvalid, path,
                     "tensor is also in " + PathText(out.shards[it->second].filename()))
            .WithTensor(MessageSafe(a.name));
      }
      if (!out.has_index) continue;
      const auto entry = index.weight_map.find(a.name);
      if (entry == index.weight_map.end() || entry->second != file_name) {
        return Error(StatusCode::kInvalid, index_path,
                     entry == index.weight_map.end()
                         ? "weight_map lacks a tensor that " + MessageSafe(file_name) + " holds"
                         : "weight_map puts the tensor in " + MessageSafe(entry->second) + " but " +
                               MessageSafe(file_name) + " holds it")
            .WithTensor(MessageSafe(a.name));
      }
    }
    out.files.push_back(std::move(file));
  }
  if (out.has_index) {
    for (const auto& [tensor, file] : index.weight_map) {
      if (!shard_of.contains(tensor)) {
        return Error(StatusCode::kInvalid, index_path,
                     "weight_map puts the tensor in " + MessageSafe(file) + ", which does not hold it")
            .WithTensor(MessageSafe(tensor));
      }
    }
  }
  AMN_ASSIGN_OR_RETURN(out.config_json, ReadModelConfig(dir, limits));
  return out;
}

Result<RememberPlan> PlanPytorchDirRemember(const PytorchDir& dir, std::optional<ElemType> to,
                                            const std::atomic<bool>* cancel) {
  RememberPlan plan;
  std::set<std::string> names;
  for (size_t s = 0; s < dir.shards.size(); ++s) {
    AMN_ASSIGN_OR_RETURN(RememberPlan part, PlanArrayRemember(dir.shards[s], dir.files[s], to, cancel));
    plan.to = part.to;
    for (OutputShard& shard : part.shards) {
      shard.file_name = SafetensorsShardName(dir.shards[s].filename().string());
      shard.input_shard = s;
      for (OutputTensor& t : shard.tensors) {
        t.input_file = plan.input_files.size();
        if (!names.insert(t.name).second) {
          return Status(StatusCode::kInvalid, PathText(dir.shards[s]) +
                                                  ": two tensors would be written as '" +
                                                  MessageSafe(t.name) + "'")
              .WithTensor(MessageSafe(t.name));
        }
      }
      if (!CheckedAdd(plan.total_bytes, shard.header_bytes.size(), &plan.total_bytes) ||
          !CheckedAdd(plan.total_bytes, shard.data_bytes, &plan.total_bytes)) {
        return Status(StatusCode::kLimitExceeded,
                      PathText(dir.shards[s]) + ": the output size overflows 64 bits");
      }
      plan.total_tensors += shard.tensors.size();
      plan.shards.push_back(std::move(shard));
    }
    plan.input_files.push_back(dir.shards[s]);
  }
  return plan;
}

ArrayFile MergedArrays(const PytorchDir& dir) {
  ArrayFile merged;
  merged.format = "pytorch";
  for (const ArrayFile& file : dir.files) {
    const size_t base = merged.members.size();
    merged.members.insert(merged.members.end(), file.members.begin(), file.members.end());
    for (ArrayEntry a : file.arrays) {
      a.member += base;
      merged.arrays.push_back(std::move(a));
    }
    for (const auto& [key, value] : file.metadata) merged.metadata.emplace(key, value);
  }
  return merged;
}

}  // namespace amn::formats
