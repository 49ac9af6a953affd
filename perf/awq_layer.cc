// One AutoAWQ GEMM layer dequantized through the public C API as the engine
// calls it (row ranges of ROWS), one thread: the best of PASSES passes in
// ns/element, and a hash of the output so runs of two builds can be checked
// for equal bytes. It links the shared library, so LD_LIBRARY_PATH=DIR picks
// another build's libamn.so.0 and AMN_ISA caps the target. Not a test.
//
// Usage: awq_layer K N GROUP_SIZE [OUT bf16|f16|f32] [ORIENTATION out-in|in-out]
//                  [ROWS (all)] [PASSES (5)]
// Codes and zeros are pseudo-random; F16 scales 2^-9 .. 2^-6. Small layers
// (cache-resident) want many passes; the group size alone changes how
// often each group's zeros and scales are widened.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "amn/amn.h"
#include "perf/layer_calls.h"

namespace {

int Usage() {
  std::fprintf(stderr,
               "usage: awq_layer K N GROUP_SIZE [OUT bf16|f16|f32] [ORIENTATION out-in|in-out] "
               "[ROWS (all)] [PASSES (5)]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) return Usage();
  const uint64_t k = std::strtoull(argv[1], nullptr, 10);
  const uint64_t n = std::strtoull(argv[2], nullptr, 10);
  const uint64_t group_size = std::strtoull(argv[3], nullptr, 10);
  const std::string out_name = argc > 4 ? argv[4] : "bf16";
  const bool out_in = argc <= 5 || std::string(argv[5]) != "in-out";
  const uint64_t total_rows = out_in ? n : k;
  const uint64_t rows = argc > 6 ? std::strtoull(argv[6], nullptr, 10) : total_rows;
  const int passes = argc > 7 ? std::atoi(argv[7]) : 5;
  if (k == 0 || n == 0 || n % 8 != 0 || group_size == 0 || rows == 0 || passes <= 0) {
    return Usage();
  }
  const amn_dtype out_type = amn_perf::OutTypeNamed(out_name);
  const size_t out_elem = out_type == AMN_F32 ? 4 : 2;
  const uint64_t groups = (k + group_size - 1) / group_size;

  std::mt19937_64 rng(1);
  std::vector<uint8_t> qweight(k * n / 2), qzeros(groups * n / 2);
  std::vector<uint16_t> scales(groups * n);
  amn_perf::FillRandomLayer(rng, qweight, qzeros, scales);

  amn_awq_params p{};
  p.in_features = k;
  p.out_features = n;
  p.group_size = group_size;
  p.scale_type = AMN_F16;
  p.orientation = out_in ? AMN_OUT_IN : AMN_IN_OUT;
  p.qweight = qweight.data();
  p.qweight_bytes = qweight.size();
  p.qzeros = qzeros.data();
  p.qzeros_bytes = qzeros.size();
  p.scales = scales.data();
  p.scales_bytes = scales.size() * 2;

  const uint64_t row_elems = out_in ? k : n;
  std::vector<uint8_t> out(k * n * out_elem);
  const double best =
      amn_perf::BestOfPasses("awq_layer", passes, total_rows, rows, [&](uint64_t r, uint64_t r1) {
        return amn_dequantize_awq(&p, r, r1, out_type, out.data() + r * row_elems * out_elem,
                                  (r1 - r) * row_elems * out_elem);
      });
  if (best < 0) return 1;
  const uint64_t hash = amn_perf::Fnv1a(out);
  std::printf("%s K %llu N %llu group %llu %s %s rows %llu: %.4f ns/element, output hash %016llx\n",
              amn_active_target(), static_cast<unsigned long long>(k),
              static_cast<unsigned long long>(n), static_cast<unsigned long long>(group_size),
              out_in ? "out-in" : "in-out", out_name.c_str(), static_cast<unsigned long long>(rows),
              best * 1e9 / static_cast<double>(k * n), static_cast<unsigned long long>(hash));
  return 0;
}
