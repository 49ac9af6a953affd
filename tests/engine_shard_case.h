// A shard plan over a small input file for the engine's own tests
// (file_range_copy_test, mapped_output_test): copied ranges, a conversion,
// an empty tensor and zero padding, with the bytes worked out here from the
// input, not by the engine.
#ifndef AMN_TESTS_ENGINE_SHARD_CASE_H_
#define AMN_TESTS_ENGINE_SHARD_CASE_H_

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "formats/remember_engine.h"

namespace amn::formats::shard_case {

namespace fs = std::filesystem;

inline void WriteFile(const fs::path& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

// "same", or where two byte strings first differ (readable where
// EXPECT_EQ of two long vectors is not).
inline std::string Compare(const std::vector<uint8_t>& got, const std::vector<uint8_t>& want) {
  const size_t n = std::min(got.size(), want.size());
  for (size_t i = 0; i < n; ++i) {
    if (got[i] != want[i]) {
      return "byte " + std::to_string(i) + " is " + std::to_string(got[i]) + ", not " +
             std::to_string(want[i]);
    }
  }
  if (got.size() != want.size()) {
    return std::to_string(got.size()) + " bytes, not " + std::to_string(want.size());
  }
  return "same";
}

// Byte i of the input: a pattern with no period a chunk size shares.
inline std::vector<uint8_t> Pattern(size_t n) {
  std::vector<uint8_t> bytes(n);
  for (size_t i = 0; i < n; ++i) bytes[i] = static_cast<uint8_t>((i * 131 + i / 251) ^ 0x5a);
  return bytes;
}

// A shard over Pattern(8000): copied ranges, an F32 -> BF16 conversion
// between them, an empty tensor and gaps the engine fills with zeros (as
// GGUF's alignment does), and the bytes it must come to.
struct ShardCase {
  RememberPlan plan;
  std::vector<uint8_t> input, expected;
};

inline ShardCase MakeCase(const fs::path& input_path) {
  ShardCase c;
  c.input = Pattern(8000);
  // Floats 0.5 * k (k < 100), exact in BF16: the BF16 is their top half.
  const uint64_t floats_at = 6400;
  for (uint32_t k = 0; k < 100; ++k) {
    const float f = 0.5f * static_cast<float>(k) - 20.0f;
    std::memcpy(&c.input[floats_at + 4 * k], &f, 4);
  }
  WriteFile(input_path, c.input);
  c.plan.input_files = {input_path};
  OutputShard shard;
  shard.header_bytes = "HEADER--";
  auto copy = [&](const char* name, uint64_t at, uint64_t bytes, uint64_t data_begin) {
    OutputTensor t;
    t.name = name;
    t.dtype = Dtype::kU8;
    t.shape = {bytes};
    t.decode = Decode::kCopy;
    t.input_offset = at;
    t.input_bytes = t.bytes = bytes;
    t.data_begin = data_begin;
    shard.tensors.push_back(t);
  };
  copy("a", 7, 1000, 0);
  OutputTensor bf16;
  bf16.name = "converted";
  bf16.dtype = Dtype::kBf16;
  bf16.shape = {100};
  bf16.decode = Decode::kConvert;
  bf16.source_dtype = Dtype::kF32;
  bf16.input_offset = floats_at;
  bf16.input_bytes = 400;
  bf16.bytes = 200;
  bf16.data_begin = 1024;  // 24 bytes of padding before it, 24 after
  shard.tensors.push_back(bf16);
  copy("b", 1601, 333, 1248);
  copy("empty", 0, 0, 1581);
  copy("c", 3, 5000, 1600);
  shard.data_bytes = 6656;  // 56 bytes of padding after the last tensor
  c.plan.shards.push_back(shard);

  auto& e = c.expected;
  e.assign(shard.header_bytes.begin(), shard.header_bytes.end());
  auto range = [&](uint64_t at, uint64_t bytes) {
    e.insert(e.end(), c.input.begin() + static_cast<long>(at),
             c.input.begin() + static_cast<long>(at + bytes));
  };
  auto zeros_to = [&](uint64_t data_offset) {
    e.resize(shard.header_bytes.size() + data_offset, 0);
  };
  range(7, 1000);
  zeros_to(1024);
  for (uint32_t k = 0; k < 100; ++k) {
    e.push_back(c.input[floats_at + 4 * k + 2]);
    e.push_back(c.input[floats_at + 4 * k + 3]);
  }
  zeros_to(1248);
  range(1601, 333);
  zeros_to(1600);
  range(3, 5000);
  zeros_to(6656);
  return c;
}

// WriteShard of `c` into a new file `out_path`, opened read-write (as amn's
// outputs are, so the mapped writer can map it) unless `flags` says otherwise.
inline Status RunShard(const ShardCase& c, const fs::path& out_path, const EngineOptions& options,
                       int flags = O_RDWR) {
  const int fd = ::open(out_path.c_str(), flags | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Status(StatusCode::kIo, "cannot create the output");
  const Status status = WriteShard(c.plan, c.plan.shards.front(), fd, out_path.string(), options);
  ::close(fd);
  return status;
}

}  // namespace amn::formats::shard_case

#endif  // AMN_TESTS_ENGINE_SHARD_CASE_H_
