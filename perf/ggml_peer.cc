// ggml's dequantize_row_* (built from a ggml checkout with the flags given in
// perf/CMakeLists.txt) against amn::DequantGgml on the best target, one
// thread, in one process: each gguf_reference fixture's blocks (65,536 real
// elements) cache-resident, or tiled to a streaming size with `stream`
// (StreamElemsFor: input + output >= 4x the last-level cache, at least
// 4096 x 11008 elements). Prints a Markdown table of ns/element (median of 7
// timed batches, perf/measure.h), each over its memory floor, and ggml's time
// over amn's. The floors are measured as `amn bench` measures them (DESIGN.md
// §8): at each kernel's own sizes (KernelFloorSizes of the amn kernel with
// the same input and output bytes: ggml's F32 rows share amn's F32 floor),
// just before and just after its rows, fastest of 5, and every row is judged
// against the fastest floor of the run up to just after its rows
// (BestFloors), so a floor taken while the machine was busier cannot let a
// row beat it.
// --llc=SIZE sizes the streaming and floor buffers by that last-level cache
// instead of the one the CPU reports (as `amn bench --llc`).
//   ggml_peer FIXTURES_DIR/gguf_reference[/ONE_FIXTURE.bin] [stream] [--llc=SIZE]
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "amn/ggml_dequant.h"
#include "amn/kernel_registry.h"
#include "perf/cpu_description.h"
#include "perf/measure.h"

// What ggml-quants.o needs from the rest of ggml (never called on this path).
extern "C" {
void ggml_abort(const char*, int, const char*, ...) { std::abort(); }
size_t ggml_row_size(int, int64_t) { return 0; }
const char* ggml_type_name(int) { return ""; }
size_t ggml_type_size(int) { return 0; }
#define AMN_GGML_ROW(name) void dequantize_row_##name(const void* x, float* y, int64_t k);
AMN_GGML_ROW(q4_0) AMN_GGML_ROW(q4_1) AMN_GGML_ROW(q5_0) AMN_GGML_ROW(q5_1) AMN_GGML_ROW(q8_0)
AMN_GGML_ROW(q2_K) AMN_GGML_ROW(q3_K) AMN_GGML_ROW(q4_K) AMN_GGML_ROW(q5_K) AMN_GGML_ROW(q6_K)
AMN_GGML_ROW(iq2_xxs) AMN_GGML_ROW(iq2_xs) AMN_GGML_ROW(iq2_s) AMN_GGML_ROW(iq3_xxs)
AMN_GGML_ROW(iq3_s) AMN_GGML_ROW(iq1_s) AMN_GGML_ROW(iq1_m) AMN_GGML_ROW(iq4_nl)
AMN_GGML_ROW(iq4_xs) AMN_GGML_ROW(tq1_0) AMN_GGML_ROW(tq2_0) AMN_GGML_ROW(mxfp4)
#undef AMN_GGML_ROW
}

namespace {

using GgmlRow = void (*)(const void*, float*, int64_t);

GgmlRow GgmlRowFor(uint32_t type) {
  switch (type) {
    case 2: return dequantize_row_q4_0;
    case 3: return dequantize_row_q4_1;
    case 6: return dequantize_row_q5_0;
    case 7: return dequantize_row_q5_1;
    case 8: return dequantize_row_q8_0;
    case 10: return dequantize_row_q2_K;
    case 11: return dequantize_row_q3_K;
    case 12: return dequantize_row_q4_K;
    case 13: return dequantize_row_q5_K;
    case 14: return dequantize_row_q6_K;
    case 16: return dequantize_row_iq2_xxs;
    case 17: return dequantize_row_iq2_xs;
    case 18: return dequantize_row_iq3_xxs;
    case 19: return dequantize_row_iq1_s;
    case 20: return dequantize_row_iq4_nl;
    case 21: return dequantize_row_iq3_s;
    case 22: return dequantize_row_iq2_s;
    case 23: return dequantize_row_iq4_xs;
    case 29: return dequantize_row_iq1_m;
    case 34: return dequantize_row_tq1_0;
    case 35: return dequantize_row_tq2_0;
    case 39: return dequantize_row_mxfp4;
    default: return nullptr;
  }
}

uint32_t Le32(const uint8_t* p) { return p[0] | p[1] << 8 | p[2] << 16 | uint32_t{p[3]} << 24; }

// The registered amn kernel decoding `type` to `out` ("q4_k_to_bf16"): its
// input and output bytes size the floor; nullptr if there is none.
const amn::KernelInfo* KernelFor(std::string_view type_name, std::string_view out) {
  std::string name(type_name);
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  name += "_to_";
  name += out;
  for (const amn::KernelInfo& kernel : amn::Kernels()) {
    if (kernel.name == name) return &kernel;
  }
  return nullptr;
}

// One timed row: ns per element over `elems`, and whether a streaming row
// ran fewer elements because it is bound by arithmetic.
struct Row {
  double ns = 0;
  double x_floor = 0;
  bool shortened = false;
};

// One fixture's blocks, tiled `copies` times into page-aligned memory.
class TiledBlocks {
 public:
  TiledBlocks(const uint8_t* raw, size_t raw_bytes, size_t copies)
      : bytes_(raw_bytes * copies), blocks_(bytes_) {
    for (size_t c = 0; c < copies; ++c) std::memcpy(blocks_.data() + c * raw_bytes, raw, raw_bytes);
  }
  const uint8_t* data() const { return blocks_.data(); }

