// libFuzzer target: the NPY header parser and the NPZ reader on arbitrary
// bytes. The input is tried three ways: as an NPY header prefix
// (ParseNpyHeader), as a whole .npy file (ReadNpy) and as an .npz archive
// (ZipArchive::Open + ReadNpz). Errors are expected; crashes, sanitizer
// reports, leaks and hangs are bugs, and so is an array the reader returns
// outside its member.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "formats/array_file.h"
#include "formats/byte_source.h"
#include "formats/npy.h"
#include "formats/zip_archive.h"
#include "fuzz/fuzz_limits.h"

namespace {

void CheckArrays(const amn::formats::ArrayFile& file) {
  for (const auto& array : file.arrays) {
    if (array.member >= file.members.size()) __builtin_trap();
    if (!amn::formats::CheckArrayBounds(array, file.members[array.member]).ok()) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace amn::formats;
  const amn::ParseLimits limits = amn::fuzz::SmallLimits();
  const std::span bytes(reinterpret_cast<const std::byte*>(data), size);

  const auto header = ParseNpyHeader(bytes, "fuzz.npy", limits);
  if (header.ok() && header->data_offset > size) __builtin_trap();
  (void)NpyHeaderBytes(bytes, "fuzz.npy");

  MemorySource source(bytes, "fuzz.npy");
  const auto npy = ReadNpy(source, "fuzz", limits);
  if (npy.ok()) CheckArrays(*npy);

  auto archive = ZipArchive::Open(std::make_unique<MemorySource>(bytes, "fuzz.npz"), limits);
  if (archive.ok()) {
    const auto npz = ReadNpz(**archive, limits);
    if (npz.ok()) CheckArrays(*npz);
  }
  return 0;
}
