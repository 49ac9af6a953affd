// Internal: the dispatched encoder of every encoder family in the kernel
// table (dispatch/kernel_table.h AMN_ENCODER_FAMILIES), generated from it.
// Each runs Encode<Family> on the target dispatch selects now, without
// checks: the caller (dispatch/quantize_api.cc, a registry sample) has
// validated the arguments (kernels/encode_args.h). Each returns the index of
// the first non-finite input element or kernels::kAllFinite.
#ifndef AMN_DISPATCH_ENCODERS_H_
#define AMN_DISPATCH_ENCODERS_H_

#include <cstdint>

#include "amn/targets.h"
#include "dispatch/kernel_table.h"
#include "kernels/encode_args.h"
#include "kernels/encode_common.h"

namespace amn {

namespace internal {
#define AMN_DECLARE_ENCODER(Family, Tu, Ref, group) \
  uint64_t Encode##Family(const kernels::Family##Args& args, kernels::ErrorSums* errors);
AMN_ENCODER_FAMILIES(AMN_DECLARE_ENCODER)
#undef AMN_DECLARE_ENCODER
}  // namespace internal

#define AMN_DECLARE_ENCODER_PROBE(Family, Tu, Ref, group) TargetId Tu##Target();
AMN_ENCODER_FAMILIES(AMN_DECLARE_ENCODER_PROBE)
#undef AMN_DECLARE_ENCODER_PROBE

}  // namespace amn

// What an encoder dispatch TU is made of (as dispatch/family_dispatch.h for
// the decoders): per target, <Family>EncodeEntry calls Encode<Family>; once,
// HWY_EXPORT and internal::Encode<Family>.
#define AMN_ENCODER_ENTRY(Family)                                                       \
  uint64_t Family##EncodeEntry(const kernels::Family##Args& args,                      \
                               kernels::ErrorSums* errors) {                           \
    return Encode##Family(args, errors);                                                \
  }
#define AMN_ENCODER_EXPORT(Family)                                                      \
  namespace amn {                                                                       \
  HWY_EXPORT(Family##EncodeEntry);                                                      \
  uint64_t internal::Encode##Family(const kernels::Family##Args& args,                  \
                                    kernels::ErrorSums* errors) {                       \
    return HWY_DYNAMIC_DISPATCH(Family##EncodeEntry)(args, errors);                     \
  }                                                                                     \
  }

#endif  // AMN_DISPATCH_ENCODERS_H_
