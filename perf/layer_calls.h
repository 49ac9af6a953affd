// Header-only helpers of the one-layer C API timers (perf/gptq_act_order.cc,
// perf/awq_layer.cc), which link only the shared library so that
// LD_LIBRARY_PATH can swap builds: the best of several passes of a layer
// decoded in calls of ROWS rows, and a hash of the output to compare builds.
#ifndef AMN_PERF_LAYER_CALLS_H_
#define AMN_PERF_LAYER_CALLS_H_

#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "amn/amn.h"

namespace amn_perf {

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
