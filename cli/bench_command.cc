// `amn bench`: every kernel on every supported target at the two sizes of
// DESIGN.md §8, against memory floors measured between the kernels of the
// same run, and the scalar reference. The measuring code lives in
// perf/measure.h.
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

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

constexpr uint64_t kLlcFromCpu = ~uint64_t{0};

struct BenchOptions {
  bool quick = false;
  bool json = false;
  bool quiet = false;
  bool isa_all = false;
  std::string kernel;
  std::string targets;  // --targets A,B,...; empty = every one timed by default
  uint64_t llc = kLlcFromCpu;  // --llc SIZE
  int reps = 5;
};

// The targets --targets names, each one this run would otherwise time;
// otherwise prints why not and returns nullopt.
std::optional<std::vector<TargetId>> ParseTargets(const std::string& text, bool isa_all) {
  const std::vector<TargetInfo> all = ListTargets();
  std::string compiled;
  for (const TargetInfo& t : all) compiled += (compiled.empty() ? "" : ", ") + t.name;
  std::vector<TargetId> ids;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string name = text.substr(start, comma - start);
    start = comma + 1;
    const std::optional<TargetId> id = FindTarget(name);
    const auto info = std::find_if(all.begin(), all.end(),
                                   [&](const TargetInfo& t) { return id && t.id == *id; });
    const char* why = nullptr;
    if (info == all.end()) {
      why = "is not a target compiled into this amn";
    } else if (!info->supported) {
      why = "is not supported by this CPU";
    } else if (!isa_all && !info->allowed) {
      why = "is above the --isa / AMN_ISA cap (add --isa-all to time it)";
    }
    if (why != nullptr) {
      std::fprintf(stderr, "amn: bench: --targets: '%s' %s; targets: %s (see `amn targets`)\n",
                   Printable(name).c_str(), why, compiled.c_str());
      return std::nullopt;
    }
    ids.push_back(*id);
  }
  return ids;
}

nlohmann::json OrNull(size_t value) { return value == 0 ? nlohmann::json() : nlohmann::json(value); }

