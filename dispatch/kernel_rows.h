// Internal: the unchecked, dispatched row functions of every kernel family,
// for the checked wrappers and the kernel registry. n inputs -> n outputs
// (the FP8 dequant rows take a matrix shape and scales).
#ifndef AMN_DISPATCH_KERNEL_ROWS_H_
#define AMN_DISPATCH_KERNEL_ROWS_H_

#include <cstddef>
#include <cstdint>

#include "amn/weight_layout.h"
#include "kernels/bnb_layout.h"

namespace amn::gptq {
struct LayerView;  // kernels/gptq_layout.h
}  // namespace amn::gptq
#include "kernels/ref/awq_ref.h"
#include "kernels/ref/packed_int_ref.h"

namespace amn::internal {

// dispatch/float_convert.cc
void F32ToBf16Rows(const float* in, size_t n, uint16_t* out);
void F32ToF16Rows(const float* in, size_t n, uint16_t* out);
void Bf16ToF32Rows(const uint16_t* in, size_t n, float* out);
void F16ToF32Rows(const uint16_t* in, size_t n, float* out);
void F16ToBf16Rows(const uint16_t* in, size_t n, uint16_t* out);
void Bf16ToF16Rows(const uint16_t* in, size_t n, uint16_t* out);

// dispatch/fp8_convert.cc
void E4m3ToF32Rows(const uint8_t* in, size_t n, float* out);
void E4m3ToBf16Rows(const uint8_t* in, size_t n, uint16_t* out);
void E4m3ToF16Rows(const uint8_t* in, size_t n, uint16_t* out);
void E5m2ToF32Rows(const uint8_t* in, size_t n, float* out);
void E5m2ToBf16Rows(const uint8_t* in, size_t n, uint16_t* out);
void E5m2ToF16Rows(const uint8_t* in, size_t n, uint16_t* out);

// dispatch/fp8_dequant.cc: a row-major [rows, cols] matrix of FP8 codes,
// column c scaled by col_scales[c / block_cols] (amn/fp8_dequant.h).
void DequantE4m3ToF32Rows(const uint8_t* codes, size_t rows, size_t cols, const float* col_scales,
                          size_t block_cols, float* out);
void DequantE4m3ToBf16Rows(const uint8_t* codes, size_t rows, size_t cols,
                           const float* col_scales, size_t block_cols, uint16_t* out);
void DequantE4m3ToF16Rows(const uint8_t* codes, size_t rows, size_t cols, const float* col_scales,
                          size_t block_cols, uint16_t* out);
void DequantE5m2ToF32Rows(const uint8_t* codes, size_t rows, size_t cols, const float* col_scales,
                          size_t block_cols, float* out);
void DequantE5m2ToBf16Rows(const uint8_t* codes, size_t rows, size_t cols,
                           const float* col_scales, size_t block_cols, uint16_t* out);
void DequantE5m2ToF16Rows(const uint8_t* codes, size_t rows, size_t cols, const float* col_scales,
                          size_t block_cols, uint16_t* out);

// dispatch/ggml_legacy.cc: n_blocks whole ggml blocks -> n_blocks * 32
// outputs (kernels/ggml_blocks.h), for Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 Q8_1 Iq4Nl
// Mxfp4.
#define AMN_GGML_LEGACY_ROW_DECLS(Name)                                                   \
  void Dequant##Name##ToF32Rows(const uint8_t* blocks, size_t n_blocks, float* out);      \
  void Dequant##Name##ToBf16Rows(const uint8_t* blocks, size_t n_blocks, uint16_t* out);  \
  void Dequant##Name##ToF16Rows(const uint8_t* blocks, size_t n_blocks, uint16_t* out);
AMN_GGML_LEGACY_ROW_DECLS(Q4_0)
AMN_GGML_LEGACY_ROW_DECLS(Q4_1)
AMN_GGML_LEGACY_ROW_DECLS(Q5_0)
AMN_GGML_LEGACY_ROW_DECLS(Q5_1)
AMN_GGML_LEGACY_ROW_DECLS(Q8_0)
AMN_GGML_LEGACY_ROW_DECLS(Q8_1)
AMN_GGML_LEGACY_ROW_DECLS(Iq4Nl)
AMN_GGML_LEGACY_ROW_DECLS(Mxfp4)
#undef AMN_GGML_LEGACY_ROW_DECLS

// dispatch/fp4.cc (kernels/ref/fp4_ref.h): NVFP4 rows of `cols` elements
// (packed [rows][cols/2], E4M3 scales [rows][cols/16]); gpt-oss MXFP4 rows
// of groups * 32 elements (blocks [rows][groups][16], E8M0 scales
// [rows][groups]), plain or as output rows [col_begin, col_end) of the
// transpose [groups*32][rows].
#define AMN_FP4_ROW_DECLS(Out, TOut)                                                          \
  void DequantNvfp4To##Out##Rows(const uint8_t* packed, const uint8_t* scales,               \
                                 float global_scale, size_t rows, size_t cols, TOut* out);   \
  void DequantMxfp4StTo##Out##Rows(const uint8_t* blocks, const uint8_t* scales, size_t rows,\
                                   size_t groups, TOut* out);                                 \
  void DequantMxfp4StTransposedTo##Out##Rows(const uint8_t* blocks, const uint8_t* scales,   \
                                             size_t rows, size_t groups, size_t col_begin,    \
                                             size_t col_end, TOut* out);
