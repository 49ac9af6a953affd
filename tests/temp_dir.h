// A temporary directory for tests that removes itself, so a failing test
// leaves nothing behind in /tmp, and that lists what it holds, so tests can
// prove that a failed write left no partial output.
#ifndef AMN_TESTS_TEMP_DIR_H_
#define AMN_TESTS_TEMP_DIR_H_

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <vector>

#include <gtest/gtest.h>

namespace amn::test {

class TempDir {
 public:
  // A fresh, empty directory named after `prefix`, the process and a counter,
  // so parallel test processes and several directories per test never meet.
  explicit TempDir(const std::string& prefix = "amn_test") {
    path_ = std::filesystem::temp_directory_path() /
            (prefix + "_" + std::to_string(::getpid()) + "_" + std::to_string(counter_++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }

  // Writes `contents` to the file `name` in the directory (its parent
  // directories must exist); the file's path.
  std::filesystem::path Write(const std::string& name, const std::string& contents) const {
    const std::filesystem::path file = path_ / name;
    std::ofstream out(file, std::ios::binary);
    out << contents;
    EXPECT_TRUE(out.good()) << file;
    return file;
  }

  // Names in the directory, sorted.
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

}  // namespace amn::test

#endif  // AMN_TESTS_TEMP_DIR_H_