 private:
  size_t bytes_;
  amn::perf::AlignedBytes blocks_;
};

}  // namespace

int main(int argc, char** argv) {
  namespace perf = amn::perf;
  const char* usage =
      "usage: ggml_peer FIXTURES_DIR/gguf_reference[/ONE_FIXTURE.bin] [stream] [--llc=SIZE]\n";
  const char* fixtures = nullptr;
  bool stream = false;
  std::optional<size_t> llc_given;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "stream") {
      stream = true;
    } else if (arg.rfind("--llc=", 0) == 0) {
      llc_given = perf::ParseSize(argv[i] + 6);
      if (!llc_given || *llc_given == 0) {
        std::fprintf(stderr, "ggml_peer: --llc: '%s' is not a size (e.g. 32M, at most 4G)\n",
                     argv[i] + 6);
        return 2;
      }
    } else if (fixtures == nullptr && arg.rfind("--", 0) != 0) {
      fixtures = argv[i];
    } else {
      std::fprintf(stderr, "%s", usage);
      return 2;
    }
  }
  if (fixtures == nullptr) {
    std::fprintf(stderr, "%s", usage);
    return 2;
  }
  constexpr int kReps = 7, kFloorReps = 5;
  std::vector<std::filesystem::path> files;
  if (std::filesystem::is_directory(fixtures)) {
    for (const auto& entry : std::filesystem::directory_iterator(fixtures)) {
      files.push_back(entry.path());
    }
  } else {
    files.push_back(fixtures);  // one fixture
  }
  std::sort(files.begin(), files.end());
  const perf::CpuDescription cpu = perf::DescribeCpu();
  const size_t llc = llc_given ? *llc_given : cpu.llc_bytes;
  const size_t min_floor_bytes = perf::MinFloorBytes(llc, perf::kFloorBytes);
  const std::string llc_text =
      llc == 0 ? "unknown" : perf::Mib(llc) + (llc_given ? " (--llc)" : " (" + cpu.llc_source + ")");
  std::printf("%s, ns/element, one thread, median of %d; last-level cache %s; floors at each "
              "kernel's sizes (%s), fastest of %d, before and after its rows; x floor = time / "
              "the fastest floor of the run up to just after the row\n\n",
              stream ? "streaming (input + output >= 4 x the last-level cache, >= 4096 x 11008)"
                     : "cache-resident 65,536",
              kReps, llc_text.c_str(),
              stream ? ("memset of the output, memcpy of input + output, each >= " +
                        perf::Mib(min_floor_bytes))
                           .c_str()
                     : "memset of the output",
              kFloorReps);
  std::printf("| type | ggml F32 | x floor | amn F32 | x floor | amn BF16 | x floor | "
              "ggml / amn F32 | ggml / amn BF16 |\n"
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  perf::BestFloors best;
  bool any_shortened = false;
  for (const auto& path : files) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "ggml_peer: cannot read %s\n", path.c_str());
      return 1;
    }
    const std::vector<uint8_t> file((std::istreambuf_iterator<char>(in)), {});
    if (file.size() < 16) continue;
    const uint32_t type = Le32(&file[0]), n = Le32(&file[4]), raw = Le32(&file[8]);
    const GgmlRow ggml = GgmlRowFor(type);
    const amn::GgmlTypeInfo* info = amn::FindGgmlType(type);
    if (ggml == nullptr || info == nullptr || n == 0 || file.size() < 16 + size_t{raw}) continue;
    const amn::KernelInfo* k32 = KernelFor(info->name, "f32");
    const amn::KernelInfo* k16 = KernelFor(info->name, "bf16");
    if (k32 == nullptr || k16 == nullptr || KernelInBytes(*k32, n) != raw) continue;
    const auto as = static_cast<amn::GgmlType>(type);
    // A whole number of fixture copies: the streaming size rounded up to
    // one (StreamElemsFor gives a multiple of kCacheElems, n here).
    const auto whole = [n](size_t elems) { return (elems + n - 1) / n * n; };
    const auto full_elems = [&](const amn::KernelInfo& kernel) {
      if (!stream) return size_t{n};
      const double bytes_per_elem =
          static_cast<double>(KernelInBytes(kernel, n) + KernelOutBytes(kernel, n)) / n;
      return whole(perf::StreamElemsFor(llc, bytes_per_elem, perf::kStreamElems));
    };
    // ns per element of `call(blocks, elems, out)`, on fresh buffers.
    using Call = std::function<void(const uint8_t*, size_t, uint8_t*)>;
    const auto time = [&](const Call& call, size_t elems, size_t out_bytes_per_elem) {
      const TiledBlocks blocks(&file[16], raw, elems / n);
      perf::AlignedBytes out(elems * out_bytes_per_elem);
      std::memset(out.data(), 1, out.size());
      const double ns = perf::TimeCalls([&] { call(blocks.data(), elems, out.data()); }, kReps)
                            .median_ns;
      return ns / static_cast<double>(elems);
    };
    const Call ggml_f32 = [&](const uint8_t* b, size_t elems, uint8_t* out) {
      ggml(b, reinterpret_cast<float*>(out), static_cast<int64_t>(elems));
    };
    const auto amn_to = [&](amn::ElemType out_type) -> Call {
      return [&, out_type](const uint8_t* b, size_t elems, uint8_t* out) {
        const size_t out_bytes = elems * amn::ElemTypeBytes(out_type);
        (void)amn::DequantGgml(as, std::span(b, elems / n * raw), out_type,
                               std::as_writable_bytes(std::span(out, out_bytes)));
      };
    };
    // One kernel's group of rows (DESIGN.md §8, as perf::RunBench): its
    // floor before and after the rows, each row judged against the fastest
    // floor after them. Streaming rows bound by arithmetic run fewer
    // elements (ComputeBoundStreamElems, from their cache-resident time).
    const auto group = [&](const amn::KernelInfo& kernel, std::vector<Call> calls) {
      const size_t full = full_elems(kernel);
      const perf::FloorSizes sizes = perf::KernelFloorSizes(kernel, full, stream, min_floor_bytes);
      const size_t out_bytes = amn::ElemTypeBytes(kernel.out);
      best.Measure(sizes, kFloorReps);
      std::vector<Row> rows(calls.size());
      std::vector<size_t> elems(calls.size(), full);
      for (size_t i = 0; i < calls.size(); ++i) {
        if (stream) {
          const double cache_ns = time(calls[i], n, out_bytes);
          const perf::Floors floor = best.For(sizes);
          elems[i] = perf::ComputeBoundStreamElems(full, cache_ns,
                                                   perf::FloorNsPerElem(kernel, full, true, floor),
                                                   n, rows[i].shortened);
          any_shortened |= rows[i].shortened;
        }
        rows[i].ns = time(calls[i], elems[i], out_bytes);
      }
      const perf::Floors floor = best.Measure(sizes, kFloorReps);
      for (size_t i = 0; i < calls.size(); ++i) {
        rows[i].x_floor = rows[i].ns / perf::FloorNsPerElem(kernel, elems[i], stream, floor);
      }
      return rows;
    };
    const std::vector<Row> f32 = group(*k32, {ggml_f32, amn_to(amn::ElemType::kF32)});
    const std::vector<Row> bf16 = group(*k16, {amn_to(amn::ElemType::kBf16)});
    const auto cell = [](const Row& row) {
      char text[32];
      std::snprintf(text, sizeof text, "%.3f%s", row.ns, row.shortened ? "*" : "");
      return std::string(text);
    };
    std::printf("| %.*s | %s | %.2f | %s | %.2f | %s | %.2f | %.1f | %.1f |\n",
                static_cast<int>(info->name.size()), info->name.data(), cell(f32[0]).c_str(),
                f32[0].x_floor, cell(f32[1]).c_str(), f32[1].x_floor, cell(bf16[0]).c_str(),
                bf16[0].x_floor, f32[0].ns / f32[1].ns, f32[0].ns / bf16[0].ns);
    std::fflush(stdout);
  }
  std::printf("\n");
  if (any_shortened) {
    std::printf("* bound by arithmetic (cache-resident time >= 10x the streaming floor): fewer "
                "elements, a whole number of fixture copies, for about 0.25 s per call\n");
  }
  if (stream) {
    std::printf("fastest floors of the run: write %.1f GB/s, copy traffic %.1f GB/s\n",
                best.stream().write_gbps, best.stream().copy_traffic_gbps);
  } else {
    for (const auto& [bytes, gbps] : best.cache_write_gbps()) {
      std::printf("fastest cache floor of the run: memset of %zu KiB, %.1f GB/s\n", bytes >> 10,
                  gbps);
    }
  }
  return 0;
}
