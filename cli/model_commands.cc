// `amn parse`, `amn inspect` (alias info) and `amn remember` (alias
// dequantize): printing and argument handling around amn::Model.
#include <signal.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "amn/model.h"
#include "amn/targets.h"
#include "cli/command_support.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/global_options.h"
#include "cli/model_json.h"
#include "cli/name_choice.h"
#include "cli/printable.h"
#include "cli/progress_bar.h"
#include "cli/units.h"
#include "formats/utf8.h"

namespace amn::cli {
namespace {

constexpr const char* kPathHelp =
    "Model: .safetensors file, directory of shards (safetensors, or PyTorch pytorch_model*.bin), "
    ".gguf file, ollama:[host/][namespace/]model[:tag] (e.g. ollama:hf.co/ORG/REPO:TAG), "
    "hf:ORG/NAME[@REV] (local Hugging Face cache), .npy, .npz, .pth/.pt, .bin (the first bytes "
    "decide the format; a known extension must agree with them)";

// --to names (lower-case; NameChoice matches any case).
const std::map<std::string, ElemType> kToTypes = {
    {"bf16", ElemType::kBf16}, {"bfloat16", ElemType::kBf16}, {"f16", ElemType::kF16},
    {"float16", ElemType::kF16}, {"fp16", ElemType::kF16},    {"f32", ElemType::kF32},
    {"float32", ElemType::kF32}, {"fp32", ElemType::kF32}};

std::string TypeLabel(ElemType t) {
  return t == ElemType::kF32 ? "F32" : t == ElemType::kF16 ? "F16" : "BF16";
}

std::string ShapeText(const std::vector<uint64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

// --to: unset means each format's default (BF16 for quantized formats,
// dtypes kept for NPY/NPZ/PyTorch). Read as a name, so CLI11 never prints
// ElemType's byte values.
struct ToOption {
  std::string name;  // a key of kToTypes once validated
  std::optional<ElemType> get() const {
    const auto it = kToTypes.find(name);
    return it != kToTypes.end() ? std::optional(it->second) : std::nullopt;
  }
};

void AddToOption(CLI::App* cmd, ToOption& to, bool& keep_passthrough) {
  std::vector<std::string> names;
  for (const auto& [name, type] : kToTypes) names.push_back(name);
  cmd->add_option("--to", to.name,
                  "Output element type of every float tensor, quantized or not: bf16, f16 or f32. Default: bf16 for quantized "
                  "formats (safetensors, GGUF); NPY/NPZ/PyTorch keep their dtypes "
                  "unless --to converts their float tensors")
      ->type_name("TYPE")
      ->check(NameChoice(std::move(names)));
  cmd->add_flag("--keep-passthrough", keep_passthrough,
                "Convert only quantized weights to --to; every other tensor keeps its dtype");
}

struct ParseOptions {
  std::string path;
  bool json = false;
  LimitOptions limits;
};

int RunParse(const ParseOptions& options) {
  auto model = Model::Open(options.path, options.limits.limits, OpenOptions{options.limits.verify});
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
    std::printf("%s\n", DumpJson(out).c_str());
    return kExitOk;
  }
  std::printf("%s: %s, %zu tensors in %zu file%s\nScheme: %s\n", Printable(options.path).c_str(),
              info.format.c_str(), tensors.size(), info.shards, info.shards == 1 ? "" : "s",
              Printable(info.scheme).c_str());
  const std::vector<MetadataEntry> metadata = model->Metadata();
  if (!metadata.empty()) std::printf("Metadata (%zu keys):\n", metadata.size());
  for (const MetadataEntry& m : metadata) {
    // Cut long values on a character boundary, never inside one.
    std::string value =
        m.json.size() > 72 ? m.json.substr(0, formats::Utf8CutPoint(m.json, 69)) + "..." : m.json;
    std::printf("  %s (%s) = %s\n", Printable(m.key).c_str(), m.type.c_str(), Printable(value).c_str());
  }
  std::printf("\n");
  size_t width = 4;
  for (const TensorSummary& t : tensors) width = std::max(width, t.name.size());
  std::printf("  %-*s  %-8s %-16s %10s  %s\n", static_cast<int>(width), "name", "dtype", "shape",
              "size", "role");
  for (const TensorSummary& t : tensors) {
    const std::string role = t.scheme.empty() ? t.role : t.role + " (" + t.scheme + ")";
    std::printf("  %-*s  %-8s %-16s %10s  %s\n", static_cast<int>(width), Printable(t.name).c_str(),
                t.dtype.c_str(), ShapeText(t.shape).c_str(), FormatBytes(t.bytes).c_str(),
                Printable(role).c_str());
  }
  return kExitOk;
}

struct InspectOptions {
  std::string path;
  bool json = false;
  ToOption to;
  bool keep_passthrough = false;
  LimitOptions limits;
};

int RunInspect(const InspectOptions& options) {
  auto model = Model::Open(options.path, options.limits.limits, OpenOptions{options.limits.verify});
  if (!model.ok()) return Fail(model.status());
  // What remember would leave out.
  for (const std::string& warning : model->Warnings()) {
    std::fprintf(stderr, "amn: warning: %s\n", Printable(warning).c_str());
  }
  const InspectInfo info = model->Inspect(options.to.get(), options.keep_passthrough);
  if (options.json) {
    std::printf("%s\n", DumpJson(InspectJson(options.path, info)).c_str());
    return kExitOk;
  }
  const uint64_t took = info.remembered_bytes > info.current_bytes
                            ? info.remembered_bytes - info.current_bytes
                            : 0;
  if (info.format == "npy" || info.format == "npz" || info.format == "pytorch") {
    std::printf("Format:      %s (%zu arrays)\n",
                info.format == "pytorch" ? "PyTorch zip checkpoint"
                : info.format == "npz"   ? "NumPy .npz archive"
                                         : "NumPy .npy array",
                info.passthrough_tensors);
  } else if (info.format == "gguf") {
    std::printf("Format:      GGUF v%u%s, alignment %llu, %zu metadata keys\n", info.gguf_version,
                info.architecture.empty() ? "" : (" (" + Printable(info.architecture) + ")").c_str(),
                static_cast<unsigned long long>(info.alignment), info.metadata_keys);
  } else {
    std::printf("Format:      %s (%s)\n", info.format.c_str(),
                info.sharded ? (std::to_string(info.shards) + " shards").c_str() : "1 file");
    if (!info.architecture.empty() || !info.model_type.empty()) {
      const std::string type = info.model_type.empty() ? "" : "model_type " + info.model_type;
      std::printf("Model:       %s\n",
                  Printable(info.architecture.empty() ? type
                            : type.empty()            ? info.architecture
                                                      : info.architecture + " (" + type + ")")
                      .c_str());
    }
  }
  std::string types;
  for (const DtypeStat& d : info.dtypes) {
    types += (types.empty() ? "" : ", ") + d.dtype + " x" + std::to_string(d.tensors) + " (" +
             FormatBytes(d.bytes) + ")";
  }
  std::printf("Dtypes:      %s\n", types.c_str());
  std::printf("Scheme:      %s\n", Printable(info.scheme).c_str());
  std::string companion_dtypes;
  for (const std::string& d : info.companion_dtypes) companion_dtypes += (companion_dtypes.empty() ? "" : ", ") + d;
  if (info.companion_tensors > 0) {
    std::printf("Quantized:   %zu tensors (weights) + %zu companions (%s)\n",
                info.quantized_tensors, info.companion_tensors, companion_dtypes.c_str());
  } else {
    std::printf("Quantized:   %zu tensors (weights)\n", info.quantized_tensors);
  }
  if (info.converted_tensors > 0 && info.to) {
    std::printf("Passthrough: %zu tensors (norms, embeddings, ...), %zu of them converted to %s\n",
                info.passthrough_tensors, info.converted_tensors, TypeLabel(*info.to).c_str());
  } else {
    std::printf("Passthrough: %zu tensors (norms, embeddings, ...)\n", info.passthrough_tensors);
  }
  if (info.dropped_tensors > 0) {
    std::printf("Dropped:     %zu tensors (activation / KV-cache scales)\n", info.dropped_tensors);
  }
  if (!info.unsupported.empty()) {
    std::printf("Size:        %s (quantized)\nRemember:    not supported: %s\n",
                FormatBytes(info.current_bytes).c_str(), Printable(info.unsupported).c_str());
    return kExitOk;
  }
  std::printf("Size:        %s (%s) -> %s (%s)\n", FormatBytes(info.current_bytes).c_str(),
              info.quantized ? "quantized" : "unquantized", FormatBytes(info.remembered_bytes).c_str(),
              info.to ? TypeLabel(*info.to).c_str() : "dtypes kept");
  if (info.quantized) std::printf("Lethe took:  ~%s of precision\n", FormatBytes(took).c_str());
  return kExitOk;
}

struct RememberCliOptions {
  std::string path;
  std::string output;
  ToOption to;
  bool keep_passthrough = false;
  LimitOptions limits;
  bool force = false;
  bool quiet = false;
  bool no_mmap = false;
  bool json = false;
};

int RunRemember(const RememberCliOptions& options, const GlobalOptions& globals) {
  const auto start = std::chrono::steady_clock::now();
  auto model = Model::Open(options.path, options.limits.limits, OpenOptions{options.limits.verify});
  if (!model.ok()) return Fail(model.status());
  // Even with -q: something of the input is left out of the output.
  for (const std::string& warning : model->Warnings()) {
    std::fprintf(stderr, "amn: warning: %s\n", Printable(warning).c_str());
  }
  const InspectInfo info = model->Inspect(options.to.get(), options.keep_passthrough);
  const std::filesystem::path output =
      options.output.empty() ? Model::DefaultOutputPath(options.path, info.to)
                             : std::filesystem::path(options.output);
  const bool text = !options.quiet && !options.json;
  if (text) {
    std::printf("Parsing...   %zu tensors, %s\n",
                info.quantized_tensors + info.companion_tensors + info.passthrough_tensors +
                    info.dropped_tensors,
                Printable(info.scheme).c_str());
    std::printf("Remembering  %s -> %s (%s)\n", Printable(options.path).c_str(),
                Printable(output.string()).c_str(),
                info.to ? TypeLabel(*info.to).c_str() : "dtypes kept");
    std::fflush(stdout);
  }
  RememberOptions remember;
  remember.to = info.to;
  remember.keep_passthrough = options.keep_passthrough;
  remember.threads = globals.threads;
  remember.overwrite = options.force;
  remember.use_mmap = !options.no_mmap;
  remember.cancel = &g_interrupted;
  RememberProgress last;  // the plan's totals once the engine reports
  {
    InterruptGuard interrupts;
    ProgressBar bar(!options.quiet);
    remember.progress = [&bar, &last](const RememberProgress& p) {
      last = p;
      bar.Update(p);
    };
    const Status status = model->Remember(output, remember);
    if (!status.ok()) return Fail(status);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (options.json) {
    RememberSummary summary;
    summary.input = options.path;
    summary.output = output;
    summary.to = info.to ? TypeLabel(*info.to) : "kept";
    summary.target = std::string(TargetName(ActiveTarget()));
    summary.tensors = last.tensors_total;
    summary.shard_bytes = last.bytes_total;
    summary.seconds = seconds;
    std::printf("%s\n", DumpJson(RememberJson(summary)).c_str());
  } else if (text) {
    std::printf("Output:      %s (%s) in %.1f s\n", Printable(output.string()).c_str(),
                FormatBytes(info.remembered_bytes).c_str(), seconds);
  }
  return kExitOk;
}

}  // namespace

Command AddParseCommand(CLI::App& app) {
  auto options = std::make_shared<ParseOptions>();
  CLI::App* cmd = app.add_subcommand(
      "parse", "Parse a .safetensors file, sharded model directory, .gguf file, "
               "ollama: or hf: name, .npy/.npz file or PyTorch .pth/.pt/.bin checkpoint and list its "
               "metadata and tensors (name, dtype, shape, size, role)");
  cmd->add_option("path", options->path,
                  kPathHelp)
      ->required();
  cmd->add_flag("--json", options->json, "Print JSON");
  AddLimitOptions(cmd, options->limits);
  return {cmd, [options] { return RunParse(*options); }};
}

Command AddInspectCommand(CLI::App& app) {
  auto options = std::make_shared<InspectOptions>();
  CLI::App* cmd = app.add_subcommand(
      "inspect", "Summarize a model: format, quantization scheme, tensor counts, size before "
                 "and after remember");
  cmd->alias("info");
  cmd->add_option("path", options->path,
                  kPathHelp)
      ->required();
  cmd->add_flag("--json", options->json, "Print JSON");
  AddToOption(cmd, options->to, options->keep_passthrough);
  AddLimitOptions(cmd, options->limits);
  return {cmd, [options] { return RunInspect(*options); }};
}

Command AddRememberCommand(CLI::App& app, const GlobalOptions& globals) {
  auto options = std::make_shared<RememberCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "remember", "Dequantize a model (quantized safetensors, GGUF) to plain BF16/F16/F32 "
                  "safetensors (a file, or a directory of shards with its index, config.json and "
                  "other files), or convert a .npy/.npz/.pth/.pt file to safetensors, dtypes kept");
  cmd->alias("dequantize");
  cmd->add_option("path", options->path,
                  kPathHelp)
      ->required();
  cmd->add_option("-o,--output", options->output,
                  "Output file or directory (default: the input's name with -FP8 etc. replaced "
                  "by -bf16/-f16/-f32, beside it; NPY/NPZ/PyTorch: the same stem .safetensors)");
  AddToOption(cmd, options->to, options->keep_passthrough);
  cmd->add_flag("--force", options->force,
                "Replace an existing output (in an existing directory, only the files amn "
                "writes: its shards, index, config and copied side files)");
  cmd->add_flag("--no-mmap", options->no_mmap,
                "Never memory-map the input: read it with pread (one tensor at a time in "
                "memory for packed schemes); for untrusted or changing files");
  cmd->add_flag("-q,--quiet", options->quiet, "Print nothing but errors");
  cmd->add_flag("--json", options->json,
                "Print a JSON summary on stdout instead of text: files, tensors, bytes written, "
                "seconds, output type and ISA target");
  AddLimitOptions(cmd, options->limits);
  return {cmd, [options, &globals] { return RunRemember(*options, globals); }};
}

}  // namespace amn::cli
