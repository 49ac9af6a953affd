// SHA-256 (FIPS 180-4), for checking content-addressed blobs (Ollama's
// blobs/sha256-<hex>, Hugging Face cache blobs named by their sha256).
#ifndef AMN_FORMATS_SHA256_H_
#define AMN_FORMATS_SHA256_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>

#include "amn/result.h"

namespace amn::formats {

class Sha256 {
 public:
  Sha256();
  void Update(std::span<const std::byte> bytes);
  // The digest; the object is spent afterwards.
  std::array<uint8_t, 32> Finish();

 private:
  void Block(const uint8_t* block);
  std::array<uint32_t, 8> state_;
  std::array<uint8_t, 64> buffer_{};
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
};

// Lowercase hex of a digest.
std::string HexDigest(const std::array<uint8_t, 32>& digest);

// The lowercase hex SHA-256 of a whole file, read in 1 MiB pieces (kIo when
// it cannot be read).
Result<std::string> Sha256OfFile(const std::filesystem::path& path);

// Recomputes `blob`'s SHA-256 and compares it with `expected_hex` (64 hex
// digits, any case): kInvalid naming the blob and both digests on a mismatch.
Status VerifyBlobSha256(const std::filesystem::path& blob, std::string_view expected_hex);

}  // namespace amn::formats

#endif  // AMN_FORMATS_SHA256_H_
