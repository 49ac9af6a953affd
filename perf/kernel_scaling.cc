// Do the kernels alone scale to the memory bandwidth? N threads each decode
// their own contiguous slice of one big input into their slice of one big
// output, with the registry kernels and inputs of `amn bench`
// (amn::Kernels(), perf::FillKernelInput); interleaved with each kernel's
// runs at each thread count, the copy floor: the same N threads memcpy as
// many bytes as the kernel reads and writes (perf/thread_bandwidth.h, the
// code of perf/bandwidth_mt.cc). No file, no page cache: what is left of
// issue 18's gap between `amn -j N` and the bandwidth once the output path is
// taken away.
//
//   kernel_scaling [--kernel NAME]... [--threads "1 2 4 8 16"] [--reps 3] [--mib M] [--check]
//
// Sizes: a kernel's input + output bytes are at least --mib MiB (default 4 x
// the last-level cache, at least 1 GiB), a whole number of 524288-element
// granules; thread t of N gets granules [t*G/N, (t+1)*G/N). The threads are
// started once; each run starts at a barrier and lasts from the first
// thread's start to the last one's finish; best of --reps. The buffers'
// pages are touched first by the thread that streams them at the widest
// thread count. --check also compares each thread count's output, byte for
// byte, with one single-threaded call over the whole input (exit 1 when one
// differs); the output is overwritten with a pattern before each thread count.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "amn/kernel_registry.h"
#include "amn/targets.h"
#include "perf/cpu_description.h"
#include "perf/measure.h"
#include "perf/thread_bandwidth.h"

