// The machine's memory bandwidth floor with N threads: what `amn remember`,
// `forget` and `convert -j N` are measured against (perf/thread_scaling.sh).
// Each thread streams its own slice of two buffers, each at least 4x the
// last-level cache (and 1 GiB), so the caches cannot hold them:
//   copy  memcpy src -> dst   (read + write: 2 bytes of traffic per byte copied)
//   write memset dst          (write only)
//   read  sum of src words    (read only)
// Best of --reps runs per operation and thread count; GB/s = 1e9 bytes/s of
// memory traffic, timed from the first thread's start to the last one's
// finish; the threads are started once (perf/thread_bandwidth.h, shared with
// perf/kernel_scaling.cc). Pages are touched once before timing, each slice
// by the thread that later streams it (NUMA first touch).
//
//   bandwidth_mt [--threads 1,2,4,8,16] [--mib N] [--reps 5] [--json]
// (--threads also takes "1 2 4 8 16").
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "perf/cpu_description.h"
#include "perf/thread_bandwidth.h"

namespace {

using amn::perf::Slice;
using amn::perf::SliceOf;
using amn::perf::ThreadTeam;

std::atomic<uint64_t> g_sink{0};  // keeps the read loop's sum alive

// Runs body(thread, begin, end) on `threads` members of the team over
// [0, bytes) in 4 KiB-granule slices; returns the seconds from the first
// start to the last finish (the threads are started once, by the team).
double RunSliced(ThreadTeam& team, unsigned threads, size_t bytes,
                 const std::function<void(unsigned, size_t, size_t)>& body) {
  return team.Run(threads, [&](unsigned t) {
    const Slice s = SliceOf(bytes, 4096, t, threads);
    body(t, s.begin, s.end);
  });
}

int Usage() {
  std::fprintf(stderr,
               "usage: bandwidth_mt [--threads 1,2,4,8,16] [--mib N] [--reps 5] [--json]\n"
               "Multi-thread memory bandwidth (copy, write, read) in GB/s of memory traffic.\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  std::vector<unsigned> thread_counts = amn::perf::DefaultThreadCounts();
  size_t mib = 0;
  int reps = 5;
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--threads" && has_value) thread_counts = amn::perf::ParseThreadList(argv[++i]);
    else if (a == "--mib" && has_value) mib = std::strtoull(argv[++i], nullptr, 10);
    else if (a == "--reps" && has_value) reps = std::atoi(argv[++i]);
    else if (a == "--json") json = true;
    else return Usage();
  }
  if (thread_counts.empty() || reps < 1) return Usage();

  const amn::perf::CpuDescription cpu = amn::perf::DescribeCpu();
  if (mib == 0) mib = amn::perf::DefaultFloorMib(cpu.llc_bytes);
  const size_t bytes = mib << 20;
  std::unique_ptr<amn::perf::UntouchedBytes> src_bytes, dst_bytes;
  try {
    src_bytes = std::make_unique<amn::perf::UntouchedBytes>(bytes);
    dst_bytes = std::make_unique<amn::perf::UntouchedBytes>(bytes);
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "bandwidth_mt: cannot allocate 2 x %zu MiB\n", mib);
    return 1;
  }
  auto* src = reinterpret_cast<uint64_t*>(src_bytes->data());
  auto* dst = reinterpret_cast<uint64_t*>(dst_bytes->data());
  const unsigned most = *std::max_element(thread_counts.begin(), thread_counts.end());
  ThreadTeam team(most);
  RunSliced(team, most, bytes, [&](unsigned, size_t b, size_t e) {
    for (size_t i = b / 8; i < e / 8; ++i) src[i] = i * 0x9E3779B97F4A7C15ull;
    std::memset(reinterpret_cast<char*>(dst) + b, 1, e - b);
  });

  struct Op {
    const char* name;
    double traffic;  // bytes of memory traffic per run
    std::function<void(unsigned, size_t, size_t)> body;
  };
  // copy (the floor perf/kernel_scaling.cc uses too): TimeSlicedCopy, no body.
  const Op ops[] = {
      {"copy", 2.0 * bytes, nullptr},
      {"write", 1.0 * bytes,
       [&](unsigned t, size_t b, size_t e) {
         std::memset(reinterpret_cast<char*>(dst) + b, static_cast<int>(t + 2), e - b);
       }},
      {"read", 1.0 * bytes,
       [&](unsigned, size_t b, size_t e) {
         uint64_t sum0 = 0, sum1 = 0, sum2 = 0, sum3 = 0;
         size_t i = b / 8;
         for (; i + 4 <= e / 8; i += 4) {
           sum0 += src[i];
           sum1 += src[i + 1];
           sum2 += src[i + 2];
           sum3 += src[i + 3];
         }
         g_sink.fetch_add(sum0 + sum1 + sum2 + sum3, std::memory_order_relaxed);
       }},
  };

  std::vector<std::vector<double>> gbps(thread_counts.size(), std::vector<double>(3));
  for (size_t k = 0; k < thread_counts.size(); ++k) {
    for (size_t o = 0; o < 3; ++o) {
      double best = 1e30;
      for (int r = 0; r < reps; ++r) {
        const double seconds =
            ops[o].body ? RunSliced(team, thread_counts[k], bytes, ops[o].body)
                        : amn::perf::TimeSlicedCopy(team, thread_counts[k], src_bytes->data(),
                                                    dst_bytes->data(), bytes);
        best = std::min(best, seconds);
      }
      gbps[k][o] = ops[o].traffic / best / 1e9;
    }
  }

  if (json) {
    std::printf("{\"cpu\":\"%s\",\"cores\":%u,\"llc_bytes\":%zu,\"llc_level\":%d,\"llc_source\":\"%s\","
                "\"buffer_bytes\":%zu,\"reps\":%d,\"results\":[",
                cpu.model.c_str(), cores, cpu.llc_bytes, cpu.llc_level, cpu.llc_source.c_str(), bytes,
                reps);
    for (size_t k = 0; k < thread_counts.size(); ++k)
      std::printf("%s\n{\"threads\":%u,\"copy_gbps\":%.2f,\"write_gbps\":%.2f,\"read_gbps\":%.2f}",
                  k ? "," : "", thread_counts[k], gbps[k][0], gbps[k][1], gbps[k][2]);
    std::printf("]}\n");
  } else {
    std::printf("# bandwidth_mt: %s, %u cores, LLC %zu KiB (L%d, %s), buffers 2 x %zu MiB, best of %d\n",
                cpu.model.empty() ? "unknown CPU" : cpu.model.c_str(), cores, cpu.llc_bytes >> 10,
                cpu.llc_level, cpu.llc_source.empty() ? "unknown" : cpu.llc_source.c_str(), mib, reps);
    std::printf("# GB/s of memory traffic (copy counts read + write)\n");
    std::printf("threads copy_GBps write_GBps read_GBps\n");
    for (size_t k = 0; k < thread_counts.size(); ++k)
      std::printf("%u %.2f %.2f %.2f\n", thread_counts[k], gbps[k][0], gbps[k][1], gbps[k][2]);
  }
  return 0;
}
