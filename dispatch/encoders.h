// The encoders of amn/quantize.h behind the checks of quantize_api.cc:
// raw, already validated arguments (layouts and NaN rule:
// kernels/ref/fp8_encode_ref.h, kernels/ref/bnb_encode_ref.h). Each returns
// the index of the first non-finite input element or kernels::kAllFinite.
#ifndef AMN_DISPATCH_ENCODERS_H_
#define AMN_DISPATCH_ENCODERS_H_

#include <cstdint>

#include "amn/elem_type.h"
#include "kernels/encode_common.h"

namespace amn::internal {

uint64_t EncodeAbsMaxGrid(const uint8_t* in, ElemType type, uint64_t rows, uint64_t cols,
                          uint64_t group_rows, uint64_t group_cols, float* amax);
uint64_t EncodeFp8(const uint8_t* in, ElemType type, uint64_t rows, uint64_t cols,
                   uint64_t group_rows, uint64_t group_cols, bool e5m2, const float* scales,
                   uint8_t* codes, kernels::ErrorSums* errors);
uint64_t EncodeBnb4(const uint8_t* in, ElemType type, uint64_t n, uint64_t block_size, bool fp4,
                    bool absmax_given, float* absmax, uint8_t* packed,
                    kernels::ErrorSums* errors);
uint64_t EncodeBnbInt8(const uint8_t* in, ElemType type, uint64_t rows, uint64_t cols,
                       bool scb_given, float* scb, int8_t* codes, kernels::ErrorSums* errors);

}  // namespace amn::internal

#endif  // AMN_DISPATCH_ENCODERS_H_
