// `amn parse`, `amn inspect` (alias info) and `amn remember` (alias
// dequantize): printing and argument handling around amn::Model.
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "amn/model.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/progress_bar.h"

namespace amn::cli {
namespace {

const std::map<std::string, ElemType> kToTypes = {
    {"bf16", ElemType::kBf16}, {"bfloat16", ElemType::kBf16}, {"f16", ElemType::kF16},
    {"float16", ElemType::kF16}, {"fp16", ElemType::kF16},    {"f32", ElemType::kF32},
    {"float32", ElemType::kF32}, {"fp32", ElemType::kF32}};

std::string TypeLabel(ElemType t) {
  return t == ElemType::kF32 ? "F32" : t == ElemType::kF16 ? "F16" : "BF16";
}

int Fail(const Status& status) {
  std::fprintf(stderr, "amn: %s\n", status.ToString().c_str());
  switch (status.code()) {
    case StatusCode::kInvalidArgument: return kExitUsage;
    case StatusCode::kCancelled: return kExitInterrupted;
    default: return kExitFailure;
  }
}

// Set by SIGINT/SIGTERM while remember runs; the library polls it between
// chunks and removes its temporary output (a lock-free atomic store is
// async-signal-safe).
std::atomic<bool> g_interrupted{false};
static_assert(std::atomic<bool>::is_always_lock_free);
extern "C" void OnInterrupt(int) { g_interrupted.store(true); }

// Routes SIGINT and SIGTERM to g_interrupted for its lifetime.
class InterruptGuard {
 public:
  InterruptGuard() {
    struct sigaction action = {};
    action.sa_handler = OnInterrupt;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, &old_int_);
    sigaction(SIGTERM, &action, &old_term_);
  }
  ~InterruptGuard() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }

 private:
  struct sigaction old_int_ = {}, old_term_ = {};
};