nlohmann::json ToJson(const perf::BenchReport& report, const perf::CpuDescription& cpu,
                      bool llc_given) {
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
  out["stream_min_elems"] = report.config.stream_elems;
  out["llc_bytes_used"] = OrNull(report.config.llc_bytes);
  out["llc_from"] = llc_given ? "--llc" : "cpu";
  out["floor_min_bytes"] =
      perf::MinFloorBytes(report.config.llc_bytes, report.config.unknown_llc_floor_bytes);
  nlohmann::json cache_floors = nlohmann::json::array();
  for (const auto& [bytes, gbps] : report.floors.cache_write_gbps()) {
    cache_floors.push_back({{"bytes", bytes}, {"write_gbps", gbps}});
  }
  nlohmann::json shaped_floors = nlohmann::json::array();
  for (const auto& [bytes, gbps] : report.floors.shaped_traffic_gbps()) {
    shaped_floors.push_back(
        {{"in_bytes", bytes.first}, {"out_bytes", bytes.second}, {"traffic_gbps", gbps}});
  }
  out["floors"] = {
      {"write_gbps", report.floors.stream().write_gbps},
      {"copy_traffic_gbps", report.floors.stream().copy_traffic_gbps},
      {"shaped", shaped_floors},
      {"cache", cache_floors},
      {"method",
       {{"when",
         "measured before and after each kernel's cache rows and its stream rows; each row "
         "is judged against the fastest of the whole run"},
        {"write_gbps",
         "memset of the kernel's stream output bytes, at least floor_min_bytes; fastest of "
         "reps; the fastest in the run is used; 1e9 bytes/s"},
        {"copy_traffic_gbps",
         "memcpy moving the kernel's stream input + output bytes (half read, half written), at "
         "least floor_min_bytes; fastest of reps; the fastest in the run is used"},
        {"shaped_traffic_gbps",
         "one loop reading the kernel's stream input bytes and writing its output bytes, "
         "interleaved at their ratio, with plain vector stores, timed on each vector width of "
         "the allowed targets, the fastest kept (perf/shaped_copy.h), both times "
         "the smallest whole factor that makes them at least floor_min_bytes; measured also before "
         "each stream row; fastest of reps; "
         "the fastest in the run at those bytes is used; read + write bytes"},
        {"cache_write_gbps",
         "memset of the kernel's cache output bytes (L2-resident); fastest of at least 5; "
         "the fastest in the run at those bytes is used"},
        {"stream_elems",
         "the smallest multiple of 524288 (4096 x 128) >= stream_min_elems whose input + "
         "output bytes are >= 4 x llc_bytes_used (compute-bound kernels: fewer, see "
         "compute_bound_size)"},
        {"stream_floor",
         "min(max(out bytes / write_gbps, (in + out bytes) / copy_traffic_gbps), (in + out "
         "bytes) / shaped_traffic_gbps)"},
        {"cache_floor", "out bytes / cache_write_gbps"}}}};
  out["results"] = nlohmann::json::array();
  for (const perf::BenchRow& row : report.rows) {
    const bool stream = row.size == "stream";
    nlohmann::json floor = {{"write_gbps", stream ? row.floor.write_gbps : row.floor.l2_write_gbps},
                            {"write_bytes", row.floor_sizes.write_bytes}};
    if (stream) {
      floor["copy_traffic_gbps"] = row.floor.copy_traffic_gbps;
      floor["copy_bytes"] = row.floor_sizes.copy_bytes;
      floor["shaped_traffic_gbps"] = row.floor.shaped_traffic_gbps;
      floor["shaped_in_bytes"] = row.floor_sizes.shaped_in_bytes;
      floor["shaped_out_bytes"] = row.floor_sizes.shaped_out_bytes;
    }
    out["results"].push_back({{"kernel", row.kernel},
                              {"target", row.target},
                              {"size", row.size},
                              {"n_elems", row.n_elems},
                              {"in_bytes", row.in_bytes},
                              {"out_bytes", row.out_bytes},
                              {"compute_bound_size", row.compute_bound_size},
                              {"ns_per_elem", row.ns_per_elem},
                              {"ns_per_elem_min", row.timing.min_ns / row.n_elems},
                              {"ns_per_elem_max", row.timing.max_ns / row.n_elems},
                              {"gbps", row.gbps},
                              {"floor", floor},
                              {"floor_ns_per_elem", row.floor_ns_per_elem},
                              {"ratio_to_floor", row.ratio_to_floor},
                              {"speedup_vs_reference", row.speedup_vs_reference}});
  }
  return out;
}

