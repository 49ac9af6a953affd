// Measuring code shared by `amn bench` and the Google Benchmark suites in
// perf/: the memory floors of DESIGN.md §8 and per-kernel, per-target timing.
// Benchmarks are not tests: nothing here asserts a speed.
#ifndef AMN_PERF_MEASURE_H_
#define AMN_PERF_MEASURE_H_

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "amn/kernel_registry.h"
#include "amn/targets.h"
#include "dispatch/sample_layers.h"
#include "perf/page_bytes.h"

namespace amn::perf {

// Sizes of DESIGN.md §8. kStreamElems is the smallest streaming size; the
// floor buffers of kFloorBytes stand in for 4x the last-level cache when the
// CPU does not say how large that is.
inline constexpr size_t kCacheElems = 65536;
inline constexpr size_t kStreamElems = size_t{4096} * 11008;
inline constexpr size_t kFloorBytes = size_t{256} << 20;
inline constexpr size_t kLlcMultiple = 4;  // streaming buffers >= 4x the LLC
// Streaming sizes are whole multiples of the slab (4096 x 128 elements) at
// which the GPTQ/AWQ samples decode a real-shaped layer
// (dispatch/sample_layers.h); every block size divides it.
inline constexpr size_t kStreamGranule = internal::kLayerSlabElems;

// The streaming element count for a kernel moving `bytes_per_elem` (input +
// output) per element: at least min_elems, and enough elements that input +
// output fill kLlcMultiple x llc_bytes, so no cache holds a useful part of
// them. Rounded up to a whole multiple of kStreamGranule. llc_bytes 0
// (unknown) gives min_elems rounded so.
size_t StreamElemsFor(size_t llc_bytes, double bytes_per_elem, size_t min_elems);

// The smallest floor buffer (memset bytes, memcpy read + write bytes):
// kLlcMultiple x llc_bytes, or unknown_llc_bytes when llc_bytes is 0.
size_t MinFloorBytes(size_t llc_bytes, size_t unknown_llc_bytes);

// Bytes as whole MiB, rounded to nearest ("256 MiB"), for the tables.
std::string Mib(size_t bytes);

// A size in bytes with an optional K/M/G suffix (powers of 1024), at most
// 4 GiB, as `amn bench --llc` takes it (perf/kernels_bench and perf/ggml_peer
// --llc=); nullopt when it is not one.
std::optional<size_t> ParseSize(const char* text);

// Memory speeds in GB/s (1e9 bytes per second).
struct Floors {
  double write_gbps = 0;         // memset of a streaming buffer
  double copy_traffic_gbps = 0;  // memcpy of a streaming buffer, read + write bytes
  // ShapedCopy (perf/shaped_copy.h) at one kernel's input and output bytes,
  // read + write bytes; 0 when not measured.
  double shaped_traffic_gbps = 0;
  double l2_write_gbps = 0;  // memset of a buffer that stays in L2 (bench: its output)

