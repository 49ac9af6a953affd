// Small ParseLimits for the container fuzzers (npy, zip, pytorch, pickle):
// hostile sizes, counts and ratios hit a limit after a few KB of work instead
// of megabytes, so libFuzzer runs thousands of inputs a second.
#ifndef AMN_FUZZ_FUZZ_LIMITS_H_
#define AMN_FUZZ_FUZZ_LIMITS_H_

#include <cstdint>

#include "amn/limits.h"

namespace amn::fuzz {

inline ParseLimits SmallLimits() {
  ParseLimits limits;
  limits.max_header_bytes = 1 << 20;
  limits.max_item_count = 4096;
  limits.max_single_allocation = 16 << 20;
  limits.max_total_bytes = 64 << 20;
  limits.max_decompression_ratio = 1000;
  return limits;
}

// The most a fuzzer inflates of one ZIP entry.
constexpr uint64_t kMaxEntryRead = 1 << 20;

}  // namespace amn::fuzz

#endif  // AMN_FUZZ_FUZZ_LIMITS_H_
