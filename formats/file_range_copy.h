// Copying a byte range from one open file to another inside the kernel with
// copy_file_range(2): no user-space buffer, one copy in the page cache (or a
// shared extent, where the file system can reflink, or a copy on the server
// of a network file system). The remember engine copies tensors whose output
// bytes are a contiguous range of the input this way where that avoids
// moving the bytes (CopyRangeAvoidsCopy; formats/remember_engine.cc) and
// writes with pread + write whatever this leaves over.
#ifndef AMN_FORMATS_FILE_RANGE_COPY_H_
#define AMN_FORMATS_FILE_RANGE_COPY_H_

#include <sys/types.h>

#include <cstdint>

namespace amn::formats {

// The system call's shape, so tests can put a failing one in its place.
using CopyRangeCall = ssize_t (*)(int in_fd, off64_t* in_offset, int out_fd, off64_t* out_offset,
                                  size_t bytes, unsigned flags);

// copy_file_range(2) itself (glibc's wrapper).
ssize_t SystemCopyFileRange(int in_fd, off64_t* in_offset, int out_fd, off64_t* out_offset,
                            size_t bytes, unsigned flags);

// When the engine copies kept tensors with copy_file_range.
enum class CopyRangeUse {
  kWhereItAvoidsCopy,  // only where CopyRangeAvoidsCopy says so (the default)
  kAlways,             // every kept chunk (AMN_COPY_FILE_RANGE=1: to test that path anywhere)
  kNever,              // pread + write only (AMN_NO_COPY_FILE_RANGE=1)
};

// AMN_NO_COPY_FILE_RANGE set (not empty, not "0"): kNever; else
// AMN_COPY_FILE_RANGE set (not empty, not "0"): kAlways; else
// kWhereItAvoidsCopy.
CopyRangeUse CopyRangeUseFromEnvironment();

// Whether copy_file_range from a file on file system type `in_fs` at
// `in_offset` to one on `out_fs` at `out_offset` (statfs(2) f_type values;
// `block_size` the output file system's f_bsize) lets the kernel skip
// copying the bytes through the page cache. Where it cannot (ext4, tmpfs,
// misaligned offsets, two different file systems) it copies them in the
// page cache, which measured slower than pread + write on ext4 and tmpfs
// (docs/performance/remember-vs-cp.md, "Choosing copy_file_range per file system"):
// * a network file system with a copy on the server (NFS 4.2, SMB/CIFS,
//   Ceph), both files on the same type: yes, at any offset;
// * a file system that shares extents (Btrfs, XFS, bcachefs, OCFS2), both
//   files on the same type: only when both offsets are multiples of the
//   block size, as the kernel's remap requires (fs/remap_range.c,
//   generic_remap_checks); else it copies in the page cache;
// * anything else: no.
bool CopyRangeAvoidsCopy(int64_t in_fs, int64_t out_fs, uint64_t in_offset, uint64_t out_offset,
                         uint64_t block_size);

// The file system of an open file, from fstatfs(2); all zero when that
// fails (CopyRangeAvoidsCopy then says no).
struct FileSystemKind {
  int64_t type = 0;         // f_type
  uint64_t block_size = 0;  // f_bsize
};
FileSystemKind FileSystemOf(int fd);

struct RangeCopy {
  uint64_t copied = 0;  // bytes copied, from the input offset on
  int error = 0;        // the errno that stopped the copy early, 0 when none did
  bool complete(uint64_t bytes) const { return copied == bytes; }
};

// Copies `bytes` of `in_fd` from `in_offset` to `out_fd` at its file position
// (which advances by what was copied), calling `call` until done: a call may
// copy less than asked (it is called again for the rest) or be interrupted
// (EINTR: called again). Stops early, saying how far it got, when a call fails
// (`error`: EXDEV across file systems, ENOSYS or EOPNOTSUPP without support,
// EINVAL or EBADF for descriptors it cannot copy between such as a pipe or an
// O_APPEND file, or a real I/O error) or copies nothing (the input ended: it
// shrank). The caller writes the rest itself, which also reports any real
// error.
RangeCopy CopyFileRange(int in_fd, uint64_t in_offset, int out_fd, uint64_t bytes,
                        CopyRangeCall call = SystemCopyFileRange);

// The same to `out_fd` at `out_offset`, leaving its file position alone, so
// several threads may copy into one output at once (the mapped writer of
// formats/remember_engine.cc).
RangeCopy CopyFileRangeAt(int in_fd, uint64_t in_offset, int out_fd, uint64_t out_offset,
                          uint64_t bytes, CopyRangeCall call = SystemCopyFileRange);

}  // namespace amn::formats

#endif  // AMN_FORMATS_FILE_RANGE_COPY_H_
