// Internal: the synthetic tensors the registry kernels run on (`amn bench`,
// the per-target tests, the differential fuzzer, perf/). A registry kernel
// takes only packed input bytes; each family's sample supplies the rest of a
// real layout (scales, zero points, codebooks, shapes) from static tables,
// so any input bytes are a valid tensor and the dispatched decoder and the
// reference run the same computation. One sample per family of the kernel
// table (dispatch/kernel_table.h), selected by the table's `variant`.
#ifndef AMN_DISPATCH_KERNEL_SAMPLES_H_
#define AMN_DISPATCH_KERNEL_SAMPLES_H_

#include <cstddef>
#include <cstdint>

#include "amn/elem_type.h"
#include "amn/ggml_type.h"
#include "dispatch/kernel_table.h"
#include "kernels/encode_args.h"
#include "kernels/encode_common.h"
#include "kernels/kernel_args.h"

namespace amn::internal {

// What one registry input unit is: `block_bytes` input bytes give
// `block_elems` outputs (0 / 1 for plain elements of `in`); `in` names the
// input element type, or for packed inputs the scale type.
struct SampleLayout {
  ElemType in = ElemType::kF32;
  uint32_t block_bytes = 0;
  uint32_t block_elems = 1;
};

template <class Args>
using DecodeFn = void (*)(const Args& args, size_t begin, size_t end, ElemType out_type, void* out);

// Variants the kernel table names (plain integers elsewhere: an ElemType for
// the conversions and FP8, a GgmlType id for ggml, the bit width for
// PackedInt).
#define AMN_ELEM(t) static_cast<uint32_t>(::amn::ElemType::t)
#define AMN_GGML(t) static_cast<uint32_t>(::amn::GgmlType::t)
inline constexpr uint32_t kBnbNf4 = 0, kBnbFp4 = 1, kBnbNf4Dq = 2;
inline constexpr uint32_t kAwqOutIn = 1, kAwqInOut = 0;
// GPTQ: the bit width, 0x100 for the GEMM-native [in, out] output, 0x200 for
// an act-order g_idx.
constexpr uint32_t GptqVariant(uint32_t bits, bool in_out, bool act_order = false) {
  return bits | (in_out ? 0x100u : 0u) | (act_order ? 0x200u : 0u);
}
inline constexpr uint32_t kGptq4ActOrder = GptqVariant(4, false, true);

// Per family: <Family>SampleLayout(variant), and Run<Family>Sample, which
// runs `decode` (the dispatched decoder or the reference) over the sample
// tensor whose packed input is `in`, writing n_elems outputs of out_type.
// n_elems is a multiple of the layout's block_elems.
// Encoder samples: what one registry unit of an encoder is, and
// Run<Family>Sample, which runs `encode` (dispatched or reference) over
// n_elems input elements of `in_type` in units of block_elems.
struct EncodeSampleLayout {
  ElemType out = ElemType::kF32;
  uint32_t block_elems = 256;
  uint32_t out_unit_bytes = 0;
};
template <class Args>
using EncodeFn = uint64_t (*)(const Args& args, kernels::ErrorSums* errors);
#define AMN_DECLARE_ENCODE_SAMPLE(Family, Tu, Ref, group)                                 \
  EncodeSampleLayout Family##SampleLayout(uint32_t variant);                              \
  void Run##Family##Sample(EncodeFn<kernels::Family##Args> encode, uint32_t variant,      \
                           ElemType in_type, const void* in, size_t n_elems, void* out);
AMN_ENCODER_FAMILIES(AMN_DECLARE_ENCODE_SAMPLE)
#undef AMN_DECLARE_ENCODE_SAMPLE

#define AMN_DECLARE_SAMPLE(Family, Tu, Ref, group)                                        \
  SampleLayout Family##SampleLayout(uint32_t variant);                                    \
  void Run##Family##Sample(DecodeFn<kernels::Family##Args> decode, uint32_t variant,      \
                           const void* in, size_t n_elems, ElemType out_type, void* out);
AMN_KERNEL_FAMILIES(AMN_DECLARE_SAMPLE)
#undef AMN_DECLARE_SAMPLE

}  // namespace amn::internal

#endif  // AMN_DISPATCH_KERNEL_SAMPLES_H_
