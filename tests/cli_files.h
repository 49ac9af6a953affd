// Files for the CLI end-to-end tests: safetensors outputs read back
// independently of the library, and (from tests/temp_dir.h) temporary
// directories that clean up after themselves.
#ifndef AMN_TESTS_CLI_FILES_H_
#define AMN_TESTS_CLI_FILES_H_

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/fixtures.h"
#include "tests/temp_dir.h"

namespace amn::test {

// A safetensors file read back independently of the library.
struct ReadBack {
  nlohmann::json header;
  std::vector<uint8_t> file;
  uint64_t data_offset = 0;

  explicit ReadBack(const std::filesystem::path& path) : file(ReadBytes(path)) {
    if (file.size() < 8) return;
    uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = n << 8 | file[i];
    data_offset = 8 + n;
    header = nlohmann::json::parse(file.begin() + 8, file.begin() + 8 + static_cast<long>(n));
  }
  std::vector<uint8_t> Data(const std::string& name) const {
    const auto& offsets = header.at(name).at("data_offsets");
    const uint64_t begin = offsets[0].get<uint64_t>(), end = offsets[1].get<uint64_t>();
    return {file.begin() + static_cast<long>(data_offset + begin),
            file.begin() + static_cast<long>(data_offset + end)};
  }
};

// Shell-quoted path (test paths never hold a quote).
inline std::string Quote(const std::filesystem::path& p) { return "'" + p.string() + "'"; }

}  // namespace amn::test

#endif  // AMN_TESTS_CLI_FILES_H_
