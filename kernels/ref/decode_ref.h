// The scalar reference of every kernel family behind the one decoder
// signature of kernels/kernel_args.h: units [begin, end) of one tensor as
// out_type (kF32, kF16 or kBf16) into out. Each forwards to the family's
// reference (written from the canonical library, never optimised).
#ifndef AMN_KERNELS_REF_DECODE_REF_H_
#define AMN_KERNELS_REF_DECODE_REF_H_

#include <cstddef>

#include "amn/elem_type.h"
#include "kernels/kernel_args.h"

namespace amn::ref {

void DecodeFloatConvert(const kernels::ConvertArgs& a, size_t begin, size_t end, ElemType out_type,
                        void* out);
void DecodeFp8Convert(const kernels::ConvertArgs& a, size_t begin, size_t end, ElemType out_type,
                      void* out);
void DecodeFp8Dequant(const kernels::Fp8ScaledArgs& a, size_t begin, size_t end, ElemType out_type,
                      void* out);
// Any quantized ggml type (legacy, K-quant or I-quant).
void DecodeGgml(const kernels::GgmlArgs& a, size_t begin, size_t end, ElemType out_type, void* out);
void DecodeNvfp4(const kernels::Nvfp4Args& a, size_t begin, size_t end, ElemType out_type,
                 void* out);
void DecodeMxfp4St(const kernels::Mxfp4StArgs& a, size_t begin, size_t end, ElemType out_type,
                   void* out);
void DecodeBnb4(const kernels::Bnb4Args& a, size_t begin, size_t end, ElemType out_type, void* out);
void DecodeBnbInt8(const kernels::BnbInt8Args& a, size_t begin, size_t end, ElemType out_type,
                   void* out);
void DecodeGptq(const kernels::GptqArgs& a, size_t begin, size_t end, ElemType out_type, void* out);
void DecodeAwq(const kernels::AwqArgs& a, size_t begin, size_t end, ElemType out_type, void* out);
void DecodePackedInt(const kernels::PackedIntArgs& a, size_t begin, size_t end, ElemType out_type,
                     void* out);

}  // namespace amn::ref

#endif  // AMN_KERNELS_REF_DECODE_REF_H_
