// Internal: what a family's dispatch TU is made of, so that TU holds nothing
// but the names of its families (no per-output-type wrappers, no math).
// A TU for families A and B compiled in dispatch/<tu>.cc:
//
//   #undef HWY_TARGET_INCLUDE
//   #define HWY_TARGET_INCLUDE "dispatch/<tu>.cc"
//   #include "hwy/foreach_target.h"
//   #include "hwy/highway.h"
//   #include "kernels/<tu>-inl.h"        // defines Decode<A>, Decode<B>
//   #include "dispatch/family_dispatch.h"
//   AMN_FAMILY_TARGET_BEGIN
//   AMN_FAMILY_ENTRY(A) AMN_FAMILY_ENTRY(B) AMN_TU_PROBE(Tu)
//   AMN_FAMILY_TARGET_END
//   #if HWY_ONCE
//   AMN_FAMILY_EXPORT(A) AMN_FAMILY_EXPORT(B) AMN_TU_PROBE_EXPORT(Tu)
//   #endif
//
// Per target: <Family>Entry(args, begin, end, out_type, out) calls the
// kernel's Decode<Family>; <Tu>Probe() returns HWY_TARGET. Once: HWY_EXPORT
// tables, internal::Decode<Family> (dispatch/family_decoders.h) and the
// public <Tu>Target() probe.
#ifndef AMN_DISPATCH_FAMILY_DISPATCH_H_
#define AMN_DISPATCH_FAMILY_DISPATCH_H_

#include <cstddef>
#include <cstdint>

#include "amn/elem_type.h"
#include "dispatch/dispatch_policy.h"
#include "dispatch/family_decoders.h"
#include "kernels/kernel_args.h"

#define AMN_FAMILY_TARGET_BEGIN \
  HWY_BEFORE_NAMESPACE();       \
  namespace amn {               \
  namespace HWY_NAMESPACE {
#define AMN_FAMILY_TARGET_END \
  }                           \
  }                           \
  HWY_AFTER_NAMESPACE();

#define AMN_FAMILY_ENTRY(Family)                                                        \
  void Family##Entry(const kernels::Family##Args& args, size_t begin, size_t end,      \
                     ElemType out_type, void* out) {                                   \
    Decode##Family(args, begin, end, out_type, out);                                    \
  }
#define AMN_TU_PROBE(Tu) \
  int64_t Tu##Probe() { return HWY_TARGET; }

#define AMN_FAMILY_EXPORT(Family)                                                         \
  namespace amn {                                                                         \
  HWY_EXPORT(Family##Entry);                                                              \
  void internal::Decode##Family(const kernels::Family##Args& args, size_t begin,          \
                                size_t end, ElemType out_type, void* out) {               \
    HWY_DYNAMIC_DISPATCH(Family##Entry)(args, begin, end, out_type, out);                 \
  }                                                                                       \
  }
#define AMN_TU_PROBE_EXPORT(Tu)                    \
  namespace amn {                                  \
  HWY_EXPORT(Tu##Probe);                           \
  TargetId Tu##Target() {                          \
    (void)internal::PrepareDispatch();             \
    return HWY_DYNAMIC_DISPATCH(Tu##Probe)();      \
  }                                                \
  }

#endif  // AMN_DISPATCH_FAMILY_DISPATCH_H_
