// amn::Model's single tensors in memory: OutputTensors lists what remember
// writes, DequantizeTensor / DequantizeTensorChunks decode one of them with
// the remember engine's own chunks and decoders (formats/remember_engine.h),
// so the bytes are those of remember's output file, without a file.
#include <algorithm>
#include <new>
#include <string>
#include <unordered_map>
#include <vector>

#include "amn/model.h"
#include "formats/byte_source.h"
#include "formats/dtype.h"
#include "formats/model_impl.h"
#include "formats/remember_engine.h"

namespace amn {
namespace {

// Where a requested type's plan sits in Model::Impl::plans.
Result<size_t> PlanSlot(std::optional<ElemType> to) {
  if (!to) return size_t{0};
  switch (*to) {
    case ElemType::kF32: return size_t{1};
    case ElemType::kF16: return size_t{2};
    case ElemType::kBf16: return size_t{3};
    default: break;
  }
  return Status(StatusCode::kInvalidArgument,
                "a tensor is dequantized to f32, f16 or bf16, not " + std::string(ElemTypeName(*to)));
}

// What the input says of an output tensor, by its output name.
struct SourceInfo {
  std::string dtype, scheme, shard;
  bool quantized = false;
};

}  // namespace

namespace detail {

// The plan for `to`, made once (under the lock: two first callers wait for
// one plan rather than making two).
Result<std::shared_ptr<const TensorPlan>> PlanFor(const Model::Impl& impl, std::optional<ElemType> to) {
  AMN_ASSIGN_OR_RETURN(const size_t slot, PlanSlot(to));
  std::lock_guard<std::mutex> lock(impl.plans_mutex);
  if (impl.plans[slot] != nullptr) return impl.plans[slot];
  AMN_ASSIGN_OR_RETURN(PlannedOutput out, PlanOutput(impl, to, /*keep_passthrough=*/false, nullptr));
  auto plan = std::make_shared<TensorPlan>();
  plan->plan = std::move(out.plan);
  for (size_t s = 0; s < plan->plan.shards.size(); ++s) {
    const auto& tensors = plan->plan.shards[s].tensors;
    for (size_t i = 0; i < tensors.size(); ++i) plan->by_name.emplace(tensors[i].name, std::pair(s, i));
  }
  impl.plans[slot] = plan;
  return std::shared_ptr<const TensorPlan>(std::move(plan));
}

}  // namespace detail

namespace {

// The planned tensor `name` of `plan`, checked against the caller's limits.
Result<const formats::OutputTensor*> FindTensor(const Model::Impl& impl, const detail::TensorPlan& plan,
                                                std::string_view name) {
  const auto it = plan.by_name.find(std::string(name));
  if (it == plan.by_name.end()) {
    return Status(StatusCode::kInvalidArgument,
                  "no tensor named \"" + formats::MessageSafe(name) +
                      "\" in the output (names as OutputTensors lists them; scales, zero points, "
                      "g_idx and other companions are part of their weight)");
  }
  const formats::OutputTensor& t = plan.plan.shards[it->second.first].tensors[it->second.second];
  if (t.bytes > impl.limits.max_total_bytes) {
    return Status(StatusCode::kLimitExceeded,
                  "the tensor would be " + std::to_string(t.bytes) + " bytes, over the limit of " +
                      std::to_string(impl.limits.max_total_bytes) + " (limits.max_total_bytes)")
        .WithTensor(t.name);
  }
  return &t;
}

formats::EngineOptions EngineFor(const DequantizeOptions& options) {
  formats::EngineOptions engine = detail::EngineFor(options.threads, options.cancel, options.use_mmap);
  engine.chunk_bytes = std::max<size_t>(1, options.chunk_bytes);
  return engine;
}

Status OutOfMemory(std::string_view name) {
  return Status(StatusCode::kLimitExceeded, "out of memory while decoding the tensor")
      .WithTensor(formats::MessageSafe(name));
}

}  // namespace

Result<std::vector<TensorInfo>> Model::OutputTensors(std::optional<ElemType> to) const {
  try {
    AMN_ASSIGN_OR_RETURN(const auto plan, detail::PlanFor(*impl_, to));
    // What each output tensor was in the input: quantized weights under the
    // name remember gives them (GPTQ's qweight becomes weight), the rest under
    // their own.
    std::unordered_map<std::string, SourceInfo> sources;
    const std::vector<TensorSummary> stored = Tensors();
    const bool safetensors = !impl_->gguf && !impl_->arrays;
    size_t k = 0;
    for (size_t s = 0; safetensors && s < impl_->files.shards.size(); ++s) {
      for (size_t i = 0; i < impl_->files.shards[s].header.tensors.size(); ++i, ++k) {
        if (impl_->scheme.roles[s][i] != formats::TensorRole::kQuantized) continue;
        const auto& w = impl_->scheme.weights[static_cast<size_t>(impl_->scheme.weight_index[s][i])];
        sources[w.output_name] = {stored[k].dtype, stored[k].scheme, stored[k].shard, true};
      }
    }
    for (const TensorSummary& t : stored) {
      if (t.role == "passthrough" || (t.role == "quantized" && !safetensors)) {
        sources.emplace(t.name, SourceInfo{t.dtype, t.scheme, t.shard, t.role == "quantized"});
      }
    }
    std::vector<TensorInfo> list;
    for (const formats::OutputShard& shard : plan->plan.shards) {
      const size_t first = list.size();
      for (const formats::OutputTensor& t : shard.tensors) {
        TensorInfo info;
        info.name = t.name;
        info.dtype = std::string(formats::DtypeName(t.dtype));
        info.shape = t.shape;
        info.bytes = t.bytes;
        if (const auto it = sources.find(t.name); it != sources.end()) {
          info.source_dtype = it->second.dtype;
          info.scheme = it->second.scheme;
          info.quantized = it->second.quantized;
          info.shard = it->second.shard;
        } else {
          info.source_dtype = info.dtype;
          info.shard = shard.file_name;
        }
        // As the planners decide: floats (and, in NPY/NPZ/PyTorch files, FP8
        // arrays) follow `to`.
        const auto source = formats::DtypeFromName(info.source_dtype);
        info.converts = info.quantized ||
                        (source && (impl_->arrays ? formats::ConvertsWithTo(*source) : formats::IsFloat(*source)));
        list.push_back(std::move(info));
      }
      std::sort(list.begin() + static_cast<long>(first), list.end(),
                [](const TensorInfo& a, const TensorInfo& b) { return a.name < b.name; });
    }
    return list;
  } catch (const std::bad_alloc&) {
    return Status(StatusCode::kLimitExceeded, "out of memory while listing the tensors");
  }
}

Status Model::DequantizeTensor(std::string_view name, std::optional<ElemType> to,
                               std::span<std::byte> out, const DequantizeOptions& options) const {
  try {
    AMN_ASSIGN_OR_RETURN(const auto plan, detail::PlanFor(*impl_, to));
    AMN_ASSIGN_OR_RETURN(const formats::OutputTensor* t, FindTensor(*impl_, *plan, name));
    return formats::DecodeTensor(plan->plan, *t, out, EngineFor(options));
  } catch (const std::bad_alloc&) {
    return OutOfMemory(name);
  }
}

Status Model::DequantizeTensorChunks(std::string_view name, std::optional<ElemType> to,
                                     const TensorSink& sink, const DequantizeOptions& options) const {
  if (!sink) return Status(StatusCode::kInvalidArgument, "DequantizeTensorChunks: no sink");
  try {
    AMN_ASSIGN_OR_RETURN(const auto plan, detail::PlanFor(*impl_, to));
    AMN_ASSIGN_OR_RETURN(const formats::OutputTensor* t, FindTensor(*impl_, *plan, name));
    return formats::StreamTensor(plan->plan, *t, EngineFor(options), sink);
  } catch (const std::bad_alloc&) {
    return OutOfMemory(name);
  }
}

}  // namespace amn
