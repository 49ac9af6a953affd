// The references behind the one decoder signature (kernels/ref/decode_ref.h):
// offsets into the family's tensors, then the family's own reference rows.
#include "kernels/ref/decode_ref.h"

#include <cstdint>

#include "amn/ggml_type.h"
#include "kernels/ref/bnb_ref.h"
#include "kernels/ref/float_convert_ref.h"
#include "kernels/ref/fp4_ref.h"
#include "kernels/ref/fp8_dequant_ref.h"
#include "kernels/ref/fp8_ref.h"
#include "kernels/ref/ggml_iquant_ref.h"
#include "kernels/ref/ggml_kquant_ref.h"
#include "kernels/ref/ggml_legacy_ref.h"
#include "kernels/ref/gptq_ref.h"

namespace amn::ref {
namespace {

float* F32(void* out) { return static_cast<float*>(out); }
uint16_t* U16(void* out) { return static_cast<uint16_t*>(out); }

}  // namespace

void DecodeFloatConvert(const kernels::ConvertArgs& a, size_t begin, size_t end, ElemType out_type,
                        void* out) {
  const size_t n = end - begin;
  const auto* in = static_cast<const uint8_t*>(a.in) + begin * ElemTypeBytes(a.in_type);
  const auto* f32 = reinterpret_cast<const float*>(in);
  const auto* u16 = reinterpret_cast<const uint16_t*>(in);
  switch (a.in_type) {
    case ElemType::kF32:
      if (out_type == ElemType::kBf16) ConvertF32ToBf16(f32, n, U16(out));
      if (out_type == ElemType::kF16) ConvertF32ToF16(f32, n, U16(out));
      break;
    case ElemType::kBf16:
      if (out_type == ElemType::kF32) ConvertBf16ToF32(u16, n, F32(out));
      if (out_type == ElemType::kF16) ConvertBf16ToF16(u16, n, U16(out));
      break;
    case ElemType::kF16:
      if (out_type == ElemType::kF32) ConvertF16ToF32(u16, n, F32(out));
      if (out_type == ElemType::kBf16) ConvertF16ToBf16(u16, n, U16(out));
      break;
    default:
      break;
  }
}

void DecodeFp8Convert(const kernels::ConvertArgs& a, size_t begin, size_t end, ElemType out_type,
                      void* out) {
  const size_t n = end - begin;
  const auto* in = static_cast<const uint8_t*>(a.in) + begin;
  const bool e4m3 = a.in_type == ElemType::kF8E4m3;
  switch (out_type) {
    case ElemType::kF32: (e4m3 ? ConvertE4m3ToF32 : ConvertE5m2ToF32)(in, n, F32(out)); break;
    case ElemType::kBf16: (e4m3 ? ConvertE4m3ToBf16 : ConvertE5m2ToBf16)(in, n, U16(out)); break;
    case ElemType::kF16: (e4m3 ? ConvertE4m3ToF16 : ConvertE5m2ToF16)(in, n, U16(out)); break;
    default: break;
  }
}

void DecodeFp8Dequant(const kernels::Fp8ScaledArgs& a, size_t begin, size_t end, ElemType out_type,
                      void* out) {
  const uint8_t* codes = a.codes + begin * a.cols;
  const size_t rows = end - begin;
  const bool e4m3 = a.code_type == ElemType::kF8E4m3;
  switch (out_type) {
    case ElemType::kF32:
      (e4m3 ? DequantE4m3ToF32 : DequantE5m2ToF32)(codes, rows, a.cols, a.col_scales, a.block_cols,
                                                   F32(out));
      break;
    case ElemType::kBf16:
      (e4m3 ? DequantE4m3ToBf16 : DequantE5m2ToBf16)(codes, rows, a.cols, a.col_scales,
                                                     a.block_cols, U16(out));
      break;
    case ElemType::kF16:
      (e4m3 ? DequantE4m3ToF16 : DequantE5m2ToF16)(codes, rows, a.cols, a.col_scales, a.block_cols,
                                                   U16(out));
      break;
    default:
      break;
  }
}

void DecodeGgml(const kernels::GgmlArgs& a, size_t begin, size_t end, ElemType out_type,
                void* out) {
  const size_t n = end - begin;
  const auto type = static_cast<GgmlType>(a.type);
  // Exactly one family knows the type; the others return false untouched.
  const size_t k_bytes = KQuantBlockBytes(a.type);
  const size_t i_bytes = IQuantBlockBytes(a.type);
  if (k_bytes != 0) {
    const uint8_t* blocks = a.blocks + begin * k_bytes;
    if (out_type == ElemType::kF32) DequantKQuantToF32(a.type, blocks, n, F32(out));
    if (out_type == ElemType::kBf16) DequantKQuantToBf16(a.type, blocks, n, U16(out));
    if (out_type == ElemType::kF16) DequantKQuantToF16(a.type, blocks, n, U16(out));
  } else if (i_bytes != 0) {
    const uint8_t* blocks = a.blocks + begin * i_bytes;
    if (out_type == ElemType::kF32) DequantIQuantToF32(a.type, blocks, n, F32(out));
    if (out_type == ElemType::kBf16) DequantIQuantToBf16(a.type, blocks, n, U16(out));
    if (out_type == ElemType::kF16) DequantIQuantToF16(a.type, blocks, n, U16(out));
  } else {
    DequantGgmlLegacy(type, a.blocks + begin * GgmlLegacyBlockBytes(type), n, out_type, out);
  }
}

void DecodeNvfp4(const kernels::Nvfp4Args& a, size_t begin, size_t end, ElemType out_type,
                 void* out) {
  const uint8_t* packed = a.packed + begin * (a.cols / 2);
  const uint8_t* scales = a.scales + begin * (a.cols / kNvfp4GroupElems);
  const size_t rows = end - begin;
  switch (out_type) {
    case ElemType::kF32: DequantNvfp4ToF32(packed, scales, a.global_scale, rows, a.cols, F32(out)); break;
    case ElemType::kBf16: DequantNvfp4ToBf16(packed, scales, a.global_scale, rows, a.cols, U16(out)); break;
    case ElemType::kF16: DequantNvfp4ToF16(packed, scales, a.global_scale, rows, a.cols, U16(out)); break;
    default: break;
  }
}

void DecodeMxfp4St(const kernels::Mxfp4StArgs& a, size_t begin, size_t end, ElemType out_type,
                   void* out) {
  if (a.transposed) {
    switch (out_type) {
      case ElemType::kF32: DequantMxfp4StTransposedToF32(a.blocks, a.scales, a.rows, a.groups, begin, end, F32(out)); break;
      case ElemType::kBf16: DequantMxfp4StTransposedToBf16(a.blocks, a.scales, a.rows, a.groups, begin, end, U16(out)); break;
      case ElemType::kF16: DequantMxfp4StTransposedToF16(a.blocks, a.scales, a.rows, a.groups, begin, end, U16(out)); break;
      default: break;
    }
    return;
  }
  const uint8_t* blocks = a.blocks + begin * a.groups * kMxfp4GroupBytes;
  const uint8_t* scales = a.scales + begin * a.groups;
  const size_t rows = end - begin;
  switch (out_type) {
    case ElemType::kF32: DequantMxfp4StToF32(blocks, scales, rows, a.groups, F32(out)); break;
    case ElemType::kBf16: DequantMxfp4StToBf16(blocks, scales, rows, a.groups, U16(out)); break;
    case ElemType::kF16: DequantMxfp4StToF16(blocks, scales, rows, a.groups, U16(out)); break;
    default: break;
  }
}

void DecodeBnb4(const kernels::Bnb4Args& a, size_t begin, size_t end, ElemType out_type,
                void* out) {
  switch (out_type) {
    case ElemType::kF32: DequantBnb4ToF32(a, begin, end, F32(out)); break;
    case ElemType::kBf16: DequantBnb4ToBf16(a, begin, end, U16(out)); break;
    case ElemType::kF16: DequantBnb4ToF16(a, begin, end, U16(out)); break;
    default: break;
  }
}

void DecodeBnbInt8(const kernels::BnbInt8Args& a, size_t begin, size_t end, ElemType out_type,
                   void* out) {
  const uint8_t* weight = a.weight + begin * a.cols;
  const uint8_t* scb = a.scb + begin * 4;
  const size_t rows = end - begin;
  switch (out_type) {
    case ElemType::kF32: DequantBnbInt8ToF32(weight, scb, rows, a.cols, F32(out)); break;
    case ElemType::kBf16: DequantBnbInt8ToBf16(weight, scb, rows, a.cols, U16(out)); break;
    case ElemType::kF16: DequantBnbInt8ToF16(weight, scb, rows, a.cols, U16(out)); break;
    default: break;
  }
}

void DecodeGptq(const kernels::GptqArgs& a, size_t begin, size_t end, ElemType out_type,
                void* out) {
  DequantGptq(a.layer, a.orientation, begin, end, out_type, out);
}

void DecodeAwq(const kernels::AwqArgs& a, size_t begin, size_t end, ElemType out_type, void* out) {
  DequantAwqRows(a.matrix, a.out_in, begin, end, out_type, out);
}

void DecodePackedInt(const kernels::PackedIntArgs& a, size_t begin, size_t end, ElemType out_type,
                     void* out) {
  DequantPackedIntRows(a, begin, end, out_type, out);
}

}  // namespace amn::ref
