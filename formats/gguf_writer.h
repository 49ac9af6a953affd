// The GGUF v3 writer's header (docs/gguf.md "Writing GGUF"): typed
// metadata key/values of every GGUF type (nested arrays included), tensor
// infos and the padding before the data section, laid out as ggml's
// gguf.cpp reads them. Little-endian only. The tensor data itself is
// streamed by the remember engine (formats/remember_engine.h), which pads
// every tensor to the alignment.
#ifndef AMN_FORMATS_GGUF_WRITER_H_
#define AMN_FORMATS_GGUF_WRITER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "amn/result.h"
#include "formats/gguf.h"

namespace amn::formats {

inline constexpr uint32_t kGgufWriteVersion = 3;
inline constexpr uint64_t kGgufDefaultAlignment = 32;

// The metadata of a GGUF being written, in order. Each value is kept
// encoded (its u32 type, then its bytes), so a value copied from a source
// GGUF is held once, as the bytes it had there.
class GgufMetadata {
 public:
  // Encodes `value`: scalars as their member says; an array must hold all
  // of its items (items.size() == count, each of elem_type; arrays nest).
  // kInvalidArgument for an array whose items disagree with it.
  Status Set(std::string key, const GgufValue& value);
  // `encoded` is a value as a v2/v3 file stores it, from the u32 type on.
  void SetEncoded(std::string key, std::string encoded);
  void Remove(std::string_view key);
  bool Has(std::string_view key) const;
  // The value's bytes after its type (nullptr: absent).
  const std::string* Encoded(std::string_view key) const;
  const std::vector<std::pair<std::string, std::string>>& entries() const { return entries_; }
  std::vector<std::pair<std::string, std::string>>& entries() { return entries_; }

 private:
  std::vector<std::pair<std::string, std::string>> entries_;
};

// One tensor info: dims in GGUF order (ne0, the fastest-varying, first),
// the ggml type and the offset in the data section (aligned).
struct GgufTensorOut {
  std::string name;
  std::vector<uint64_t> dims;
  uint32_t ggml_type = 0;
  uint64_t offset = 0;
};

// general.alignment of `metadata` (a u32 power of two up to 1 MiB), or 32
// when absent; kInvalidArgument otherwise.
Result<uint64_t> GgufAlignment(const GgufMetadata& metadata);

// The file up to the data section: magic "GGUF", version 3, the counts,
// the key/values, the tensor infos, zeros up to a multiple of `alignment`.
// Takes the metadata and frees each value once it is in the header, so a
// tokenizer's arrays are held about once, not twice.
std::string GgufHeaderBytes(GgufMetadata metadata, const std::vector<GgufTensorOut>& tensors,
                            uint64_t alignment);

// `n` rounded up to a multiple of `alignment` (a power of two).
inline uint64_t GgufPad(uint64_t n, uint64_t alignment) {
  return (n + alignment - 1) & ~(alignment - 1);
}

}  // namespace amn::formats

#endif  // AMN_FORMATS_GGUF_WRITER_H_