namespace amn::perf {
namespace {

// An FP8, GGUF Q8_0 and Q4_K, a GPTQ and an encoder. GPTQ in the [K, N]
// layout: the registry's [N, K] GPTQ and AWQ samples shape their layer by
// n_elems, so a slice of them is another tensor (the same work; --check
// tells them apart). Sizes and slices are whole kStreamGranule slabs, which
// the GPTQ/AWQ samples decode as their real-shaped layer (every group
// alike: dispatch/sample_layers.h), so a [K, N] slice is the same rows.
constexpr std::string_view kDefaultKernels[] = {
    "e4m3_scaled_to_bf16", "q8_0_to_bf16", "q4_k_to_bf16", "gptq4_inout_to_bf16", "bf16_to_nf4"};

struct Row {
  unsigned threads = 0;
  double kernel_s = 1e30, copy_s = 1e30;  // best of reps
  bool same_as_one_thread = true;         // --check only
};

// The first byte where a and b differ, or n.
size_t FirstDifference(const unsigned char* a, const unsigned char* b, size_t n) {
  for (size_t chunk = 0; chunk < n; chunk += 1 << 20) {
    const size_t len = std::min<size_t>(1 << 20, n - chunk);
    if (std::memcmp(a + chunk, b + chunk, len) == 0) continue;
    for (size_t i = chunk;; ++i) {
      if (a[i] != b[i]) return i;
    }
  }
  return n;
}

// One kernel's sizes: n elements, whole granules, whose input + output bytes
// are at least traffic_bytes; the copy floor moves as many bytes.
struct Sizes {
  size_t n = 0, in_bytes = 0, out_bytes = 0;
  size_t copy_bytes = 0;  // memcpy'd: read + write = the kernel's in + out
};
Sizes SizesFor(const KernelInfo& kernel, size_t traffic_bytes) {
  const size_t granule_bytes =
      KernelInBytes(kernel, kStreamGranule) + KernelOutBytes(kernel, kStreamGranule);
  Sizes s;
  s.n = std::max<size_t>(1, (traffic_bytes + granule_bytes - 1) / granule_bytes) * kStreamGranule;
  s.in_bytes = KernelInBytes(kernel, s.n);
  s.out_bytes = KernelOutBytes(kernel, s.n);
  s.copy_bytes = (s.in_bytes + s.out_bytes) / 2;
  return s;
}

// The copy floor's buffers, shared by the kernels: allocated and touched
// once at the largest kernel's copy bytes (the kernels' differ by less than
// a granule's bytes, so each member's copy slice stays on its own pages).
struct CopyBuffers {
  UntouchedBytes src, dst;
};

// All thread counts for one kernel; returns false when --check found a difference.
bool MeasureKernel(const KernelInfo& kernel, const Sizes& sizes,
                   const std::vector<unsigned>& counts, int reps, bool check, ThreadTeam& team,
                   CopyBuffers& copy) {
  const size_t n = sizes.n, in_bytes = sizes.in_bytes, out_bytes = sizes.out_bytes;
  const size_t copy_bytes = sizes.copy_bytes;
  UntouchedBytes in(in_bytes), out(out_bytes);
  // First touch: each member writes the input and output pages of its own
  // slice at the widest thread count.
  team.Run(team.size(), [&](unsigned t) {
    const Slice s = SliceOf(n, kStreamGranule, t, team.size());
    const size_t in_begin = KernelInBytes(kernel, s.begin),
                 out_begin = KernelOutBytes(kernel, s.begin);
    std::memset(in.data() + in_begin, 0, KernelInBytes(kernel, s.end) - in_begin);
    std::memset(out.data() + out_begin, 0, KernelOutBytes(kernel, s.end) - out_begin);
  });
  FillKernelInput(kernel, n, in.data());
  std::vector<unsigned char> expected;
  if (check) {
    expected.resize(out_bytes);
    kernel.run(in.data(), n, expected.data());
  }

  std::vector<Row> rows;
  bool all_same = true;
  for (const unsigned threads : counts) {
    Row row;
    row.threads = threads;
    if (check) std::memset(out.data(), 0xA5, out_bytes);
    const auto decode_slice = [&](unsigned t) {
      const Slice s = SliceOf(n, kStreamGranule, t, threads);
      if (s.end == s.begin) return;
      kernel.run(in.data() + KernelInBytes(kernel, s.begin), s.end - s.begin,
                 out.data() + KernelOutBytes(kernel, s.begin));
    };
    for (int r = 0; r < reps; ++r) {  // kernel and floor in turn, so both see the same machine
      row.kernel_s = std::min(row.kernel_s, team.Run(threads, decode_slice));
      row.copy_s = std::min(
          row.copy_s, TimeSlicedCopy(team, threads, copy.src.data(), copy.dst.data(), copy_bytes));
    }
    if (check) {
      const size_t at = FirstDifference(out.data(), expected.data(), out_bytes);
      row.same_as_one_thread = at == out_bytes;
      if (!row.same_as_one_thread) {
        std::fprintf(stderr,
                     "kernel_scaling: %.*s at %u threads: output byte %zu of %zu differs from one "
                     "single-threaded call (0x%02x, expected 0x%02x)\n",
                     static_cast<int>(kernel.name.size()), kernel.name.data(), threads, at,
                     out_bytes, out.data()[at], expected[at]);
        all_same = false;
      }
    }
    rows.push_back(row);
  }

  const double traffic = static_cast<double>(in_bytes + out_bytes);
  for (const Row& row : rows) {
    const double kernel_gbps = traffic / row.kernel_s / 1e9;
    const double copy_gbps = 2.0 * static_cast<double>(copy_bytes) / row.copy_s / 1e9;
    std::printf("| %.*s | %s | %u | %.1f | %.1f | %.0f %% | %.3f |%s\n",
                static_cast<int>(kernel.name.size()), kernel.name.data(),
                std::string(TargetName(kernel.probe())).c_str(), row.threads, kernel_gbps,
                copy_gbps, 100.0 * kernel_gbps / copy_gbps,
                row.kernel_s * 1e9 / static_cast<double>(n),
                check ? (row.same_as_one_thread ? " same |" : " DIFFERS |") : "");
  }
  std::fflush(stdout);
  return all_same;
}

int Usage() {
  std::fprintf(
      stderr,
      "usage: kernel_scaling [--kernel NAME]... [--threads \"1 2 4 8 16\"] [--reps 3] [--mib M] "
      "[--check]\n"
      "Registry kernels (names as `amn bench` prints them) decoding one big buffer sliced among\n"
      "N threads, against the N-thread memcpy floor of the same bytes. Default kernels:");
  for (std::string_view name : kDefaultKernels) {
    std::fprintf(stderr, " %.*s", static_cast<int>(name.size()), name.data());
  }
  std::fprintf(
      stderr,
      ".\n--mib: input + output MiB per kernel (default max(1024, 4 x LLC)); --check: compare\n"
      "every thread count's output with a single-threaded call. AMN_ISA=NAME caps dispatch.\n");
  return 2;
}

int Main(int argc, char** argv) {
  std::vector<std::string> names;
  std::vector<unsigned> counts = DefaultThreadCounts();
  int reps = 3;
  size_t mib = 0;
  bool check = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--kernel" && has_value)
      names.emplace_back(argv[++i]);
    else if (a == "--threads" && has_value)
      counts = ParseThreadList(argv[++i]);
    else if (a == "--reps" && has_value)
      reps = std::atoi(argv[++i]);
    else if (a == "--mib" && has_value)
      mib = std::strtoull(argv[++i], nullptr, 10);
    else if (a == "--check")
      check = true;
    else
      return Usage();
  }
  if (counts.empty() || reps < 1) return Usage();
  if (const Status env = EnvironmentTargetStatus(); !env.ok()) {
    std::fprintf(stderr, "kernel_scaling: %s\n", env.message().c_str());
    return 2;
  }
  if (names.empty()) names.assign(std::begin(kDefaultKernels), std::end(kDefaultKernels));
  std::vector<const KernelInfo*> kernels;
  for (const std::string& name : names) {
    const auto& all = Kernels();
    const auto it =
        std::find_if(all.begin(), all.end(), [&](const KernelInfo& k) { return k.name == name; });
    if (it == all.end()) {
      std::fprintf(stderr,
                   "kernel_scaling: no kernel named '%s' (`amn bench --quick` lists them)\n",
                   name.c_str());
      return 2;
    }
    kernels.push_back(&*it);
  }

