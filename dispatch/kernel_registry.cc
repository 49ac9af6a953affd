// The registry (amn/kernel_registry.h), generated from the kernel table
// (dispatch/kernel_table.h): per kernel and output type, a thunk that runs
// the family's sample tensor (dispatch/kernel_samples.h) through the
// dispatched decoder, and one through the scalar reference.
#include "amn/kernel_registry.h"

#include <vector>

#include "amn/convert.h"
#include "amn/awq_dequant.h"
#include "amn/bnb_dequant.h"
#include "amn/fp4_dequant.h"
#include "amn/fp8_dequant.h"
#include "amn/ggml_dequant.h"
#include "amn/gptq_dequant.h"
#include "dispatch/dispatch_policy.h"
#include "dispatch/encoders.h"
#include "dispatch/family_decoders.h"
#include "dispatch/kernel_samples.h"
#include "kernels/ref/decode_ref.h"
#include "kernels/ref/encode_ref.h"

namespace amn {
namespace {

using internal::DecodeFn;
using internal::SampleLayout;

// What the table says of one family, by name.
#define AMN_FAMILY_TRAITS(Family, Tu, Ref, group)                             \
  struct Family##Traits {                                                     \
    using Args = kernels::Family##Args;                                       \
    static constexpr std::string_view kGroup = group;                         \
    static constexpr DecodeFn<Args> kDecode = internal::Decode##Family;       \
    static constexpr DecodeFn<Args> kReference = ref::Ref;                    \
    static constexpr auto kRunSample = internal::Run##Family##Sample;         \
    static constexpr auto kLayout = internal::Family##SampleLayout;           \
    static constexpr auto kProbe = Tu##Target;                                \
  };
AMN_KERNEL_FAMILIES(AMN_FAMILY_TRAITS)
#undef AMN_FAMILY_TRAITS

template <class F, uint32_t kVariant, ElemType kOut>
void Run(const void* in, size_t n_elems, void* out) {
  (void)internal::PrepareDispatch();
  F::kRunSample(F::kDecode, kVariant, in, n_elems, kOut, out);
}
template <class F, uint32_t kVariant, ElemType kOut>
void RunReference(const void* in, size_t n_elems, void* out) {
  F::kRunSample(F::kReference, kVariant, in, n_elems, kOut, out);
}

template <class F, uint32_t kVariant, ElemType kOut>
void Add(std::vector<KernelInfo>& kernels, std::string_view name) {
  const SampleLayout layout = F::kLayout(kVariant);
  kernels.push_back(KernelInfo{name, F::kGroup, layout.in, kOut, Run<F, kVariant, kOut>,
                               RunReference<F, kVariant, kOut>, F::kProbe, layout.block_bytes,
                               layout.block_elems});
}

// One table line: its kernels for each output type it has.
template <class F, uint32_t kVariant>
void AddLine(std::vector<KernelInfo>& kernels, unsigned outputs, std::string_view to_bf16,
             std::string_view to_f16, std::string_view to_f32) {
  if ((outputs & AMN_TO_BF16) != 0) Add<F, kVariant, ElemType::kBf16>(kernels, to_bf16);
  if ((outputs & AMN_TO_F16) != 0) Add<F, kVariant, ElemType::kF16>(kernels, to_f16);
  if ((outputs & AMN_TO_F32) != 0) Add<F, kVariant, ElemType::kF32>(kernels, to_f32);
}

// The encoders: one registry kernel per input type and table line.
#define AMN_ENCODER_TRAITS(Family, Tu, Ref, group)                             \
  struct Family##EncodeTraits {                                                \
    using Args = kernels::Family##Args;                                        \
    static constexpr std::string_view kGroup = group;                          \
    static constexpr internal::EncodeFn<Args> kEncode = internal::Encode##Family; \
    static constexpr internal::EncodeFn<Args> kReference = ref::Ref;           \
    static constexpr auto kRunSample = internal::Run##Family##Sample;          \
    static constexpr auto kLayout = internal::Family##SampleLayout;            \
    static constexpr auto kProbe = Tu##Target;                                 \
  };
AMN_ENCODER_FAMILIES(AMN_ENCODER_TRAITS)
#undef AMN_ENCODER_TRAITS

template <class F, uint32_t kVariant, ElemType kIn>
void RunEncoder(const void* in, size_t n_elems, void* out) {
  (void)internal::PrepareDispatch();
  F::kRunSample(F::kEncode, kVariant, kIn, in, n_elems, out);
}
template <class F, uint32_t kVariant, ElemType kIn>
void RunEncoderReference(const void* in, size_t n_elems, void* out) {
  F::kRunSample(F::kReference, kVariant, kIn, in, n_elems, out);
}

template <class F, uint32_t kVariant, ElemType kIn>
void AddEncoder(std::vector<KernelInfo>& kernels, std::string_view name) {
  const internal::EncodeSampleLayout layout = F::kLayout(kVariant);
  KernelInfo info{name, F::kGroup, kIn, layout.out, RunEncoder<F, kVariant, kIn>,
                  RunEncoderReference<F, kVariant, kIn>, F::kProbe, 0, layout.block_elems};
  info.out_unit_bytes = layout.out_unit_bytes;
  kernels.push_back(info);
}

using internal::GptqVariant;
using internal::kGptq4ActOrder;
using internal::kAwqInOut;
using internal::kAwqOutIn;
using internal::kBnbFp4;
using internal::kBnbNf4;
using internal::kBnbNf4Dq;

std::vector<KernelInfo> MakeKernels() {
  std::vector<KernelInfo> kernels;
#define AMN_ADD_LINE(stem, Family, variant, outputs)                                     \
  AddLine<Family##Traits, variant>(kernels, outputs, #stem "_to_bf16", #stem "_to_f16", \
                                   #stem "_to_f32");
  AMN_KERNELS(AMN_ADD_LINE)
#undef AMN_ADD_LINE
#define AMN_ADD_ENCODER(stem, Family, variant)                                          \
  AddEncoder<Family##EncodeTraits, variant, ElemType::kBf16>(kernels, "bf16_to_" #stem); \
  AddEncoder<Family##EncodeTraits, variant, ElemType::kF16>(kernels, "f16_to_" #stem);   \
  AddEncoder<Family##EncodeTraits, variant, ElemType::kF32>(kernels, "f32_to_" #stem);
  AMN_ENCODERS(AMN_ADD_ENCODER)
#undef AMN_ADD_ENCODER
  return kernels;
}

}  // namespace

std::span<const KernelInfo> Kernels() {
  static const std::vector<KernelInfo> kernels = MakeKernels();
  return kernels;
}

}  // namespace amn
