// Hugging Face PyTorch checkpoints: a directory holding pytorch_model.bin, or
// shards pytorch_model-00001-of-0000N.bin named by
// pytorch_model.bin.index.json (transformers' save_pretrained with
// safe_serialization=False), each a torch.save zip. `remember` writes them
// as safetensors shards (model.safetensors, or model-0000i-of-0000N
// .safetensors) with model.safetensors.index.json, like a safetensors
// directory.
#ifndef AMN_FORMATS_PYTORCH_DIR_H_
#define AMN_FORMATS_PYTORCH_DIR_H_

#include <atomic>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "amn/limits.h"
#include "amn/result.h"
#include "formats/array_file.h"
#include "formats/remember_plan.h"

namespace amn::formats {

inline constexpr std::string_view kPytorchIndexName = "pytorch_model.bin.index.json";

struct PytorchDir {
  std::filesystem::path dir;
  std::vector<std::filesystem::path> shards;  // sorted by name
  std::vector<ArrayFile> files;               // one per shard
  bool has_index = false;
  std::string index_metadata_json = "{}";
  // The other regular files (not shards, not the index; symlinks followed
  // only inside the model's tree, as ListModelDir does; not recursive),
  // sorted by name; copied to a directory output.
  std::vector<std::filesystem::path> companion_files;
  std::vector<std::string> warnings;  // side files skipped, one line each
  std::string config_json;  // "" when there is none
};

// Whether `dir` is a PyTorch checkpoint directory: it holds no *.safetensors
// file and no model.safetensors.index.json, and holds pytorch_model.bin,
// pytorch_model.bin.index.json or pytorch_model-*.bin.
bool IsPytorchDir(const std::filesystem::path& dir);

// Lists and parses every shard (each must be a PyTorch zip checkpoint) with
// `limits`. With an index: its weight_map must name exactly the tensors each
// shard holds (kInvalid naming the tensor otherwise). No tensor may be in
// two shards; the shards' declared bytes stay within limits.max_total_bytes.
Result<PytorchDir> OpenPytorchDir(const std::filesystem::path& dir, const ParseLimits& limits);

// "pytorch_model.bin" -> "model.safetensors", "pytorch_model-00001-of-00002.bin"
// -> "model-00001-of-00002.safetensors", anything else "X.bin" -> "X.safetensors".
std::string SafetensorsShardName(const std::string& bin_name);

// One output shard per input shard (PlanArrayRemember's rules: float tensors
// converted to `to` when it is set, others kept), named by
// SafetensorsShardName.
Result<RememberPlan> PlanPytorchDirRemember(const PytorchDir& dir, std::optional<ElemType> to,
                                            const std::atomic<bool>* cancel = nullptr);

// Every shard's arrays as one ArrayFile (for inspect and parse).
ArrayFile MergedArrays(const PytorchDir& dir);

}  // namespace amn::formats

#endif  // AMN_FORMATS_PYTORCH_DIR_H_
