// libFuzzer target: the pickle VM alone on arbitrary bytes, with a
// persistent_load that accepts every id (so storages and tensors get built)
// and the limits the PyTorch reader derives from small ParseLimits. Errors
// are expected; crashes, sanitizer reports, leaks and hangs are bugs.
#include <cstddef>
#include <cstdint>
#include <span>

#include "formats/pickle_vm.h"
#include "fuzz/fuzz_limits.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace amn::formats;
  const PickleLimits limits = PickleLimits::From(amn::fuzz::SmallLimits());
  int64_t next_handle = 0;
  const auto result = RunPickle(
      std::span(reinterpret_cast<const std::byte*>(data), size), limits,
      [&next_handle](const PickleValue&) -> amn::Result<int64_t> { return next_handle++; });
  if (result.ok() && *result == nullptr) __builtin_trap();
  return 0;
}
