// One call of a GGUF encoder family (K-quant, IQ3, IQ2/IQ1: GgmlQuantArgs
// in, blocks and error sums out) for the per-target encoder tests, and the
// scalar reference's result for an input kept for the whole test process.
// Every target's instance of a test (target_param.h) compares with the
// same reference output, and recomputing it per target was most of these
// tests' time under emulation: on qemu-aarch64's `max` (four targets)
// ggml_kquant_encode_target_test took 539 s and
// ggml_iq2_iq1_encode_target_test 382 s.
#ifndef AMN_TESTS_GGML_ENCODE_RUNS_H_
#define AMN_TESTS_GGML_ENCODE_RUNS_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "amn/elem_type.h"
#include "amn/ggml_type.h"
#include "kernels/encode_args.h"

namespace amn::test {

struct EncodedBlocks {
  uint64_t result = 0;  // the first non-finite input's index, or kAllFinite
  std::vector<uint8_t> blocks;
  kernels::ErrorSums errors;
};

using GgmlEncodeFn = uint64_t (*)(const kernels::GgmlQuantArgs&, kernels::ErrorSums*);

// `encode` on rows x cols values of `in_type` at `in` (block_bytes per 256
// values), with a canary after the blocks that must survive.
inline EncodedBlocks RunGgmlEncoder(GgmlEncodeFn encode, size_t block_bytes, GgmlType type,
                                    const void* in, ElemType in_type, uint64_t rows, uint64_t cols,
                                    const float* imatrix) {
  constexpr size_t kCanary = 32;
  const size_t bytes = rows * cols / 256 * block_bytes;
  EncodedBlocks e{0, std::vector<uint8_t>(bytes + kCanary, 0x5A), kernels::ErrorSums()};
  const kernels::GgmlQuantArgs args{
      kernels::EncodeInput{static_cast<const uint8_t*>(in), in_type, rows, cols}, type, imatrix,
      e.blocks.data()};
  e.result = encode(args, &e.errors);
  for (size_t k = 0; k < kCanary; ++k) EXPECT_EQ(e.blocks[bytes + k], 0x5A) << "overrun";
  e.blocks.resize(bytes);
  return e;
}

// RunGgmlEncoder(reference, ...) computed once per process for each distinct
// call. The key holds every byte the result depends on (the function, the
// type, shape, input values and importance values), so two different calls
// can never share a result.
inline const EncodedBlocks& ReferenceRun(GgmlEncodeFn reference, size_t block_bytes,
                                         GgmlType type, const void* in, ElemType in_type,
                                         uint64_t rows, uint64_t cols, const float* imatrix) {
  std::string key;
  const auto add = [&key](const void* p, size_t n) {
    key.append(static_cast<const char*>(p), n);
  };
  const uint64_t head[] = {static_cast<uint64_t>(type), static_cast<uint64_t>(in_type), rows,
                           cols, imatrix != nullptr};
  add(&reference, sizeof(reference));
  add(head, sizeof(head));
  add(in, rows * cols * ElemTypeBytes(in_type));
  if (imatrix != nullptr) add(imatrix, cols * sizeof(float));
  static std::map<std::string, EncodedBlocks> cache;
  auto it = cache.find(key);
  if (it == cache.end()) {
    it = cache.emplace(std::move(key), RunGgmlEncoder(reference, block_bytes, type, in, in_type,
                                                      rows, cols, imatrix))
             .first;
  }
  return it->second;
}

}  // namespace amn::test

#endif  // AMN_TESTS_GGML_ENCODE_RUNS_H_