AMN_FP4_ROW_DECLS(F32, float)
AMN_FP4_ROW_DECLS(Bf16, uint16_t)
AMN_FP4_ROW_DECLS(F16, uint16_t)
#undef AMN_FP4_ROW_DECLS

// dispatch/bnb.cc: elements [begin, end) of a validated 4-bit tensor
// (kernels/bnb_layout.h) -> out[0, end - begin); and rows x cols int8
// weights with SCB f32 LE [rows] -> rows * cols outputs.
void DequantBnb4ToF32Rows(const bnb::Bnb4View& t, size_t begin, size_t end, float* out);
void DequantBnb4ToBf16Rows(const bnb::Bnb4View& t, size_t begin, size_t end, uint16_t* out);
void DequantBnb4ToF16Rows(const bnb::Bnb4View& t, size_t begin, size_t end, uint16_t* out);
void DequantBnbInt8ToF32Rows(const uint8_t* weight, const uint8_t* scb, size_t rows, size_t cols,
                             float* out);
void DequantBnbInt8ToBf16Rows(const uint8_t* weight, const uint8_t* scb, size_t rows,
                              size_t cols, uint16_t* out);
void DequantBnbInt8ToF16Rows(const uint8_t* weight, const uint8_t* scb, size_t rows, size_t cols,
                             uint16_t* out);

// dispatch/gptq.cc: rows [row_begin, row_end) of a valid GPTQ layer in
// `orientation` (amn/gptq_dequant.h, kernels/ref/gptq_ref.h).
void DequantGptqToF32Rows(const gptq::LayerView& layer, WeightOrientation orientation,
                          size_t row_begin, size_t row_end, float* out);
void DequantGptqToBf16Rows(const gptq::LayerView& layer, WeightOrientation orientation,
                           size_t row_begin, size_t row_end, uint16_t* out);
void DequantGptqToF16Rows(const gptq::LayerView& layer, WeightOrientation orientation,
                          size_t row_begin, size_t row_end, uint16_t* out);

// dispatch/awq.cc: rows [rb, re) of an AWQ layer (out_in: the [N, K]
// nn.Linear orientation, else [K, N]) and of a compressed-tensors
// pack-quantized layer ([rows, cols]); amn/awq_dequant.h,
// amn/packed_int_dequant.h.
void DequantAwqToF32Rows(const ref::AwqMatrix& m, bool out_in, size_t rb, size_t re, float* out);
void DequantAwqToBf16Rows(const ref::AwqMatrix& m, bool out_in, size_t rb, size_t re,
                          uint16_t* out);
void DequantAwqToF16Rows(const ref::AwqMatrix& m, bool out_in, size_t rb, size_t re,
                         uint16_t* out);
void DequantPackedIntToF32Rows(const ref::PackedIntMatrix& m, size_t rb, size_t re, float* out);
void DequantPackedIntToBf16Rows(const ref::PackedIntMatrix& m, size_t rb, size_t re,
                                uint16_t* out);
void DequantPackedIntToF16Rows(const ref::PackedIntMatrix& m, size_t rb, size_t re,
                               uint16_t* out);

}  // namespace amn::internal

#endif  // AMN_DISPATCH_KERNEL_ROWS_H_
