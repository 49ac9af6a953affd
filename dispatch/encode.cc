// The encoders of dispatch/encoders.h. For now the scalar references.
#include "dispatch/encoders.h"
#include "kernels/ref/bnb_encode_ref.h"
#include "kernels/ref/fp8_encode_ref.h"

namespace amn::internal {

uint64_t EncodeAbsMaxGrid(const uint8_t* in, ElemType type, uint64_t rows, uint64_t cols,
                          uint64_t group_rows, uint64_t group_cols, float* amax) {
  return ref::AbsMaxGridRef(in, type, rows, cols, group_rows, group_cols, amax);
}
uint64_t EncodeFp8(const uint8_t* in, ElemType type, uint64_t rows, uint64_t cols,
                   uint64_t group_rows, uint64_t group_cols, bool e5m2, const float* scales,
                   uint8_t* codes, kernels::ErrorSums* errors) {
  return ref::QuantizeFp8Ref(in, type, rows, cols, group_rows, group_cols, e5m2, scales, codes,
                             errors);
}
uint64_t EncodeBnb4(const uint8_t* in, ElemType type, uint64_t n, uint64_t block_size, bool fp4,
                    bool absmax_given, float* absmax, uint8_t* packed,
                    kernels::ErrorSums* errors) {
  return ref::QuantizeBnb4Ref(in, type, n, block_size, fp4, absmax_given, absmax, packed, errors);
}
uint64_t EncodeBnbInt8(const uint8_t* in, ElemType type, uint64_t rows, uint64_t cols,
                       bool scb_given, float* scb, int8_t* codes, kernels::ErrorSums* errors) {
  return ref::QuantizeBnbInt8Ref(in, type, rows, cols, scb_given, scb, codes, errors);
}

}  // namespace amn::internal
