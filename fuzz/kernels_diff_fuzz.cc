// Differential kernel fuzzer (libFuzzer): the first byte picks a kernel, the
// rest is its input; every supported target must produce exactly the scalar
// reference's bytes. Deviations are not tolerated: any difference aborts.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "amn/kernel_registry.h"
#include "amn/targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const auto kernels = amn::Kernels();
  const amn::KernelInfo& kernel = kernels[data[0] % kernels.size()];
  // A unit is one input element, or one block of a block-quantized input.
  const size_t unit_bytes = amn::KernelInBytes(kernel, kernel.block_elems);
  const size_t n = (size - 1) / unit_bytes * kernel.block_elems;
  const size_t out_bytes = amn::KernelOutBytes(kernel, n);
  if (n == 0) return 0;
  // Copies keep the element types aligned; libFuzzer's buffer is not.
  const std::vector<uint8_t> input(data + 1, data + 1 + amn::KernelInBytes(kernel, n));
  std::vector<uint8_t> expected(out_bytes);
  kernel.run_reference(input.data(), n, expected.data());
  std::vector<uint8_t> got(out_bytes);
  for (const amn::TargetInfo& target : amn::ListTargets()) {
    if (!target.supported || !amn::ForceTarget(target.id).ok()) continue;
    std::memset(got.data(), 0xA5, got.size());
    kernel.run(input.data(), n, got.data());
    amn::ClearForcedTarget();
    if (got != expected) {
      std::fprintf(stderr, "kernel %.*s on %s differs from the reference (%zu elements)\n",
                   static_cast<int>(kernel.name.size()), kernel.name.data(),
                   target.name.c_str(), n);
      std::abort();
    }
  }
  return 0;
}
