// amn::Model::Forget: plan the plain model, choose and measure its weights,
// then write it quantized through remember's engine and writers.
#include <algorithm>
#include <new>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "amn/ggml_dequant.h"
#include "amn/model.h"
#include "formats/byte_source.h"
#include "formats/forget_layout.h"
#include "formats/forget_like.h"
#include "formats/forget_plan.h"
#include "formats/forget_stats.h"
#include "formats/model_impl.h"
#include "formats/utf8.h"

namespace amn {
namespace fs = std::filesystem;

namespace {

Result<std::optional<std::regex>> Regex(const std::string& text, const char* option) {
  if (text.empty()) return std::optional<std::regex>();
  try {
    return std::optional<std::regex>(std::regex(text, std::regex::ECMAScript));
  } catch (const std::regex_error& e) {
    return Status(StatusCode::kInvalidArgument,
                  std::string(option) + " '" + formats::MessageSafe(text) + "' is not a valid "
                  "regular expression: " + e.what());
  }
}

// The linear-layer weights left unquantized, as module names, for the
// configs' ignore / modules_to_not_convert lists.
std::vector<std::string> SkippedModules(const formats::RememberPlan& plan,
                                        const std::vector<formats::ForgetWeight>& weights) {
  std::set<std::pair<size_t, size_t>> chosen;
  for (const formats::ForgetWeight& w : weights) chosen.insert({w.shard, w.index});
  std::vector<std::string> skipped;
  for (size_t s = 0; s < plan.shards.size(); ++s) {
    for (size_t i = 0; i < plan.shards[s].tensors.size(); ++i) {
      const formats::OutputTensor& t = plan.shards[s].tensors[i];
      if (chosen.contains({s, i}) || t.shape.size() != 2 || !t.name.ends_with(".weight") ||
          !formats::IsFloat(t.dtype)) {
        continue;
      }
      skipped.push_back(t.name.substr(0, t.name.size() - 7));
    }
  }
  return skipped;
}

}  // namespace

Result<ForgetReport> Model::Forget(const fs::path& output, const ForgetOptions& options) const {
  try {
    return ForgetUnguarded(output, options);
  } catch (const std::bad_alloc&) {
    return Status(StatusCode::kLimitExceeded,
                  formats::MessageSafe(output.string(), formats::kMessagePathBytes) +
                      ": out of memory while writing the output");
  }
}

Result<ForgetReport> Model::ForgetUnguarded(const fs::path& output,
                                            const ForgetOptions& options) const {
  const bool like = !options.like.empty();
  if (like == options.scheme.has_value()) {
    return Status(StatusCode::kInvalidArgument,
                  like ? "--like takes the scheme of that model; leave out --scheme"
                       : "forget needs --scheme (or --like MODEL)");
  }
  AMN_ASSIGN_OR_RETURN(const std::optional<std::regex> only, Regex(options.only, "--only"));
  AMN_ASSIGN_OR_RETURN(const std::optional<std::regex> skip, Regex(options.skip, "--skip"));
  // The plain model with every dtype kept: its float tensors are the
  // sources. A quantized input's weights are dequantized to F32 (exactly:
  // the values remember --to f32 writes) in the pass that encodes them.
  AMN_ASSIGN_OR_RETURN(detail::PlannedOutput out,
                       detail::PlanOutput(*impl_, ElemType::kF32, /*keep_passthrough=*/true,
                                          options.cancel));
  ForgetReport report;
  std::vector<formats::ForgetWeight> weights;
  std::string quantization_config;
  std::optional<Model> like_model;
  if (like) {
    AMN_ASSIGN_OR_RETURN(like_model, Model::Open(options.like, impl_->limits));
    const Impl& m = *like_model->impl_;
    if (m.gguf || m.arrays) {
      return Status(StatusCode::kInvalidArgument,
                    "--like takes a quantized safetensors model (FP8 or bitsandbytes)");
    }
    AMN_ASSIGN_OR_RETURN(formats::LikeWeights found,
                         formats::WeightsLike(out.plan, m.files, m.scheme));
    weights = std::move(found.weights);
    report.scheme = formats::ForgetSchemeName(found.scheme);
    // The model's own quantization_config, as its loader expects it.
    if (!m.files.config_json.empty()) {
      auto config = nlohmann::json::parse(m.files.config_json, nullptr, false);
      if (config.is_object() && config.contains("quantization_config")) {
        quantization_config = config["quantization_config"].dump();
      }
    }
    if (quantization_config.empty()) {
      quantization_config = formats::QuantizationConfigJson(
          found.scheme, weights.front().job->fp8_format, SkippedModules(out.plan, weights));
    }
  } else {
    const formats::ForgetSelection selection{*options.scheme, options.fp8_format,
                                             options.block_size, only, skip};
    for (size_t s = 0; s < out.plan.shards.size(); ++s) {
      const auto& tensors = out.plan.shards[s].tensors;
      for (size_t i = 0; i < tensors.size(); ++i) {
        const formats::OutputTensor& t = tensors[i];
        // By default only float tensors qualify; a name --only picks must be one.
        if (!options.only.empty() ? !formats::Chosen(selection, t.name, t.shape)
                                  : !formats::IsFloat(t.dtype) ||
                                        !formats::Chosen(selection, t.name, t.shape)) {
          continue;
        }
        AMN_ASSIGN_OR_RETURN(formats::ForgetWeight w,
                             formats::MakeForgetWeight(t, s, i, *options.scheme,
                                                       options.fp8_format, options.block_size));
        weights.push_back(std::move(w));
      }
    }
    if (weights.empty()) {
      return Status(StatusCode::kInvalidArgument,
                    formats::MessageSafe(path().string(), formats::kMessagePathBytes) +
                        ": no tensor to quantize (the 2-D float weights of linear layers, or "
                        "what --only names)");
    }
    const formats::EngineOptions engine =
        detail::EngineFor(options.threads, options.cancel, options.use_mmap);
    // Only what a chunk cannot measure itself is measured first (FP8
    // per-tensor scales, double quant's offsets); every other side value is
    // measured as it is written, so none is held for the whole model.
    std::vector<formats::StatsTarget> targets;
    for (const formats::ForgetWeight& w : weights) {
      const bool nested = formats::DoubleQuant(w);
      if (formats::NeedsWholeTensorStats(*w.job, nested)) targets.push_back({w.job, w.source, nested});
    }
    AMN_RETURN_IF_ERROR(formats::ComputeSideValues(out.plan.input_files, targets, engine.threads,
                                                   engine.chunk_bytes, options.use_mmap,
                                                   options.cancel));
    for (formats::ForgetWeight& w : weights) AMN_RETURN_IF_ERROR(formats::MakeSideTensors(w));
    report.scheme = formats::ForgetSchemeName(*options.scheme);
    quantization_config = formats::QuantizationConfigJson(*options.scheme, options.fp8_format,
                                                          SkippedModules(out.plan, weights));
  }
  AMN_ASSIGN_OR_RETURN(out.plan, formats::PlanForget(std::move(out.plan), weights, options.cancel));
  AMN_RETURN_IF_ERROR(detail::FinishExtras(out, [&](const std::string& text) {
    return formats::AddQuantizationConfig(text, quantization_config);
  }));
  AMN_RETURN_IF_ERROR(detail::WritePlanned(
      *impl_, path(), out, output, options.overwrite,
      detail::EngineFor(options.threads, options.cancel, options.use_mmap), options.progress));
  // The errors were summed per chunk in file order; report in that order.
  for (const formats::OutputShard& shard : out.plan.shards) {
    for (const formats::OutputTensor& t : shard.tensors) {
      if (t.decode != formats::Decode::kEncode) continue;
      std::string description;
      for (const formats::ForgetWeight& w : weights) {
        if (w.job == t.encode) description = w.description;
      }
      report.tensors.push_back({t.name, description, t.encode->error});
      Accumulate(report.total, t.encode->error);
    }
  }
  report.total_bytes = out.plan.total_bytes;
  report.total_tensors = out.plan.total_tensors;
  for (const formats::OutputShard& shard : out.plan.shards) {
    for (const formats::OutputTensor& t : shard.tensors) {
      const std::string dtype(formats::DtypeName(t.dtype));
      auto it = std::find_if(report.types.begin(), report.types.end(),
                             [&](const DtypeStat& d) { return d.dtype == dtype; });
      if (it == report.types.end()) it = report.types.insert(report.types.end(), {dtype, 0, 0});
      ++it->tensors;
      it->bytes += t.bytes;
    }
  }
  std::stable_sort(report.types.begin(), report.types.end(),
                   [](const DtypeStat& a, const DtypeStat& b) { return a.bytes > b.bytes; });
  return report;
}

fs::path Model::DefaultForgetOutputPath(const fs::path& input, const std::string& scheme_name) {
  fs::path clean = input;
  if (!clean.has_filename()) clean = clean.parent_path();  // "dir/" -> "dir"
  std::error_code error;
  if (!fs::is_directory(clean, error)) {
    return clean.parent_path() / (clean.stem().string() + "-" + scheme_name + ".safetensors");
  }
  return clean.parent_path() / (clean.filename().string() + "-" + scheme_name);
}

}  // namespace amn