  // Lowest possible ns/element for a streaming run: the faster of two ways
  // of moving the bytes. The memset/memcpy model is the larger of writing the
  // output at memset speed and moving input + output at memcpy traffic speed;
  // it prices a read like a write, and glibc's memcpy changes its stores with
  // size, so a kernel of another read:write ratio can beat it. The shaped
  // copy moves the kernel's own bytes at its own ratio (when measured).
  double StreamNsPerElem(double in_bytes_per_elem, double out_bytes_per_elem) const;
  // Lowest possible ns/element cache-resident: the output at L2 write speed.
  double CacheNsPerElem(double out_bytes_per_elem) const;
};

// memset of `bytes`, in bytes/ns, the fastest of `reps` (noise only slows a
// floor down, so the best run is the closest to the hardware's limit).
double MeasureWriteGbps(size_t bytes, int reps);
// memcpy between two buffers of traffic_bytes / 2, read + write bytes/ns,
// the fastest of `reps`.
double MeasureCopyTrafficGbps(size_t traffic_bytes, int reps);

// The bytes one kernel's floor is measured at, for its rows of n_elems:
// streaming, a memset of its output bytes, a memcpy moving its input +
// output bytes and a shaped copy of both, each at least min_floor_bytes
// (MinFloorBytes) so no cache holds them; cache-resident, a memset of its output bytes (they stay
// in L2, as the rows rewrite the same output over and over).
struct FloorSizes {
  bool stream = false;
  size_t write_bytes = 0;
  size_t copy_bytes = 0;  // read + write; 0 for cache-resident
  // The shaped copy's input and output: the kernel's own bytes, times the
  // smallest whole factor that makes them at least min_floor_bytes together;
  // 0 for cache-resident.
  size_t shaped_in_bytes = 0;
  size_t shaped_out_bytes = 0;
};
FloorSizes KernelFloorSizes(const KernelInfo& kernel, size_t n_elems, bool stream,
                            size_t min_floor_bytes);

// The lowest possible ns per element of `kernel`'s row of n_elems against
// `floor`, with the exact bytes per element (Q4_K input: 144 / 256).
double FloorNsPerElem(const KernelInfo& kernel, size_t n_elems, bool stream, const Floors& floor);

// The fastest floors a run has measured so far: streaming write and copy over
// every kernel, shaped copies per input and output bytes, cache writes per
// buffer size. Every row is judged against these, never against a slower
// floor taken while the machine was busier, so no kernel can beat its floor
// (DESIGN.md §8).
class BestFloors {
 public:
  using ShapedBytes = std::pair<size_t, size_t>;  // shaped_in_bytes, shaped_out_bytes

  // Measures the floor at `sizes` now, the fastest of `reps` (cache-resident:
  // of at least 5), keeps it if it is the fastest so far and returns For(sizes).
  Floors Measure(const FloorSizes& sizes, int reps);
  // Only the shaped copy of streaming `sizes` (cheap enough to take before
  // every row, interleaved with the kernel's targets); keeps it if fastest.
  void MeasureShaped(const FloorSizes& sizes, int reps);
  // Keeps these speeds (GB/s) where they beat the fastest so far (copy_gbps
  // and shaped_gbps are ignored for cache-resident sizes, shaped_gbps when
  // the sizes have no shaped copy). Measure's bookkeeping, pure.
  void Keep(const FloorSizes& sizes, double write_gbps, double copy_gbps, double shaped_gbps = 0);
  // The fastest so far for rows measured at `sizes`: streaming write and
  // copy, and the shaped copy of sizes' bytes, or cache write (as
  // l2_write_gbps) of sizes.write_bytes; 0 where none yet.
  Floors For(const FloorSizes& sizes) const;
  const Floors& stream() const { return stream_; }  // l2_write_gbps, shaped unused
  const std::map<size_t, double>& cache_write_gbps() const { return cache_write_gbps_; }
  const std::map<ShapedBytes, double>& shaped_traffic_gbps() const { return shaped_gbps_; }

