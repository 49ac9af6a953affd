// copy_file_range(2) over a whole range, partial copies and EINTR included.
#include "formats/file_range_copy.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <limits>

namespace amn::formats {
namespace {

// Linux copies at most MAX_RW_COUNT (INT_MAX rounded down to a page) bytes
// per call anyway; asking for no more keeps the length inside ssize_t.
constexpr uint64_t kMaxCallBytes = uint64_t{1} << 30;

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
