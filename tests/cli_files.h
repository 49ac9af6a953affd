// Files for the CLI end-to-end tests: temporary directories that clean up
// after themselves and safetensors outputs read back independently of the
// library.
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

class TempDir {
 public:
  TempDir() {
    path_ = std::filesystem::temp_directory_path() / ("amn_remember_test_" + std::to_string(getpid()) + "_" +
                                         std::to_string(counter_++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::filesystem::path& path() const { return path_; }
  // Names in the directory, to prove nothing partial was left behind.
  std::vector<std::string> Entries() const {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(path_)) names.push_back(e.path().filename());
    std::sort(names.begin(), names.end());
    return names;
  }

 private:
  static inline int counter_ = 0;
  std::filesystem::path path_;
};

// Shell-quoted path (test paths never hold a quote).
inline std::string Quote(const std::filesystem::path& p) { return "'" + p.string() + "'"; }

}  // namespace amn::test

#endif  // AMN_TESTS_CLI_FILES_H_