  const CpuDescription cpu = DescribeCpu();
  if (mib == 0) mib = DefaultFloorMib(cpu.llc_bytes);
  const char* isa = std::getenv("AMN_ISA");
  const std::string cap =
      isa != nullptr && *isa != '\0' ? std::string(" (AMN_ISA=") + isa + ")" : "";
  std::printf(
      "kernel_scaling: %s, %u cores, LLC %zu KiB (L%d), input + output >= %zu MiB per kernel, "
      "best of %d; active target %s%s\n\n",
      cpu.model.empty() ? "unknown CPU" : cpu.model.c_str(),
      std::max(1u, std::thread::hardware_concurrency()), cpu.llc_bytes >> 10, cpu.llc_level, mib,
      reps, std::string(TargetName(ActiveTarget())).c_str(), cap.c_str());
  std::printf(
      "| kernel | target | threads | kernel GB/s | copy floor GB/s | %% of floor | ns/element "
      "|%s\n",
      check ? " output |" : "");
  std::printf("|---|---|---|---|---|---|---|%s\n", check ? "---|" : "");

  ThreadTeam team(*std::max_element(counts.begin(), counts.end()));
  std::vector<Sizes> sizes;
  size_t most_copy_bytes = 0;
  for (const KernelInfo* kernel : kernels) {
    sizes.push_back(SizesFor(*kernel, mib << 20));
    most_copy_bytes = std::max(most_copy_bytes, sizes.back().copy_bytes);
  }
  bool all_same = true;
  try {
    CopyBuffers copy{UntouchedBytes(most_copy_bytes), UntouchedBytes(most_copy_bytes)};
    TouchSlices(team, {&copy.src, &copy.dst});
    std::memset(copy.src.data(), 0x5A, most_copy_bytes);
    for (size_t k = 0; k < kernels.size(); ++k) {
      all_same &= MeasureKernel(*kernels[k], sizes[k], counts, reps, check, team, copy);
    }
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr,
                 "kernel_scaling: cannot allocate the buffers for %zu MiB (try a smaller --mib)\n",
                 mib);
    return 1;
  }
  std::printf(
      "\nGB/s: 1e9 bytes/s of memory traffic, the kernel's input + output bytes over the wall time "
      "of all threads; the floor is memcpy of the same bytes (read + write counted).\n");
  return all_same ? 0 : 1;
}

}  // namespace
}  // namespace amn::perf

int main(int argc, char** argv) { return amn::perf::Main(argc, argv); }
