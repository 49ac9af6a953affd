// The encoders as `amn forget` calls them (one call per chunk of whole rows,
// BF16 input, 4096 columns), timed in thread CPU time (median of N), per
// target, with and without the QuantError sums: how much of an encoder's
// time is the error accounting, in a way that a busy shared machine
// disturbs less than the wall-clock `amn bench` figures. Not a test.
//
// Usage: encode_cpu_time [rows (default 16: 65,536 elements)] [reps (30)] [input]
// input: weights (default: N(0, 0.02) rounded to BF16), random-bits (any
// finite BF16 pattern: exponents over the whole range, so quotients such
// as x / absmax go subnormal) or wide (random bits with the exponent kept
// in 2^-27 .. 2^27: as wide a range, less the subnormal results).
// FP8 E4M3 with 128 x 128 groups, NF4/FP4 blocks of 64 with absmax computed,
// INT8 with SCB computed, AbsMaxGrid over 1 x 128 groups.
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "amn/quantize.h"
#include "amn/targets.h"
#include "perf/thread_cpu_time.h"

namespace {

// The median, not the minimum: in a VM the thread clock sometimes
// under-reports a run, and the minimum would pick exactly that run.
template <class F>
double MedianNs(const F& f, int reps) {
  std::vector<double> ns;
  f();
  for (int r = 0; r < std::max(reps, 1); ++r) {
    const double start = amn::perf::ThreadNs();
    f();
    ns.push_back(amn::perf::ThreadNs() - start);
  }
  std::sort(ns.begin(), ns.end());
  return ns[ns.size() / 2];
}

bool Ok(const amn::Status& s) { return s.ok(); }

}  // namespace

int main(int argc, char** argv) {
  using namespace amn;
  const uint64_t rows = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 16;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 30;
  constexpr uint64_t kCols = 4096;
  const uint64_t n = rows * kCols;
  const std::string input = argc > 3 ? argv[3] : "weights";
  // rows 0 (or not a number) would divide by zero below; rows * 4096 must fit.
  if (rows == 0 || rows > (uint64_t{1} << 20) || reps < 1) {
    std::fprintf(stderr, "encode_cpu_time: rows must be 1..1048576 and reps at least 1\n");
    return 2;
  }
  if (input != "weights" && input != "random-bits" && input != "wide") {
    std::fprintf(stderr, "encode_cpu_time: input must be weights, random-bits or wide\n");
    return 2;
  }
  std::vector<uint16_t> in(n);
  std::mt19937 rng(1);
  std::normal_distribution<float> normal(0.0f, 0.02f);
  for (uint16_t& h : in) {
    if (input == "weights") {
      const float f = normal(rng);
      uint32_t b;
      std::memcpy(&b, &f, 4);
      h = static_cast<uint16_t>(b >> 16);
      continue;
    }
    h = static_cast<uint16_t>(rng());
    const unsigned exponent = (h >> 7) & 0xFF;
    if (input == "wide") {
      h = static_cast<uint16_t>((h & 0x807F) | (100 + exponent % 55) << 7);
    } else if (exponent == 0xFF) {
      h ^= 0x4000;  // not Inf/NaN
    }
  }
  const FloatRows x{ElemType::kBf16, std::as_bytes(std::span(in)), rows, kCols};
  const uint64_t group_rows = std::min<uint64_t>(128, rows);
  std::vector<float> scales((rows + group_rows - 1) / group_rows * (kCols / 128), 0.01f);
  std::vector<float> side(n / 64);
  std::vector<std::byte> codes(n);
  const std::span<int8_t> i8(reinterpret_cast<int8_t*>(codes.data()), n);
  std::printf("%llu x %llu BF16 (%s), thread CPU ns/element, median of %d\n",
              static_cast<unsigned long long>(rows), static_cast<unsigned long long>(kCols),
              input.c_str(), reps);
  std::printf("%-8s %-6s %8s %8s %8s %8s %8s\n", "target", "errors", "e4m3", "nf4", "fp4",
              "int8", "amax128");
  bool ok = true;
  for (const TargetInfo& info : ListTargets()) {
    if (!info.allowed || !ForceTarget(info.id).ok()) continue;
    for (const bool with_errors : {true, false}) {
      QuantError error;
      QuantError* e = with_errors ? &error : nullptr;
      const double t[5] = {
          MedianNs([&] { ok &= Ok(QuantizeFp8(x, group_rows, 128, Fp8Format::kE4m3, scales, codes, e)); }, reps),
          MedianNs([&] { ok &= Ok(QuantizeBnb4(x, 64, Bnb4Type::kNf4, false, side, std::span(codes).first(n / 2), e)); }, reps),
          MedianNs([&] { ok &= Ok(QuantizeBnb4(x, 64, Bnb4Type::kFp4, false, side, std::span(codes).first(n / 2), e)); }, reps),
          MedianNs([&] { ok &= Ok(QuantizeBnbInt8(x, false, std::span(side).first(rows), i8, e)); }, reps),
          MedianNs([&] { ok &= Ok(AbsMaxGrid(x, 1, 128, std::span(side).first(n / 128))); }, reps)};
      std::printf("%-8s %-6s", info.name.c_str(), with_errors ? "on" : "off");
      for (const double ns : t) std::printf(" %8.3f", ns / static_cast<double>(n));
      std::printf("\n");
    }
    ClearForcedTarget();
  }
  return ok ? 0 : 1;
}
