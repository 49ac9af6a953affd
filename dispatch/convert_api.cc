// The checked element conversions of amn/convert.h over the FloatConvert and
// Fp8Convert families: span checks, then the dispatched decoder.
#include "amn/convert.h"

#include "dispatch/dispatch_policy.h"
#include "dispatch/family_decoders.h"

namespace amn {
namespace {

using ConvertFn = void (*)(const kernels::ConvertArgs&, size_t, size_t, ElemType, void*);

template <typename TIn, typename TOut>
Status Checked(ConvertFn decode, ElemType in_type, ElemType out_type, std::span<const TIn> in,
               std::span<TOut> out) {
  AMN_RETURN_IF_ERROR(internal::CheckKernelCall(in.size(), out.size()));
  if (in.empty()) return Status::Ok();
  decode(kernels::ConvertArgs{in_type, in.data()}, 0, in.size(), out_type, out.data());
  return Status::Ok();
}

constexpr ConvertFn kFloat = internal::DecodeFloatConvert;
constexpr ConvertFn kFp8 = internal::DecodeFp8Convert;
using E = ElemType;

}  // namespace

Status ConvertF32ToBf16(std::span<const float> in, std::span<uint16_t> out) { return Checked(kFloat, E::kF32, E::kBf16, in, out); }
Status ConvertF32ToF16(std::span<const float> in, std::span<uint16_t> out) { return Checked(kFloat, E::kF32, E::kF16, in, out); }
Status ConvertBf16ToF32(std::span<const uint16_t> in, std::span<float> out) { return Checked(kFloat, E::kBf16, E::kF32, in, out); }
Status ConvertF16ToF32(std::span<const uint16_t> in, std::span<float> out) { return Checked(kFloat, E::kF16, E::kF32, in, out); }
Status ConvertF16ToBf16(std::span<const uint16_t> in, std::span<uint16_t> out) { return Checked(kFloat, E::kF16, E::kBf16, in, out); }
Status ConvertBf16ToF16(std::span<const uint16_t> in, std::span<uint16_t> out) { return Checked(kFloat, E::kBf16, E::kF16, in, out); }
Status ConvertE4m3ToF32(std::span<const uint8_t> in, std::span<float> out) { return Checked(kFp8, E::kF8E4m3, E::kF32, in, out); }
Status ConvertE4m3ToBf16(std::span<const uint8_t> in, std::span<uint16_t> out) { return Checked(kFp8, E::kF8E4m3, E::kBf16, in, out); }
Status ConvertE4m3ToF16(std::span<const uint8_t> in, std::span<uint16_t> out) { return Checked(kFp8, E::kF8E4m3, E::kF16, in, out); }
Status ConvertE5m2ToF32(std::span<const uint8_t> in, std::span<float> out) { return Checked(kFp8, E::kF8E5m2, E::kF32, in, out); }
Status ConvertE5m2ToBf16(std::span<const uint8_t> in, std::span<uint16_t> out) { return Checked(kFp8, E::kF8E5m2, E::kBf16, in, out); }
Status ConvertE5m2ToF16(std::span<const uint8_t> in, std::span<uint16_t> out) { return Checked(kFp8, E::kF8E5m2, E::kF16, in, out); }

}  // namespace amn
