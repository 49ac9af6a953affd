// One GPTQ layer with an act-order g_idx, dequantized to [out, in]
// (AMN_OUT_IN) through the public C API as the engine calls it (row ranges
// of ROWS), one thread: the best of PASSES passes in ns/element, and a hash of
// the output so runs of two builds can be checked for equal bytes. It links
// the shared library, so LD_LIBRARY_PATH=DIR picks another build's
// libamn.so.0 and AMN_ISA caps the target. Not a test.
//
// Usage: gptq_act_order K N GROUP_SIZE [BITS (4)] [OUT bf16|f16|f32] [ROWS (128)]
//                       [sequential|act-order] [PASSES (5)]
// Codes, zero fields and F16 scales (2^-9 .. 2^-6) are pseudo-random; g_idx
// is a shuffled 0..K-1 divided by GROUP_SIZE, as GPTQ's desc_act orders
// the groups ("sequential": i / GROUP_SIZE). v1 zero points.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "amn/amn.h"
#include "perf/layer_calls.h"

namespace {

int Usage() {
  std::fprintf(stderr,
               "usage: gptq_act_order K N GROUP_SIZE [BITS (4)] [OUT bf16|f16|f32] "
               "[ROWS (128)] [sequential|act-order] [PASSES (5)]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) return Usage();
  const uint64_t k = std::strtoull(argv[1], nullptr, 10);
  const uint64_t n = std::strtoull(argv[2], nullptr, 10);
  const uint64_t group_size = std::strtoull(argv[3], nullptr, 10);
  const uint32_t bits = argc > 4 ? static_cast<uint32_t>(std::atoi(argv[4])) : 4;
  const std::string out_name = argc > 5 ? argv[5] : "bf16";
  const uint64_t rows = argc > 6 ? std::strtoull(argv[6], nullptr, 10) : 128;
  const bool sequential = argc > 7 && std::string(argv[7]) == "sequential";
  const int passes = argc > 8 ? std::atoi(argv[8]) : 5;
  if (k == 0 || n == 0 || group_size == 0 || rows == 0 || passes <= 0) return Usage();
  const amn_dtype out_type = amn_perf::OutTypeNamed(out_name);
  const size_t out_elem = out_type == AMN_F32 ? 4 : 2;
  const uint64_t groups = (k + group_size - 1) / group_size;

  std::mt19937_64 rng(1);
  std::vector<uint8_t> qweight(k * bits / 32 * n * 4), qzeros(groups * (n * bits / 32) * 4);
  std::vector<uint16_t> scales(groups * n);
  amn_perf::FillRandomLayer(rng, qweight, qzeros, scales);
  std::vector<int32_t> order(k);
  std::iota(order.begin(), order.end(), 0);
  if (!sequential) std::shuffle(order.begin(), order.end(), rng);
  std::vector<int32_t> g_idx(k);
  for (uint64_t i = 0; i < k; ++i) g_idx[i] = static_cast<int32_t>(order[i] / group_size);

  amn_gptq_params p{};
  p.bits = bits;
  p.in_features = k;
  p.out_features = n;
  p.groups = groups;
  p.group_size = group_size;
  p.zeros = AMN_GPTQ_ZEROS_V1;
  p.scale_type = AMN_F16;
  p.orientation = AMN_OUT_IN;
  p.qweight = qweight.data();
  p.qweight_bytes = qweight.size();
  p.qzeros = qzeros.data();
  p.qzeros_bytes = qzeros.size();
  p.scales = scales.data();
  p.scales_bytes = scales.size() * 2;
  p.g_idx = g_idx.data();
  p.g_idx_bytes = g_idx.size() * 4;

  std::vector<uint8_t> out(k * n * out_elem);
  const double best =
      amn_perf::BestOfPasses("gptq_act_order", passes, n, rows, [&](uint64_t j, uint64_t j1) {
        return amn_dequantize_gptq(&p, j, j1, out_type, out.data() + j * k * out_elem,
                                   (j1 - j) * k * out_elem);
      });
  if (best < 0) return 1;
  const uint64_t hash = amn_perf::Fnv1a(out);
  std::printf("%s K %llu N %llu group %llu (%llu groups) %u-bit %s rows %llu %s: %.3f ns/element, "
              "output hash %016llx\n",
              amn_active_target(), static_cast<unsigned long long>(k), static_cast<unsigned long long>(n),
              static_cast<unsigned long long>(group_size), static_cast<unsigned long long>(groups),
              bits, out_name.c_str(), static_cast<unsigned long long>(rows),
              sequential ? "sequential" : "act-order", best * 1e9 / static_cast<double>(k * n),
              static_cast<unsigned long long>(hash));
  return 0;
}
