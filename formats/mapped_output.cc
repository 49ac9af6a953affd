// fallocate, pwrite and guarded shared maps for the mapped output writer.
#include "formats/mapped_output.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <utility>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14; older kernels answer EINVAL
#endif

namespace amn::formats {
namespace {

// Set once MADV_POPULATE_WRITE answered EINVAL (a kernel before 5.14): later
// windows fault their pages in as they are written instead.
std::atomic<bool> g_no_populate{false};

size_t PageSize() {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

std::string Errno(int error) { return std::strerror(error); }

}  // namespace

std::optional<OutputWriter> OutputWriterFromEnvironment() {
  const char* env = std::getenv("AMN_OUTPUT_WRITER");
  if (env == nullptr) return std::nullopt;
  if (std::strcmp(env, "ring") == 0) return OutputWriter::kRing;
  if (std::strcmp(env, "mapped") == 0) return OutputWriter::kMapped;
  return std::nullopt;
}

int SystemFallocate(int fd, int mode, off_t offset, off_t len) {
  return ::fallocate(fd, mode, offset, len);
}

Result<bool> ReserveForMapping(int fd, uint64_t bytes, FallocateCall call,
                               const std::string& name) {
  struct stat st = {};
  if (call == nullptr || bytes == 0 ||
      bytes > static_cast<uint64_t>(std::numeric_limits<off_t>::max()) || ::fstat(fd, &st) != 0 ||
      !S_ISREG(st.st_mode) || st.st_size != 0) {
    return false;
  }
  const int flags = ::fcntl(fd, F_GETFL);
  // A shared writable map needs a readable descriptor; pwrite ignores the
  // offset of an O_APPEND one.
  if (flags < 0 || (flags & O_ACCMODE) != O_RDWR || (flags & O_APPEND) != 0) return false;
  int result;
  do {
    result = call(fd, 0, 0, static_cast<off_t>(bytes));
  } while (result != 0 && errno == EINTR);
  if (result != 0) {
    const int error = errno;
    // A refusal may still have taken blocks past the end: give them back.
    (void)::ftruncate(fd, 0);
    if (error == ENOSPC || error == EDQUOT || error == EFBIG || error == EIO) {
      return Status(StatusCode::kIo, name + ": cannot reserve " + std::to_string(bytes) +
                                         " bytes for the output: " + Errno(error));
    }
    return false;  // EOPNOTSUPP, ENOSYS, ENODEV, EPERM, ...: the ring writes it
  }
  // Mode 0 extends the file already; this makes the length exact whatever
  // the call did.
  if (::ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    const int error = errno;
    return Status(StatusCode::kIo, name + ": cannot size the output to " + std::to_string(bytes) +
                                       " bytes: " + Errno(error));
  }
  return true;
}

Status PwriteAll(int fd, std::span<const std::byte> bytes, uint64_t offset,
                 const std::string& name) {
  while (!bytes.empty()) {
    const ssize_t n = ::pwrite(fd, bytes.data(), bytes.size(), static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return Status(StatusCode::kIo, name + ": write failed: " + Errno(n < 0 ? errno : EIO))
          .WithByteOffset(offset);
    }
    bytes = bytes.subspan(static_cast<size_t>(n));
    offset += static_cast<uint64_t>(n);
  }
  return Status::Ok();
}

OutputMap OutputMap::Map(int fd, uint64_t bytes) {
  OutputMap map;
  if (bytes == 0 || bytes > std::numeric_limits<size_t>::max()) return map;
  void* base =
      ::mmap(nullptr, static_cast<size_t>(bytes), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) return map;
  MappingGuard guard =
      MappingGuard::Register(base, static_cast<size_t>(bytes), MappingGuard::Access::kWrite);
  if (!guard.active()) {
    ::munmap(base, static_cast<size_t>(bytes));
    return map;
  }
  map.base_ = static_cast<std::byte*>(base);
  map.length_ = static_cast<size_t>(bytes);
  map.guard_ = std::move(guard);
  return map;
}

OutputMap::OutputMap(OutputMap&& other) noexcept
    : base_(std::exchange(other.base_, nullptr)),
      length_(std::exchange(other.length_, 0)),
      guard_(std::move(other.guard_)) {}

OutputMap::~OutputMap() { Unmap(); }

std::span<std::byte> OutputMap::Prepare(uint64_t offset, uint64_t bytes) const {
  if (base_ == nullptr || bytes == 0 || offset > length_ || bytes > length_ - offset) return {};
  const uint64_t start = offset / PageSize() * PageSize();
  // Faulting the pages in ahead takes them in one call instead of one fault
  // each, and says EFAULT where a store would raise SIGBUS.
  if (!g_no_populate.load(std::memory_order_relaxed) &&
      ::madvise(base_ + start, static_cast<size_t>(offset + bytes - start), MADV_POPULATE_WRITE) !=
          0) {
    if (errno != EINVAL) return {};
    g_no_populate.store(true, std::memory_order_relaxed);
  }
  return {base_ + offset, static_cast<size_t>(bytes)};
}

void OutputMap::Release(uint64_t offset, uint64_t bytes) const {
  if (base_ == nullptr || bytes == 0 || offset > length_ || bytes > length_ - offset) return;
  const uint64_t start = offset / PageSize() * PageSize();
  (void)::madvise(base_ + start, static_cast<size_t>(offset + bytes - start), MADV_DONTNEED);
}

Status OutputMap::Check(const std::string& name) const {
  if (!guard_.faulted()) return Status::Ok();
  return Status(StatusCode::kIo,
                name +
                    ": bytes could not be written through the output's memory map (a page of "
                    "the file could not be had: out of space, an I/O error, or the file was "
                    "cut short by another process)");
}

void OutputMap::Unmap() {
  if (base_ == nullptr) return;
  guard_ = MappingGuard();  // unregistered before the range is unmapped
  ::munmap(base_, length_);
  base_ = nullptr;
  length_ = 0;
}

}  // namespace amn::formats
