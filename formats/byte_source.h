// Reading untrusted files: a positioned reader (header-only inspection reads
// exactly the bytes it needs) and a read-only memory map for tensor data.
#ifndef AMN_FORMATS_BYTE_SOURCE_H_
#define AMN_FORMATS_BYTE_SOURCE_H_

#include <cstddef>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "amn/result.h"
#include "formats/sigbus_guard.h"

namespace amn::formats {

// What tells cheaply whether a file changed: device, inode, size and
// modification time (nanoseconds). Stamps differ when the file was replaced,
// resized or written to.
struct FileStamp {
  uint64_t device = 0;
  uint64_t inode = 0;
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  bool operator==(const FileStamp&) const = default;
};

// For error messages built from untrusted text (tensor names, paths, JSON
// snippets): control bytes, DEL and bytes that are not UTF-8 become \xNN,
// and the text is cut to at most `max_bytes` (never inside a character) with
// "...", so a message stays one readable line of valid UTF-8.
// Paths get kMessagePathBytes (PATH_MAX), everything else the default.
std::string MessageSafe(std::string_view text, size_t max_bytes = 200);
inline constexpr size_t kMessagePathBytes = 4096;

// A JSON library exception's message, without nlohmann's
// "[json.exception.parse_error.101] " tag, made MessageSafe.
std::string JsonErrorText(const std::exception& error);

// Reads at absolute offsets. Implementations: files (pread), memory (tests).
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  virtual uint64_t size() const = 0;
  // Fills `out` from `offset`; kTruncated (naming the offset) when the
  // source ends first, kIo on a read error.
  virtual Status ReadAt(uint64_t offset, std::span<std::byte> out) = 0;
  // For error messages: the file path, or "<memory>".
  virtual const std::string& name() const = 0;
};

class FileSource final : public ByteSource {
 public:
  static Result<std::unique_ptr<FileSource>> Open(const std::filesystem::path& path);
  ~FileSource() override;
  uint64_t size() const override { return size_; }
  Status ReadAt(uint64_t offset, std::span<std::byte> out) override;
  const std::string& name() const override { return name_; }
  // The open descriptor (read-only), for copy_file_range (formats/file_range_copy.h).
  int fd() const { return fd_; }
  // The file as it was when opened, and as it is now (fstat of the open
  // descriptor): they differ when the file was written or resized since.
  const FileStamp& stamp() const { return stamp_; }
  Result<FileStamp> CurrentStamp() const;

 private:
  FileSource(int fd, const FileStamp& stamp, std::string name)
      : fd_(fd), size_(stamp.size), stamp_(stamp), name_(std::move(name)) {}
  int fd_;
  uint64_t size_;
  FileStamp stamp_;
  std::string name_;
};

class MemorySource final : public ByteSource {
 public:
  explicit MemorySource(std::span<const std::byte> bytes, std::string name = "<memory>")
      : bytes_(bytes), name_(std::move(name)) {}
  uint64_t size() const override { return bytes_.size(); }
  Status ReadAt(uint64_t offset, std::span<std::byte> out) override;
  const std::string& name() const override { return name_; }

 private:
  std::span<const std::byte> bytes_;
  std::string name_;
};

// A whole file mapped read-only (PROT_READ, MAP_PRIVATE): the input is never
// modified. Movable, not copyable; unmaps on destruction. The mapping is
// guarded (formats/sigbus_guard.h) when a guard slot is free: a read past the
// end of a file that shrank after mapping then sees zeros and sets
// faulted() instead of killing the process with SIGBUS.
class MappedFile {
 public:
  static Result<MappedFile> Open(const std::filesystem::path& path);
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  std::span<const std::byte> bytes() const { return {data_, size_}; }
  const std::filesystem::path& path() const { return path_; }
  // The file when it was mapped.
  const FileStamp& stamp() const { return stamp_; }
  // Whether reads are guarded against SIGBUS; unguarded mappings must not
  // be read where the file might change (read the file instead).
  bool guarded() const { return guard_.active(); }
  // True once a read of the mapping hit a page the file no longer has.
  bool faulted() const { return guard_.faulted(); }
  // Lets the kernel drop the pages of [offset, offset + bytes) from this
  // process (they are re-read from the file if touched again), so streaming
  // through a mapped file does not grow the resident set to the file's size.
  void Evict(uint64_t offset, uint64_t bytes) const;

 private:
  MappedFile() = default;
  void Unmap();
  const std::byte* data_ = nullptr;
  size_t size_ = 0;
  std::filesystem::path path_;
  FileStamp stamp_;
  MappingGuard guard_;
};

}  // namespace amn::formats

#endif  // AMN_FORMATS_BYTE_SOURCE_H_
