// Reading a memory-mapped input safely: when the file shrinks under its
// mapping (truncated or rewritten by another process), touching a page past
// the new end raises SIGBUS, which would kill the process. While a
// MappingGuard is registered, a process-wide SIGBUS handler recognises faults
// inside the guarded range, maps a page of zeros over the faulting page so
// the reader can go on, and records the fault; the reader then checks
// faulted() and fails with an error naming the file. Faults outside every
// guarded range go to the handler that was installed before (or the default
// action), as if no guard existed. The handler is installed while at least
// one guard is registered and the previous one is restored after the last.
//
// A guard of a writable shared map of an output (Access::kWrite: the mapped
// output writer of formats/remember_engine.cc) maps a writable page of
// anonymous memory instead: a store faults when the file system cannot give
// its page (no space after all, an I/O error, the file cut short by someone
// else), and on retry lands in that throwaway page, so the writer goes on to
// the end of its chunk and then reports the fault as an error; the output is
// then never committed.
#ifndef AMN_FORMATS_SIGBUS_GUARD_H_
#define AMN_FORMATS_SIGBUS_GUARD_H_

#include <cstddef>
#include <cstdint>

namespace amn::formats {

class MappingGuard {
 public:
  enum class Access {
    kRead,   // a faulting page reads as zeros (read-only)
    kWrite,  // a faulting page takes stores that go nowhere
  };
  // Guards [begin, begin + bytes). Returns an unregistered guard (active()
  // false) when every slot is taken or the handler cannot be installed: the
  // caller must then not read the mapping (read the file instead).
  static MappingGuard Register(const void* begin, size_t bytes, Access access = Access::kRead);
  MappingGuard() = default;
  MappingGuard(MappingGuard&& other) noexcept;
  MappingGuard& operator=(MappingGuard&& other) noexcept;
  MappingGuard(const MappingGuard&) = delete;
  MappingGuard& operator=(const MappingGuard&) = delete;
  // Unregisters; unmap the range only after this.
  ~MappingGuard();

  bool active() const { return slot_ >= 0; }
  // True once a read of the range faulted (its file shrank under the map).
  bool faulted() const;

 private:
  void Release();
  int slot_ = -1;
};

}  // namespace amn::formats

#endif  // AMN_FORMATS_SIGBUS_GUARD_H_
