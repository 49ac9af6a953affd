// ggml tensor type ids, exactly as GGUF stores them (ggml.h enum ggml_type):
// vocabulary shared by kernels/, dispatch/ and the public headers.
#ifndef AMN_GGML_TYPE_H_
#define AMN_GGML_TYPE_H_

#include <cstdint>

namespace amn {

enum class GgmlType : uint32_t {
  kF32 = 0, kF16 = 1, kQ4_0 = 2, kQ4_1 = 3, kQ5_0 = 6, kQ5_1 = 7, kQ8_0 = 8, kQ8_1 = 9,
  kQ2_K = 10, kQ3_K = 11, kQ4_K = 12, kQ5_K = 13, kQ6_K = 14, kQ8_K = 15,
  kIQ2_XXS = 16, kIQ2_XS = 17, kIQ3_XXS = 18, kIQ1_S = 19, kIQ4_NL = 20, kIQ3_S = 21,
  kIQ2_S = 22, kIQ4_XS = 23, kI8 = 24, kI16 = 25, kI32 = 26, kI64 = 27, kF64 = 28,
  kIQ1_M = 29, kBF16 = 30, kTQ1_0 = 34, kTQ2_0 = 35, kMXFP4 = 39,
  kNVFP4 = 40, kQ1_0 = 41, kQ2_0 = 42,
};

}  // namespace amn

#endif  // AMN_GGML_TYPE_H_
