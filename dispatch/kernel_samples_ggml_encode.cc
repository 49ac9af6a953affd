// Registry samples (dispatch/kernel_samples.h) of the ggml encoder family
// GgmlLegacyQuant; variant = the ggml type id. The sample cuts the input
// into units of 256 elements (one TQ super-block, eight legacy blocks),
// each encoded as one 1 x 256 row with the error sums computed (as a
// caller asking for QuantError does) and discarded. A unit holding a NaN or
// infinity is refused by the dispatched kernel and the reference alike and
// encoded again from a copy whose non-finite elements are zeros of their
// sign. Output per unit: the row's blocks (out = f16, the blocks' scale
// type).
#include <cstdint>
#include <cstring>

#include "dispatch/kernel_samples.h"
#include "kernels/ref/ggml_encode_ref.h"

namespace amn::internal {
namespace {

constexpr uint32_t kUnit = 256;

uint32_t UnitBytes(GgmlType type) {
  return static_cast<uint32_t>(kUnit / ref::GgmlEncodeBlockElems(type) *
                               ref::GgmlEncodeBlockBytes(type));
}

}  // namespace

EncodeSampleLayout GgmlLegacyQuantSampleLayout(uint32_t variant) {
  return {ElemType::kF16, kUnit, UnitBytes(static_cast<GgmlType>(variant))};
}

void RunGgmlLegacyQuantSample(EncodeFn<kernels::GgmlQuantArgs> encode, uint32_t variant,
                              ElemType in_type, const void* in, size_t n_elems, void* out) {
  const GgmlType type = static_cast<GgmlType>(variant);
  const uint32_t unit_bytes = UnitBytes(type);
  const size_t eb = ElemTypeBytes(in_type);
  for (size_t unit = 0; unit < n_elems / kUnit; ++unit) {
    const uint8_t* raw = static_cast<const uint8_t*>(in) + unit * kUnit * eb;
    uint8_t* o = static_cast<uint8_t*>(out) + unit * unit_bytes;
    kernels::ErrorSums sums;
    kernels::GgmlQuantArgs args{kernels::EncodeInput{raw, in_type, 1, kUnit}, type, nullptr, o};
    if (encode(args, &sums) == kernels::kAllFinite) continue;
    uint8_t copy[kUnit * 4];
    std::memcpy(copy, raw, kUnit * eb);
    for (size_t i = 0; i < kUnit; ++i) {
      if (!kernels::IsFiniteF32Bits(kernels::LoadInputBits(copy, in_type, i))) {
        uint8_t* p = copy + i * eb;
        const uint8_t sign = p[eb - 1] & 0x80;
        std::memset(p, 0, eb);
        p[eb - 1] = sign;
      }
    }
    sums = kernels::ErrorSums();
    args.x.in = copy;
    (void)encode(args, &sums);
  }
}

}  // namespace amn::internal
