// Registry samples (dispatch/kernel_samples.h) of the encoder families.
// A registry encoder takes only input elements; the sample cuts them into
// units of kUnit elements, each encoded as one 1 x kUnit row the way
// `forget` would encode a row: FP8 with one scale per 128 columns computed
// from the unit (amax / max_finite, 1 for an all-zero group), NF4/FP4 in
// blocks of 64 with the absmax computed, INT8 with the row's SCB computed.
// The error sums are computed too (as forget does) and discarded. Any input
// bytes are valid: a non-finite element (which the encoders refuse) is
// replaced by a zero of its sign in a copy of the unit, the same copy for
// the dispatched kernel and the reference. Output per unit (out_unit_bytes):
//   e4m3 / e5m2:  kUnit codes                         (out = the FP8 type)
//   amax128:      2 f32 amax (one per 128 columns)    (out = f32)
//   nf4 / fp4:    kUnit / 2 packed bytes, 4 f32 absmax (out = f32, the scale)
//   int8_rowwise: kUnit i8 codes, 1 f32 SCB           (out = f32, the scale)
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "dispatch/kernel_samples.h"

namespace amn::internal {
namespace {

constexpr uint32_t kUnit = 256;
constexpr uint32_t kGroupCols = 128;
constexpr uint32_t kBnbBlock = 64;

// Unit u of the input, with non-finite elements made zeros of their sign.
struct SanitizedUnit {
  uint8_t bytes[kUnit * 4];
  kernels::EncodeInput Input(ElemType type) const {
    return kernels::EncodeInput{bytes, type, 1, kUnit};
  }
};

void Sanitize(ElemType type, const void* in, size_t unit, SanitizedUnit& out) {
  const size_t eb = ElemTypeBytes(type);
  std::memcpy(out.bytes, static_cast<const uint8_t*>(in) + unit * kUnit * eb, kUnit * eb);
  for (size_t i = 0; i < kUnit; ++i) {
    uint8_t* p = out.bytes + i * eb;
    if (!kernels::IsFiniteF32Bits(kernels::LoadInputBits(out.bytes, type, i))) {
      const uint8_t sign = p[eb - 1] & 0x80;
      std::memset(p, 0, eb);
      p[eb - 1] = sign;
    }
  }
}

uint8_t* OutUnit(void* out, size_t unit, uint32_t unit_bytes) {
  return static_cast<uint8_t*>(out) + unit * unit_bytes;
}

}  // namespace

EncodeSampleLayout AbsMaxGridSampleLayout(uint32_t) {
  return {ElemType::kF32, kUnit, 4 * (kUnit / kGroupCols)};
}
void RunAbsMaxGridSample(EncodeFn<kernels::AbsMaxGridArgs> encode, uint32_t, ElemType in_type,
                         const void* in, size_t n_elems, void* out) {
  SanitizedUnit u;
  for (size_t unit = 0; unit < n_elems / kUnit; ++unit) {
    Sanitize(in_type, in, unit, u);
    float amax[kUnit / kGroupCols];
    encode(kernels::AbsMaxGridArgs{u.Input(in_type), 1, kGroupCols, amax}, nullptr);
    std::memcpy(OutUnit(out, unit, sizeof(amax)), amax, sizeof(amax));
  }
}

EncodeSampleLayout Fp8QuantSampleLayout(uint32_t variant) {
  return {variant == 1 ? ElemType::kF8E5m2 : ElemType::kF8E4m3, kUnit, kUnit};
}
void RunFp8QuantSample(EncodeFn<kernels::Fp8QuantArgs> encode, uint32_t variant, ElemType in_type,
                       const void* in, size_t n_elems, void* out) {
  const bool e5m2 = variant == 1;
  const float max_finite = e5m2 ? 57344.0f : 448.0f;
  SanitizedUnit u;
  for (size_t unit = 0; unit < n_elems / kUnit; ++unit) {
    Sanitize(in_type, in, unit, u);
    float scales[kUnit / kGroupCols] = {};
    for (size_t i = 0; i < kUnit; ++i) {
      const float a = std::fabs(kernels::F32FromBits(kernels::LoadInputBits(u.bytes, in_type, i)));
      scales[i / kGroupCols] = std::max(scales[i / kGroupCols], a);
    }
    for (float& s : scales) s = s == 0.0f ? 1.0f : s / max_finite;
    uint8_t codes[kUnit];
    kernels::ErrorSums sums;
    encode(kernels::Fp8QuantArgs{u.Input(in_type), 1, kGroupCols, e5m2, scales, codes}, &sums);
    std::memcpy(OutUnit(out, unit, kUnit), codes, kUnit);
  }
}

EncodeSampleLayout Bnb4QuantSampleLayout(uint32_t) {
  return {ElemType::kF32, kUnit, kUnit / 2 + 4 * (kUnit / kBnbBlock)};
}
void RunBnb4QuantSample(EncodeFn<kernels::Bnb4QuantArgs> encode, uint32_t variant,
                        ElemType in_type, const void* in, size_t n_elems, void* out) {
  constexpr uint32_t kUnitBytes = kUnit / 2 + 4 * (kUnit / kBnbBlock);
  SanitizedUnit u;
  for (size_t unit = 0; unit < n_elems / kUnit; ++unit) {
    Sanitize(in_type, in, unit, u);
    uint8_t packed[kUnit / 2];
    float absmax[kUnit / kBnbBlock];
    kernels::ErrorSums sums;
    encode(kernels::Bnb4QuantArgs{u.Input(in_type), kBnbBlock, variant == 1, false, absmax, packed},
           &sums);
    uint8_t* o = OutUnit(out, unit, kUnitBytes);
    std::memcpy(o, packed, sizeof(packed));
    std::memcpy(o + sizeof(packed), absmax, sizeof(absmax));
  }
}

EncodeSampleLayout BnbInt8QuantSampleLayout(uint32_t) {
  return {ElemType::kF32, kUnit, kUnit + 4};
}
void RunBnbInt8QuantSample(EncodeFn<kernels::BnbInt8QuantArgs> encode, uint32_t,
                           ElemType in_type, const void* in, size_t n_elems, void* out) {
  SanitizedUnit u;
  for (size_t unit = 0; unit < n_elems / kUnit; ++unit) {
    Sanitize(in_type, in, unit, u);
    int8_t codes[kUnit];
    float scb = 0.0f;
    kernels::ErrorSums sums;
    encode(kernels::BnbInt8QuantArgs{u.Input(in_type), false, &scb, codes}, &sums);
    uint8_t* o = OutUnit(out, unit, kUnit + 4);
    std::memcpy(o, codes, kUnit);
    std::memcpy(o + kUnit, &scb, 4);
  }
}

}  // namespace amn::internal
