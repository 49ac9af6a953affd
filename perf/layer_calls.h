// Header-only helpers of the one-layer C API timers (perf/gptq_act_order.cc,
// perf/awq_layer.cc), which link only the shared library so that
// LD_LIBRARY_PATH can swap builds: the output type by name, a layer's random
// packed bytes and F16 scales, the best of several passes of a layer decoded
// in calls of ROWS rows, and a hash of the output to compare builds.
#ifndef AMN_PERF_LAYER_CALLS_H_
#define AMN_PERF_LAYER_CALLS_H_

#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "amn/amn.h"

namespace amn_perf {

// "f32", "f16", else BF16.
inline amn_dtype OutTypeNamed(const std::string& name) {
  return name == "f32" ? AMN_F32 : name == "f16" ? AMN_F16 : AMN_BF16;
}

// Random qweight and qzeros bytes, then finite, normal F16 scales in
// [2^-9, 2^-7) (the low exponent bit and the mantissa random), all from
// `rng` in that order.
inline void FillRandomLayer(std::mt19937_64& rng, std::vector<uint8_t>& qweight,
                            std::vector<uint8_t>& qzeros, std::vector<uint16_t>& scales) {
  for (uint8_t& b : qweight) b = static_cast<uint8_t>(rng());
  for (uint8_t& b : qzeros) b = static_cast<uint8_t>(rng());
  for (uint16_t& s : scales) s = static_cast<uint16_t>(0x1800 | (rng() & 0x0FFF));
}

inline double MonotonicSeconds() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// The best of `passes` passes, in seconds, each decoding rows [0, total_rows)
// in calls of `rows` through call(begin, end) (an amn_status); on an error,
// prints amn_last_error() after `tool` and returns a negative time.
template <class Call>
double BestOfPasses(const char* tool, int passes, uint64_t total_rows, uint64_t rows, Call&& call) {
  double best = 1e30;
  for (int pass = 0; pass < passes; ++pass) {
    const double t0 = MonotonicSeconds();
    for (uint64_t r = 0; r < total_rows; r += rows) {
      if (call(r, std::min(total_rows, r + rows)) != AMN_OK) {
        std::fprintf(stderr, "%s: %s\n", tool, amn_last_error());
        return -1.0;
      }
    }
    best = std::min(best, MonotonicSeconds() - t0);
  }
  return best;
}

// FNV-1a of the bytes.
inline uint64_t Fnv1a(const std::vector<uint8_t>& bytes) {
  uint64_t hash = 1469598103934665603ull;
  for (const uint8_t b : bytes) hash = (hash ^ b) * 1099511628211ull;
  return hash;
}

}  // namespace amn_perf

#endif  // AMN_PERF_LAYER_CALLS_H_
