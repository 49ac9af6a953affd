// `amn convert`: a model (anything remember reads) written in another
// container: safetensors (remember's path) or GGUF (docs/cli.md).
#include <cctype>
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
#include "cli/convert_run.h"
#include "cli/lethe_report.h"
#include "cli/units.h"

namespace amn::cli {
namespace {

const char* FormatName(ConvertFormat format) {
  switch (format) {
    case ConvertFormat::kGguf: return "gguf";
    case ConvertFormat::kNpz: return "npz";
    case ConvertFormat::kSafetensors: break;
  }
  return "safetensors";
}

}  // namespace

bool IsGgmlSchemeName(const std::string& name) {
  std::string lower = name;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower == "mxfp4" || lower.starts_with("mostly_") || lower.starts_with("iq") || lower.starts_with("tq") ||
         (lower.size() >= 3 && lower[0] == 'q' && std::isdigit(static_cast<unsigned char>(lower[1])) &&
          lower[2] == '_');
}

int RunConvert(const ConvertCliOptions& options, const GlobalOptions& globals) {
  const auto start = std::chrono::steady_clock::now();
  ConvertOptions convert;
  convert.format = options.to.empty() ? Model::ConvertFormatFor(options.output)
                   : options.to == "gguf" ? ConvertFormat::kGguf
                   : options.to == "npz"  ? ConvertFormat::kNpz
                                          : ConvertFormat::kSafetensors;
  auto model = Model::Open(options.path, options.limits.limits, OpenOptions{options.limits.verify});
  if (!model.ok()) return Fail(model.status());
  for (const std::string& warning : model->Warnings()) {
    std::fprintf(stderr, "amn: warning: %s\n", Printable(warning).c_str());
  }
  convert.scheme = options.scheme;
  convert.gguf_metadata = options.gguf_metadata;
  convert.gguf_kv = options.gguf_kv;
  convert.imatrix = options.imatrix;
  convert.tensor_types = options.tensor_types;
  convert.threads = globals.threads;
  convert.overwrite = options.force;
  convert.use_mmap = !options.no_mmap;
  convert.cancel = &g_interrupted;
  const bool text = !options.quiet && !options.json;
  if (text) {
    std::printf("Converting   %s -> %s (%s)\n", Printable(options.path).c_str(),
                Printable(options.output).c_str(), FormatName(convert.format));
    std::fflush(stdout);
  }
  Result<ConvertReport> report = Status::Ok();
  {
    InterruptGuard interrupts;
    ProgressBar bar(!options.quiet);
    convert.progress = [&bar](const RememberProgress& p) { bar.Update(p); };
    report = model->Convert(options.output, convert);
  }
  if (!report.ok()) return Fail(report.status());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (options.json) {
    nlohmann::json types = nlohmann::json::object();
    for (const DtypeStat& t : report->types) {
      types[t.dtype] = {{"tensors", t.tensors}, {"bytes", t.bytes}};
    }
    nlohmann::json out = {{"input", options.path}, {"output", options.output},
                          {"format", FormatName(report->format)}, {"scheme", report->scheme},
                          {"target", std::string(TargetName(ActiveTarget()))},
                          {"tensors_written", report->total_tensors},
                          {"bytes_written", report->total_bytes}, {"types", types},
                          {"seconds", seconds}};
    if (report->format == ConvertFormat::kGguf) {
      out["metadata_keys"] = report->metadata_keys;
      out["architecture"] = report->architecture;
      out["renamed_tensors"] = report->renamed_tensors;
    }
    if (!options.imatrix.empty()) {
      out["imatrix"] = {{"file", options.imatrix}, {"tensors", report->imatrix_tensors}};
    }
    if (!report->quantized.empty()) {
      out["quantized"] = nlohmann::json::array();
      for (const ForgetTensorReport& t : report->quantized) {
        nlohmann::json entry = {{"name", t.name}, {"type", t.scheme}};
        entry.update(LetheJson(t.error));
        out["quantized"].push_back(std::move(entry));
      }
      out.update(LetheJson(report->quant_total));
    }
    if (!report->quantized.empty() || !report->fallbacks.empty()) {
      out["fallbacks"] = nlohmann::json::array();
      for (const ConvertFallback& f : report->fallbacks) {
        out["fallbacks"].push_back({{"name", f.name}, {"type", f.type}, {"reason", f.reason}});
      }
    }
    std::printf("%s\n", DumpJson(out).c_str());
    return kExitOk;
  }
  if (text) {
    for (const DtypeStat& t : report->types) {
      std::printf("  %-6s %6zu tensors  %s\n", t.dtype.c_str(), t.tensors, FormatBytes(t.bytes).c_str());
    }
    for (const ConvertFallback& f : report->fallbacks) {
      std::printf("Fallback:    %s -> %s (%s)\n", Printable(f.name).c_str(), f.type.c_str(),
                  Printable(f.reason).c_str());
    }
    if (!report->quantized.empty()) {
      const QuantError& total = report->quant_total;
      std::printf("Quantized:   %zu tensors\n", report->quantized.size());
      if (!options.imatrix.empty()) {
        std::printf("Imatrix:     %zu of them from %s (the rest had no entry)\n",
                    report->imatrix_tensors, Printable(options.imatrix).c_str());
      }
      PrintLethe(total);
    }
    std::printf("Output:      %s (%s, %zu tensors) in %.1f s\n", Printable(options.output).c_str(),
                FormatBytes(report->total_bytes).c_str(), report->total_tensors, seconds);
  }
  return kExitOk;
}

Command AddConvertCommand(CLI::App& app, const GlobalOptions& globals) {
  auto options = std::make_shared<ConvertCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "convert",
      "Write a model (anything remember reads; quantized ones dequantized in the same "
      "streaming pass) as safetensors or as a GGUF v3 file with F32, F16, BF16 or "
      "quantized (q8_0, q4_k, ...) weights, or as an NPZ (numpy.savez's layout)");
  cmd->add_option("path", options->path, "Model to convert")->required();
  cmd->add_option("-o,--output", options->output,
                  "Output: a .gguf file, a .npz file, a .safetensors file or a directory of shards")
      ->required();
  cmd->add_option("--to", options->to,
                  "Output container: gguf, safetensors or npz (default: from the output's "
                  "extension, .gguf or .npz, else safetensors); npz floats are f32 (default) or f16")
      ->type_name("FORMAT")
      ->check(NameChoice({"gguf", "safetensors", "npz"}));
  cmd->add_option("--scheme", options->scheme,
                  "Float type of the weights: f32, f16 or bf16 (default f16 for GGUF, bf16 for "
                  "safetensors). GGUF keeps 1-D tensors (norms, biases) in F32 as llama.cpp does. "
                  "GGUF also takes a ggml type: q4_0 q4_1 q5_0 q5_1 q8_0 iq4_nl mxfp4 tq1_0 tq2_0 "
                  "nvfp4 q1_0 q2_0 q2_k q3_k q4_k q5_k q6_k iq4_xs iq3_xxs iq3_s (with --imatrix: iq2_xxs iq2_xs iq2_s "
                  "iq1_s iq1_m), for every tensor llama-quantize quantizes "
                  "(as its --pure does), or llama-quantize's mixtures, its per-tensor types and "
                  "general.file_type: q3_k_s q3_k_m q3_k_l q4_k_s q4_k_m q5_k_s q5_k_m, and "
                  "mostly_q2_k, mostly_q6_k (Q2_K and Q6_K: q2_k, q6_k are the pure types). Safetensors "
                  "output also takes a forget scheme (nf4, nf4-dq, fp4, fp4-dq, int8, fp8, "
                  "fp8-per-channel, fp8-fine-grained): forget's own run and bytes. Quantized inputs "
                  "are dequantized to F32 in the same pass")
      ->type_name("S");
  cmd->add_option("--gguf-kv", options->gguf_kv,
                  "Add or override a GGUF metadata key (repeatable): key=value, typed as bool "
                  "(true/false), u32/i32/u64/i64 (integers), f32 (decimals) or string; key=TYPE:value "
                  "forces u8 i8 u16 i16 u32 i32 u64 i64 f32 f64 bool str")
      ->type_name("KEY=VALUE");
  cmd->add_option("--gguf-metadata", options->gguf_metadata,
                  "Add or override GGUF metadata from a JSON object (key: value; arrays allowed; "
                  "{\"type\": \"u16\", \"value\": 7} forces a type), applied before --gguf-kv")
      ->type_name("FILE.json");
  cmd->add_option("--imatrix", options->imatrix,
                  "With a ggml --scheme: llama.cpp's importance matrix (llama-imatrix's GGUF or "
                  "legacy .dat), looked up by GGUF tensor name as llama-quantize does: a tensor "
                  "without an entry is quantized without one (iq2_*, iq1_*: refused, as "
                  "llama-quantize does); an entry of the wrong length is an "
                  "error (token_embd.weight: ignored). Q8_0, MXFP4, TQ1_0, TQ2_0, "
                  "NVFP4, Q1_0 and Q2_0 do not use it")
      ->type_name("FILE");
  cmd->add_option("--tensor-type", options->tensor_types,
                  "With a quantized --scheme (repeatable), as llama-quantize's --tensor-type: "
                  "tensors whose GGUF name the regex (lowercased, searched, ECMAScript) matches get "
                  "TYPE (q8_0, q6_k, f16, ...) instead of the scheme's choice; the first match "
                  "wins; rows TYPE's block does not divide fall back as llama-quantize does")
      ->type_name("REGEX=TYPE");
  cmd->add_flag("--force", options->force, "Replace an existing output");
  cmd->add_flag("--no-mmap", options->no_mmap, "Never memory-map the input: read it with pread");
  cmd->add_flag("-q,--quiet", options->quiet, "Print nothing but errors");
  cmd->add_flag("--json", options->json,
                "Print a JSON summary: format, scheme, tensors and bytes written, per written "
                "type its tensor count and bytes; for GGUF the metadata key count and architecture; "
                "with --imatrix the file and how many tensors used it");
  AddLimitOptions(cmd, options->limits);
  return {cmd, [options, &globals] { return RunConvert(*options, globals); }};
}

}  // namespace amn::cli