std::string ShapeText(const std::vector<uint64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

void AddToOption(CLI::App* cmd, ElemType& to) {
  cmd->add_option("--to", to, "Output element type: bf16 (default), f16 or f32")
      ->transform(CLI::CheckedTransformer(kToTypes, CLI::ignore_case));
}

struct ParseOptions {
  std::string path;
  bool json = false;
};

int RunParse(const ParseOptions& options) {
  auto model = Model::Open(options.path);
  if (!model.ok()) return Fail(model.status());
  const InspectInfo info = model->Inspect();
  const std::vector<TensorSummary> tensors = model->Tensors();
  if (options.json) {
    nlohmann::json out = {{"path", options.path}, {"format", info.format},
                          {"scheme", info.scheme}, {"shards", info.shards},
                          {"metadata", nlohmann::json::object()},
                          {"tensors", nlohmann::json::array()}};
    for (const MetadataEntry& m : model->Metadata()) {
      out["metadata"][m.key] = {{"type", m.type}, {"value", nlohmann::json::parse(m.json)}};
    }
    for (const TensorSummary& t : tensors) {
      out["tensors"].push_back({{"name", t.name}, {"dtype", t.dtype}, {"shape", t.shape},
                                {"bytes", t.bytes}, {"role", t.role}, {"scheme", t.scheme},
                                {"shard", t.shard}});
    }
    std::printf("%s\n", out.dump(2).c_str());
    return kExitOk;
  }
  std::printf("%s: %s, %zu tensors in %zu file%s\nScheme: %s\n", options.path.c_str(),
              info.format.c_str(), tensors.size(), info.shards, info.shards == 1 ? "" : "s",
              info.scheme.c_str());
  const std::vector<MetadataEntry> metadata = model->Metadata();
  if (!metadata.empty()) std::printf("Metadata (%zu keys):\n", metadata.size());
  for (const MetadataEntry& m : metadata) {
    std::string value = m.json.size() > 72 ? m.json.substr(0, 69) + "..." : m.json;
    std::printf("  %s (%s) = %s\n", m.key.c_str(), m.type.c_str(), value.c_str());
  }
  std::printf("\n");
  size_t width = 4;
  for (const TensorSummary& t : tensors) width = std::max(width, t.name.size());
  std::printf("  %-*s  %-8s %-16s %10s  %s\n", static_cast<int>(width), "name", "dtype", "shape",
              "size", "role");
  for (const TensorSummary& t : tensors) {
    const std::string role = t.scheme.empty() ? t.role : t.role + " (" + t.scheme + ")";
    std::printf("  %-*s  %-8s %-16s %10s  %s\n", static_cast<int>(width), t.name.c_str(),
                t.dtype.c_str(), ShapeText(t.shape).c_str(), FormatBytes(t.bytes).c_str(),
                role.c_str());
  }
  return kExitOk;
}

struct InspectOptions {
  std::string path;
  bool json = false;
  ElemType to = ElemType::kBf16;
};

int RunInspect(const InspectOptions& options) {
  auto model = Model::Open(options.path);
  if (!model.ok()) return Fail(model.status());
  const InspectInfo info = model->Inspect(options.to);
  const uint64_t took = info.remembered_bytes > info.current_bytes
                            ? info.remembered_bytes - info.current_bytes
                            : 0;
  if (options.json) {
    nlohmann::json out = {{"path", options.path}, {"format", info.format},
                          {"scheme", info.scheme}, {"quantized", info.quantized},
                          {"shards", info.shards}, {"sharded", info.sharded},
                          {"quantized_tensors", info.quantized_tensors},
                          {"companion_tensors", info.companion_tensors},
                          {"companion_dtypes", info.companion_dtypes},
                          {"passthrough_tensors", info.passthrough_tensors},
                          {"dropped_tensors", info.dropped_tensors},
                          {"current_bytes", info.current_bytes},
                          {"remembered_bytes", info.remembered_bytes},
                          {"to", TypeLabel(info.to)},
                          {"unsupported", info.unsupported},
                          {"dtypes", [&] {
                             nlohmann::json list = nlohmann::json::array();
                             for (const DtypeStat& d : info.dtypes) {
                               list.push_back({{"dtype", d.dtype}, {"tensors", d.tensors},
                                               {"bytes", d.bytes}});
                             }
                             return list;
                           }()},
                          {"gguf_version", info.gguf_version},
                          {"architecture", info.architecture},
                          {"alignment", info.alignment},
                          {"metadata_keys", info.metadata_keys},
                          {"lethe_took_bytes", took}};
    std::printf("%s\n", out.dump(2).c_str());
    return kExitOk;
  }
  if (info.format == "gguf") {
    std::printf("Format:      GGUF v%u%s, alignment %llu, %zu metadata keys\n", info.gguf_version,
                info.architecture.empty() ? "" : (" (" + info.architecture + ")").c_str(),
                static_cast<unsigned long long>(info.alignment), info.metadata_keys);
  } else {
    std::printf("Format:      %s (%s)\n", info.format.c_str(),
                info.sharded ? (std::to_string(info.shards) + " shards").c_str() : "1 file");
  }
  std::string types;
  for (const DtypeStat& d : info.dtypes) {
    types += (types.empty() ? "" : ", ") + d.dtype + " x" + std::to_string(d.tensors) + " (" +
             FormatBytes(d.bytes) + ")";
  }
  std::printf("Dtypes:      %s\n", types.c_str());
  std::printf("Scheme:      %s\n", info.scheme.c_str());
  std::string companion_dtypes;
  for (const std::string& d : info.companion_dtypes) companion_dtypes += (companion_dtypes.empty() ? "" : ", ") + d;
  if (info.companion_tensors > 0) {
    std::printf("Quantized:   %zu tensors (weights) + %zu companions (%s)\n",
                info.quantized_tensors, info.companion_tensors, companion_dtypes.c_str());
  } else {
    std::printf("Quantized:   %zu tensors (weights)\n", info.quantized_tensors);
  }
  std::printf("Passthrough: %zu tensors (norms, embeddings, ...)\n", info.passthrough_tensors);
  if (info.dropped_tensors > 0) {
    std::printf("Dropped:     %zu tensors (activation / KV-cache scales)\n", info.dropped_tensors);
  }
  if (!info.unsupported.empty()) {
    std::printf("Size:        %s (quantized)\nRemember:    not supported: %s\n",
                FormatBytes(info.current_bytes).c_str(), info.unsupported.c_str());
    return kExitOk;
  }
  std::printf("Size:        %s (%s) -> %s (%s)\n", FormatBytes(info.current_bytes).c_str(),
              info.quantized ? "quantized" : "unquantized", FormatBytes(info.remembered_bytes).c_str(),
              TypeLabel(info.to).c_str());
  if (info.quantized) std::printf("Lethe took:  ~%s of precision\n", FormatBytes(took).c_str());
  return kExitOk;
}

struct RememberCliOptions {
  std::string path;
  std::string output;
  ElemType to = ElemType::kBf16;
  unsigned threads = 0;
  bool force = false;
  bool quiet = false;
};

int RunRemember(const RememberCliOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  auto model = Model::Open(options.path);
  if (!model.ok()) return Fail(model.status());
  const InspectInfo info = model->Inspect(options.to);
  const std::filesystem::path output =
      options.output.empty() ? Model::DefaultOutputPath(options.path, options.to)
                             : std::filesystem::path(options.output);
  if (!options.quiet) {
    std::printf("Parsing...   %zu tensors, %s\n",
                info.quantized_tensors + info.companion_tensors + info.passthrough_tensors +
                    info.dropped_tensors,
                info.scheme.c_str());
    std::printf("Remembering  %s -> %s (%s)\n", options.path.c_str(), output.c_str(),
                TypeLabel(options.to).c_str());
    std::fflush(stdout);
  }
  RememberOptions remember;
  remember.to = options.to;
  remember.threads = options.threads;
  remember.overwrite = options.force;
  remember.cancel = &g_interrupted;
  {
    InterruptGuard interrupts;
    ProgressBar bar(!options.quiet);
    remember.progress = [&bar](const RememberProgress& p) { bar.Update(p); };
    const Status status = model->Remember(output, remember);
    if (!status.ok()) return Fail(status);
  }
  if (!options.quiet) {
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("Output:      %s (%s) in %.1f s\n", output.c_str(),
                FormatBytes(info.remembered_bytes).c_str(), seconds);
  }
  return kExitOk;
}

}  // namespace

