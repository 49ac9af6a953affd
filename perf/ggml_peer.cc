// ggml's dequantize_row_* (built from a ggml checkout with the flags given in
// perf/CMakeLists.txt) against amn::DequantGgml on the best target, one
// thread, in one process: each gguf_reference fixture's blocks (65,536 real
// elements) cache-resident, or tiled to 4096 x 11008 elements with `stream`.
// Prints a Markdown table of ns/element (median of 7 timed batches,
// perf/measure.h) with amn's time over the memory floor measured in the same
// run, and ggml's time over amn's.
//   ggml_peer FIXTURES_DIR/gguf_reference [stream]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <span>
#include <string>
#include <vector>

#include "amn/ggml_dequant.h"
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

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: ggml_peer FIXTURES_DIR/gguf_reference [stream]\n");
    return 2;
  }
  const bool stream = argc > 2 && std::string(argv[2]) == "stream";
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(argv[1])) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  const amn::perf::Floors floors = amn::perf::MeasureFloors(amn::perf::kFloorBytes, 5);
  std::printf("%s, ns/element, one thread, median of 7; floors: write %.1f GB/s, copy traffic "
              "%.1f GB/s, L2 write %.1f GB/s\n\n",
              stream ? "streaming 4096 x 11008" : "cache-resident 65,536", floors.write_gbps,
              floors.copy_traffic_gbps, floors.l2_write_gbps);
  std::printf("| type | ggml F32 | amn F32 | x floor | amn BF16 | x floor | ggml / amn F32 | "
              "ggml / amn BF16 |\n|---|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const auto& path : files) {
    std::ifstream in(path, std::ios::binary);
    const std::vector<uint8_t> file((std::istreambuf_iterator<char>(in)), {});
    if (file.size() < 16) continue;
    const uint32_t type = Le32(&file[0]), n = Le32(&file[4]), raw = Le32(&file[8]);
    const GgmlRow ggml = GgmlRowFor(type);
    if (ggml == nullptr || n == 0 || file.size() < 16 + size_t{raw}) continue;
    const size_t copies = stream ? amn::perf::kStreamElems / n : 1;
    const size_t elems = size_t{n} * copies, in_bytes = size_t{raw} * copies;
    amn::perf::AlignedBytes blocks(in_bytes), f32(elems * 4), bf16(elems * 2);
    for (size_t c = 0; c < copies; ++c) std::memcpy(blocks.data() + c * raw, &file[16], raw);
    std::memset(f32.data(), 1, f32.size());
    std::memset(bf16.data(), 1, bf16.size());
    const auto as = static_cast<amn::GgmlType>(type);
    const std::span<const uint8_t> in_span(blocks.data(), in_bytes);
    const auto ns = [&](const std::function<void()>& call) {
      return amn::perf::TimeCalls(call, 7).median_ns / static_cast<double>(elems);
    };
    const double g = ns([&] {
      ggml(blocks.data(), reinterpret_cast<float*>(f32.data()), static_cast<int64_t>(elems));
    });
    const double a32 = ns([&] {
      (void)amn::DequantGgml(as, in_span, amn::ElemType::kF32,
                             std::as_writable_bytes(std::span(f32.data(), f32.size())));
    });
    const double a16 = ns([&] {
      (void)amn::DequantGgml(as, in_span, amn::ElemType::kBf16,
                             std::as_writable_bytes(std::span(bf16.data(), bf16.size())));
    });
    // Floors per element (DESIGN.md §8): output at L2 write speed cache-resident;
    // streaming, the larger of output at write speed and in + out at copy speed.
    const double in_per_elem = static_cast<double>(raw) / n;
    const auto floor_ns = [&](double out_bytes) {
      if (!stream) return out_bytes / floors.l2_write_gbps;
      return std::max(out_bytes / floors.write_gbps,
                      (in_per_elem + out_bytes) / floors.copy_traffic_gbps);
    };
    const std::string_view name = amn::FindGgmlType(type)->name;
    std::printf("| %.*s | %.3f | %.3f | %.2f | %.3f | %.2f | %.1f | %.1f |\n",
                static_cast<int>(name.size()), name.data(), g, a32, a32 / floor_ns(4), a16,
                a16 / floor_ns(2), g / a32, g / a16);
  }
  return 0;
}