 private:
  Floors stream_;
  std::map<size_t, double> cache_write_gbps_;  // by buffer bytes
  std::map<ShapedBytes, double> shaped_gbps_;
};

// The streaming size of one row: `full` (StreamElemsFor), unless the row is
// bound by arithmetic: its own cache-resident call (`cache_ns_per_elem`, same
// kernel and target) is at least 10x its streaming floor, and one call at
// `full` would take longer than 0.25 s. Such rows (the encoders, the I-quant
// ones about 1 us per element; scalar code) move memory at under a tenth of
// the floor's speed, so a smaller buffer gives the same ns per element, in
// seconds instead of minutes per target; `shortened` says so. A whole
// multiple of kStreamGranule where one fits the time, else of cache_elems
// (every block size divides it), at least one.
size_t ComputeBoundStreamElems(size_t full, double cache_ns_per_elem, double floor_ns_per_elem,
                               size_t cache_elems, bool& shortened);

// Median, fastest and slowest of `reps` timed batches, in ns per call.
struct Timing {
  double median_ns = 0;
  double min_ns = 0;
  double max_ns = 0;
};

// Runs `call` once to warm up, then times `reps` batches of enough calls to
// last at least min_batch_ns each, and reports per-call times.
Timing TimeCalls(const std::function<void()>& call, int reps, double min_batch_ns = 2e5);

// Page-aligned bytes with every page faulted in (zeros) before timing
// (malloc's large blocks start 16 bytes past a page, which would make every
// AVX-512 access split a cache line).
class AlignedBytes : public UntouchedBytes {
 public:
  explicit AlignedBytes(size_t n_bytes);
};

// Writes KernelInBytes(kernel, n_elems) bytes of the input `amn bench` times,
// the same for the same n_elems: reproducible weight-like finite values of
// the kernel's input type; for GGUF decoders the blocks amn's encoder makes
// of weight-like values (perf/gguf_sample_blocks.h), tiled; for the other
// packed inputs random code bytes.
void FillKernelInput(const KernelInfo& kernel, size_t n_elems, unsigned char* in);

// Buffers for one kernel at one size, the input filled by FillKernelInput.
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
  size_t stream_elems = kStreamElems;            // the smallest streaming size
  size_t llc_bytes = 0;                          // last-level cache; 0 = unknown
  size_t unknown_llc_floor_bytes = kFloorBytes;  // floor buffers when llc_bytes is 0
  int reps = 5;
  std::string kernel_filter;  // substring of the kernel name; empty = all
  bool include_reference = true;
  // Every target this CPU supports, above the cap (AMN_ISA / --isa) too;
  // otherwise only the allowed ones.
  bool every_supported_target = false;
  // Only these targets (each one that would otherwise be timed); empty = all.
  std::vector<TargetId> only_targets;

  static BenchConfig Quick();  // smaller minimum streaming size and floor buffers
};

struct BenchRow {
  std::string kernel;
  std::string target;  // a target name, or "reference" for kernels/ref
  std::string size;    // "cache" or "stream"
  size_t n_elems = 0;
  Timing timing;
  double ns_per_elem = 0;  // median
  double gbps = 0;         // (input + output bytes) / median time
  size_t in_bytes = 0, out_bytes = 0;
  // A streaming row bound by arithmetic ran fewer elements (ComputeBoundStreamElems).
  bool compute_bound_size = false;
  // The floor this row is judged against: the fastest speeds of the whole
  // run for its class (BestFloors::For of floor_sizes), and the bytes of its
  // kernel's own floor measurements, taken just before and just after the
  // group's rows (kernel x size).
  Floors floor;
  FloorSizes floor_sizes;
  double floor_ns_per_elem = 0;
  double ratio_to_floor = 0;        // ns_per_elem / floor_ns_per_elem
  double speedup_vs_reference = 0;  // reference ns / this ns (same size)
};

struct BenchReport {
  BenchConfig config;
  BestFloors floors;                 // the fastest floors of the run
  std::vector<std::string> targets;  // the targets timed, best first
  std::vector<BenchRow> rows;
};

// Every kernel matching the filter x every allowed (or, with
// every_supported_target, supported; or only_targets) target (+ reference) x
// both sizes, one thread. The floors are measured again before and after
// each kernel's cache rows and its streaming rows, at that kernel's byte
// sizes, and every row is judged against the fastest of the whole run
// (DESIGN.md §8), so a floor taken while the machine was busier, before or
// after the row, cannot let it beat its floor.
// `progress` (may be empty) hears each step.
BenchReport RunBench(const BenchConfig& config,
                     const std::function<void(const std::string&)>& progress);

}  // namespace amn::perf

#endif  // AMN_PERF_MEASURE_H_
