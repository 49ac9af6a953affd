// Runs a registry kernel on the active target and its scalar reference on the
// same input and compares the output bytes exactly. The kernel's buffers are
// placed at a chosen element offset from a 64-byte boundary and its output is
// followed by canary bytes, so misaligned access and overruns are caught.
#ifndef AMN_TESTS_KERNEL_CHECK_H_
#define AMN_TESTS_KERNEL_CHECK_H_

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "amn/kernel_registry.h"

namespace amn::test {

// `payload_bytes` bytes starting `offset_bytes` past a 64-byte boundary,
// filled with `fill` and followed by 64 canary bytes, so misaligned access and
// overruns show.
class PlacedBuffer {
 public:
  static constexpr size_t kAlign = 64;
  static constexpr size_t kCanaryBytes = 64;
  static constexpr uint8_t kCanary = 0xA5;

  PlacedBuffer(size_t payload_bytes, size_t offset_bytes, uint8_t fill);
  uint8_t* data() { return data_; }
  bool CanaryIntact() const;

 private:
  std::vector<uint8_t> storage_;
  uint8_t* data_ = nullptr;
  size_t payload_bytes_ = 0;
};

const KernelInfo& KernelNamed(std::string_view name);

// Deterministic pseudo-random bytes (xorshift32), for reproducible inputs.
std::vector<uint8_t> PseudoRandomBytes(size_t n, uint32_t seed);

// Input bytes must hold a whole number of the kernel's input elements (of
// blocks, for block-quantized kernels: then in_offset_elems counts blocks).
// Returns success, or a failure naming the first differing element with its
// input and both outputs in hex.
testing::AssertionResult MatchesReference(const KernelInfo& kernel,
                                          const std::vector<uint8_t>& input,
                                          size_t in_offset_elems = 0,
                                          size_t out_offset_elems = 0);

// Every u16 value 0..65535, as bytes (little-endian).
std::vector<uint8_t> AllU16Bytes();

// Success when `got` and `want` hold the same bytes; otherwise the first
// differing element (of elem_bytes <= 4 bytes) with both bit patterns.
testing::AssertionResult SameBytes(const std::vector<uint8_t>& got,
                                   const std::vector<uint8_t>& want, size_t elem_bytes,
                                   const std::string& what);

// F32 bit patterns that exercise every rounding and class boundary: each
// sign and biased exponent with mantissas around the BF16 and F16 rounding
// points, plus named specials (zeros, subnormals, Inf, NaN payloads).
std::vector<uint32_t> F32EdgeBits();

template <typename T>
std::vector<uint8_t> AsBytes(const std::vector<T>& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(T));
  if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

}  // namespace amn::test

#endif  // AMN_TESTS_KERNEL_CHECK_H_
