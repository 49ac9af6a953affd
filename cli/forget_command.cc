// `amn forget` (alias quantize): a plain model written quantized, and what
// Lethe took from it (the Lethe distance, max abs error, relative RMSE).
#include <cctype>
#include <chrono>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "amn/model.h"
#include "amn/targets.h"
#include "cli/command_support.h"
#include "cli/convert_run.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/global_options.h"
#include "cli/model_json.h"
#include "cli/name_choice.h"
#include "cli/printable.h"
#include "cli/progress_bar.h"
#include "cli/lethe_report.h"
#include "cli/units.h"

namespace amn::cli {
namespace {

const std::map<std::string, ForgetScheme> kSchemes = {
    {"fp8", ForgetScheme::kFp8},   {"fp8-per-channel", ForgetScheme::kFp8PerChannel},
    {"fp8-fine-grained", ForgetScheme::kFp8FineGrained},
    {"nf4", ForgetScheme::kNf4},   {"nf4-dq", ForgetScheme::kNf4Dq},
    {"fp4", ForgetScheme::kFp4},   {"fp4-dq", ForgetScheme::kFp4Dq},
    {"int8", ForgetScheme::kInt8}};

struct ForgetCliOptions {
  std::string path, output, scheme, fp8_format = "e4m3", only, skip, like;
  uint64_t block_size = 64;
  LimitOptions limits;
  bool force = false, quiet = false, no_mmap = false, json = false;
};

// forget --scheme <ggml type>: the GGUF `amn convert --scheme` writes, by
// the same code (docs/cli.md); the bitsandbytes/FP8 options do not apply.
int ForgetToGguf(const ForgetCliOptions& options, const GlobalOptions& globals) {
  const char* stray = !options.like.empty()           ? "--like"
                      : !options.only.empty()         ? "--only"
                      : !options.skip.empty()         ? "--skip"
                      : options.fp8_format != "e4m3"  ? "--fp8-format"
                      : options.block_size != 64      ? "--block-size"
                                                      : nullptr;
  if (stray != nullptr) {
    std::fprintf(stderr, "amn: error: %s does not apply to the ggml type %s (GGUF output)\n",
                 stray, Printable(options.scheme).c_str());
    return kExitUsage;
  }
  ConvertCliOptions convert;
  convert.path = options.path;
  convert.to = "gguf";
  convert.scheme = options.scheme;
  convert.limits = options.limits;
  convert.force = options.force;
  convert.quiet = options.quiet;
  convert.no_mmap = options.no_mmap;
  convert.json = options.json;
  convert.output = options.output;
  if (convert.output.empty()) {  // model-q4_k.gguf beside the input
    std::filesystem::path out = Model::DefaultForgetOutputPath(options.path, options.scheme);
    if (out.extension() == ".safetensors") out.replace_extension();
    convert.output = out.string() + ".gguf";
  }
  return RunConvert(convert, globals);
}

int RunForget(const ForgetCliOptions& options, const GlobalOptions& globals) {
  if (IsGgmlSchemeName(options.scheme)) return ForgetToGguf(options, globals);
  const auto start = std::chrono::steady_clock::now();
  auto model = Model::Open(options.path, options.limits.limits, OpenOptions{options.limits.verify});
  if (!model.ok()) return Fail(model.status());
  for (const std::string& warning : model->Warnings()) {
    std::fprintf(stderr, "amn: warning: %s\n", Printable(warning).c_str());
  }
  ForgetOptions forget;
  if (!options.scheme.empty()) forget.scheme = kSchemes.at(options.scheme);
  forget.fp8_format = options.fp8_format == "e5m2" ? Fp8Format::kE5m2 : Fp8Format::kE4m3;
  forget.block_size = options.block_size;
  forget.only = options.only;
  forget.skip = options.skip;
  forget.like = options.like;
  forget.threads = globals.threads;
  forget.overwrite = options.force;
  forget.use_mmap = !options.no_mmap;
  forget.cancel = &g_interrupted;
  const std::string label = options.scheme.empty() ? "like" : options.scheme;
  const std::filesystem::path output = options.output.empty()
                                           ? Model::DefaultForgetOutputPath(options.path, label)
                                           : std::filesystem::path(options.output);
  const bool text = !options.quiet && !options.json;
  if (text) {
    std::printf("Forgetting   %s -> %s (%s)\n", Printable(options.path).c_str(),
                Printable(output.string()).c_str(),
                options.scheme.empty() ? ("like " + Printable(options.like)).c_str()
                                       : options.scheme.c_str());
    std::fflush(stdout);
  }
  Result<ForgetReport> report = Status::Ok();
  {
    InterruptGuard interrupts;
    ProgressBar bar(!options.quiet);
    forget.progress = [&bar](const RememberProgress& p) { bar.Update(p); };
    report = model->Forget(output, forget);
  }
  if (!report.ok()) return Fail(report.status());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const QuantError& total = report->total;
  if (options.json) {
    nlohmann::json out = {{"input", options.path}, {"output", output.string()},
                          {"scheme", report->scheme},
                          {"target", std::string(TargetName(ActiveTarget()))},
                          {"quantized_tensors", report->tensors.size()},
                          {"tensors_written", report->total_tensors},
                          {"shard_bytes", report->total_bytes}, {"seconds", seconds},
                          {"tensors", nlohmann::json::array()}};
    out.update(LetheJson(total));
    for (const ForgetTensorReport& t : report->tensors) {
      nlohmann::json entry = {{"name", t.name}, {"scheme", t.scheme}};
      entry.update(LetheJson(t.error));
      out["tensors"].push_back(std::move(entry));
    }
    std::printf("%s\n", DumpJson(out).c_str());
    return kExitOk;
  }
  if (text) {
    std::printf("Quantized:   %zu %s (%s) of %zu written\n", report->tensors.size(),
                report->tensors.size() == 1 ? "tensor" : "tensors",
                report->tensors.empty() ? "" : Printable(report->tensors.front().scheme).c_str(),
                report->total_tensors);
    PrintLethe(total);
    std::printf("Output:      %s (%s) in %.1f s\n", Printable(output.string()).c_str(),
                FormatBytes(report->total_bytes).c_str(), seconds);
  }
  return kExitOk;
}

}  // namespace

Command AddForgetCommand(CLI::App& app, const GlobalOptions& globals) {
  auto options = std::make_shared<ForgetCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "forget", "Quantize a plain model (BF16/F16/F32 safetensors file or directory, .npz, "
                ".pth, unquantized GGUF) to FP8 or bitsandbytes NF4/FP4/INT8 safetensors in the "
                "layout their loaders read, and print what Lethe took (the Lethe distance: mean "
                "absolute error, with max abs error and relative RMSE)");
  cmd->alias("quantize");
  cmd->add_option("path", options->path, "Model to quantize (a quantized one is dequantized to F32 in the same pass)")
      ->required();
  cmd->add_option("-o,--output", options->output,
                  "Output file or directory (default: the input's name with -SCHEME, beside it)");
  std::vector<std::string> names;
  for (const auto& [name, scheme] : kSchemes) names.push_back(name);
  cmd->add_option("--scheme", options->scheme,
                  "fp8 (one scale per tensor), fp8-per-channel (one per row), fp8-fine-grained "
                  "(128x128 blocks, weight_scale_inv), nf4, nf4-dq, fp4, fp4-dq (bitsandbytes "
                  "4-bit; -dq: double quant), int8 (bitsandbytes LLM.int8); or a ggml type "
                  "(q4_0 q4_1 q5_0 q5_1 q8_0 iq4_nl mxfp4 tq1_0 tq2_0 nvfp4 q1_0 q2_0 q2_k q3_k q4_k "
                  "q5_k q6_k iq4_xs iq3_xxs iq3_s, with --imatrix iq2_xxs iq2_xs iq2_s iq1_s iq1_m) or a llama-quantize mixture (q3_k_s ... q5_k_m, mostly_q2_k, "
                  "mostly_q6_k): a GGUF file, the same as amn convert -o OUT.gguf --scheme S writes")
      ->type_name("SCHEME")
      // A ggml block type writes a GGUF through convert's path (RunForget).
      ->check(CLI::Validator(
          [choice = NameChoice(names)](std::string& value) -> std::string {
            return IsGgmlSchemeName(value) ? std::string() : choice(value);
          },
          ""));
  cmd->add_option("--fp8-format", options->fp8_format, "FP8 codes: e4m3 (default) or e5m2")
      ->type_name("FORMAT")
      ->check(NameChoice({"e4m3", "e5m2"}));
  cmd->add_option("--block-size", options->block_size,
                  "bitsandbytes 4-bit block size (even, default 64)")
      ->type_name("N");
  cmd->add_option("--only", options->only,
                  "Quantize exactly the tensors whose names match this regex (default: the 2-D "
                  "weights of linear layers; embeddings, lm_head, norms and biases stay)")
      ->type_name("REGEX");
  cmd->add_option("--skip", options->skip, "Leave the tensors whose names match this regex as they are")
      ->type_name("REGEX");
  cmd->add_option("--like", options->like,
                  "Re-encode with the scheme and side tensors (scales, absmax, nested state, SCB) "
                  "of this quantized safetensors model: forget (remember M) --like M gives M's "
                  "codes back byte for byte")
      ->type_name("MODEL")
      ->excludes("--scheme");
  cmd->add_flag("--force", options->force, "Replace an existing output");
  cmd->add_flag("--no-mmap", options->no_mmap, "Never memory-map the input: read it with pread");
  cmd->add_flag("-q,--quiet", options->quiet, "Print nothing but errors");
  cmd->add_flag("--json", options->json,
                "Print a JSON summary: scheme, totals and, per quantized tensor, elements, "
                "lethe_distance, max_abs_error and relative_rmse");
  AddLimitOptions(cmd, options->limits);
  return {cmd, [options, &globals] { return RunForget(*options, globals); }};
}

}  // namespace amn::cli
