// Internal: the dispatched decoder of every family in the kernel table
// (dispatch/kernel_table.h), generated from it. Each runs Decode<Family> on
// the target dispatch selects now, without checks: the caller (a checked API
// in dispatch/, or a registry sample) has validated `args` and the range and
// sized `out` (kernels/kernel_args.h). Call internal::PrepareDispatch() first.
#ifndef AMN_DISPATCH_FAMILY_DECODERS_H_
#define AMN_DISPATCH_FAMILY_DECODERS_H_

#include <cstddef>

#include "amn/elem_type.h"
#include "amn/targets.h"
#include "dispatch/kernel_table.h"
#include "kernels/kernel_args.h"

namespace amn {

namespace internal {
#define AMN_DECLARE_DECODER(Family, Tu, Ref, group)                                       \
  void Decode##Family(const kernels::Family##Args& args, size_t begin, size_t end,        \
                      ElemType out_type, void* out);
AMN_KERNEL_FAMILIES(AMN_DECLARE_DECODER)
#undef AMN_DECLARE_DECODER
}  // namespace internal

// The probes (also declared in the public headers of each family).
#define AMN_DECLARE_PROBE(Family, Tu, Ref, group) TargetId Tu##Target();
AMN_KERNEL_FAMILIES(AMN_DECLARE_PROBE)
#undef AMN_DECLARE_PROBE

}  // namespace amn

#endif  // AMN_DISPATCH_FAMILY_DECODERS_H_
