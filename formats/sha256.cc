// SHA-256 as FIPS 180-4 §6.2 states it: 64-byte blocks, big-endian words,
// the padding 0x80, zeros, and the message length in bits (big-endian u64).
#include "formats/sha256.h"

#include <algorithm>
#include <cctype>
#include <vector>

#include "formats/byte_source.h"

namespace amn::formats {
namespace {

constexpr uint32_t kRound[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

constexpr uint32_t Rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

}  // namespace

Sha256::Sha256()
    : state_{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
             0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19} {}

void Sha256::Block(const uint8_t* block) {
  uint32_t w[64];
  for (int t = 0; t < 16; ++t) {
    w[t] = uint32_t{block[4 * t]} << 24 | uint32_t{block[4 * t + 1]} << 16 |
           uint32_t{block[4 * t + 2]} << 8 | uint32_t{block[4 * t + 3]};
  }
  for (int t = 16; t < 64; ++t) {
    const uint32_t s0 = Rotr(w[t - 15], 7) ^ Rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
    const uint32_t s1 = Rotr(w[t - 2], 17) ^ Rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
    w[t] = w[t - 16] + s0 + w[t - 7] + s1;
  }
  uint32_t a = state_[0], b = state_[1], c = state_[2], d = state_[3];
  uint32_t e = state_[4], f = state_[5], g = state_[6], h = state_[7];
  for (int t = 0; t < 64; ++t) {
    const uint32_t t1 = h + (Rotr(e, 6) ^ Rotr(e, 11) ^ Rotr(e, 25)) + ((e & f) ^ (~e & g)) +
                        kRound[t] + w[t];
    const uint32_t t2 = (Rotr(a, 2) ^ Rotr(a, 13) ^ Rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  state_[0] += a; state_[1] += b; state_[2] += c; state_[3] += d;
  state_[4] += e; state_[5] += f; state_[6] += g; state_[7] += h;
}

void Sha256::Update(std::span<const std::byte> bytes) {
  total_bytes_ += bytes.size();
  size_t i = 0;
  while (i < bytes.size()) {
    if (buffered_ == 0 && bytes.size() - i >= 64) {
      Block(reinterpret_cast<const uint8_t*>(bytes.data() + i));
      i += 64;
      continue;
    }
    const size_t n = std::min(bytes.size() - i, 64 - buffered_);
    for (size_t k = 0; k < n; ++k) buffer_[buffered_ + k] = static_cast<uint8_t>(bytes[i + k]);
    buffered_ += n;
    i += n;
    if (buffered_ == 64) {
      Block(buffer_.data());
      buffered_ = 0;
    }
  }
}

std::array<uint8_t, 32> Sha256::Finish() {
  const uint64_t bits = total_bytes_ * 8;
  buffer_[buffered_++] = 0x80;
  if (buffered_ > 56) {
    while (buffered_ < 64) buffer_[buffered_++] = 0;
    Block(buffer_.data());
    buffered_ = 0;
  }
  while (buffered_ < 56) buffer_[buffered_++] = 0;
  for (int k = 0; k < 8; ++k) buffer_[56 + k] = static_cast<uint8_t>(bits >> (56 - 8 * k));
  Block(buffer_.data());
  buffered_ = 0;
  std::array<uint8_t, 32> digest{};
  for (int k = 0; k < 8; ++k) {
    for (int j = 0; j < 4; ++j) digest[4 * k + j] = static_cast<uint8_t>(state_[k] >> (24 - 8 * j));
  }
  return digest;
}

std::string HexDigest(const std::array<uint8_t, 32>& digest) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (const uint8_t b : digest) {
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}

Result<std::string> Sha256OfFile(const std::filesystem::path& path) {
  AMN_ASSIGN_OR_RETURN(auto source, FileSource::Open(path));
  Sha256 hash;
  std::vector<std::byte> piece(1 << 20);
  for (uint64_t at = 0; at < source->size();) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(piece.size(), source->size() - at));
    AMN_RETURN_IF_ERROR(source->ReadAt(at, std::span(piece.data(), n)));
    hash.Update(std::span<const std::byte>(piece.data(), n));
    at += n;
  }
  return HexDigest(hash.Finish());
}

Status VerifyBlobSha256(const std::filesystem::path& blob, std::string_view expected_hex) {
  std::string expected(expected_hex);
  for (char& c : expected) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  AMN_ASSIGN_OR_RETURN(const std::string actual, Sha256OfFile(blob));
  if (actual != expected) {
    return Status(StatusCode::kInvalid,
                  MessageSafe(blob.string(), kMessagePathBytes) + ": sha256 is " + actual +
                      " but the blob is named for " + MessageSafe(expected) +
                      " (a damaged or altered download; pull it again)");
  }
  return Status::Ok();
}

}  // namespace amn::formats
