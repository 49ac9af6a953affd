// The system side of WriteShard's mapped writer (formats/remember_engine.cc).
// One thread writing every byte in order (the ring writer) moves 5-6 GB/s at
// most, and parallel pwrite would not help: tmpfs and ext4 serialise
// buffered writes on the inode lock. Page faults of a shared map do not take
// it, so the mapped writer sizes the output to its final length with its
// space reserved, maps it whole once, and each worker decodes its chunk
// straight into that chunk's pages, dropped from the resident set after it
// (which stays O(threads x chunk)). fsync writes pages dirtied through a
// map like any other, so the staged output's commit (formats/staged_output.h)
// is the same.
// Not the default: where measured (docs/performance/multi-thread.md, "The mapped output
// writer") it was not faster than the ring.
#ifndef AMN_FORMATS_MAPPED_OUTPUT_H_
#define AMN_FORMATS_MAPPED_OUTPUT_H_

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "amn/result.h"
#include "formats/sigbus_guard.h"

namespace amn::formats {

enum class OutputWriter {
  kRing,    // workers fill a ring of buffers, the calling thread write(2)s them in order
  kMapped,  // workers decode into shared maps of the output, in any order
};

// AMN_OUTPUT_WRITER=ring or =mapped (to measure one against the other);
// nullopt when unset, empty or anything else.
std::optional<OutputWriter> OutputWriterFromEnvironment();

// fallocate(2)'s shape, so tests can put a refusing one in its place.
using FallocateCall = int (*)(int fd, int mode, off_t offset, off_t len);
// fallocate(2) itself, mode 0: blocks allocated, reads give zeros. Not
// posix_fallocate, which emulates an unsupported call by writing a byte per
// block (slow, and no reservation on a copy-on-write file system).
int SystemFallocate(int fd, int mode, off_t offset, off_t len);

// Makes the empty regular file `fd` (open read-write, not O_APPEND) `bytes`
// long, every block reserved, so that no store through a map of it can fail
// for lack of space. true when ready; false when the mapped writer cannot
// be used and nothing was changed (the file is not empty, not a regular
// file, opened write-only or for appending, or the file system refuses
// fallocate: EOPNOTSUPP, ENOSYS, ...): the caller writes with the ring. kIo
// naming `name` when there is no room for it (ENOSPC, EDQUOT, EFBIG) or a
// real I/O error.
Result<bool> ReserveForMapping(int fd, uint64_t bytes, FallocateCall call, const std::string& name);

// Writes all of `bytes` at `offset` (pwrite: the file position is left
// alone); kIo naming `name` and the offset on failure.
Status PwriteAll(int fd, std::span<const std::byte> bytes, uint64_t offset,
                 const std::string& name);

// A file prepared by ReserveForMapping, mapped whole, shared and writable,
// once: a map per chunk costs an mmap and a munmap each, which take the
// process's address-space lock for writing and flush every thread's TLB
// (measured: no speed-up past one thread). The map is guarded against
// SIGBUS (Access::kWrite). Each chunk's range is faulted in ahead by
// Prepare and dropped from the resident set by Release once written, so
// the resident set stays O(threads x chunk).
class OutputMap {
 public:
  // Not mapped() when the map or its guard cannot be had (no address space,
  // a full guard table): the caller then writes with PwriteAll.
  static OutputMap Map(int fd, uint64_t bytes);
  OutputMap() = default;
  OutputMap(OutputMap&& other) noexcept;
  OutputMap& operator=(OutputMap&&) = delete;
  OutputMap(const OutputMap&) = delete;
  OutputMap& operator=(const OutputMap&) = delete;
  ~OutputMap();  // unmaps

  bool mapped() const { return base_ != nullptr; }
  // The bytes [offset, offset + bytes) of the file, their pages faulted in
  // (MADV_POPULATE_WRITE, where the kernel has it); empty when the kernel
  // says a page cannot be had (EFAULT, where a store would raise SIGBUS):
  // the caller then writes the range with PwriteAll, which names the error.
  std::span<std::byte> Prepare(uint64_t offset, uint64_t bytes) const;
  // Drops the pages of [offset, offset + bytes) from the resident set
  // (MADV_DONTNEED; what was stored stays in the file). A neighbour's page
  // at either end is dropped too and faulted in again by its next store.
  void Release(uint64_t offset, uint64_t bytes) const;
  // kIo naming `name` once a store faulted anywhere in the map (a page of
  // the file could not be had after all: the bytes in it went nowhere).
  Status Check(const std::string& name) const;

 private:
  void Unmap();
  std::byte* base_ = nullptr;
  size_t length_ = 0;
  MappingGuard guard_;
};

}  // namespace amn::formats

#endif  // AMN_FORMATS_MAPPED_OUTPUT_H_
