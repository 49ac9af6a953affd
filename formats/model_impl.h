// amn::Model's parsed state, shared by the files that implement Model
// (model.cc: open, inspect, remember; model_forget.cc: forget;
// model_tensors.cc: single tensors into memory).
#ifndef AMN_FORMATS_MODEL_IMPL_H_
#define AMN_FORMATS_MODEL_IMPL_H_

#include <array>
#include <atomic>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

#include "amn/limits.h"
#include "amn/model.h"
#include "formats/array_file.h"
#include "formats/gguf.h"
#include "formats/model_files.h"
#include "formats/pytorch_dir.h"
#include "formats/quant_scheme.h"
#include "formats/remember_engine.h"
#include "formats/remember_output.h"
#include "formats/remember_plan.h"

namespace amn {

namespace detail {

// The remember plan of one output type and its tensors by name (shard,
// index): what DequantizeTensor decodes from.
struct TensorPlan {
  formats::RememberPlan plan;
  std::unordered_map<std::string, std::pair<size_t, size_t>> by_name;
};

}  // namespace detail

struct Model::Impl {
  ParseLimits limits;  // clamped; max_total_bytes also bounds the planned output
  bool gguf = false;
  // safetensors
  formats::ModelFiles files;
  formats::ModelScheme scheme;
  // GGUF
  std::filesystem::path gguf_path;
  formats::GgufHeader gguf_header;
  // NPY, NPZ, PyTorch
  bool arrays = false;
  std::filesystem::path array_path;
  formats::ArrayFile array_file;
  // A PyTorch checkpoint directory (arrays is set too: array_file merges
  // its shards for inspect and parse).
  bool torch_dir = false;
  formats::PytorchDir torch;
  // DequantizeTensor's plans, made on first use for each requested type
  // (0: unset, 1 + ElemType for F32/F16/BF16) and never changed after, so a
  // caller holding one needs no lock.
  mutable std::mutex plans_mutex;
  mutable std::array<std::shared_ptr<const detail::TensorPlan>, 4> plans;
};

namespace detail {

// Refuses outputs that would overwrite, hold or sit inside the input, and an
// existing output without `overwrite`.
Status CheckOutputPath(const std::filesystem::path& input, const std::filesystem::path& output,
                       bool overwrite);
formats::EngineOptions EngineFor(unsigned threads, const std::atomic<bool>* cancel, bool use_mmap);

// What remember or forget writes, before config.json and the index: the
// plan of the model's tensors (`to` and keep_passthrough as
// RememberOptions), and for a directory its side files to copy, the input
// config.json to rewrite and the input index's metadata.
struct PlannedOutput {
  formats::RememberPlan plan;
  formats::DirectoryExtras extras;
  bool directory = false;
  std::filesystem::path config_path;  // empty: no config.json to write
  std::string config_json;
  bool has_index = false;
  std::string index_metadata_json = "{}";
};
Result<PlannedOutput> PlanOutput(const Model::Impl& impl, std::optional<ElemType> to,
                                 bool keep_passthrough, const std::atomic<bool>* cancel);
// Adds config.json (`config` rewrites the input's text) and the index of
// the final plan to the extras.
Status FinishExtras(PlannedOutput& out,
                    const std::function<Result<std::string>(const std::string&)>& config);
// Checks the limit and the output path, then writes.
Status WritePlanned(const Model::Impl& impl, const std::filesystem::path& input,
                    const PlannedOutput& out, const std::filesystem::path& output, bool overwrite,
                    const formats::EngineOptions& engine,
                    const std::function<void(const RememberProgress&)>& on_progress);

}  // namespace detail
}  // namespace amn

#endif  // AMN_FORMATS_MODEL_IMPL_H_
