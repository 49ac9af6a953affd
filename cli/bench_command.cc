// `amn bench`: every kernel on every supported target at the two sizes of
// DESIGN.md §8, against the memory floors measured in the same run and the
// scalar reference. The measuring code lives in perf/measure.h.
#include <unistd.h>

#include <cstdio>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "amn/targets.h"
#include "amn/version.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/printable.h"
#include "cli/progress_bar.h"
#include "perf/cpu_description.h"
#include "perf/measure.h"

namespace amn::cli {
namespace {

struct BenchOptions {
  bool quick = false;
  bool json = false;
  bool quiet = false;
  bool isa_all = false;
  std::string kernel;
  int reps = 5;
};

nlohmann::json OrNull(size_t value) { return value == 0 ? nlohmann::json() : nlohmann::json(value); }

nlohmann::json ToJson(const perf::BenchReport& report, const perf::CpuDescription& cpu) {
  nlohmann::json out;
  out["amn_version"] = AMN_VERSION_STRING;
  // Enough to tell machines apart when a fleet's runs are compared.
  out["cpu"] = {{"model", cpu.model.empty() ? nlohmann::json() : nlohmann::json(cpu.model)},
                {"llc_bytes", OrNull(cpu.llc_bytes)},
                {"llc_level", OrNull(static_cast<size_t>(cpu.llc_level))},
                {"llc_source", cpu.llc_source.empty() ? nlohmann::json() : nlohmann::json(cpu.llc_source)}};
  out["active_target"] = std::string(TargetName(ActiveTarget()));
  out["isa_all"] = report.config.every_supported_target;
  out["targets"] = report.targets;
  out["threads"] = 1;
  out["reps"] = report.config.reps;
  out["cache_elems"] = report.config.cache_elems;
  out["stream_elems"] = report.config.stream_elems;
  out["floors"] = {{"write_gbps", report.floors.write_gbps},
                   {"copy_traffic_gbps", report.floors.copy_traffic_gbps},
                   {"l2_write_gbps", report.floors.l2_write_gbps},
                   {"floor_bytes", report.floors.floor_bytes},
                   {"l2_bytes", perf::kL2Bytes},
                   {"method",
                    {{"write_gbps", "memset of floor_bytes, median of reps, 1e9 bytes/s"},
                     {"copy_traffic_gbps",
                      "memcpy of floor_bytes, read + write bytes counted, median of reps"},
                     {"l2_write_gbps", "memset of an l2_bytes buffer, median of at least 5"},
                     {"stream_floor",
                      "max(out bytes / write_gbps, (in + out bytes) / copy_traffic_gbps)"},
                     {"cache_floor", "out bytes / l2_write_gbps"}}}};
  out["results"] = nlohmann::json::array();
  for (const perf::BenchRow& row : report.rows) {
    out["results"].push_back({{"kernel", row.kernel},
                              {"target", row.target},
                              {"size", row.size},
                              {"n_elems", row.n_elems},
                              {"ns_per_elem", row.ns_per_elem},
                              {"ns_per_elem_min", row.timing.min_ns / row.n_elems},
                              {"ns_per_elem_max", row.timing.max_ns / row.n_elems},
                              {"gbps", row.gbps},
                              {"floor_ns_per_elem", row.floor_ns_per_elem},
                              {"ratio_to_floor", row.ratio_to_floor},
                              {"speedup_vs_reference", row.speedup_vs_reference}});
  }
  return out;
}

void PrintTable(const perf::BenchReport& report, const perf::CpuDescription& cpu) {
  const perf::Floors& f = report.floors;
  std::printf("amn bench: one thread, median of %d runs; cache = %zu elements, stream = %zu "
              "elements\n",
              report.config.reps, report.config.cache_elems, report.config.stream_elems);
  for (const perf::BenchRow& row : report.rows) {
    if (row.size == "stream" && row.n_elems != report.config.stream_elems) {
      std::printf("(compute-bound kernels, e.g. %s, stream %zu elements: at their speed the "
                  "size does not change ns per element; --json gives each row's n_elems)\n",
                  row.kernel.c_str(), row.n_elems);
      break;
    }
  }
  if (report.config.every_supported_target) {
    // --isa-all only, so the default table stays as it was.
    std::printf("cpu: %s; last-level cache %s\n", cpu.model.empty() ? "unknown" : cpu.model.c_str(),
                cpu.llc_bytes == 0 ? "unknown"
                                   : (std::to_string(cpu.llc_bytes >> 10) + " KiB (L" +
                                      std::to_string(cpu.llc_level) + ")").c_str());
    std::string names;
    for (const std::string& name : report.targets) names += " " + name;
    std::printf("targets (--isa-all: every one this CPU supports, cap ignored):%s\n",
                names.c_str());
  }
  std::printf("floors: write %.1f GB/s (memset %zu MiB), copy %.1f GB/s read+write (memcpy), "
              "L2 write %.1f GB/s (memset 256 KiB)\n",
              f.write_gbps, f.floor_bytes >> 20, f.copy_traffic_gbps, f.l2_write_gbps);
  std::printf("x floor = time / floor time (1.0 is the memory limit); x ref = speed-up over the "
              "scalar reference\n\n");
  std::printf("%-20s %-10s | %9s %7s %7s %7s | %9s %7s %7s %7s\n", "kernel", "target",
              "cache ns", "GB/s", "x floor", "x ref", "stream ns", "GB/s", "x floor", "x ref");
  // Rows arrive kernel by kernel, cache then stream; pair them by target.
  std::map<std::pair<std::string, std::string>, const perf::BenchRow*> stream;
  for (const perf::BenchRow& row : report.rows) {
    if (row.size == "stream") stream[{row.kernel, row.target}] = &row;
  }
  std::string last_kernel;
  for (const perf::BenchRow& row : report.rows) {
    if (row.size != "cache") continue;
    const perf::BenchRow* s = stream[{row.kernel, row.target}];
    std::printf("%-20s %-10s | %9.4f %7.1f %7.2f %7.1f | ",
                row.kernel == last_kernel ? "" : row.kernel.c_str(), row.target.c_str(),
                row.ns_per_elem, row.gbps, row.ratio_to_floor, row.speedup_vs_reference);
    if (s != nullptr) {
      std::printf("%9.4f %7.1f %7.2f %7.1f\n", s->ns_per_elem, s->gbps, s->ratio_to_floor,
                  s->speedup_vs_reference);
    } else {
      std::printf("%9s\n", "-");
    }
    last_kernel = row.kernel;
  }
}

int RunBench(const BenchOptions& options) {
  perf::BenchConfig config = options.quick ? perf::BenchConfig::Quick() : perf::BenchConfig();
  config.kernel_filter = options.kernel;
  config.reps = options.reps;
  config.every_supported_target = options.isa_all;
  const bool show_progress = !options.quiet && isatty(STDERR_FILENO);
  size_t step = 0;
  const perf::BenchReport report = perf::RunBench(config, [&](const std::string& what) {
    if (show_progress) DrawStatusLine("[" + std::to_string(++step) + "] " + what);
  });
  if (show_progress) ClearStatusLine();
  if (report.rows.empty()) {
    std::fprintf(stderr, "amn: bench: no kernel matches --kernel '%s'\n",
                 Printable(options.kernel).c_str());
    return kExitUsage;
  }
  const perf::CpuDescription cpu = perf::DescribeCpu();
  if (options.json) {
    std::printf("%s\n", ToJson(report, cpu).dump(2).c_str());
  } else {
    PrintTable(report, cpu);
  }
  return kExitOk;
}

}  // namespace

Command AddBenchCommand(CLI::App& app) {
  auto options = std::make_shared<BenchOptions>();
  CLI::App* cmd = app.add_subcommand(
      "bench",
      "Time every kernel on every allowed target (--isa-all: every supported one), one thread, at 65,536 elements "
      "(cache-resident) and 4096x11008 (streaming), against memory floors measured in the "
      "same run and the scalar reference");
  cmd->add_flag("--quick", options->quick,
                "Streaming size 2^23 elements and 64 MiB floor buffers: seconds, not a minute");
  cmd->add_flag("--json", options->json,
                "Print JSON instead of a table: CPU model and last-level cache, the floors and "
                "how they were measured, one record per kernel x target x size");
  cmd->add_flag("--isa-all", options->isa_all,
                "Every target this CPU supports, also those above the cap set by --isa or "
                "AMN_ISA (which otherwise limits the targets timed)");
  cmd->add_option("--kernel", options->kernel,
                  "Only kernels whose name contains this text (e.g. bf16, e4m3_to)");
  cmd->add_option("--reps", options->reps, "Timed runs per measurement; the median is reported")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->add_flag("-q,--quiet", options->quiet, "No progress on the terminal");
  return {cmd, [options] { return RunBench(*options); }};
}

}  // namespace amn::cli
