// Element conversions between the float formats: F32, F16, BF16 and the OCP
// FP8 formats (E4M3FN, E5M2). The "pass 2" every dequantizer ends with.
// Each call checks its spans, then runs the best kernel for this CPU. Results
// are identical on every target (docs/formats.md has the rounding and NaN
// rules). The spans must not overlap.
#ifndef AMN_CONVERT_H_
#define AMN_CONVERT_H_

#include <cstdint>
#include <span>

#include "amn/export.h"
#include "amn/status.h"
#include "amn/targets.h"

namespace amn {

// Each converts in.size() elements into out[0, in.size()); out.size() must be
// at least in.size(). F16/BF16 values are their raw 16-bit patterns, FP8 codes
// raw bytes. Returns kInvalidArgument when out is too small or AMN_ISA is
// invalid.
AMN_API Status ConvertF32ToBf16(std::span<const float> in, std::span<uint16_t> out);
AMN_API Status ConvertF32ToF16(std::span<const float> in, std::span<uint16_t> out);
AMN_API Status ConvertBf16ToF32(std::span<const uint16_t> in, std::span<float> out);
AMN_API Status ConvertF16ToF32(std::span<const uint16_t> in, std::span<float> out);
AMN_API Status ConvertF16ToBf16(std::span<const uint16_t> in, std::span<uint16_t> out);
AMN_API Status ConvertBf16ToF16(std::span<const uint16_t> in, std::span<uint16_t> out);

AMN_API Status ConvertE4m3ToF32(std::span<const uint8_t> in, std::span<float> out);
AMN_API Status ConvertE4m3ToBf16(std::span<const uint8_t> in, std::span<uint16_t> out);
AMN_API Status ConvertE4m3ToF16(std::span<const uint8_t> in, std::span<uint16_t> out);
AMN_API Status ConvertE5m2ToF32(std::span<const uint8_t> in, std::span<float> out);
AMN_API Status ConvertE5m2ToBf16(std::span<const uint8_t> in, std::span<uint16_t> out);
AMN_API Status ConvertE5m2ToF16(std::span<const uint8_t> in, std::span<uint16_t> out);

// Probes: the target the float-convert / FP8 dispatch tables run right now.
// Tests assert these to prove which target they exercised.
AMN_API TargetId FloatConvertTarget();
AMN_API TargetId Fp8ConvertTarget();

}  // namespace amn

#endif  // AMN_CONVERT_H_
