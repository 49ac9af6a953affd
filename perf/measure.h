// Measuring code shared by `amn bench` and the Google Benchmark suites in
// perf/: the memory floors of DESIGN.md §8 and per-kernel, per-target timing.
// Benchmarks are not tests: nothing here asserts a speed.
#ifndef AMN_PERF_MEASURE_H_
#define AMN_PERF_MEASURE_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "amn/kernel_registry.h"

namespace amn::perf {

// Sizes of DESIGN.md §8.
inline constexpr size_t kCacheElems = 65536;
inline constexpr size_t kStreamElems = size_t{4096} * 11008;
inline constexpr size_t kFloorBytes = size_t{256} << 20;
inline constexpr size_t kL2Bytes = size_t{256} << 10;

// Memory speeds measured in this process, in GB/s (1e9 bytes per second).
struct Floors {
  double write_gbps = 0;         // memset of floor_bytes
  double copy_traffic_gbps = 0;  // memcpy of floor_bytes, read + write bytes
  double l2_write_gbps = 0;      // memset of an L2-resident 256 KiB buffer
  size_t floor_bytes = 0;

  // Lowest possible ns/element for a streaming run: the larger of writing the
  // output at memset speed and moving input + output at memcpy traffic speed.
  double StreamNsPerElem(size_t in_bytes_per_elem, size_t out_bytes_per_elem) const;
  // Lowest possible ns/element cache-resident: the output at L2 write speed.
  double CacheNsPerElem(size_t out_bytes_per_elem) const;
};

Floors MeasureFloors(size_t floor_bytes, int reps);

// Median, fastest and slowest of `reps` timed batches, in ns per call.
struct Timing {
  double median_ns = 0;
  double min_ns = 0;
  double max_ns = 0;
};

// Runs `call` once to warm up, then times `reps` batches of enough calls to
// last at least min_batch_ns each, and reports per-call times.
Timing TimeCalls(const std::function<void()>& call, int reps, double min_batch_ns = 2e5);

// 64-byte aligned bytes (malloc's large blocks start 16 bytes past a page,
// which would make every AVX-512 access split a cache line).
class AlignedBytes {
 public:
  explicit AlignedBytes(size_t n_bytes);
  unsigned char* data() { return data_.get(); }
  const unsigned char* data() const { return data_.get(); }
  size_t size() const { return size_; }

 private:
  struct Free {
    void operator()(unsigned char* p) const;
  };
  std::unique_ptr<unsigned char, Free> data_;
  size_t size_;
};

// Buffers for one kernel at one size, input filled with reproducible
// pseudo-random finite values of the kernel's input type.
class KernelBuffers {
 public:
  KernelBuffers(const KernelInfo& kernel, size_t n_elems);
  const void* in() const { return in_.data(); }
  void* out() { return out_.data(); }
  size_t n_elems() const { return n_elems_; }

 private:
  size_t n_elems_;
  AlignedBytes in_;
  AlignedBytes out_;
};

struct BenchConfig {
  size_t cache_elems = kCacheElems;
  size_t stream_elems = kStreamElems;
  size_t floor_bytes = kFloorBytes;
  int reps = 5;
  std::string kernel_filter;  // substring of the kernel name; empty = all
  bool include_reference = true;
  // Every target this CPU supports, above the cap (AMN_ISA / --isa) too;
  // otherwise only the allowed ones.
  bool every_supported_target = false;

  static BenchConfig Quick();  // smaller streaming size and floor buffers
};

struct BenchRow {
  std::string kernel;
  std::string target;  // a target name, or "reference" for kernels/ref
  std::string size;    // "cache" or "stream"
  size_t n_elems = 0;
  Timing timing;
  double ns_per_elem = 0;       // median
  double gbps = 0;              // (input + output bytes) / median time
  double floor_ns_per_elem = 0;
  double ratio_to_floor = 0;    // ns_per_elem / floor_ns_per_elem
  double speedup_vs_reference = 0;  // reference ns / this ns (same size)
};

struct BenchReport {
  BenchConfig config;
  Floors floors;
  std::vector<std::string> targets;  // the targets timed, best first
  std::vector<BenchRow> rows;
};

// Every kernel matching the filter x every allowed (or, with
// every_supported_target, supported) target (+ reference) x
// both sizes, one thread. `progress` (may be empty) hears each step.
BenchReport RunBench(const BenchConfig& config,
                     const std::function<void(const std::string&)>& progress);

}  // namespace amn::perf

#endif  // AMN_PERF_MEASURE_H_
