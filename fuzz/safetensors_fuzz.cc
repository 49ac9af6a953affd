// libFuzzer target: the safetensors header parser on arbitrary bytes (as a
// whole file), with small limits so hostile sizes are exercised cheaply.
// Any crash, sanitizer report, leak or hang is a bug; errors are expected.
#include <cstddef>
#include <cstdint>
#include <span>

#include "amn/limits.h"
#include "formats/byte_source.h"
#include "formats/safetensors_header.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  amn::ParseLimits limits;
  limits.max_header_bytes = 1 << 20;
  limits.max_item_count = 4096;
  amn::formats::MemorySource source(
      std::span(reinterpret_cast<const std::byte*>(data), size), "fuzz.safetensors");
  const auto header = amn::formats::ReadSafetensorsHeader(source, limits);
  if (header.ok()) {
    // Invariants the parser promises: tensors tile the data section in order.
    uint64_t next = 0;
    for (const auto& t : header->tensors) {
      if (t.data_begin != next || t.data_end < t.data_begin) __builtin_trap();
      next = t.data_end;
    }
    if (next != header->data_bytes) __builtin_trap();
  }
  return 0;
}
