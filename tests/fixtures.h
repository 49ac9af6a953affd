// Locating the shared real-model fixtures (../shared/fixtures/README.md):
// AMN_FIXTURES_DIR, else <project root>/../shared/fixtures. Tests skip with
// a message naming the path when a family folder is absent.
#ifndef AMN_TESTS_FIXTURES_H_
#define AMN_TESTS_FIXTURES_H_

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace amn::test {

inline std::filesystem::path FixturesDir() {
  if (const char* env = std::getenv("AMN_FIXTURES_DIR"); env != nullptr && *env != '\0') {
    return env;
  }
  return std::filesystem::path(AMN_PROJECT_ROOT) / ".." / "shared" / "fixtures";
}

// Files in a family folder with the given extension, sorted; empty when the
// folder is missing.
inline std::vector<std::filesystem::path> FixtureFiles(const std::string& family,
                                                       const std::string& extension) {
  std::vector<std::filesystem::path> files;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(FixturesDir() / family, error)) {
    if (entry.is_regular_file() && entry.path().extension() == extension) {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

// One read of the whole file (an istreambuf_iterator copy took 2.9 s per
// 20 MiB under ASan at -O0, the sanitizer build's test code). A missing
// file, or anything but a regular file, reads as empty.
inline std::vector<uint8_t> ReadBytes(const std::filesystem::path& path) {
  std::error_code error;
  const uintmax_t size = std::filesystem::file_size(path, error);
  std::ifstream in(path, std::ios::binary);
  if (error || !in) return {};
  std::vector<uint8_t> bytes(static_cast<size_t>(size));
  in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  bytes.resize(static_cast<size_t>(in.gcount()));
  return bytes;
}

inline uint32_t LoadLe32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}

}  // namespace amn::test

#define AMN_SKIP_WITHOUT_FIXTURES(files, family)                                      \
  if ((files).empty())                                                                \
  GTEST_SKIP() << "fixtures not found at " << (::amn::test::FixturesDir() / (family)) \
               << "; set AMN_FIXTURES_DIR"

#endif  // AMN_TESTS_FIXTURES_H_
