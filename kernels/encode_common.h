// What every encoder shares, scalar and per target alike: reading one input
// element (BF16/F16/F32, little-endian, any alignment) as F32, and the error
// sums of amn::QuantError in the one order that makes them independent of
// the target. No Highway.
//
// Error sum order (QuantError, "Lethe"): element i of a call (its flat index
// within the call, 0-based) goes to lane i % kErrorLanes of three double
// accumulators, each lane adding its elements in increasing i:
//   d = double(x) - double(x'),  abs[l] += |d|,  sq_err[l] += d * d,
//   sq_ref[l] += double(x) * double(x)       (three separate double ops)
// and at the end the lanes are added in lane order 0, 1, ..., 7 from 0.0.
// max_abs is a max (order-free). A Highway body keeps 8 / N vectors of N
// double lanes and reaches the same sums: lane assignment is by index, not
// by vector width.
#ifndef AMN_KERNELS_ENCODE_COMMON_H_
#define AMN_KERNELS_ENCODE_COMMON_H_

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "amn/elem_type.h"
#include "kernels/ref/float_convert_ref.h"

namespace amn::kernels {

// The element index an encoder returns when every input was finite.
inline constexpr uint64_t kAllFinite = UINT64_MAX;

inline constexpr size_t kErrorLanes = 8;

struct ErrorSums {
  double abs[kErrorLanes] = {};
  double sq_err[kErrorLanes] = {};
  double sq_ref[kErrorLanes] = {};
  double max_abs = 0.0;
};

// Element i of the call: lane i % kErrorLanes.
inline void AddError(ErrorSums& s, uint64_t i, float x, float xq) {
  const size_t lane = static_cast<size_t>(i % kErrorLanes);
  const double xd = static_cast<double>(x);
  const double d = xd - static_cast<double>(xq);
  const double a = std::fabs(d);
  s.abs[lane] += a;
  s.sq_err[lane] += d * d;
  s.sq_ref[lane] += xd * xd;
  if (a > s.max_abs) s.max_abs = a;
}

// The lanes added in lane order.
struct ErrorTotals {
  double sum_abs = 0.0, max_abs = 0.0, sum_sq_err = 0.0, sum_sq_ref = 0.0;
};
inline ErrorTotals ReduceErrors(const ErrorSums& s) {
  ErrorTotals t;
  for (size_t l = 0; l < kErrorLanes; ++l) {
    t.sum_abs += s.abs[l];
    t.sum_sq_err += s.sq_err[l];
    t.sum_sq_ref += s.sq_ref[l];
  }
  t.max_abs = s.max_abs;
  return t;
}

// Input element i of a BF16/F16/F32 little-endian byte array, as F32 bits.
inline uint32_t LoadInputBits(const uint8_t* in, ElemType type, uint64_t i) {
  switch (type) {
    case ElemType::kBf16: {
      const uint8_t* p = in + 2 * i;
      return (static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8) << 16;
    }
    case ElemType::kF16: {
      const uint8_t* p = in + 2 * i;
      return ref::F16ToF32Bits(static_cast<uint16_t>(p[0] | p[1] << 8));
    }
    default: {
      const uint8_t* p = in + 4 * i;
      return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
             static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
    }
  }
}

inline bool IsFiniteF32Bits(uint32_t bits) { return (bits & 0x7F800000u) != 0x7F800000u; }

}  // namespace amn::kernels

#endif  // AMN_KERNELS_ENCODE_COMMON_H_
