// libFuzzer target: a whole model directory from one input — config.json,
// quantize_config.json, the index and shards — opened (OpenModelFiles: index
// cross-checks, every shard header), its scheme detected from config and
// tensors, and its remember planned; nothing is written.
// Input: "AMNDIR" then records [u8 file][u32 LE length][bytes], the file
// picked from kNames by the byte modulo their count (later records of a
// name append); any other input is the directory's only file,
// model.safetensors (so plain safetensors seeds work as they are).
// Errors are expected; crashes, sanitizer reports, leaks and hangs are bugs.
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "fuzz/fuzz_limits.h"
#include "fuzz/whole_input.h"

namespace {

namespace fs = std::filesystem;
using namespace amn::formats;

constexpr std::string_view kMagic = "AMNDIR";
constexpr std::array<const char*, 7> kNames = {
    "config.json",
    "model.safetensors.index.json",
    "model-00001-of-00002.safetensors",
    "model-00002-of-00002.safetensors",
    "model.safetensors",
    "quantize_config.json",
    "tokenizer.json",
};


void Append(const fs::path& path, const uint8_t* data, size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::app);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  if (!out) std::abort();
}

void WriteDirectory(const fs::path& dir, const uint8_t* data, size_t size) {
  std::error_code ignored;
  for (const char* name : kNames) fs::remove(dir / name, ignored);
  if (size < kMagic.size() || std::memcmp(data, kMagic.data(), kMagic.size()) != 0) {
    Append(dir / "model.safetensors", data, size);
    return;
  }
  size_t at = kMagic.size();
  while (size - at >= 5) {
    const char* name = kNames[data[at] % kNames.size()];
    uint32_t length = 0;
    for (int i = 3; i >= 0; --i) length = length << 8 | data[at + 1 + i];
    at += 5;
    const size_t take = length < size - at ? length : size - at;
    Append(dir / name, data + at, take);
    at += take;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const amn::fuzz::ScratchDir dir("amn_dir_fuzz");
  WriteDirectory(dir.path, data, size);
  amn::fuzz::PlanSafetensorsModel(dir.path, amn::fuzz::SmallLimits());
  return 0;
}
