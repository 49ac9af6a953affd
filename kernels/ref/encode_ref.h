// The scalar references of the encoder families of the kernel table
// (dispatch/kernel_table.h), in the table's uniform signature: thin
// adapters onto kernels/ref/fp8_encode_ref.h and bnb_encode_ref.h.
#ifndef AMN_KERNELS_REF_ENCODE_REF_H_
#define AMN_KERNELS_REF_ENCODE_REF_H_

#include <cstdint>

#include "kernels/encode_args.h"
#include "kernels/encode_common.h"
#include "kernels/ref/ggml_encode_ref.h"  // EncodeGgmlLegacyQuant
#include "kernels/ref/ggml_kquant_encode_ref.h"  // EncodeGgmlKQuantQuant
#include "kernels/ref/ggml_iq3_encode_ref.h"  // EncodeGgmlIq3Quant
#include "kernels/ref/ggml_iq2_iq1_encode_ref.h"  // EncodeGgmlIq2Iq1Quant

namespace amn::ref {

uint64_t EncodeAbsMaxGrid(const kernels::AbsMaxGridArgs& a, kernels::ErrorSums* errors);
uint64_t EncodeFp8Quant(const kernels::Fp8QuantArgs& a, kernels::ErrorSums* errors);
uint64_t EncodeBnb4Quant(const kernels::Bnb4QuantArgs& a, kernels::ErrorSums* errors);
uint64_t EncodeBnbInt8Quant(const kernels::BnbInt8QuantArgs& a, kernels::ErrorSums* errors);

}  // namespace amn::ref

#endif  // AMN_KERNELS_REF_ENCODE_REF_H_
