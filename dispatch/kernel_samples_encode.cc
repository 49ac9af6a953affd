// Registry samples (dispatch/kernel_samples.h) of the encoder families.
// A registry encoder takes only input elements; the sample cuts them into
// units of kUnit elements, each encoded as one 1 x kUnit row the way
// `forget` would encode a row: FP8 with one scale per 128 columns from a
// static table (kFp8Scales: ordinary, tiny and huge scales, so codes
// saturate and go subnormal too), NF4/FP4 in blocks of 64 with the absmax
// computed, INT8 with the row's SCB computed. The error sums are computed
// too (as forget does) and discarded. Any input bytes are valid: a unit the
// encoder refuses (a NaN or infinity) is encoded again from a copy whose
// non-finite elements are zeros of their sign; the dispatched kernel and
// the reference refuse the same units. Output per unit (out_unit_bytes):
//   e4m3 / e5m2:  kUnit codes                         (out = the FP8 type)
//   amax128:      2 f32 amax (one per 128 columns)    (out = f32)
//   nf4 / fp4:    kUnit / 2 packed bytes, 4 f32 absmax (out = f32, the scale)
//   int8_rowwise: kUnit i8 codes, 1 f32 SCB           (out = f32, the scale)
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

// Runs encode(input) on unit `unit` as it is, and again on a sanitized copy
// if it refused the unit.
template <class Encode>
void EncodeUnit(ElemType type, const void* in, size_t unit, const Encode& encode) {
  const uint8_t* raw = static_cast<const uint8_t*>(in) + unit * kUnit * ElemTypeBytes(type);
  if (encode(kernels::EncodeInput{raw, type, 1, kUnit}) == kernels::kAllFinite) return;
  SanitizedUnit u;
  Sanitize(type, in, unit, u);
  (void)encode(u.Input(type));
}

// FP8 sample scales, per 128-column group in turn.
constexpr float kFp8Scales[8] = {1.0f / 448, 0.01f, 1.0f, 1e-3f, 100.0f, 3e-6f, 0.5f, 1e-30f};

uint8_t* OutUnit(void* out, size_t unit, uint32_t unit_bytes) {
  return static_cast<uint8_t*>(out) + unit * unit_bytes;
}

}  // namespace

EncodeSampleLayout AbsMaxGridSampleLayout(uint32_t) {
  return {ElemType::kF32, kUnit, 4 * (kUnit / kGroupCols)};
}
void RunAbsMaxGridSample(EncodeFn<kernels::AbsMaxGridArgs> encode, uint32_t, ElemType in_type,
                         const void* in, size_t n_elems, void* out) {
  for (size_t unit = 0; unit < n_elems / kUnit; ++unit) {
    float amax[kUnit / kGroupCols];
    EncodeUnit(in_type, in, unit, [&](const kernels::EncodeInput& x) {
      return encode(kernels::AbsMaxGridArgs{x, 1, kGroupCols, amax}, nullptr);
    });
    std::memcpy(OutUnit(out, unit, sizeof(amax)), amax, sizeof(amax));
  }
}

EncodeSampleLayout Fp8QuantSampleLayout(uint32_t variant) {
  return {variant == 1 ? ElemType::kF8E5m2 : ElemType::kF8E4m3, kUnit, kUnit};
}
void RunFp8QuantSample(EncodeFn<kernels::Fp8QuantArgs> encode, uint32_t variant, ElemType in_type,
                       const void* in, size_t n_elems, void* out) {
  constexpr size_t kGroups = kUnit / kGroupCols;
  for (size_t unit = 0; unit < n_elems / kUnit; ++unit) {
    float scales[kGroups];
    for (size_t g = 0; g < kGroups; ++g) scales[g] = kFp8Scales[(unit * kGroups + g) % 8];
    uint8_t* codes = OutUnit(out, unit, kUnit);
    kernels::ErrorSums sums;
    EncodeUnit(in_type, in, unit, [&](const kernels::EncodeInput& x) {
      sums = kernels::ErrorSums();
      return encode(kernels::Fp8QuantArgs{x, 1, kGroupCols, variant == 1, scales, codes}, &sums);
    });
  }
}

EncodeSampleLayout Bnb4QuantSampleLayout(uint32_t) {
  return {ElemType::kF32, kUnit, kUnit / 2 + 4 * (kUnit / kBnbBlock)};
}
void RunBnb4QuantSample(EncodeFn<kernels::Bnb4QuantArgs> encode, uint32_t variant,
                        ElemType in_type, const void* in, size_t n_elems, void* out) {
  constexpr uint32_t kUnitBytes = kUnit / 2 + 4 * (kUnit / kBnbBlock);
  for (size_t unit = 0; unit < n_elems / kUnit; ++unit) {
    uint8_t* o = OutUnit(out, unit, kUnitBytes);
    float absmax[kUnit / kBnbBlock];
    kernels::ErrorSums sums;
    EncodeUnit(in_type, in, unit, [&](const kernels::EncodeInput& x) {
      sums = kernels::ErrorSums();
      return encode(kernels::Bnb4QuantArgs{x, kBnbBlock, variant == 1, false, absmax, o}, &sums);
    });
    std::memcpy(o + kUnit / 2, absmax, sizeof(absmax));
  }
}

EncodeSampleLayout BnbInt8QuantSampleLayout(uint32_t) {
  return {ElemType::kF32, kUnit, kUnit + 4};
}
void RunBnbInt8QuantSample(EncodeFn<kernels::BnbInt8QuantArgs> encode, uint32_t,
                           ElemType in_type, const void* in, size_t n_elems, void* out) {
  for (size_t unit = 0; unit < n_elems / kUnit; ++unit) {
    uint8_t* o = OutUnit(out, unit, kUnit + 4);
    float scb = 0.0f;
    kernels::ErrorSums sums;
    EncodeUnit(in_type, in, unit, [&](const kernels::EncodeInput& x) {
      sums = kernels::ErrorSums();
      return encode(kernels::BnbInt8QuantArgs{x, false, &scb, reinterpret_cast<int8_t*>(o)},
                    &sums);
    });
    std::memcpy(o + kUnit, &scb, 4);
  }
}

}  // namespace amn::internal
