// libFuzzer target: the GGUF header parser on arbitrary bytes, with small
// limits so hostile counts and lengths are exercised cheaply. Errors are
// expected; crashes, sanitizer reports, leaks and hangs are bugs.
#include <cstddef>
#include <cstdint>
#include <span>

#include "amn/limits.h"
#include "formats/byte_source.h"
#include "formats/gguf.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  amn::ParseLimits limits;
  limits.max_header_bytes = 1 << 20;
  limits.max_item_count = 4096;
  amn::formats::MemorySource source(
      std::span(reinterpret_cast<const std::byte*>(data), size), "fuzz.gguf");
  const auto header = amn::formats::ReadGgufHeader(source, limits);
  if (header.ok()) {
    for (const auto& t : header->tensors) {
      // Promised by the parser: aligned, inside the data section.
      if (t.offset % header->alignment != 0 || t.offset + t.bytes > header->data_bytes) {
        __builtin_trap();
      }
    }
  }
  return 0;
}
