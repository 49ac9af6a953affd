// Page-aligned byte buffers for perf/: untouched (each thread can fault its
// own pages first, perf/thread_bandwidth.h) or faulted in at once (perf/
// measure.h's AlignedBytes). Standard library only.
#ifndef AMN_PERF_PAGE_BYTES_H_
#define AMN_PERF_PAGE_BYTES_H_

#include <cstddef>
#include <memory>

namespace amn::perf {

// Page-aligned bytes whose pages nobody has touched yet (large allocations
// come straight from mmap). Throws std::bad_alloc.
class UntouchedBytes {
 public:
  explicit UntouchedBytes(size_t n_bytes);
  unsigned char* data() { return data_.get(); }
  const unsigned char* data() const { return data_.get(); }
  size_t size() const { return size_; }

 private:
  struct Free {
    void operator()(unsigned char* p) const;
  };
  std::unique_ptr<unsigned char, Free> data_;
  size_t size_;
};

}  // namespace amn::perf

#endif  // AMN_PERF_PAGE_BYTES_H_
