// The machine's memory bandwidth floor with N threads: what `amn remember`,
// `forget` and `convert -j N` are measured against (perf/thread_scaling.sh).
// Each thread streams its own slice of two buffers, each at least 4x the
// last-level cache (and 1 GiB), so the caches cannot hold them:
//   copy  memcpy src -> dst   (read + write: 2 bytes of traffic per byte copied)
//   write memset dst          (write only)
//   read  sum of src words    (read only)
// Best of --reps runs per operation and thread count; GB/s = 1e9 bytes/s of
// memory traffic, timed from the start signal to the last thread's finish.
// Pages are touched once before timing, each slice by the thread that later
// streams it (NUMA first touch).
//
//   bandwidth_mt [--threads 1,2,4,8,16] [--mib N] [--reps 5] [--json]
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "perf/cpu_description.h"

namespace {

double NowSeconds() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

std::atomic<uint64_t> g_sink{0};  // keeps the read loop's sum alive

// Runs body(thread, begin, end) on `threads` threads over [0, bytes) in
// 4 KiB-aligned slices; returns the seconds from the common start to the
// last finish (thread creation is not timed).
double RunSliced(unsigned threads, size_t bytes,
                 const std::function<void(unsigned, size_t, size_t)>& body) {
  std::atomic<unsigned> ready{0};
  std::atomic<bool> go{false};
  std::vector<double> finish(threads);
  auto worker = [&](unsigned t) {
    const size_t slice = (bytes / threads) & ~size_t{4095};
    const size_t begin = t * slice, end = t + 1 == threads ? bytes : begin + slice;
    ready.fetch_add(1);
    while (!go.load(std::memory_order_acquire)) {
    }
    body(t, begin, end);
    finish[t] = NowSeconds();
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker, t);
  while (ready.load() + 1 < threads) {
  }
  const double start = NowSeconds();
  go.store(true, std::memory_order_release);
  worker(0);
  for (std::thread& th : pool) th.join();
  return *std::max_element(finish.begin(), finish.end()) - start;
}

std::vector<unsigned> ParseList(const char* text) {
  std::vector<unsigned> out;
  for (const char* p = text; *p;) {
    char* end = nullptr;
    const unsigned long v = std::strtoul(p, &end, 10);
    if (end == p || v == 0 || v > 4096) return {};
    out.push_back(static_cast<unsigned>(v));
    p = *end == ',' ? end + 1 : end;
    if (*end && *end != ',') return {};
  }
  return out;
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
  std::vector<unsigned> thread_counts;
  for (unsigned n = 1; n < cores; n *= 2) thread_counts.push_back(n);
  thread_counts.push_back(cores);
  size_t mib = 0;
  int reps = 5;
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--threads" && has_value) thread_counts = ParseList(argv[++i]);
    else if (a == "--mib" && has_value) mib = std::strtoull(argv[++i], nullptr, 10);
    else if (a == "--reps" && has_value) reps = std::atoi(argv[++i]);
    else if (a == "--json") json = true;
    else return Usage();
  }
  if (thread_counts.empty() || reps < 1) return Usage();

  const amn::perf::CpuDescription cpu = amn::perf::DescribeCpu();
  if (mib == 0) mib = std::max<size_t>(1024, 4 * cpu.llc_bytes / 1048576 + 1);
  const size_t bytes = mib << 20;
  auto* src = static_cast<uint64_t*>(std::aligned_alloc(4096, bytes));
  auto* dst = static_cast<uint64_t*>(std::aligned_alloc(4096, bytes));
  if (!src || !dst) {
    std::fprintf(stderr, "bandwidth_mt: cannot allocate 2 x %zu MiB\n", mib);
    return 1;
  }
  const unsigned most = *std::max_element(thread_counts.begin(), thread_counts.end());
  RunSliced(most, bytes, [&](unsigned, size_t b, size_t e) {
    for (size_t i = b / 8; i < e / 8; ++i) src[i] = i * 0x9E3779B97F4A7C15ull;
    std::memset(reinterpret_cast<char*>(dst) + b, 1, e - b);
  });

  struct Op {
    const char* name;
    double traffic;  // bytes of memory traffic per run
    std::function<void(unsigned, size_t, size_t)> body;
  };
  const Op ops[] = {
      {"copy", 2.0 * bytes,
       [&](unsigned, size_t b, size_t e) {
         std::memcpy(reinterpret_cast<char*>(dst) + b, reinterpret_cast<char*>(src) + b, e - b);
       }},
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
      for (int r = 0; r < reps; ++r) best = std::min(best, RunSliced(thread_counts[k], bytes, ops[o].body));
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
  std::free(src);
  std::free(dst);
  return 0;
}
