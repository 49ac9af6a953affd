// How a dequantized linear-layer weight is laid out in its output buffer.
// Packed schemes store weights in the layout of their GEMM kernels; `amn
// remember` writes the nn.Linear layout, the canonical Python dequantizers
// (GPTQModel dequantize_weight, AutoAWQ) return the GEMM-native one.
#ifndef AMN_WEIGHT_LAYOUT_H_
#define AMN_WEIGHT_LAYOUT_H_

#include <cstdint>

namespace amn {

enum class WeightOrientation : uint8_t {
  kOutIn,  // nn.Linear: [out_features, in_features] row-major
  kInOut,  // GEMM-native: [in_features, out_features] row-major
};

}  // namespace amn

#endif  // AMN_WEIGHT_LAYOUT_H_
