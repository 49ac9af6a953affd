// A plain .npy file written independently of the library, for tests that
// need an input on the gathered (memory-mapped) array path.
#ifndef AMN_TESTS_NPY_WRITER_H_
#define AMN_TESTS_NPY_WRITER_H_

#include <fcntl.h>
#include <sys/stat.h>

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace amn::test {

// Version 1.0 .npy of `n` little-endian F32 values i * 0.5, its mtime set in
// the past so that any later write changes it whatever the clock's
// granularity. Returns false when it could not be written.
inline bool WriteF32Npy(const std::filesystem::path& path, size_t n) {
  std::string header =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (" + std::to_string(n) + ",), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string bytes = "\x93NUMPY";
  bytes += '\x01';
  bytes += '\x00';
  bytes += static_cast<char>(header.size() & 0xff);
  bytes += static_cast<char>(header.size() >> 8);
  bytes += header;
  std::vector<float> values(n);
  for (size_t i = 0; i < n; ++i) values[i] = static_cast<float>(i) * 0.5f;
  {
    std::ofstream out(path, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.write(reinterpret_cast<const char*>(values.data()), static_cast<std::streamsize>(n * 4));
    if (!out) return false;
  }
  const struct timespec past[2] = {{1600000000, 0}, {1600000000, 0}};
  return utimensat(AT_FDCWD, path.c_str(), past, 0) == 0;
}

}  // namespace amn::test

#endif  // AMN_TESTS_NPY_WRITER_H_
