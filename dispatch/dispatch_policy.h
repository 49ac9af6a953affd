// Internal: what every public kernel wrapper checks before dispatching.
#ifndef AMN_DISPATCH_DISPATCH_POLICY_H_
#define AMN_DISPATCH_DISPATCH_POLICY_H_

#include <cstddef>

#include "amn/status.h"

namespace amn::internal {

// Applies AMN_ISA the first time (thread-safe) and returns its status: an
// error while AMN_ISA names no target and no valid cap has replaced it.
Status PrepareDispatch();

// OK when the dispatch policy is valid and `out_elems` slots can take
// `in_elems` results.
Status CheckKernelCall(size_t in_elems, size_t out_elems);

}  // namespace amn::internal

#endif  // AMN_DISPATCH_DISPATCH_POLICY_H_
