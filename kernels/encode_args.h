// The side inputs of every encoder family of the kernel table
// (dispatch/kernel_table.h AMN_ENCODER_FAMILIES): raw, already validated
// views (the checked API in dispatch/quantize_api.cc sized every span and
// checked every given scale). Each family's kernel is
//   uint64_t Encode<Family>(const kernels::<Family>Args&, kernels::ErrorSums*)
// returning the index of the first non-finite input element or kAllFinite;
// the error sums are optional (null). Layouts and formulas:
// kernels/ref/fp8_encode_ref.h and kernels/ref/bnb_encode_ref.h.
#ifndef AMN_KERNELS_ENCODE_ARGS_H_
#define AMN_KERNELS_ENCODE_ARGS_H_

#include <cstdint>

#include "amn/elem_type.h"
#include "amn/ggml_type.h"

namespace amn::kernels {

// Input of every encoder: rows x cols row-major elements of `type`
// (BF16/F16/F32, little-endian, any alignment).
struct EncodeInput {
  const uint8_t* in = nullptr;
  ElemType type = ElemType::kBf16;
  uint64_t rows = 0, cols = 0;
};

// max |x| per group_rows x group_cols group -> amax (grid row-major).
struct AbsMaxGridArgs {
  EncodeInput x;
  uint64_t group_rows = 1, group_cols = 1;
  float* amax = nullptr;
};

// FP8 codes with one scale per group (scales finite, > 0).
struct Fp8QuantArgs {
  EncodeInput x;
  uint64_t group_rows = 1, group_cols = 1;
  bool e5m2 = false;
  const float* scales = nullptr;
  uint8_t* codes = nullptr;  // rows * cols
};

// NF4/FP4 over the flat rows * cols elements in blocks of block_size (even).
struct Bnb4QuantArgs {
  EncodeInput x;
  uint64_t block_size = 64;
  bool fp4 = false;
  bool absmax_given = false;
  float* absmax = nullptr;    // ceil(n / block_size), read if absmax_given
  uint8_t* packed = nullptr;  // ceil(n / 2)
};

// LLM.int8() row-wise.
struct BnbInt8QuantArgs {
  EncodeInput x;
  bool scb_given = false;
  float* scb = nullptr;     // rows, read if scb_given
  int8_t* codes = nullptr;  // rows * cols
};

// ggml block types (families GgmlLegacyQuant, GgmlKQuantQuant, GgmlIq3Quant,
// GgmlIq2Iq1Quant): rows x cols, cols a multiple of the type's block
// elements; every element widens exactly to F32, which is what ggml's
// quantizers take. imatrix: cols importance weights, or null (ggml's
// reference quantizers). out: rows whole rows of blocks, ggml's row size
// each.
struct GgmlQuantArgs {
  EncodeInput x;
  GgmlType type = GgmlType::kQ8_0;
  const float* imatrix = nullptr;
  uint8_t* out = nullptr;
};
// The kernel table names each family's side inputs <Family>Args: each ggml
// encoder family takes the shared struct under its own name.
using GgmlLegacyQuantArgs = GgmlQuantArgs;
using GgmlKQuantQuantArgs = GgmlQuantArgs;
using GgmlIq3QuantArgs = GgmlQuantArgs;
using GgmlIq2Iq1QuantArgs = GgmlQuantArgs;

}  // namespace amn::kernels

#endif  // AMN_KERNELS_ENCODE_ARGS_H_