void PrintTable(const perf::BenchReport& report, const perf::CpuDescription& cpu, bool llc_given) {
  const perf::BenchConfig& c = report.config;
  std::printf("amn bench: one thread, median of %d runs; cache = %zu elements; stream = input + "
              "output >= %zu x the last-level cache and >= %zu elements (column M el)\n",
              c.reps, c.cache_elems, perf::kLlcMultiple, c.stream_elems);
  const std::string from_cpu =
      cpu.llc_bytes == 0 ? "unknown"
                         : perf::Mib(cpu.llc_bytes) + " (L" + std::to_string(cpu.llc_level) + ", " +
                               cpu.llc_source + ")";
  std::printf("cpu: %s; last-level cache %s%s\n", cpu.model.empty() ? "unknown" : cpu.model.c_str(),
              llc_given ? (perf::Mib(c.llc_bytes) + " from --llc; the CPU says " + from_cpu).c_str()
                        : from_cpu.c_str(),
              c.llc_bytes == 0 ? "; stream sizes and floor buffers: the minimum" : "");
  for (const perf::BenchRow& row : report.rows) {
    if (row.compute_bound_size) {
      std::printf("(compute-bound rows, e.g. %s %s, stream fewer elements, %zu: at their "
                  "speed the size does not change ns per element)\n",
                  row.kernel.c_str(), row.target.c_str(), row.n_elems);
      break;
    }
  }
  if (c.every_supported_target || !c.only_targets.empty()) {
    std::string names;
    for (const std::string& name : report.targets) names += " " + name;
    std::printf("targets (%s):%s\n",
                c.only_targets.empty() ? "--isa-all: every one this CPU supports, cap ignored"
                                       : "--targets",
                names.c_str());
  }
  std::printf(
      "floors, measured before and after each kernel's cache rows and its stream rows at "
      "its sizes, fastest of %d; each row uses the fastest of the whole run: stream write "
      "(memset of the output, >= %s) up to %.1f GB/s, copy (memcpy of input + output, "
      ">= %s) up to %.1f GB/s read+write, or, where faster, a loop moving the kernel's own "
      "input and output bytes at their ratio; cache: memset of the output bytes (in L2)\n",
      c.reps, perf::Mib(perf::MinFloorBytes(c.llc_bytes, c.unknown_llc_floor_bytes)).c_str(),
      report.floors.stream().write_gbps,
      perf::Mib(perf::MinFloorBytes(c.llc_bytes, c.unknown_llc_floor_bytes)).c_str(),
      report.floors.stream().copy_traffic_gbps);
  std::printf("x floor = time / floor time (1.0 is the memory limit); x ref = speed-up over the "
              "scalar reference\n\n");
  std::printf("%-20s %-10s | %9s %7s %7s %7s | %9s %7s %7s %7s %6s\n", "kernel", "target",
              "cache ns", "GB/s", "x floor", "x ref", "stream ns", "GB/s", "x floor", "x ref",
              "M el");
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
      std::printf("%9.4f %7.1f %7.2f %7.1f %6.0f\n", s->ns_per_elem, s->gbps, s->ratio_to_floor,
                  s->speedup_vs_reference, static_cast<double>(s->n_elems) / 1e6);
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
  if (!options.targets.empty()) {
    const std::optional<std::vector<TargetId>> only = ParseTargets(options.targets, options.isa_all);
    if (!only) return kExitUsage;
    config.only_targets = *only;
  }
  const perf::CpuDescription cpu = perf::DescribeCpu();
  config.llc_bytes = options.llc == kLlcFromCpu ? cpu.llc_bytes : options.llc;
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
  if (options.json) {
    std::printf("%s\n", ToJson(report, cpu, options.llc != kLlcFromCpu).dump(2).c_str());
  } else {
    PrintTable(report, cpu, options.llc != kLlcFromCpu);
  }
  return kExitOk;
}

}  // namespace

Command AddBenchCommand(CLI::App& app) {
  auto options = std::make_shared<BenchOptions>();
  CLI::App* cmd = app.add_subcommand(
      "bench",
      "Time every kernel on every allowed target (--isa-all: every supported one), one thread, "
      "at 65,536 elements (cache-resident) and streaming (input + output >= 4x the last-level "
      "cache, at least 4096x11008 elements), against the scalar reference and memory floors "
      "(memset, memcpy, a copy of the kernel's own shape) measured around each kernel's rows at "
      "its sizes, the fastest of the run");
  cmd->add_flag("--quick", options->quick,
                "Streaming at least 2^23 elements (still >= 4x the last-level cache) and, when "
                "the cache size is unknown, 64 MiB floor buffers");
  cmd->add_flag("--json", options->json,
                "Print JSON instead of a table: CPU model and last-level cache, the floors and "
                "how they were measured, one record per kernel x target x size");
  cmd->add_flag("--isa-all", options->isa_all,
                "Every target this CPU supports, also those above the cap set by --isa or "
                "AMN_ISA (which otherwise limits the targets timed)");
  cmd->add_option("--targets", options->targets,
                  "Only these targets, comma-separated names as `amn targets` prints them "
                  "(e.g. AVX3_DL,AVX2,SSE4); each must be one the run would time")
      ->type_name("A,B,...");
  cmd->add_option("--llc", options->llc,
                  "Size the streaming and floor buffers by this last-level cache instead of the "
                  "one the CPU reports (K/M/G suffixes are powers of 1024; 0: as if unknown, "
                  "the minimum sizes; at most 4G)")
      ->transform(CLI::AsSizeValue(false))
      ->check(CLI::Range(uint64_t{0}, uint64_t{4} << 30))
      ->type_name("SIZE");
  cmd->add_option("--kernel", options->kernel,
                  "Only kernels whose name contains this text (e.g. bf16, e4m3_to)");
  cmd->add_option("--reps", options->reps, "Timed runs per measurement; kernels: the median is reported (--json adds min and max), floors: the fastest")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->add_flag("-q,--quiet", options->quiet, "No progress on the terminal");
  return {cmd, [options] { return RunBench(*options); }};
}

}  // namespace amn::cli
