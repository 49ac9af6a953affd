// Table-signature adapters onto the encoder references.
#include "kernels/ref/encode_ref.h"

#include "kernels/ref/bnb_encode_ref.h"
#include "kernels/ref/fp8_encode_ref.h"

namespace amn::ref {

uint64_t EncodeAbsMaxGrid(const kernels::AbsMaxGridArgs& a, kernels::ErrorSums*) {
  return AbsMaxGridRef(a.x.in, a.x.type, a.x.rows, a.x.cols, a.group_rows, a.group_cols, a.amax);
}
uint64_t EncodeFp8Quant(const kernels::Fp8QuantArgs& a, kernels::ErrorSums* errors) {
  return QuantizeFp8Ref(a.x.in, a.x.type, a.x.rows, a.x.cols, a.group_rows, a.group_cols, a.e5m2,
                        a.scales, a.codes, errors);
}
uint64_t EncodeBnb4Quant(const kernels::Bnb4QuantArgs& a, kernels::ErrorSums* errors) {
  return QuantizeBnb4Ref(a.x.in, a.x.type, a.x.rows * a.x.cols, a.block_size, a.fp4,
                         a.absmax_given, a.absmax, a.packed, errors);
}
uint64_t EncodeBnbInt8Quant(const kernels::BnbInt8QuantArgs& a, kernels::ErrorSums* errors) {
  return QuantizeBnbInt8Ref(a.x.in, a.x.type, a.x.rows, a.x.cols, a.scb_given, a.scb, a.codes,
                            errors);
}

}  // namespace amn::ref
