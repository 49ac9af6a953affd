// libFuzzer target: the PyTorch checkpoint reader on arbitrary bytes (as a
// whole .pth file): ZipArchive::Open + ReadPytorch, which runs data.pkl
// through the pickle VM and checks every tensor view against its storage.
// Errors are expected; crashes, sanitizer reports, leaks and hangs are bugs,
// and so is a tensor the reader returns outside its storage.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "formats/array_file.h"
#include "formats/byte_source.h"
#include "formats/pytorch.h"
#include "formats/zip_archive.h"
#include "fuzz/fuzz_limits.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace amn::formats;
  const amn::ParseLimits limits = amn::fuzz::SmallLimits();
  const std::span bytes(reinterpret_cast<const std::byte*>(data), size);
  MemorySource probe(bytes, "fuzz.pth");
  (void)LooksLikeLegacyTorch(probe);
  auto archive = ZipArchive::Open(std::make_unique<MemorySource>(bytes, "fuzz.pth"), limits);
  if (!archive.ok()) return 0;
  const auto file = ReadPytorch(**archive, limits);
  if (!file.ok()) return 0;
  for (const auto& array : file->arrays) {
    if (array.member >= file->members.size()) __builtin_trap();
    if (!CheckArrayBounds(array, file->members[array.member]).ok()) __builtin_trap();
  }
  return 0;
}
