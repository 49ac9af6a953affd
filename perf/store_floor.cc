// How fast can one thread write memory, and with which stores? The
// streaming floor of `amn bench` (perf/measure.h) is glibc's memset (`rep
// stosb` at these sizes in glibc 2.36) and memcpy (`rep movsb` below glibc's
// x86_non_temporal_threshold, non-temporal stores above it), or where
// faster a loop of plain stores shaped like the kernel (perf/shaped_copy.h),
// while the
// kernels write with hn::Store, which reads each output line before writing
// it (read-for-ownership) unless the line is already cached. This tool times,
// one thread, on buffers of 4x the last-level cache (or --bytes, e.g. 256K
// for the cache-resident size of `amn bench`, where each sample repeats the
// call over at least 64 MiB of output), interleaved, best of --reps, per
// Highway target (dynamic dispatch, no ISA flags):
//   memset, memcpy                  glibc, the floors
//   store / stream                  hn::Store / hn::Stream of a constant
//   widen store / widen stream      BF16 -> F32 (ShiftLeft<16> of PromoteTo)
//   ... + 4 MiB chunks + memcpy     the widening into one reused 4 MiB chunk,
//                                   each chunk then memcpy'd onward (what the
//                                   ring writer's write(2) does to a chunk;
//                                   only when the buffers are whole chunks)
// GB/s are output bytes (1e9) per second; ns/F32 the time per 4 output bytes
// (comparable with the ns/element of F32 kernel rows); "x memset" is time
// over memset's for the same output bytes. Benchmarks are not tests: nothing
// here asserts a speed.
//
//   store_floor [--llc SIZE | --bytes SIZE] [--reps N] [--targets AVX3_DL,AVX2,SSE4]
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "perf/store_floor.cc"
#include "hwy/cache_control.h"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace amn::perf::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// `out` is vector-aligned and `bytes` a whole number of vectors (the
// buffers are page-aligned, their sizes whole pages).
template <bool kStream>
void FillConstant(unsigned char* out, size_t bytes) {
  const hn::ScalableTag<uint32_t> d;
  // Not a repeated byte: GCC turns a loop storing one into a call of memset.
  const auto v = hn::Set(d, 0x3F800000u);  // 1.0f
  auto* out32 = reinterpret_cast<uint32_t*>(out);
  for (size_t i = 0; i < bytes / 4; i += hn::Lanes(d)) {
    if (kStream) {
      hn::Stream(v, d, out32 + i);
    } else {
      hn::Store(v, d, out32 + i);
    }
  }
  hwy::FlushStream();  // the non-temporal stores are visible before return
}

// BF16 bits -> F32, n_elems a whole number of vectors, `out` aligned.
template <bool kStream>
void WidenBf16(const uint16_t* in, size_t n_elems, float* out) {
  const hn::ScalableTag<uint32_t> du;
  const hn::Rebind<uint16_t, decltype(du)> d16;
  const hn::RebindToFloat<decltype(du)> df;
  for (size_t i = 0; i < n_elems; i += hn::Lanes(du)) {
    const auto f = hn::BitCast(df, hn::ShiftLeft<16>(hn::PromoteTo(du, hn::LoadU(d16, in + i))));
    if (kStream) {
      hn::Stream(f, df, out + i);
    } else {
      hn::Store(f, df, out + i);
    }
  }
  hwy::FlushStream();
}

void StoreConstant(unsigned char* out, size_t bytes) { FillConstant<false>(out, bytes); }
void StreamConstant(unsigned char* out, size_t bytes) { FillConstant<true>(out, bytes); }
void WidenStore(const uint16_t* in, size_t n, float* out) { WidenBf16<false>(in, n, out); }
void WidenStream(const uint16_t* in, size_t n, float* out) { WidenBf16<true>(in, n, out); }

}  // namespace amn::perf::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "amn/targets.h"
#include "perf/cpu_description.h"
#include "perf/measure.h"

