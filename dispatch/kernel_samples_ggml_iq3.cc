// Registry sample (dispatch/kernel_samples.h) of encoder family
// GgmlIq3Quant: registry kernel "<in>_to_<type>" cuts its input into
// 256-element units, each encoded as one 1 x 256 row of IQ3_XXS (variant 18)
// or IQ3_S (21) without importance matrix. Any input bytes are valid: a unit
// the encoder refuses (a NaN or infinity) is encoded again from a copy whose
// non-finite elements are zeros of their sign. Output per unit: one block.
#include <cstdint>
#include <cstring>

#include "dispatch/kernel_samples.h"
#include "kernels/ref/ggml_iq3_encode_ref.h"

namespace amn::internal {

EncodeSampleLayout GgmlIq3QuantSampleLayout(uint32_t variant) {
  const size_t bytes = ref::Iq3EncodeBlockBytes(static_cast<GgmlType>(variant));
  return {ElemType::kF32, 256, static_cast<uint32_t>(bytes)};
}

void RunGgmlIq3QuantSample(EncodeFn<kernels::GgmlQuantArgs> encode, uint32_t variant,
                           ElemType in_type, const void* in, size_t n_elems, void* out) {
  constexpr size_t kUnit = 256;
  const GgmlType type = static_cast<GgmlType>(variant);
  const size_t block_bytes = ref::Iq3EncodeBlockBytes(type);
  const size_t eb = ElemTypeBytes(in_type);
  for (size_t unit = 0; unit < n_elems / kUnit; ++unit) {
    const uint8_t* raw = static_cast<const uint8_t*>(in) + unit * kUnit * eb;
    uint8_t* block = static_cast<uint8_t*>(out) + unit * block_bytes;
    kernels::GgmlQuantArgs args{kernels::EncodeInput{raw, in_type, 1, kUnit}, type, nullptr, block};
    if (encode(args, nullptr) == kernels::kAllFinite) continue;
    uint8_t copy[kUnit * 4];
    std::memcpy(copy, raw, kUnit * eb);
    for (size_t i = 0; i < kUnit; ++i) {
      if (kernels::IsFiniteF32Bits(kernels::LoadInputBits(copy, in_type, i))) continue;
      uint8_t* p = copy + i * eb;
      const uint8_t sign = p[eb - 1] & 0x80;
      std::memset(p, 0, eb);
      p[eb - 1] = sign;
    }
    args.x.in = copy;
    (void)encode(args, nullptr);
  }
}

}  // namespace amn::internal
