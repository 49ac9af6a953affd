// Byte sources over POSIX files (open + fstat + pread), memory spans, and a
// read-only private memory map. Only regular files are accepted: a FIFO or a
// device would block or lie about its size.
#include "formats/byte_source.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <system_error>
#include <utility>

#include "formats/utf8.h"

namespace amn::formats {
namespace {

// One pread call never asks for more than this (Linux caps a read near 2 GiB).
constexpr size_t kMaxReadChunk = size_t{1} << 30;

std::string ErrnoText(int error) {
  return std::error_code(error, std::generic_category()).message();
}

Status IoError(const std::string& name, std::string_view what, int error) {
  return Status(StatusCode::kIo, MessageSafe(name, kMessagePathBytes) + ": " + std::string(what) +
                                     ": " + ErrnoText(error));
}

// Bounds check shared by every source: [offset, offset + n) inside [0, size).
Status CheckRange(const std::string& name, uint64_t size, uint64_t offset, uint64_t n) {
  if (offset > size || n > size - offset) {
    return Status(StatusCode::kTruncated,
                  MessageSafe(name, kMessagePathBytes) + ": reading " + std::to_string(n) +
                      " bytes at offset " + std::to_string(offset) + " runs past the end of the " +
                      std::to_string(size) + "-byte file")
        .WithByteOffset(offset);
  }
  return Status::Ok();
}

FileStamp StampOf(const struct stat& st) {
  FileStamp stamp;
  stamp.device = static_cast<uint64_t>(st.st_dev);
  stamp.inode = static_cast<uint64_t>(st.st_ino);
  stamp.size = static_cast<uint64_t>(st.st_size);
  stamp.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  return stamp;
}

// Opens `path` read-only and returns the descriptor and stamp of a regular
// file. O_NONBLOCK keeps open() from waiting on a FIFO; it does not change
// reads of a regular file.
Status OpenRegularFile(const std::string& name, int* fd_out, FileStamp* stamp_out) {
  int fd = -1;
  do {
    fd = ::open(name.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return IoError(name, "cannot open", errno);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int error = errno;
    ::close(fd);
    return IoError(name, "cannot stat", error);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status(StatusCode::kInvalidArgument,
                  MessageSafe(name, kMessagePathBytes) + ": not a regular file");
  }
  *fd_out = fd;
  *stamp_out = StampOf(st);
  return Status::Ok();
}

}  // namespace

std::string JsonErrorText(const std::exception& error) {
  std::string_view text = error.what();
  if (text.starts_with("[json.exception.")) {
    if (const size_t end = text.find("] "); end != std::string_view::npos) {
      text.remove_prefix(end + 2);
    }
  }
  return MessageSafe(text, 400);
}

std::string MessageSafe(std::string_view text, size_t max_bytes) {
  const size_t n = Utf8CutPoint(text, max_bytes);
  std::string out = EscapeInvalidUtf8(text.substr(0, n), /*controls=*/true);
  if (n < text.size()) out += "...";
  return out;
}

Result<std::unique_ptr<FileSource>> FileSource::Open(const std::filesystem::path& path) {
  std::string name = path.string();
  int fd = -1;
  FileStamp stamp;
  AMN_RETURN_IF_ERROR(OpenRegularFile(name, &fd, &stamp));
  // The constructor is private, so no make_unique.
  return std::unique_ptr<FileSource>(new FileSource(fd, stamp, std::move(name)));
}

FileSource::~FileSource() { ::close(fd_); }

Result<FileStamp> FileSource::CurrentStamp() const {
  struct stat st {};
  if (::fstat(fd_, &st) != 0) return IoError(name_, "cannot stat", errno);
  return StampOf(st);
}

Status FileSource::ReadAt(uint64_t offset, std::span<std::byte> out) {
  AMN_RETURN_IF_ERROR(CheckRange(name_, size_, offset, out.size()));
  size_t done = 0;
  while (done < out.size()) {
    const size_t want = out.size() - done < kMaxReadChunk ? out.size() - done : kMaxReadChunk;
    // offset + done <= size_, which came from st_size, so it fits in off_t.
    const ssize_t got = ::pread(fd_, out.data() + done, want, static_cast<off_t>(offset + done));
    if (got < 0) {
      if (errno == EINTR) continue;
      return IoError(name_, "read failed at offset " + std::to_string(offset + done), errno)
          .WithByteOffset(offset + done);
    }
    if (got == 0) {
      // The file shrank after it was opened.
      return Status(StatusCode::kTruncated,
                    MessageSafe(name_, kMessagePathBytes) + ": file ended at offset " +
                        std::to_string(offset + done) + " while reading " +
                        std::to_string(out.size()) + " bytes at offset " + std::to_string(offset))
          .WithByteOffset(offset + done);
    }
    done += static_cast<size_t>(got);
  }
  return Status::Ok();
}

Status MemorySource::ReadAt(uint64_t offset, std::span<std::byte> out) {
  AMN_RETURN_IF_ERROR(CheckRange(name_, bytes_.size(), offset, out.size()));
  // Empty spans may hold a null pointer, which memcpy must not see.
  if (!out.empty()) std::memcpy(out.data(), bytes_.data() + offset, out.size());
  return Status::Ok();
}

Result<MappedFile> MappedFile::Open(const std::filesystem::path& path) {
  const std::string name = path.string();
  int fd = -1;
  FileStamp stamp;
  AMN_RETURN_IF_ERROR(OpenRegularFile(name, &fd, &stamp));
  const uint64_t size = stamp.size;
  if (size > std::numeric_limits<size_t>::max()) {
    ::close(fd);
    return Status(StatusCode::kLimitExceeded, MessageSafe(name, kMessagePathBytes) + ": " +
                                                  std::to_string(size) +
                                                  " bytes do not fit this address space");
  }
  MappedFile mapped;
  mapped.path_ = path;
  mapped.stamp_ = stamp;
  mapped.size_ = static_cast<size_t>(size);
  // mmap rejects a zero length: an empty file maps to an empty span.
  if (size != 0) {
    void* data = ::mmap(nullptr, mapped.size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (data == MAP_FAILED) {
      const int error = errno;
      ::close(fd);
      return IoError(name, "cannot map", error);
    }
    mapped.data_ = static_cast<const std::byte*>(data);
    mapped.guard_ = MappingGuard::Register(data, mapped.size_);
  }
  // The mapping keeps the file alive; the descriptor is no longer needed.
  ::close(fd);
  return mapped;
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      path_(std::move(other.path_)),
      stamp_(other.stamp_),
      guard_(std::move(other.guard_)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    Unmap();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    path_ = std::move(other.path_);
    stamp_ = other.stamp_;
    guard_ = std::move(other.guard_);
  }
  return *this;
}

// The guard goes first: no fault can be expected in a range once unmapped.
void MappedFile::Unmap() {
  guard_ = MappingGuard();
  if (data_ != nullptr) ::munmap(const_cast<std::byte*>(data_), size_);
  data_ = nullptr;
}

void MappedFile::Evict(uint64_t offset, uint64_t bytes) const {
  if (data_ == nullptr || offset >= size_) return;
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const uint64_t begin = offset / page * page;
  const uint64_t end = std::min<uint64_t>(size_, offset + std::min<uint64_t>(bytes, size_ - offset));
  // Advice only: a failure leaves the pages resident, which is harmless.
  (void)::madvise(const_cast<std::byte*>(data_) + begin, end - begin, MADV_DONTNEED);
}

MappedFile::~MappedFile() { Unmap(); }

}  // namespace amn::formats
