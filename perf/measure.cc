// Floors and kernel timing for `amn bench` and perf/ (DESIGN.md §8).
#include "perf/measure.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

#include "amn/targets.h"

namespace amn::perf {
namespace {

// Keeps the compiler from dropping stores to a buffer nobody reads.
inline void Clobber(void* p) { asm volatile("" : : "r"(p) : "memory"); }

double NowNs() {
  return static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                 std::chrono::steady_clock::now().time_since_epoch())
                                 .count());
}

// xorshift64*: reproducible, fast, good enough for benchmark inputs.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed | 1) {}
  uint64_t Next() {
    state_ ^= state_ >> 12;
    state_ ^= state_ << 25;
    state_ ^= state_ >> 27;
    return state_ * 0x2545F4914F6CDD1Dull;
  }

 private:
  uint64_t state_;
};

// A finite value of `type` as little-endian bytes, spread like weights.
void FillFinite(ElemType type, unsigned char* out, size_t n, Rng& rng) {
  for (size_t i = 0; i < n; ++i) {
    const uint64_t r = rng.Next();
    switch (type) {
      case ElemType::kF32: {
        const float v = static_cast<float>(static_cast<int32_t>(r)) * 0x1.0p-29f;  // ±4
        std::memcpy(out + 4 * i, &v, 4);
        break;
      }
      case ElemType::kF16:
      case ElemType::kBf16: {
        uint16_t v = static_cast<uint16_t>(r);
        const uint16_t exp_mask = type == ElemType::kF16 ? 0x7C00 : 0x7F80;
        if ((v & exp_mask) == exp_mask) v = static_cast<uint16_t>(v ^ 0x4000);  // not Inf/NaN
        std::memcpy(out + 2 * i, &v, 2);
        break;
      }
      case ElemType::kF8E4m3: {
        uint8_t v = static_cast<uint8_t>(r);
        if ((v & 0x7F) == 0x7F) v ^= 0x40;  // not NaN
        out[i] = v;
        break;
      }
      case ElemType::kF8E5m2: {
        uint8_t v = static_cast<uint8_t>(r);
        if ((v & 0x7C) == 0x7C) v ^= 0x40;  // not Inf/NaN
        out[i] = v;
        break;
      }
    }
  }
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

double BytesPerNsToGbps(double bytes, double ns) { return ns > 0 ? bytes / ns : 0; }

}  // namespace

double Floors::StreamNsPerElem(size_t in_bytes_per_elem, size_t out_bytes_per_elem) const {
  const double write = static_cast<double>(out_bytes_per_elem) / write_gbps;
  const double copy =
      static_cast<double>(in_bytes_per_elem + out_bytes_per_elem) / copy_traffic_gbps;
  return std::max(write, copy);
}

double Floors::CacheNsPerElem(size_t out_bytes_per_elem) const {
  return static_cast<double>(out_bytes_per_elem) / l2_write_gbps;
}

Timing TimeCalls(const std::function<void()>& call, int reps, double min_batch_ns) {
  double start = NowNs();
  call();  // warm-up: faults pages in, fills caches and the dispatch table
  const double first = NowNs() - start;
  const size_t batch =
      first >= min_batch_ns ? 1 : static_cast<size_t>(std::ceil(min_batch_ns / std::max(first, 1.0)));
  std::vector<double> per_call;
  for (int r = 0; r < std::max(reps, 1); ++r) {
    start = NowNs();
    for (size_t i = 0; i < batch; ++i) call();
    per_call.push_back((NowNs() - start) / static_cast<double>(batch));
  }
  Timing timing;
  timing.median_ns = Median(per_call);
  timing.min_ns = *std::min_element(per_call.begin(), per_call.end());
  timing.max_ns = *std::max_element(per_call.begin(), per_call.end());
  return timing;
}

Floors MeasureFloors(size_t floor_bytes, int reps) {
  Floors floors;
  floors.floor_bytes = floor_bytes;
  AlignedBytes a(floor_bytes), b(floor_bytes);
  const double bytes = static_cast<double>(floor_bytes);
  const Timing write = TimeCalls(
      [&] {
        std::memset(a.data(), 3, a.size());
        Clobber(a.data());
      },
      reps);
  floors.write_gbps = BytesPerNsToGbps(bytes, write.median_ns);
  const Timing copy = TimeCalls(
      [&] {
        std::memcpy(b.data(), a.data(), a.size());
        Clobber(b.data());
      },
      reps);
  floors.copy_traffic_gbps = BytesPerNsToGbps(2 * bytes, copy.median_ns);
  AlignedBytes l2(kL2Bytes);
  const Timing l2_write = TimeCalls(
      [&] {
        std::memset(l2.data(), 5, l2.size());
        Clobber(l2.data());
      },
      std::max(reps, 5), 1e6);
  floors.l2_write_gbps = BytesPerNsToGbps(static_cast<double>(kL2Bytes), l2_write.median_ns);
  return floors;
}

AlignedBytes::AlignedBytes(size_t n_bytes)
    : data_(static_cast<unsigned char*>(std::aligned_alloc(64, (n_bytes + 63) / 64 * 64 + 64))),
      size_(n_bytes) {
  if (data_ == nullptr) throw std::bad_alloc();
  std::memset(data_.get(), 0, size_);  // fault the pages in before timing
}

void AlignedBytes::Free::operator()(unsigned char* p) const { std::free(p); }

