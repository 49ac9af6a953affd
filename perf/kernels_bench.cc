// Google Benchmark suite: every kernel x every supported target (+ the scalar
// reference and, for F32->BF16, the xsimd peer) at the two sizes of
// DESIGN.md §8, named kernel/target/size. Uses the measuring code of
// `amn bench` (perf/measure.h); the floors are measured once at start-up and
// printed, and every row carries its floor in ns/element.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <string>

#include "amn/kernel_registry.h"
#include "amn/targets.h"
#include "perf/measure.h"
#if defined(AMN_HAVE_XSIMD_PEER)
#include "perf/xsimd_peer.h"
#endif

namespace amn::perf {
namespace {

void SetCounters(benchmark::State& state, size_t n, double bytes_per_elem, double floor_ns) {
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * n));
  state.SetBytesProcessed(
      static_cast<int64_t>(static_cast<double>(state.iterations() * n) * bytes_per_elem));
  state.counters["floor_ns_per_el"] = floor_ns;
  state.counters["ns_per_el"] = benchmark::Counter(
      static_cast<double>(state.iterations() * n) * 1e-9,
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void RegisterAll(const Floors& floors) {
  std::vector<TargetId> targets;
  for (const TargetInfo& info : ListTargets()) {
    if (info.allowed) targets.push_back(info.id);
  }
  for (const KernelInfo& kernel : Kernels()) {
    // Exact bytes per element (block inputs: block bytes / block elements).
    const double in_bytes = static_cast<double>(KernelInBytes(kernel, kCacheElems)) / kCacheElems;
    const double out_bytes = static_cast<double>(KernelOutBytes(kernel, kCacheElems)) / kCacheElems;
    for (const bool stream : {false, true}) {
      const size_t n = stream ? kStreamElems : kCacheElems;
      const double floor_ns = stream ? floors.StreamNsPerElem(in_bytes, out_bytes)
                                     : floors.CacheNsPerElem(out_bytes);
      const std::string size = stream ? "stream" : "cache";
      auto add = [&](const std::string& who, std::function<void(KernelBuffers&)> run,
                     std::function<bool()> setup) {
        benchmark::RegisterBenchmark(
            (std::string(kernel.name) + "/" + who + "/" + size).c_str(),
            [=, &kernel](benchmark::State& state) {
              if (!setup()) {
                state.SkipWithError("not supported on this CPU");
                return;
              }
              KernelBuffers buffers(kernel, n);
              for (auto _ : state) {
                run(buffers);
                benchmark::ClobberMemory();
              }
              ClearForcedTarget();
              SetCounters(state, n, in_bytes + out_bytes, floor_ns);
            })
            ->UseRealTime();
      };
      add("reference",
          [&kernel](KernelBuffers& b) { kernel.run_reference(b.in(), b.n_elems(), b.out()); },
          [] { return true; });
      for (TargetId target : targets) {
        add(std::string(TargetName(target)),
            [&kernel](KernelBuffers& b) { kernel.run(b.in(), b.n_elems(), b.out()); },
            [target] { return ForceTarget(target).ok(); });
      }
#if defined(AMN_HAVE_XSIMD_PEER)
      if (kernel.name == "f32_to_bf16") {
        using PeerFn = bool (*)(const float*, size_t, uint16_t*);
        for (auto [who, peer] : {std::pair<const char*, PeerFn>{"xsimd_avx2", XsimdF32ToBf16Avx2},
                                 std::pair<const char*, PeerFn>{"xsimd_avx512bw",
                                                                XsimdF32ToBf16Avx512}}) {
          add(who,
              [peer](KernelBuffers& b) {
                peer(static_cast<const float*>(b.in()), b.n_elems(), static_cast<uint16_t*>(b.out()));
              },
              [peer] {
                float one = 1.0f;
                uint16_t out;
                return peer(&one, 1, &out);
              });
        }
      }
#endif
    }
  }
}

}  // namespace
}  // namespace amn::perf

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  const amn::perf::Floors floors = amn::perf::MeasureFloors(amn::perf::kFloorBytes, 5);
  std::printf("floors: write %.1f GB/s (memset %zu MiB), copy traffic %.1f GB/s (memcpy), "
              "L2 write %.1f GB/s (256 KiB)\n",
              floors.write_gbps, amn::perf::kFloorBytes >> 20, floors.copy_traffic_gbps,
              floors.l2_write_gbps);
  amn::perf::RegisterAll(floors);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
