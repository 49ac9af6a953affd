// libFuzzer target: the ZIP reader on arbitrary bytes (as a whole file):
// open the archive, then read every entry both whole (ReadEntry, bounded) and
// through the streaming reader. Errors are expected; crashes, sanitizer
// reports, leaks and hangs are bugs, and so is an entry read that succeeds
// with a size other than the one the directory declares.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "formats/byte_source.h"
#include "formats/zip_archive.h"
#include "fuzz/fuzz_limits.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace amn::formats;
  auto archive = ZipArchive::Open(
      std::make_unique<MemorySource>(std::span(reinterpret_cast<const std::byte*>(data), size),
                                     "fuzz.zip"),
      amn::fuzz::SmallLimits());
  if (!archive.ok()) return 0;
  for (const ZipEntry& entry : (*archive)->entries()) {
    if ((*archive)->Find(entry.name) == nullptr) __builtin_trap();
    const auto bytes = (*archive)->ReadEntry(entry, amn::fuzz::kMaxEntryRead);
    if (bytes.ok() && bytes->size() != entry.bytes) __builtin_trap();
    if (entry.bytes > amn::fuzz::kMaxEntryRead) continue;
    auto reader = (*archive)->OpenEntry(entry);
    if (!reader.ok()) continue;
    // Odd-sized chunks, to cross inflate buffer boundaries.
    std::vector<std::byte> chunk(4093);
    uint64_t left = entry.bytes;
    while (left > 0) {
      const uint64_t n = left < chunk.size() ? left : chunk.size();
      if (!(*reader)->Read(std::span(chunk.data(), n)).ok()) break;
      left -= n;
      if ((*reader)->position() != entry.bytes - left) __builtin_trap();
    }
    // Past the end is always an error.
    if (left == 0 && (*reader)->Read(std::span(chunk.data(), 1)).ok()) __builtin_trap();
  }
  return 0;
}