namespace amn::perf {
namespace {

HWY_EXPORT(StoreConstant);
HWY_EXPORT(StreamConstant);
HWY_EXPORT(WidenStore);
HWY_EXPORT(WidenStream);

constexpr size_t kChunkBytes = size_t{4} << 20;  // EngineOptions::chunk_bytes

double NowNs() {
  return std::chrono::duration<double, std::nano>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct Buffers {
  explicit Buffers(size_t out_bytes) : out(out_bytes), sink(out_bytes), in(out_bytes / 2) {
    auto* bits = reinterpret_cast<uint16_t*>(in.data());
    for (size_t i = 0; i < in.size() / 2; ++i) {  // BF16 values in [1, 2)
      bits[i] = static_cast<uint16_t>(0x3F80 + (i * 2654435761u >> 20) % 0x0100);
    }
  }
  const uint16_t* Bf16() const { return reinterpret_cast<const uint16_t*>(in.data()); }
  float* F32() { return reinterpret_cast<float*>(out.data()); }
  size_t Elems() const { return out.size() / 4; }
  AlignedBytes out, sink, in;
  AlignedBytes chunk{kChunkBytes};
};

using WidenFn = void (*)(const uint16_t*, size_t, float*);

// The widening of the whole input, 4 MiB of output at a time into one reused
// chunk, each chunk then copied to `sink` at its offset.
void WidenThroughChunk(WidenFn widen, Buffers& b) {
  auto* chunk = reinterpret_cast<float*>(b.chunk.data());
  const size_t chunk_elems = kChunkBytes / 4;
  for (size_t e = 0; e < b.Elems(); e += chunk_elems) {
    widen(b.Bf16() + e, chunk_elems, chunk);
    std::memcpy(b.sink.data() + 4 * e, chunk, kChunkBytes);
  }
}

// The rows; the Highway ones run on whatever target dispatch has chosen.
void MemsetRow(Buffers& b) { std::memset(b.out.data(), 3, b.out.size()); }
void MemcpyRow(Buffers& b) { std::memcpy(b.out.data(), b.sink.data(), b.out.size()); }
void StoreRow(Buffers& b) { HWY_DYNAMIC_DISPATCH(StoreConstant)(b.out.data(), b.out.size()); }
void StreamRow(Buffers& b) { HWY_DYNAMIC_DISPATCH(StreamConstant)(b.out.data(), b.out.size()); }
void WidenStoreRow(Buffers& b) { HWY_DYNAMIC_DISPATCH(WidenStore)(b.Bf16(), b.Elems(), b.F32()); }
void WidenStreamRow(Buffers& b) { HWY_DYNAMIC_DISPATCH(WidenStream)(b.Bf16(), b.Elems(), b.F32()); }
void WidenStoreChunkedRow(Buffers& b) { WidenThroughChunk(HWY_DYNAMIC_DISPATCH(WidenStore), b); }
void WidenStreamChunkedRow(Buffers& b) { WidenThroughChunk(HWY_DYNAMIC_DISPATCH(WidenStream), b); }

// One timed row: its name, its call and its best time over the rounds.
struct Row {
  const char* name;
  void (*run)(Buffers&);
  double best_ns = 1e30;
};

// The chunked rows need buffers of whole chunks.
std::vector<Row> TargetRows(bool whole_chunks) {
  std::vector<Row> rows = {{"store", StoreRow},
                           {"stream", StreamRow},
                           {"widen store", WidenStoreRow},
                           {"widen stream", WidenStreamRow}};
  if (whole_chunks) {
    rows.push_back({"widen store, 4 MiB chunks + memcpy", WidenStoreChunkedRow});
    rows.push_back({"widen stream, 4 MiB chunks + memcpy", WidenStreamChunkedRow});
  }
  return rows;
}

// Runs `row` `calls` times under `target` (0: no target forced, for the glibc
// rows) and keeps the time per call if it is the best.
void TimeRow(Row& row, int64_t target, size_t calls, Buffers& b) {
  hwy::SetSupportedTargetsForTest(target);
  const double start = NowNs();
  for (size_t c = 0; c < calls; ++c) row.run(b);
  row.best_ns = std::min(row.best_ns, (NowNs() - start) / calls);
  hwy::SetSupportedTargetsForTest(0);
}

// The targets named in a comma-separated list (amn::FindTarget's names,
// case-insensitive), or every one this CPU runs when the list is empty;
// nullopt (after a message) for a name that is not one of those.
std::optional<std::vector<int64_t>> ChosenTargets(std::string_view list) {
  const std::vector<int64_t> runnable = hwy::SupportedAndGeneratedTargets();
  if (list.empty()) return runnable;
  std::vector<int64_t> chosen;
  for (size_t pos = 0; pos <= list.size();) {
    const size_t comma = std::min(list.find(',', pos), list.size());
    const std::string_view item = list.substr(pos, comma - pos);
    pos = comma + 1;
    const std::optional<TargetId> id = FindTarget(item);
    if (!id || std::find(runnable.begin(), runnable.end(), *id) == runnable.end()) {
      std::fprintf(stderr, "store_floor: '%.*s' is not a target compiled in that runs here\n",
                   static_cast<int>(item.size()), item.data());
      return std::nullopt;
    }
    chosen.push_back(*id);
  }
  return chosen;
}

// "256 KiB" below a MiB, Mib's "128 MiB" from there.
std::string SizeText(size_t bytes) {
  return bytes < (size_t{1} << 20) ? std::to_string(bytes >> 10) + " KiB" : Mib(bytes);
}

void PrintRow(const char* name, double ns, size_t bytes, double memset_ns) {
  std::printf("  %-38s %7.2f GB/s  %6.4f ns/F32  %5.2fx memset\n", name, bytes / ns, 4 * ns / bytes,
              ns / memset_ns);
}

int Run(int argc, char** argv) {
  size_t llc = DescribeCpu().llc_bytes;
  std::optional<size_t> fixed_bytes;
  int reps = 5;
  std::string targets_list;
  for (int i = 1; i < argc; i += 2) {
    const std::string_view flag = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
    if (value && flag == "--llc" && ParseSize(value)) {
      llc = *ParseSize(value);
    } else if (value && flag == "--bytes" && ParseSize(value) && *ParseSize(value) > 0) {
      fixed_bytes = ParseSize(value);
    } else if (value && flag == "--reps") {
      reps = std::max(1, std::atoi(value));
    } else if (value && flag == "--targets") {
      targets_list = value;
    } else {
      std::fprintf(stderr,
                   "usage: store_floor [--llc SIZE | --bytes SIZE] [--reps N] [--targets A,B]\n");
      return 2;
    }
  }
  // --bytes rounded up to whole pages (so whole vectors of every target), or
  // 4x the LLC (256 MiB when unknown) in whole chunks.
  constexpr size_t kPage = 4096;
  const size_t bytes =
      fixed_bytes ? (*fixed_bytes + kPage - 1) / kPage * kPage
                  : (MinFloorBytes(llc, kFloorBytes) + kChunkBytes - 1) / kChunkBytes * kChunkBytes;
  // A sample writes at least 64 MiB, so the timer's resolution does not
  // matter at cache-resident sizes.
  const size_t calls = std::max<size_t>(1, (size_t{64} << 20) / bytes);
  const std::optional<std::vector<int64_t>> chosen = ChosenTargets(targets_list);
  if (!chosen) return 2;
  const std::vector<int64_t>& targets = *chosen;
  Buffers b(bytes);
  Row memset_row{"memset", MemsetRow};
  Row memcpy_row{"memcpy", MemcpyRow};
  std::vector<std::vector<Row>> rows(targets.size(), TargetRows(bytes % kChunkBytes == 0));
  // Round by round: the floors, then each row on each target in turn.
  for (int r = 0; r < reps; ++r) {
    TimeRow(memset_row, 0, calls, b);
    TimeRow(memcpy_row, 0, calls, b);
    for (size_t row = 0; row < rows[0].size(); ++row) {
      for (size_t t = 0; t < targets.size(); ++t) TimeRow(rows[t][row], targets[t], calls, b);
    }
  }
  std::printf(
      "store_floor: %s output per call (LLC %s), %zu calls per sample, best of %d,"
      " one thread\n",
      SizeText(bytes).c_str(), Mib(llc).c_str(), calls, reps);
  PrintRow(memset_row.name, memset_row.best_ns, bytes, memset_row.best_ns);
  PrintRow(memcpy_row.name, memcpy_row.best_ns, bytes, memset_row.best_ns);
  for (size_t t = 0; t < targets.size(); ++t) {
    std::printf("%s\n", hwy::TargetName(targets[t]));
    for (const Row& row : rows[t]) PrintRow(row.name, row.best_ns, bytes, memset_row.best_ns);
  }
  return 0;
}

}  // namespace
}  // namespace amn::perf

int main(int argc, char** argv) { return amn::perf::Run(argc, argv); }
#endif  // HWY_ONCE
