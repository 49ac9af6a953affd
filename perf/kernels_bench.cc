// Google Benchmark suite: every kernel x every allowed target (+ the scalar
// reference and, for F32->BF16, the xsimd peer) at the two sizes of
// DESIGN.md §8, named kernel/target/size, measured by the rule of
// `amn bench` with its code (perf/measure.h): streaming buffers of input +
// output >= 4x the last-level cache the CPU reports, and the memory floors
// measured between the kernels, at each kernel's own byte sizes, as rows of
// their own: kernel/floor/size before a kernel's rows at that size and
// kernel/floor_after/size after them. Every kernel row carries its floor
// (floor_ns_per_el) and its ratio to it (x_floor): the fastest floor of the
// run up to its kernel size's floor_after row (FloorRejudgingReporter holds
// the rows until then), or, when a filter leaves that row out, up to the end
// of the row itself. Options besides Google Benchmark's: --llc=SIZE,
// --floor_reps=N.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "amn/kernel_registry.h"
#include "amn/targets.h"
#include "perf/cpu_description.h"
#include "perf/floor_rejudging_reporter.h"
#include "perf/measure.h"
#if defined(AMN_HAVE_XSIMD_PEER)
#include "perf/xsimd_peer.h"
#endif

namespace amn::perf {
namespace {

using RunFn = std::function<void(const void* in, size_t n, void* out)>;

// One kernel at one size: its floor's byte sizes and whether that floor has
// been measured yet (a --benchmark_filter may leave out the floor rows).
struct Group {
  const KernelInfo* kernel = nullptr;
  bool stream = false;
  size_t full = 0;  // elements: kCacheElems, or StreamElemsFor's size
  FloorSizes floor_sizes;
  bool floor_measured = false;
  std::map<std::string, size_t> stream_elems;  // by row name, once known
};

// Each registered benchmark, by name, for the reporter.
struct RowInfo {
  Group* group = nullptr;
  enum Kind { kFloor, kFloorAfter, kKernel } kind = kKernel;
  std::string who;  // kernel rows: reference, a target or a peer
};

// What one process's run shares between its benchmarks.
struct Run {
  int floor_reps = 5;
  BestFloors best;
  std::deque<Group> groups;  // stable addresses for the registered lambdas
  std::map<std::string, RowInfo> rows;
  // The buffers of the group being timed; one group's at a time, and none
  // while a floor is measured.
  const Group* live = nullptr;
  std::unique_ptr<KernelBuffers> buffers;

  void ReleaseBuffers() {
    buffers.reset();
    live = nullptr;
  }

