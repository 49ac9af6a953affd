// copy_file_range(2) over a whole range, partial copies and EINTR included.
#include "formats/file_range_copy.h"

#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace amn::formats {
namespace {

// Linux copies at most MAX_RW_COUNT (INT_MAX rounded down to a page) bytes
// per call anyway; asking for no more keeps the length inside ssize_t.
constexpr uint64_t kMaxCallBytes = uint64_t{1} << 30;

// statfs(2) f_type values (include/uapi/linux/magic.h; OCFS2's from
// fs/ocfs2/ocfs2_fs.h): file systems whose copy_file_range copies on the
// server, and file systems that share extents (reflink).
constexpr int64_t kNfs = 0x6969, kSmb2 = 0xFE534D42, kCifs = 0xFF534D42, kCeph = 0x00C36400;
constexpr int64_t kBtrfs = 0x9123683E, kXfs = 0x58465342, kBcachefs = 0xCA451A4E,
                  kOcfs2 = 0x7461636F;

bool CopiesOnTheServer(int64_t fs) {
  return fs == kNfs || fs == kSmb2 || fs == kCifs || fs == kCeph;
}
bool SharesExtents(int64_t fs) {
  return fs == kBtrfs || fs == kXfs || fs == kBcachefs || fs == kOcfs2;
}

// Set, and neither empty nor "0".
bool EnvironmentSays(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' && std::strcmp(value, "0") != 0;
}

// Both entry points: `out_offset` nullptr copies at the output's position.
RangeCopy CopyLoop(int in_fd, uint64_t in_offset, int out_fd, const uint64_t* out_offset,
                   uint64_t bytes, CopyRangeCall call) {
  RangeCopy result;
  constexpr uint64_t kMaxOffset = static_cast<uint64_t>(std::numeric_limits<off64_t>::max());
  if (in_offset > kMaxOffset - bytes ||
      (out_offset != nullptr && *out_offset > kMaxOffset - bytes)) {
    result.error = EINVAL;  // past what an off64_t reaches: the caller reads instead
    return result;
  }
  while (result.copied < bytes) {
    off64_t from = static_cast<off64_t>(in_offset + result.copied);
    off64_t to = out_offset != nullptr ? static_cast<off64_t>(*out_offset + result.copied) : 0;
    const size_t want = static_cast<size_t>(std::min(bytes - result.copied, kMaxCallBytes));
    const ssize_t n = call(in_fd, &from, out_fd, out_offset != nullptr ? &to : nullptr, want, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      result.error = errno;
      return result;
    }
    if (n == 0) return result;  // the input ended before the range did
    result.copied += static_cast<uint64_t>(n);  // at most `want`
  }
  return result;
}

}  // namespace

CopyRangeUse CopyRangeUseFromEnvironment() {
  if (EnvironmentSays("AMN_NO_COPY_FILE_RANGE")) return CopyRangeUse::kNever;
  if (EnvironmentSays("AMN_COPY_FILE_RANGE")) return CopyRangeUse::kAlways;
  return CopyRangeUse::kWhereItAvoidsCopy;
}

bool CopyRangeAvoidsCopy(int64_t in_fs, int64_t out_fs, uint64_t in_offset, uint64_t out_offset,
                         uint64_t block_size) {
  // Across two file systems there is neither a server-side copy nor a
  // shared extent (the kernel answers EXDEV or copies in the page cache).
  if (in_fs != out_fs) return false;
  if (CopiesOnTheServer(out_fs)) return true;
  return SharesExtents(out_fs) && block_size > 0 && in_offset % block_size == 0 &&
         out_offset % block_size == 0;
}

FileSystemKind FileSystemOf(int fd) {
  struct statfs fs;
  if (::fstatfs(fd, &fs) != 0) return {};
  // The magic numbers are 32-bit; where f_type is a 32-bit long, the ones
  // with the top bit set (SMB2, CIFS) arrive negative.
  return {static_cast<int64_t>(static_cast<uint32_t>(fs.f_type)),
          static_cast<uint64_t>(fs.f_bsize)};
}

ssize_t SystemCopyFileRange(int in_fd, off64_t* in_offset, int out_fd, off64_t* out_offset,
                            size_t bytes, unsigned flags) {
  return ::copy_file_range(in_fd, in_offset, out_fd, out_offset, bytes, flags);
}

RangeCopy CopyFileRange(int in_fd, uint64_t in_offset, int out_fd, uint64_t bytes,
                        CopyRangeCall call) {
  return CopyLoop(in_fd, in_offset, out_fd, nullptr, bytes, call);
}

RangeCopy CopyFileRangeAt(int in_fd, uint64_t in_offset, int out_fd, uint64_t out_offset,
                          uint64_t bytes, CopyRangeCall call) {
  return CopyLoop(in_fd, in_offset, out_fd, &out_offset, bytes, call);
}

}  // namespace amn::formats
