// Builds GGUF files byte by byte from the format definition, for tests.
#ifndef AMN_TESTS_GGUF_WRITER_H_
#define AMN_TESTS_GGUF_WRITER_H_

#include <cstdint>
#include <string>
#include <vector>

namespace amn::test {

// Little-endian GGUF writer for tests; v1 uses 32-bit counts and lengths.
class GgufWriter {
 public:
  explicit GgufWriter(uint32_t version = 3) : version_(version) {}
  GgufWriter& U32(uint32_t v) { return Raw(&v, 4); }
  GgufWriter& U64(uint64_t v) { return Raw(&v, 8); }
  GgufWriter& Count(uint64_t v) { return version_ == 1 ? U32(static_cast<uint32_t>(v)) : U64(v); }
  GgufWriter& Str(const std::string& s) {
    Count(s.size());
    return Raw(s.data(), s.size());
  }
  GgufWriter& Raw(const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    bytes_.insert(bytes_.end(), b, b + n);
    return *this;
  }
  GgufWriter& Header(uint64_t tensors, uint64_t kvs) {
    U32(0x46554747).U32(version_);
    return Count(tensors).Count(kvs);
  }
  GgufWriter& KvU32(const std::string& key, uint32_t v) { return Str(key).U32(4).U32(v); }
  GgufWriter& KvStr(const std::string& key, const std::string& v) { return Str(key).U32(8).Str(v); }
  GgufWriter& Tensor(const std::string& name, std::vector<uint64_t> dims, uint32_t type, uint64_t offset) {
    Str(name).U32(static_cast<uint32_t>(dims.size()));
    for (uint64_t d : dims) Count(d);
    return U32(type).U64(offset);
  }
  GgufWriter& PadTo(size_t alignment) {
    while (bytes_.size() % alignment != 0) bytes_.push_back(0);
    return *this;
  }
  GgufWriter& Zeros(size_t n) {
    bytes_.resize(bytes_.size() + n, 0);
    return *this;
  }
  std::vector<uint8_t>& bytes() { return bytes_; }

 private:
  uint32_t version_;
  std::vector<uint8_t> bytes_;
};

}  // namespace amn::test

#endif  // AMN_TESTS_GGUF_WRITER_H_