  KernelBuffers& BuffersFor(Group& group) {
    if (live != &group) {
      ReleaseBuffers();
      // The floor row was filtered out: measure the group's floor now, untimed,
      // before its buffers exist, so its rows still have a floor of their own.
      if (!group.floor_measured) {
        best.Measure(group.floor_sizes, floor_reps);
        group.floor_measured = true;
      }
      buffers = std::make_unique<KernelBuffers>(*group.kernel, group.full);
      live = &group;
    }
    return *buffers;
  }
};

Run& TheRun() {
  static Run run;
  return run;
}

// The fastest floor of the run so far for `group`'s rows of n elements.
JudgedFloor JudgeNow(const Group& group, size_t n) {
  const Floors floor = TheRun().best.For(group.floor_sizes);
  return {FloorNsPerElem(*group.kernel, n, group.stream, floor),
          group.stream ? floor.write_gbps : floor.l2_write_gbps,
          group.stream ? floor.copy_traffic_gbps : 0, group.stream ? floor.shaped_traffic_gbps : 0};
}

// Every row has the same counters (Google Benchmark's CSV output needs it,
// and the tabular console then has one header): its ns per element, the
// floor it is judged against and their ratio. FloorRejudgingReporter sets
// the floor ones of kernel rows again.
void SetCounters(benchmark::State& state, double ns_per_el, const JudgedFloor& floor) {
  state.counters["ns_per_el"] = ns_per_el;
  state.counters["floor_ns_per_el"] = floor.ns_per_el;
  state.counters["x_floor"] = ns_per_el / floor.ns_per_el;
  state.counters["write_GBps"] = floor.write_gbps;
  state.counters["copy_GBps"] = floor.copy_gbps;
  state.counters["shaped_GBps"] = floor.shaped_gbps;
}

// kernel/floor/size and kernel/floor_after/size: the group's floor measured
// now (fastest of --floor_reps), the fastest so far kept and reported (its
// x_floor is 1). Its time is that floor's time for one call at the group's
// size (manual time), so it lines up with the kernel rows' times.
void FloorRow(benchmark::State& state, Group& group) {
  Run& run = TheRun();
  run.ReleaseBuffers();
  JudgedFloor floor;
  for (auto _ : state) {
    run.best.Measure(group.floor_sizes, run.floor_reps);
    floor = JudgeNow(group, group.full);
    state.SetIterationTime(floor.ns_per_el * static_cast<double>(group.full) * 1e-9);
  }
  group.floor_measured = true;
  SetCounters(state, floor.ns_per_el, floor);
  state.SetLabel(group.stream
                     ? "floor: memset " + Mib(group.floor_sizes.write_bytes) + ", memcpy " +
                           Mib(group.floor_sizes.copy_bytes) + " read+write, shaped copy " +
                           Mib(group.floor_sizes.shaped_in_bytes) + " in, " +
                           Mib(group.floor_sizes.shaped_out_bytes) + " out"
                     : "floor: memset " + std::to_string(group.floor_sizes.write_bytes) +
                           " B (in L2)");
}

// The elements a streaming row runs: the group's size unless the row is
// compute-bound (ComputeBoundStreamElems), judged from a short untimed run of
// the row at the cache-resident size on the start of the group's buffers.
size_t StreamElems(const Group& group, const RunFn& run, KernelBuffers& buffers, bool& shortened) {
  const size_t n = std::min(kCacheElems, group.full);
  const double cache_ns =
      TimeCalls([&] { run(buffers.in(), n, buffers.out()); }, 3).min_ns / static_cast<double>(n);
  return ComputeBoundStreamElems(group.full, cache_ns, JudgeNow(group, group.full).ns_per_el,
                                 kCacheElems, shortened);
}

void KernelRow(benchmark::State& state, Group& group, const std::string& who, const RunFn& run,
               const std::function<bool()>& setup) {
  if (!setup()) {
    state.SkipWithError("not supported on this CPU");
    return;
  }
  Run& shared = TheRun();
  KernelBuffers& buffers = shared.BuffersFor(group);
  size_t n = group.full;
  bool shortened = false;
  if (group.stream) {
    const auto known = group.stream_elems.find(who);
    if (known == group.stream_elems.end()) {
      n = StreamElems(group, run, buffers, shortened);
      group.stream_elems[who] = n;
    } else {
      n = known->second;
      shortened = n < group.full;
    }
  }
  // The loop's wall time, as UseRealTime reports it, for the per-element
  // counters (plain numbers, not Google Benchmark's per-second rates).
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    run(buffers.in(), n, buffers.out());
    benchmark::ClobberMemory();
  }
  const std::chrono::duration<double, std::nano> loop = std::chrono::steady_clock::now() - start;
  ClearForcedTarget();
  const KernelInfo& kernel = *group.kernel;
  const double elems = static_cast<double>(state.iterations()) * static_cast<double>(n);
  state.SetItemsProcessed(static_cast<int64_t>(elems));
  state.SetBytesProcessed(static_cast<int64_t>(
      static_cast<double>(state.iterations()) *
      static_cast<double>(KernelInBytes(kernel, n) + KernelOutBytes(kernel, n))));
  SetCounters(state, loop.count() / elems, JudgeNow(group, n));
  if (shortened) state.SetLabel("compute-bound: " + std::to_string(n) + " elements");
}

void RegisterAll(size_t llc_bytes) {
  Run& shared = TheRun();
  const size_t min_floor_bytes = MinFloorBytes(llc_bytes, kFloorBytes);
  std::vector<TargetId> targets;
  for (const TargetInfo& info : ListTargets()) {
    if (info.allowed) targets.push_back(info.id);
  }
  for (const KernelInfo& kernel : Kernels()) {
    // Exact bytes per element (block inputs: block bytes / block elements).
    const double bytes_per_elem = static_cast<double>(KernelInBytes(kernel, kCacheElems) +
                                                      KernelOutBytes(kernel, kCacheElems)) /
                                  kCacheElems;
    for (const bool stream : {false, true}) {
      Group& group = shared.groups.emplace_back();
      group.kernel = &kernel;
      group.stream = stream;
      group.full = stream ? StreamElemsFor(llc_bytes, bytes_per_elem, kStreamElems) : kCacheElems;
      group.floor_sizes = KernelFloorSizes(kernel, group.full, stream, min_floor_bytes);
      const std::string prefix = std::string(kernel.name) + "/";
      const std::string size = stream ? "/stream" : "/cache";
      const auto add_floor = [&](const std::string& which) {
        shared.rows[prefix + which + size] =
            RowInfo{&group, which == "floor" ? RowInfo::kFloor : RowInfo::kFloorAfter, ""};
        benchmark::RegisterBenchmark((prefix + which + size).c_str(),
                                     [&group](benchmark::State& state) { FloorRow(state, group); })
            ->Iterations(1)
            ->UseManualTime();
      };
      const auto add = [&](const std::string& who, RunFn run, std::function<bool()> setup) {
        shared.rows[prefix + who + size] = RowInfo{&group, RowInfo::kKernel, who};
        benchmark::RegisterBenchmark((prefix + who + size).c_str(), [&group, who, run, setup](
                                                                        benchmark::State& state) {
          KernelRow(state, group, who, run, setup);
        })->UseRealTime();
      };
      add_floor("floor");
      add(
          "reference",
          [&kernel](const void* in, size_t n, void* out) { kernel.run_reference(in, n, out); },
          [] { return true; });
      for (TargetId target : targets) {
        add(
            std::string(TargetName(target)),
            [&kernel](const void* in, size_t n, void* out) { kernel.run(in, n, out); },
            [target] { return ForceTarget(target).ok(); });
      }
#if defined(AMN_HAVE_XSIMD_PEER)
      if (kernel.name == "f32_to_bf16") {
        using PeerFn = bool (*)(const float*, size_t, uint16_t*);
        for (auto [who, peer] :
             {std::pair<const char*, PeerFn>{"xsimd_avx2", XsimdF32ToBf16Avx2},
              std::pair<const char*, PeerFn>{"xsimd_avx512bw", XsimdF32ToBf16Avx512}}) {
          add(
              who,
              [peer](const void* in, size_t n, void* out) {
                peer(static_cast<const float*>(in), n, static_cast<uint16_t*>(out));
              },
              [peer] {
                float one = 1.0f;
                uint16_t out;
                return peer(&one, 1, &out);
              });
        }
      }
#endif
      add_floor("floor_after");
    }
  }
}

// How FloorRejudgingReporter finds a row's kernel size and its floor now.
FloorRows FloorRowsOfTheRun() {
  const auto find = [](const std::string& name) -> const RowInfo* {
    const auto it = TheRun().rows.find(name);
    return it == TheRun().rows.end() ? nullptr : &it->second;
  };
  FloorRows rows;
  rows.group_of = [find](const std::string& name) -> const void* {
    const RowInfo* row = find(name);
    return row == nullptr ? nullptr : row->group;
  };
  rows.is_floor_after = [find](const std::string& name) {
    const RowInfo* row = find(name);
    return row != nullptr && row->kind == RowInfo::kFloorAfter;
  };
  rows.is_kernel_row = [find](const std::string& name) {
    const RowInfo* row = find(name);
    return row != nullptr && row->kind == RowInfo::kKernel;
  };
  rows.floor_of = [find](const std::string& name) {
    const RowInfo* row = find(name);
    if (row == nullptr) return JudgedFloor{};
    const Group& group = *row->group;
    const auto shortened = group.stream_elems.find(row->who);
    return JudgeNow(group, shortened == group.stream_elems.end() ? group.full : shortened->second);
  };
  return rows;
}

// The file reporter --benchmark_out_format names (Google Benchmark's own
// choice, which it does not export), wrapped below like the display one.
benchmark::BenchmarkReporter* NewFileReporter(const std::string& format) {
  if (format == "console")
    return new benchmark::ConsoleReporter(benchmark::ConsoleReporter::OO_None);
  if (format == "csv") {
    BENCHMARK_DISABLE_DEPRECATED_WARNING
    return new benchmark::CSVReporter();
    BENCHMARK_RESTORE_DEPRECATED_WARNING
  }
  return new benchmark::JSONReporter();
}
}  // namespace
}  // namespace amn::perf