Command AddParseCommand(CLI::App& app) {
  auto options = std::make_shared<ParseOptions>();
  CLI::App* cmd = app.add_subcommand(
      "parse", "Parse a .safetensors file, sharded model directory, .gguf file or "
               "ollama:<model>[:tag] and list its metadata and tensors (name, dtype, shape, "
               "size, role)");
  cmd->add_option("path", options->path,
                  "Model: .safetensors file, directory of shards, .gguf file, or ollama:<model>[:tag]")
      ->required();
  cmd->add_flag("--json", options->json, "Print JSON");
  return {cmd, [options] { return RunParse(*options); }};
}

Command AddInspectCommand(CLI::App& app) {
  auto options = std::make_shared<InspectOptions>();
  CLI::App* cmd = app.add_subcommand(
      "inspect", "Summarize a model: format, quantization scheme, tensor counts, size before "
                 "and after remember");
  cmd->alias("info");
  cmd->add_option("path", options->path,
                  "Model: .safetensors file, directory of shards, .gguf file, or ollama:<model>[:tag]")
      ->required();
  cmd->add_flag("--json", options->json, "Print JSON");
  AddToOption(cmd, options->to);
  return {cmd, [options] { return RunInspect(*options); }};
}

Command AddRememberCommand(CLI::App& app) {
  auto options = std::make_shared<RememberCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "remember", "Dequantize a model (FP8 safetensors, GGUF) to plain BF16/F16/F32 safetensors "
                  "(a file, or a directory of shards with its index, config.json and other files)");
  cmd->alias("dequantize");
  cmd->add_option("path", options->path,
                  "Model: .safetensors file, directory of shards, .gguf file, or ollama:<model>[:tag]")
      ->required();
  cmd->add_option("-o,--output", options->output,
                  "Output file or directory (default: the input's name with -FP8 etc. replaced "
                  "by -bf16/-f16/-f32, beside it)");
  AddToOption(cmd, options->to);
  cmd->add_option("-j,--threads", options->threads,
                  "Worker threads (default: every core); the output is identical for any value")
      ->check(CLI::Range(1u, 4096u));
  cmd->add_flag("--force", options->force, "Replace an existing output");
  cmd->add_flag("-q,--quiet", options->quiet, "Print nothing but errors");
  return {cmd, [options] { return RunRemember(*options); }};
}

}  // namespace amn::cli
