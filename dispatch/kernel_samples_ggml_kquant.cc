// Registry samples (dispatch/kernel_samples.h) of the encoder families of
// ggml's 256-element super-block types: GgmlKQuantQuant (Q2_K 10 ... IQ4_XS
// 23), GgmlIq3Quant (IQ3_XXS 18, IQ3_S 21) and GgmlIq2Iq1Quant (IQ2_XXS 16,
// IQ2_XS 17, IQ2_S 22, IQ1_S 19, IQ1_M 29). Registry kernel
// "<in>_to_<type>" cuts its input into 256-element units, each encoded as
// one 1 x 256 row of the ggml type whose id is the variant, as `forget`
// would encode a row: without importance matrix, except GgmlIq2Iq1Quant,
// whose types `amn convert` encodes only with one (ggml refuses IQ2_XXS,
// IQ2_XS and IQ1_S without): its units all take the fixed matrix
// SampleImatrix(). Any input bytes are valid: a unit the encoder refuses
// (a NaN or infinity) is encoded again from a copy whose non-finite
// elements are zeros of their sign; the dispatched kernel and the
// reference refuse the same units. Output per unit: one block of the type
// (out_unit_bytes = its size).
#include <array>
#include <cstdint>
#include <cstring>

#include "amn/ggml_dequant.h"
#include "dispatch/kernel_samples.h"

namespace amn::internal {

namespace {

constexpr size_t kUnit = 256;

size_t BlockBytesOf(uint32_t variant) { return FindGgmlType(variant)->block_bytes; }

EncodeSampleLayout SuperBlockSampleLayout(uint32_t variant) {
  return {ElemType::kF32, kUnit, static_cast<uint32_t>(BlockBytesOf(variant))};
}

// 256 importance values, the same for every unit: positive, unequal (so
// the weighting matters) and independent of the input bytes.
const float* SampleImatrix() {
  static const std::array<float, kUnit> imatrix = [] {
    std::array<float, kUnit> w{};
    for (size_t i = 0; i < kUnit; ++i) w[i] = 0.25f + static_cast<float>(i * 37 % 64) / 16.0f;
    return w;
  }();
  return imatrix.data();
}

void RunSuperBlockSample(EncodeFn<kernels::GgmlQuantArgs> encode, uint32_t variant,
                         ElemType in_type, const void* in, size_t n_elems, void* out,
                         const float* imatrix = nullptr) {
  const GgmlType type = static_cast<GgmlType>(variant);
  const size_t block_bytes = BlockBytesOf(variant);
  const size_t eb = ElemTypeBytes(in_type);
  for (size_t unit = 0; unit < n_elems / kUnit; ++unit) {
    const uint8_t* raw = static_cast<const uint8_t*>(in) + unit * kUnit * eb;
    uint8_t* block = static_cast<uint8_t*>(out) + unit * block_bytes;
    kernels::GgmlQuantArgs args{kernels::EncodeInput{raw, in_type, 1, kUnit}, type, imatrix, block};
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

}  // namespace

EncodeSampleLayout GgmlKQuantQuantSampleLayout(uint32_t variant) {
  return SuperBlockSampleLayout(variant);
}
void RunGgmlKQuantQuantSample(EncodeFn<kernels::GgmlQuantArgs> encode, uint32_t variant,
                              ElemType in_type, const void* in, size_t n_elems, void* out) {
  RunSuperBlockSample(encode, variant, in_type, in, n_elems, out);
}

EncodeSampleLayout GgmlIq3QuantSampleLayout(uint32_t variant) {
  return SuperBlockSampleLayout(variant);
}
void RunGgmlIq3QuantSample(EncodeFn<kernels::GgmlQuantArgs> encode, uint32_t variant,
                           ElemType in_type, const void* in, size_t n_elems, void* out) {
  RunSuperBlockSample(encode, variant, in_type, in, n_elems, out);
}

EncodeSampleLayout GgmlIq2Iq1QuantSampleLayout(uint32_t variant) {
  return SuperBlockSampleLayout(variant);
}
void RunGgmlIq2Iq1QuantSample(EncodeFn<kernels::GgmlQuantArgs> encode, uint32_t variant,
                              ElemType in_type, const void* in, size_t n_elems, void* out) {
  RunSuperBlockSample(encode, variant, in_type, in, n_elems, out, SampleImatrix());
}

}  // namespace amn::internal
