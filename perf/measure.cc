// Floors and kernel timing for `amn bench` and perf/ (DESIGN.md §8).
#include "perf/measure.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>

#include "amn/targets.h"
#include "perf/gguf_sample_blocks.h"
#include "perf/shaped_copy.h"

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

// v (finite, |v| < 65504) to F16 bits, round to nearest even.
uint16_t F16Bits(float v) {
  const uint32_t bits = std::bit_cast<uint32_t>(v);
  const auto sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
  const float mag = std::fabs(v);
  if (mag < 0x1.0p-14f) {  // F16 subnormal: units of 2^-24 (a power-of-two scaling, exact)
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(std::nearbyint(mag * 0x1.0p24f)));
  }
  const uint32_t m = bits & 0x7FFFFFFF;
  const uint32_t rounded = (m + 0xFFF + ((m >> 13) & 1)) >> 13;  // exponent rebias below
  return static_cast<uint16_t>(sign | (rounded - (112u << 10)));
}

// A finite value of `type` as little-endian bytes, spread like weights:
// uniform in ±4 (F32, and rounded from it for BF16/F16). Random BF16
// patterns instead spread the exponents over F32's whole range and make
// most quotients such as x / absmax subnormal, unlike weights': that cost
// the encoders 4–7× on the development VM's Intel host (docs/performance/encoders.md,
// "Encoder inputs like weights").
void FillFinite(ElemType type, unsigned char* out, size_t n, Rng& rng) {
  for (size_t i = 0; i < n; ++i) {
    const uint64_t r = rng.Next();
    const float v = static_cast<float>(static_cast<int32_t>(r)) * 0x1.0p-29f;  // ±4
    switch (type) {
      case ElemType::kF32: std::memcpy(out + 4 * i, &v, 4); break;
      case ElemType::kBf16: {
        const uint32_t bits = std::bit_cast<uint32_t>(v);
        const auto h = static_cast<uint16_t>((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16);
        std::memcpy(out + 2 * i, &h, 2);
        break;
      }
      case ElemType::kF16: {
        const uint16_t h = F16Bits(v);
        std::memcpy(out + 2 * i, &h, 2);
        break;
      }
      case ElemType::kF8E4m3: {
        uint8_t code = static_cast<uint8_t>(r);
        if ((code & 0x7F) == 0x7F) code ^= 0x40;  // not NaN
        out[i] = code;
        break;
      }
      case ElemType::kF8E5m2: {
        uint8_t code = static_cast<uint8_t>(r);
        if ((code & 0x7C) == 0x7C) code ^= 0x40;  // not Inf/NaN
        out[i] = code;
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

size_t StreamElemsFor(size_t llc_bytes, double bytes_per_elem, size_t min_elems) {
  size_t n = min_elems;
  if (llc_bytes > 0 && bytes_per_elem > 0) {
    const double fill = static_cast<double>(kLlcMultiple * llc_bytes) / bytes_per_elem;
    n = std::max(n, static_cast<size_t>(std::ceil(fill)));
  }
  return (n + kStreamGranule - 1) / kStreamGranule * kStreamGranule;
}

size_t MinFloorBytes(size_t llc_bytes, size_t unknown_llc_bytes) {
  return llc_bytes > 0 ? kLlcMultiple * llc_bytes : unknown_llc_bytes;
}

std::string Mib(size_t bytes) { return std::to_string((bytes + (1 << 19)) >> 20) + " MiB"; }

std::optional<size_t> ParseSize(const char* text) {
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text, &end, 10);
  if (end == text || text[0] == '-') return std::nullopt;
  int shift = 0;
  if (*end == 'K' || *end == 'k') shift = 10;
  if (*end == 'M' || *end == 'm') shift = 20;
  if (*end == 'G' || *end == 'g') shift = 30;
  if (shift != 0) ++end;
  if (*end != '\0' || value > (uint64_t{4} << 30) >> shift) return std::nullopt;
  return static_cast<size_t>(value) << shift;
}

double Floors::StreamNsPerElem(double in_bytes_per_elem, double out_bytes_per_elem) const {
  const double write = out_bytes_per_elem / write_gbps;
  const double copy = (in_bytes_per_elem + out_bytes_per_elem) / copy_traffic_gbps;
  const double model = std::max(write, copy);
  if (shaped_traffic_gbps <= 0) return model;
  return std::min(model, (in_bytes_per_elem + out_bytes_per_elem) / shaped_traffic_gbps);
}

double Floors::CacheNsPerElem(double out_bytes_per_elem) const {
  return out_bytes_per_elem / l2_write_gbps;
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

double MeasureWriteGbps(size_t bytes, int reps) {
  AlignedBytes a(bytes);
  const Timing write = TimeCalls(
      [&] {
        std::memset(a.data(), 3, a.size());
        Clobber(a.data());
      },
      reps, 1e6);
  return BytesPerNsToGbps(static_cast<double>(bytes), write.min_ns);
}

double MeasureCopyTrafficGbps(size_t traffic_bytes, int reps) {
  AlignedBytes a(traffic_bytes / 2), b(traffic_bytes / 2);
  const Timing copy = TimeCalls(
      [&] {
        std::memcpy(b.data(), a.data(), a.size());
        Clobber(b.data());
      },
      reps);
  return BytesPerNsToGbps(static_cast<double>(2 * a.size()), copy.min_ns);
}

AlignedBytes::AlignedBytes(size_t n_bytes) : UntouchedBytes(n_bytes) {
  std::memset(data(), 0, size());  // fault the pages in before timing
}

void FillKernelInput(const KernelInfo& kernel, size_t n_elems, unsigned char* in) {
  Rng rng(0x616D6E + n_elems);
  if (kernel.in_block_bytes == 0) {
    FillFinite(kernel.in, in, n_elems, rng);
    return;
  }
  const size_t bytes = KernelInBytes(kernel, n_elems);
  const std::span<const uint8_t> sample = GgufSampleBlocks(kernel);
  if (!sample.empty()) {  // GGUF blocks as a model file holds them, tiled
    for (size_t i = 0; i < bytes; i += sample.size()) {
      std::memcpy(in + i, sample.data(), std::min(sample.size(), bytes - i));
    }
    return;
  }
  // Other packed inputs: any bytes are codes of a valid tensor whose scales
  // come from the family's sample (dispatch/kernel_samples.h).
  for (size_t i = 0; i < bytes; ++i) in[i] = static_cast<unsigned char>(rng.Next());
}

KernelBuffers::KernelBuffers(const KernelInfo& kernel, size_t n_elems)
    : n_elems_(n_elems),
      in_(KernelInBytes(kernel, n_elems)),
      out_(KernelOutBytes(kernel, n_elems)) {
  FillKernelInput(kernel, n_elems, in_.data());
}

BenchConfig BenchConfig::Quick() {
  BenchConfig config;
  config.stream_elems = size_t{1} << 23;
  config.unknown_llc_floor_bytes = size_t{64} << 20;
  return config;
}

FloorSizes KernelFloorSizes(const KernelInfo& kernel, size_t n_elems, bool stream,
                            size_t min_floor_bytes) {
  FloorSizes sizes;
  sizes.stream = stream;
  const size_t in_bytes = KernelInBytes(kernel, n_elems);
  const size_t out_bytes = KernelOutBytes(kernel, n_elems);
  if (stream) {
    sizes.write_bytes = std::max(out_bytes, min_floor_bytes);
    sizes.copy_bytes = std::max(in_bytes + out_bytes, min_floor_bytes);
    const size_t traffic = std::max<size_t>(in_bytes + out_bytes, 1);
    const size_t factor = std::max<size_t>(1, (min_floor_bytes + traffic - 1) / traffic);
    sizes.shaped_in_bytes = factor * in_bytes;
    sizes.shaped_out_bytes = factor * out_bytes;
  } else {
    sizes.write_bytes = out_bytes;
  }
  return sizes;
}

double FloorNsPerElem(const KernelInfo& kernel, size_t n_elems, bool stream, const Floors& floor) {
  const double n = static_cast<double>(n_elems);
  const double in = static_cast<double>(KernelInBytes(kernel, n_elems)) / n;
  const double out = static_cast<double>(KernelOutBytes(kernel, n_elems)) / n;
  return stream ? floor.StreamNsPerElem(in, out) : floor.CacheNsPerElem(out);
}

void BestFloors::Keep(const FloorSizes& sizes, double write_gbps, double copy_gbps,
                      double shaped_gbps) {
  if (sizes.stream) {
    stream_.write_gbps = std::max(stream_.write_gbps, write_gbps);
    stream_.copy_traffic_gbps = std::max(stream_.copy_traffic_gbps, copy_gbps);
    if (sizes.shaped_out_bytes > 0 && shaped_gbps > 0) {
      double& best = shaped_gbps_[{sizes.shaped_in_bytes, sizes.shaped_out_bytes}];
      best = std::max(best, shaped_gbps);
    }
  } else {
    double& best = cache_write_gbps_[sizes.write_bytes];
    best = std::max(best, write_gbps);
  }
}

Floors BestFloors::For(const FloorSizes& sizes) const {
  Floors floor;
  if (sizes.stream) {
    floor.write_gbps = stream_.write_gbps;
    floor.copy_traffic_gbps = stream_.copy_traffic_gbps;
    const auto it = shaped_gbps_.find({sizes.shaped_in_bytes, sizes.shaped_out_bytes});
    floor.shaped_traffic_gbps = it == shaped_gbps_.end() ? 0 : it->second;
  } else {
    const auto it = cache_write_gbps_.find(sizes.write_bytes);
    floor.l2_write_gbps = it == cache_write_gbps_.end() ? 0 : it->second;
  }
  return floor;
}

Floors BestFloors::Measure(const FloorSizes& sizes, int reps) {
  if (sizes.stream) {
    const double write = MeasureWriteGbps(sizes.write_bytes, reps);
    const double copy = MeasureCopyTrafficGbps(sizes.copy_bytes, reps);
    const double shaped =
        sizes.shaped_out_bytes > 0
            ? MeasureShapedTrafficGbps(sizes.shaped_in_bytes, sizes.shaped_out_bytes, reps)
            : 0;
    Keep(sizes, write, copy, shaped);
  } else {
    Keep(sizes, MeasureWriteGbps(sizes.write_bytes, std::max(reps, 5)), 0);
  }
  return For(sizes);
}

void BestFloors::MeasureShaped(const FloorSizes& sizes, int reps) {
  if (!sizes.stream || sizes.shaped_out_bytes == 0) return;
  Keep(sizes, 0, 0, MeasureShapedTrafficGbps(sizes.shaped_in_bytes, sizes.shaped_out_bytes, reps));
}

size_t ComputeBoundStreamElems(size_t full, double cache_ns_per_elem, double floor_ns_per_elem,
                               size_t cache_elems, bool& shortened) {
  constexpr double kComputeBound = 10;
  constexpr double kStreamCallBudgetNs = 0.25e9;
  shortened = cache_ns_per_elem >= kComputeBound * floor_ns_per_elem &&
              cache_ns_per_elem * static_cast<double>(full) > kStreamCallBudgetNs;
  if (!shortened) return full;
  const size_t fits = static_cast<size_t>(kStreamCallBudgetNs / cache_ns_per_elem);
  // Whole streaming granules where one fits (the real-shaped sample layers),
  // else whole cache-sized blocks.
  const size_t unit = fits >= kStreamGranule ? kStreamGranule : cache_elems;
  return std::min(full, std::max<size_t>(1, fits / unit) * unit);
}

BenchReport RunBench(const BenchConfig& config,
                     const std::function<void(const std::string&)>& progress) {
  BenchReport report;
  report.config = config;
  const size_t min_floor_bytes = MinFloorBytes(config.llc_bytes, config.unknown_llc_floor_bytes);

  std::vector<TargetId> targets;
  for (const TargetInfo& info : ListTargets()) {
    const bool wanted =
        config.only_targets.empty() ||
        std::find(config.only_targets.begin(), config.only_targets.end(), info.id) !=
            config.only_targets.end();
    if (wanted && (config.every_supported_target ? info.supported : info.allowed)) {
      targets.push_back(info.id);
      report.targets.push_back(info.name);
    }
  }
  for (const KernelInfo& kernel : Kernels()) {
    if (kernel.name.find(config.kernel_filter) == std::string_view::npos) continue;
    const double bytes_per_elem =
        static_cast<double>(KernelInBytes(kernel, kCacheElems) + KernelOutBytes(kernel, kCacheElems)) /
        kCacheElems;
    std::map<std::string, double> cache_ns;  // ns per element by target, for stream sizes
    for (const bool stream : {false, true}) {
      const std::string step = std::string(kernel.name) + (stream ? " stream " : " cache ");
      if (progress) progress(step + "floor");
      // The floor at the full size, before any buffer of the kernel's exists.
      const size_t full = stream ? StreamElemsFor(config.llc_bytes, bytes_per_elem, config.stream_elems)
                                 : config.cache_elems;
      const FloorSizes floor_sizes = KernelFloorSizes(kernel, full, stream, min_floor_bytes);
      Floors floor = report.floors.Measure(floor_sizes, config.reps);
      BenchRow sizes;
      sizes.floor_sizes = floor_sizes;
      const auto floor_ns_per_elem = [&](size_t elems) {
        return FloorNsPerElem(kernel, elems, stream, floor);
      };
      // The kernel's buffers at the full size; a shortened row uses their start.
      auto buffers = std::make_unique<KernelBuffers>(kernel, full);
      double reference_ns = 0;
      // Times `run` over n elements as one row; n is `full` unless the row
      // is compute-bound (ComputeBoundStreamElems).
      const auto time_row = [&](const std::string& target, RowFn run) {
        BenchRow row = sizes;
        size_t n = full;
        if (stream) {
          n = ComputeBoundStreamElems(full, cache_ns[target], floor_ns_per_elem(full),
                                      config.cache_elems, row.compute_bound_size);
        }
        row.timing = TimeCalls([&] { run(buffers->in(), n, buffers->out()); }, config.reps);
        row.kernel = std::string(kernel.name);
        row.target = target;
        row.size = stream ? "stream" : "cache";
        row.n_elems = n;
        row.in_bytes = KernelInBytes(kernel, n);
        row.out_bytes = KernelOutBytes(kernel, n);
        row.ns_per_elem = row.timing.median_ns / static_cast<double>(n);
        row.gbps = BytesPerNsToGbps(static_cast<double>(row.in_bytes + row.out_bytes),
                                    row.timing.median_ns);
        if (target == "reference") reference_ns = row.ns_per_elem;
        row.speedup_vs_reference = reference_ns > 0 ? reference_ns / row.ns_per_elem : 0;
        if (!stream) cache_ns[target] = row.ns_per_elem;
        report.rows.push_back(std::move(row));
      };
      // The shaped copy again before each streaming row, so the rows and
      // their own floor take turns on the memory (best of all turns); never
      // while a target is forced, which would narrow its stores too.
      const auto floor_turn = [&] {
        if (stream) report.floors.MeasureShaped(floor_sizes, config.reps);
      };
      if (config.include_reference) {
        if (progress) progress(step + "reference");
        floor_turn();
        time_row("reference", kernel.run_reference);
      }
      for (TargetId target : targets) {
        if (progress) progress(step + std::string(TargetName(target)));
        floor_turn();
        if (!ForceTarget(target).ok()) continue;
        time_row(std::string(TargetName(target)), kernel.run);
        ClearForcedTarget();
      }
      // Measured again after the rows (their buffers freed): one more turn
      // for every floor at this kernel's sizes.
      buffers.reset();
      if (progress) progress(step + "floor again");
      report.floors.Measure(floor_sizes, config.reps);
    }
  }
  // Every row against the fastest floors of the whole run.
  for (BenchRow& row : report.rows) {
    row.floor = report.floors.For(row.floor_sizes);
    const double n = static_cast<double>(row.n_elems);
    const double in = static_cast<double>(row.in_bytes) / n;
    const double out = static_cast<double>(row.out_bytes) / n;
    row.floor_ns_per_elem =
        row.floor_sizes.stream ? row.floor.StreamNsPerElem(in, out) : row.floor.CacheNsPerElem(out);
    row.ratio_to_floor = row.ns_per_elem / row.floor_ns_per_elem;
  }
  return report;
}

}  // namespace amn::perf
