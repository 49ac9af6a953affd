// The side inputs of every kernel family, and the one signature all decoders
// share: what a kernel reads besides the range it is asked for. Filled by the
// checked APIs in dispatch/ (after every size is checked) and by the registry
// samples; kernels read them and never check them. No Highway.
//
//   void Decode<Family>(const <Family>Args& args, size_t begin, size_t end,
//                       ElemType out_type, void* out);
//
// decodes units [begin, end) of one tensor into `out` (begin's first element
// at out[0]), as out_type (kF32, kF16 or kBf16). The unit is the family's own
// (an element, a ggml block, a row), stated below. Every target's Decode and
// the reference's ref::Decode<Family> (kernels/ref/decode_ref.h) write the
// same bytes; `out` may start at any byte.
#ifndef AMN_KERNELS_KERNEL_ARGS_H_
#define AMN_KERNELS_KERNEL_ARGS_H_

#include <cstddef>
#include <cstdint>

#include "amn/elem_type.h"
#include "amn/weight_layout.h"
#include "kernels/bnb_layout.h"
#include "kernels/gptq_layout.h"
#include "kernels/ref/awq_ref.h"
#include "kernels/ref/packed_int_ref.h"

namespace amn::kernels {

// FloatConvert: in_type kF32, kF16 or kBf16 (raw bit patterns); unit: element.
// Fp8Convert: in_type kF8E4m3 or kF8E5m2 codes; unit: element.
struct ConvertArgs {
  ElemType in_type = ElemType::kF32;
  const void* in = nullptr;  // element 0 of the tensor
};

// Fp8Dequant: a row-major [rows][cols] matrix of FP8 codes, column c scaled by
// col_scales[c / block_cols] (amn/fp8_dequant.h); unit: row.
struct Fp8ScaledArgs {
  ElemType code_type = ElemType::kF8E4m3;
  const uint8_t* codes = nullptr;
  size_t cols = 0;
  const float* col_scales = nullptr;
  size_t block_cols = 1;
};

// GgmlLegacy / GgmlKQuant / GgmlIQuant: whole ggml blocks of `type` (a
// GgmlType id; kernels/ggml_blocks.h, ggml_kquant_blocks.h,
// ggml_iq_blocks.h); unit: block.
struct GgmlArgs {
  uint32_t type = 0;
  const uint8_t* blocks = nullptr;
};

// Nvfp4: packed E2M1 [rows][cols/2], E4M3 scales [rows][cols/16], one F32
// global scale (kernels/ref/fp4_ref.h); unit: row.
struct Nvfp4Args {
  const uint8_t* packed = nullptr;
  const uint8_t* scales = nullptr;
  float global_scale = 1.0f;
  size_t cols = 0;
};

// Mxfp4St (gpt-oss safetensors): blocks [rows][groups][16], E8M0 scales
// [rows][groups]. Plain: unit = row of [rows][groups*32]. Transposed
// (transformers' layout [groups*32][rows]): unit = output row, i.e. one
// column of the stored matrix.
struct Mxfp4StArgs {
  const uint8_t* blocks = nullptr;
  const uint8_t* scales = nullptr;
  size_t rows = 0;
  size_t groups = 0;
  bool transposed = true;
};

// Bnb4: bitsandbytes NF4/FP4, plain or double quant (kernels/bnb_layout.h);
// unit: element.
using Bnb4Args = bnb::Bnb4View;

// BnbInt8: LLM.int8() i8 [rows][cols], SCB f32 LE [rows]; unit: row.
struct BnbInt8Args {
  const uint8_t* weight = nullptr;
  const uint8_t* scb = nullptr;
  size_t cols = 0;
};

// Gptq: one packed layer (kernels/gptq_layout.h) written in `orientation`;
// unit: row of that orientation.
struct GptqArgs {
  gptq::LayerView layer;
  WeightOrientation orientation = WeightOrientation::kOutIn;
};

// Awq: one AutoAWQ GEMM layer, in the nn.Linear [N, K] orientation when
// out_in, else the GEMM-native [K, N]; unit: row of that orientation.
struct AwqArgs {
  ref::AwqMatrix matrix;
  bool out_in = true;
};

// PackedInt: a compressed-tensors pack-quantized layer [rows, cols]; unit: row.
using PackedIntArgs = ref::PackedIntMatrix;

// The side inputs of each family in the kernel table (dispatch/kernel_table.h),
// by family name.
using FloatConvertArgs = ConvertArgs;
using Fp8ConvertArgs = ConvertArgs;
using Fp8DequantArgs = Fp8ScaledArgs;
using GgmlLegacyArgs = GgmlArgs;
using GgmlKQuantArgs = GgmlArgs;
using GgmlIQuantArgs = GgmlArgs;

}  // namespace amn::kernels

#endif  // AMN_KERNELS_KERNEL_ARGS_H_