KernelBuffers::KernelBuffers(const KernelInfo& kernel, size_t n_elems)
    : n_elems_(n_elems),
      in_(KernelInBytes(kernel, n_elems)),
      out_(KernelOutBytes(kernel, n_elems)) {
  Rng rng(0x616D6E + n_elems);
  if (kernel.in_block_bytes == 0) {
    FillFinite(kernel.in, in_.data(), n_elems, rng);
  } else {
    // Quantized blocks: arbitrary bytes are valid. Their f16 scales may be
    // Inf/NaN (about 3% of blocks, 6% with two scales), which then take the
    // kernels' per-block special path, as such blocks would in a real file.
    for (size_t i = 0; i < in_.size(); ++i) in_.data()[i] = static_cast<unsigned char>(rng.Next());
  }
}

BenchConfig BenchConfig::Quick() {
  BenchConfig config;
  config.stream_elems = size_t{1} << 23;
  config.floor_bytes = size_t{64} << 20;
  return config;
}

namespace {

// The streaming size of a kernel whose cache-resident calls took
// `cache_ns_per_elem` at worst: config.stream_elems, unless one call would
// then take longer than kStreamCallBudgetNs. Such kernels (the I-quant
// encoders, about 1 us per element) are bound by arithmetic: at that speed
// they move well under 1 % of the memory floor's bytes, so a smaller buffer
// gives the same ns per element, in seconds instead of the minutes per
// target 4096 x 11008 elements would take. The row's n_elems says which
// size ran. Whole multiples of the cache size keep every block size whole.
size_t StreamElems(const BenchConfig& config, double cache_ns_per_elem) {
  constexpr double kStreamCallBudgetNs = 0.25e9;
  if (cache_ns_per_elem * static_cast<double>(config.stream_elems) <= kStreamCallBudgetNs) {
    return config.stream_elems;
  }
  const size_t fits = static_cast<size_t>(kStreamCallBudgetNs / cache_ns_per_elem);
  return std::max<size_t>(1, fits / config.cache_elems) * config.cache_elems;
}

}  // namespace

BenchReport RunBench(const BenchConfig& config,
                     const std::function<void(const std::string&)>& progress) {
  BenchReport report;
  report.config = config;
  if (progress) progress("measuring memory floors");
  report.floors = MeasureFloors(config.floor_bytes, config.reps);

  std::vector<TargetId> targets;
  for (const TargetInfo& info : ListTargets()) {
    if (config.every_supported_target ? info.supported : info.allowed) {
      targets.push_back(info.id);
      report.targets.push_back(info.name);
    }
  }
  for (const KernelInfo& kernel : Kernels()) {
    if (kernel.name.find(config.kernel_filter) == std::string_view::npos) continue;
    // Block inputs: whole input bytes per element, rounded up, for the floor.
    const size_t in_bytes = (KernelInBytes(kernel, 1024) + 1023) / 1024;
    // Encoders: whole output bytes per element, rounded up, for the floor.
    const size_t out_bytes = (KernelOutBytes(kernel, 1024) + 1023) / 1024;
    double slowest_cache_ns = 0;  // per element, over this kernel's cache rows
    for (const bool stream : {false, true}) {
      const size_t n = stream ? StreamElems(config, slowest_cache_ns) : config.cache_elems;
      const double floor_ns =
          stream ? report.floors.StreamNsPerElem(in_bytes, out_bytes)
                 : report.floors.CacheNsPerElem(out_bytes);
      KernelBuffers buffers(kernel, n);
      auto make_row = [&](std::string target, const Timing& timing) {
        BenchRow row;
        row.kernel = std::string(kernel.name);
        row.target = std::move(target);
        row.size = stream ? "stream" : "cache";
        row.n_elems = n;
        row.timing = timing;
        row.ns_per_elem = timing.median_ns / static_cast<double>(n);
        row.gbps = BytesPerNsToGbps(static_cast<double>(KernelInBytes(kernel, n) +
                                                        KernelOutBytes(kernel, n)),
                                    timing.median_ns);
        row.floor_ns_per_elem = floor_ns;
        row.ratio_to_floor = row.ns_per_elem / floor_ns;
        return row;
      };
      std::vector<BenchRow> rows;
      double reference_ns = 0;
      if (config.include_reference) {
        if (progress) progress(std::string(kernel.name) + " " + (stream ? "stream" : "cache") + " reference");
        rows.push_back(make_row("reference", TimeCalls([&] {
          kernel.run_reference(buffers.in(), n, buffers.out());
        }, config.reps)));
        reference_ns = rows.back().ns_per_elem;
      }
      for (TargetId target : targets) {
        if (progress) progress(std::string(kernel.name) + " " + (stream ? "stream" : "cache") + " " + std::string(TargetName(target)));
        if (!ForceTarget(target).ok()) continue;
        rows.push_back(make_row(std::string(TargetName(target)), TimeCalls([&] {
          kernel.run(buffers.in(), n, buffers.out());
        }, config.reps)));
        ClearForcedTarget();
      }
      for (BenchRow& row : rows) {
        if (!stream) slowest_cache_ns = std::max(slowest_cache_ns, row.ns_per_elem);
        row.speedup_vs_reference = reference_ns > 0 ? reference_ns / row.ns_per_elem : 0;
        report.rows.push_back(std::move(row));
      }
    }
  }
  return report;
}

}  // namespace amn::perf