int main(int argc, char** argv) {
  // Read before Initialize takes them out of argv.
  std::string out_file, out_format = "json";
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--benchmark_out=", 16) == 0) out_file = argv[i] + 16;
    if (std::strncmp(argv[i], "--benchmark_out_format=", 23) == 0) out_format = argv[i] + 23;
  }
  benchmark::Initialize(&argc, argv);
  amn::perf::Run& run = amn::perf::TheRun();
  const amn::perf::CpuDescription cpu = amn::perf::DescribeCpu();
  std::optional<size_t> llc_given;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const char* arg = argv[i];
    if (std::strncmp(arg, "--llc=", 6) == 0) {
      llc_given = amn::perf::ParseSize(arg + 6);
      if (!llc_given) {
        std::fprintf(stderr, "kernels_bench: --llc: '%s' is not a size (e.g. 32M, at most 4G)\n",
                     arg + 6);
        return 2;
      }
    } else if (std::strncmp(arg, "--floor_reps=", 13) == 0) {
      run.floor_reps = std::atoi(arg + 13);
      if (run.floor_reps < 1 || run.floor_reps > 1000) {
        std::fprintf(stderr, "kernels_bench: --floor_reps: 1 to 1000\n");
        return 2;
      }
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  const size_t llc = llc_given ? *llc_given : cpu.llc_bytes;
  const size_t min_floor = amn::perf::MinFloorBytes(llc, amn::perf::kFloorBytes);
  const std::string llc_text =
      llc == 0 ? "unknown"
               : amn::perf::Mib(llc) + (llc_given ? " (--llc)" : " (" + cpu.llc_source + ")");
  std::fprintf(stderr,
               "kernels_bench: cpu %s; last-level cache %s; stream = input + output >= %zu x it "
               "and >= %zu elements; floors (memset, memcpy >= %s; cache: memset of the output) "
               "measured before and after each kernel's rows at its sizes (kernel/floor/size, "
               "kernel/floor_after/size), fastest of %d; x_floor = time / the fastest floor of "
               "the run up to just after the row's kernel size\n",
               cpu.model.empty() ? "unknown" : cpu.model.c_str(), llc_text.c_str(),
               amn::perf::kLlcMultiple, amn::perf::kStreamElems, amn::perf::Mib(min_floor).c_str(),
               run.floor_reps);
  benchmark::AddCustomContext("amn_llc_bytes", std::to_string(llc));
  benchmark::AddCustomContext("amn_llc_from", llc_given ? "--llc" : "cpu");
  benchmark::AddCustomContext("amn_floor_min_bytes", std::to_string(min_floor));
  benchmark::AddCustomContext("amn_floor_reps", std::to_string(run.floor_reps));
  amn::perf::RegisterAll(llc);
  amn::perf::FloorRejudgingReporter display(benchmark::CreateDefaultDisplayReporter(), false,
                                            amn::perf::FloorRowsOfTheRun());
  if (out_file.empty()) {
    benchmark::RunSpecifiedBenchmarks(&display);
  } else {
    amn::perf::FloorRejudgingReporter file(amn::perf::NewFileReporter(out_format), true,
                                           amn::perf::FloorRowsOfTheRun());
    benchmark::RunSpecifiedBenchmarks(&display, &file);
  }
  benchmark::Shutdown();
  return 0;
}
