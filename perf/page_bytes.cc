// perf/page_bytes.h.
#include "perf/page_bytes.h"

#include <cstdlib>
#include <new>

namespace amn::perf {

UntouchedBytes::UntouchedBytes(size_t n_bytes)
    : data_(static_cast<unsigned char*>(
          std::aligned_alloc(4096, (n_bytes + 4095) / 4096 * 4096 + 4096))),
      size_(n_bytes) {
  if (data_ == nullptr) throw std::bad_alloc();
}

void UntouchedBytes::Free::operator()(unsigned char* p) const { std::free(p); }

}  // namespace amn::perf
