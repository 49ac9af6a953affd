// The ggml encoders (amn::QuantizeGgml) on weight-like input, which the
// registry's `amn bench` does not give them: its BF16 input is random bit
// patterns over the whole exponent range, so nearly every block's scale
// overflows F16 and many products are subnormal. Here: N(0, 0.02) BF16
// weights in rows of 4096, with the error sums (as forget computes them),
// one thread, the target dispatch picks (AMN_ISA caps it), median of 5.
//   build/gcc/perf/ggml_encode_weights            # 65,536 and 16,777,216 elements
#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "amn/quantize.h"
#include "amn/targets.h"

namespace {

constexpr amn::GgmlType kTypes[] = {
    amn::GgmlType::kQ4_0,  amn::GgmlType::kQ4_1,  amn::GgmlType::kQ5_0,
    amn::GgmlType::kQ5_1,  amn::GgmlType::kQ8_0,  amn::GgmlType::kIQ4_NL,
    amn::GgmlType::kMXFP4, amn::GgmlType::kTQ1_0, amn::GgmlType::kTQ2_0};
constexpr const char* kNames[] = {"q4_0", "q4_1",  "q5_0",  "q5_1", "q8_0",
                                  "iq4_nl", "mxfp4", "tq1_0", "tq2_0"};

// ns per element, median of 5 calls over n elements.
double Time(amn::GgmlType type, const std::vector<uint16_t>& in, std::vector<std::byte>& out,
            size_t n) {
  constexpr uint64_t kCols = 4096;
  const amn::FloatRows rows{amn::ElemType::kBf16,
                            std::as_bytes(std::span(in.data(), n)), n / kCols, kCols};
  const size_t be = type == amn::GgmlType::kTQ1_0 || type == amn::GgmlType::kTQ2_0 ? 256 : 32;
  const size_t bb = type == amn::GgmlType::kQ4_0 || type == amn::GgmlType::kIQ4_NL ? 18
                    : type == amn::GgmlType::kQ4_1                                 ? 20
                    : type == amn::GgmlType::kQ5_0                                 ? 22
                    : type == amn::GgmlType::kQ5_1                                 ? 24
                    : type == amn::GgmlType::kQ8_0                                 ? 34
                    : type == amn::GgmlType::kMXFP4                                ? 17
                    : type == amn::GgmlType::kTQ1_0                                ? 54
                                                                                   : 66;
  const std::span<std::byte> dst(out.data(), n / be * bb);
  std::vector<double> t;
  for (int rep = 0; rep < 5; ++rep) {
    amn::QuantError error;
    const auto t0 = std::chrono::steady_clock::now();
    const amn::Status s = amn::QuantizeGgml(type, rows, {}, dst, &error);
    const auto t1 = std::chrono::steady_clock::now();
    if (!s.ok()) {
      std::fprintf(stderr, "%s\n", s.ToString().c_str());
      return -1.0;
    }
    t.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / static_cast<double>(n));
  }
  std::sort(t.begin(), t.end());
  return t[2];
}

}  // namespace

int main() {
  constexpr size_t kCache = 65536, kStream = size_t{4096} * 4096;
  std::vector<uint16_t> in(kStream);
  std::mt19937 rng(1);
  std::normal_distribution<float> g(0.0f, 0.02f);
  for (uint16_t& v : in) v = static_cast<uint16_t>(std::bit_cast<uint32_t>(g(rng)) >> 16);
  std::vector<std::byte> out(kStream * 2);
  std::printf("target %s; ns per element (median of 5), BF16 N(0, 0.02) rows of 4096\n",
              std::string(amn::TargetName(amn::ActiveTarget())).c_str());
  std::printf("%-10s %12s %12s\n", "type", "65536", "16777216");
  for (size_t i = 0; i < std::size(kTypes); ++i) {
    std::printf("%-10s %12.3f %12.3f\n", kNames[i], Time(kTypes[i], in, out, kCache),
                Time(kTypes[i], in, out, kStream));
  }
  return 0;
}
