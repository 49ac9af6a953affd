/* anamnesis C ABI: every dequantization kernel (and the encoders) for engines that embed them,
 * without the parsers or the CLI. Plain C (C99 and later, or C++). Every
 * function checks its arguments and returns a status; nothing aborts,
 * prints, throws or allocates per call. Element values are raw bit patterns: F16/BF16
 * as uint16_t, FP8 as uint8_t; every tensor given as bytes is little-endian
 * and may start at any byte address (an mmapped file). Results are identical
 * on every CPU target (docs/c-api.md). */
#ifndef AMN_AMN_H_
#define AMN_AMN_H_

#include <stddef.h>
#include <stdint.h>

#include "amn/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this binary interface: it changes whenever a declaration
 * here changes incompatibly (a struct layout, an enum value, a signature).
 * Compare AMN_ABI_VERSION (what the engine was compiled against) with
 * amn_abi_version() (the library it runs with). */
#define AMN_ABI_VERSION 1

typedef enum amn_status {
  /* Success: the output holds the results. */
  AMN_OK = 0,
  /* A pointer is NULL while its length is non-zero, a span wraps around the
   * address space, the output overlaps an input, a size overflows, a shape
   * or range is inconsistent, an input span does not hold exactly the bytes
   * its shape needs, or a name, type or enum value is unknown. Nothing was
   * written. */
  AMN_ERR_INVALID_ARGUMENT = 1,
  /* The output buffer is smaller than the results. Nothing was written. */
  AMN_ERR_BUFFER_TOO_SMALL = 2,
  /* The request is valid but this CPU or build cannot carry it out. */
  AMN_ERR_UNSUPPORTED = 3,
  /* The AMN_ISA environment variable names no target of this build; kernels
   * refuse to run until it is fixed or amn_set_isa_cap() overrides it. */
  AMN_ERR_BAD_ENVIRONMENT = 4,
  /* The library failed for a reason the arguments do not explain (a bug, or
   * memory exhausted while the C++ layer described another error). */
  AMN_ERR_INTERNAL = 5,
  /* Model files (amn/amn_model.h): the input is malformed, truncated, or
   * declares or makes more than the limits of untrusted input allow. */
  AMN_ERR_INVALID_INPUT = 6,
  /* Model files: the operating system refused a read (a missing or
   * unreadable file), or a file changed while it was read. */
  AMN_ERR_IO = 7,
  /* Model files: a callback of the caller asked the call to stop. */
  AMN_ERR_CANCELLED = 8
} amn_status;

/* Element types. F32/F16/BF16 are output (and scale) types; E4M3 (OCP
 * E4M3FN) and E5M2 name FP8 codes. The values never change. */
typedef enum amn_dtype {
  AMN_F32 = 0,
  AMN_F16 = 1,
  AMN_BF16 = 2,
  AMN_E4M3 = 3,
  AMN_E5M2 = 4
} amn_dtype;

/* How a dequantized linear-layer weight is laid out in dst. */
typedef enum amn_orientation {
  AMN_OUT_IN = 0, /* nn.Linear [out_features][in_features] */
  AMN_IN_OUT = 1  /* GEMM-native [in_features][out_features] */
} amn_orientation;

/* ---- Library, status, targets ------------------------------------------ */

/* AMN_ABI_VERSION of the library that is running. */
AMN_API int amn_abi_version(void);

/* A static, human-readable name for a status ("ok", "buffer too small"...). */
AMN_API const char* amn_status_string(amn_status status);

/* Why the last call on this thread that returned an amn_status failed, e.g.
 * "amn_dequantize_gptq: qzeros_bytes does not match the shape"; "" when it
 * returned AMN_OK. The text lives in a per-thread buffer (nothing is
 * allocated per call) and is replaced by this thread's next such call. */
AMN_API const char* amn_last_error(void);

/* The library version, "MAJOR.MINOR.PATCH". */
AMN_API const char* amn_version(void);

/* Bytes of one element of `type`; 0 for a value outside amn_dtype. */
AMN_API size_t amn_dtype_size(amn_dtype type);

/* The ISA target kernels dispatch to now, e.g. "AVX3_DL", "AVX2", "NEON". */
AMN_API const char* amn_active_target(void);

/* Caps dispatch at the named target or below (as AMN_ISA does); "baseline"
 * names the lowest compiled target; NULL or "" removes the cap; a name no
 * target of this build has is AMN_ERR_INVALID_ARGUMENT. Not thread-safe
 * with kernels running concurrently. */
AMN_API amn_status amn_set_isa_cap(const char* name);

/* ---- Conversions --------------------------------------------------------- */

/* src_len elements from src into dst, which holds dst_len elements.
 * Narrowing rounds to nearest even; see docs/formats.md. */
AMN_API amn_status amn_f32_to_bf16(const float* src, size_t src_len, uint16_t* dst, size_t dst_len);
AMN_API amn_status amn_f32_to_f16(const float* src, size_t src_len, uint16_t* dst, size_t dst_len);
AMN_API amn_status amn_bf16_to_f32(const uint16_t* src, size_t src_len, float* dst, size_t dst_len);
AMN_API amn_status amn_f16_to_f32(const uint16_t* src, size_t src_len, float* dst, size_t dst_len);
AMN_API amn_status amn_f16_to_bf16(const uint16_t* src, size_t src_len, uint16_t* dst, size_t dst_len);
AMN_API amn_status amn_bf16_to_f16(const uint16_t* src, size_t src_len, uint16_t* dst, size_t dst_len);
AMN_API amn_status amn_e4m3_to_f32(const uint8_t* src, size_t src_len, float* dst, size_t dst_len);
AMN_API amn_status amn_e4m3_to_bf16(const uint8_t* src, size_t src_len, uint16_t* dst, size_t dst_len);
AMN_API amn_status amn_e4m3_to_f16(const uint8_t* src, size_t src_len, uint16_t* dst, size_t dst_len);
AMN_API amn_status amn_e5m2_to_f32(const uint8_t* src, size_t src_len, float* dst, size_t dst_len);
AMN_API amn_status amn_e5m2_to_bf16(const uint8_t* src, size_t src_len, uint16_t* dst, size_t dst_len);
AMN_API amn_status amn_e5m2_to_f16(const uint8_t* src, size_t src_len, uint16_t* dst, size_t dst_len);

/* ---- GGUF / ggml block types --------------------------------------------- */

/* Dequantizes whole ggml blocks of `ggml_type` (ggml's enum ggml_type as
 * GGUF stores it: Q4_0 = 2, Q4_1 = 3, Q5_0 = 6, Q5_1 = 7, Q8_0 = 8,
 * Q2_K = 10 ... Q6_K = 14, IQ2_XXS = 16 ... IQ4_XS = 23, IQ1_M = 29,
 * TQ1_0 = 34, TQ2_0 = 35, MXFP4 = 39, NVFP4 = 40, Q1_0 = 41, Q2_0 = 42)
 * into n_elems elements of dst_type
 * (F32, F16 or BF16) at dst, in ggml element order. src_bytes must be a
 * whole number of blocks and n_elems = src_bytes / block_bytes * block_elems.
 * Errors: an unknown or unquantized type, partial blocks, n_elems larger than
 * the blocks give (AMN_ERR_INVALID_ARGUMENT); n_elems smaller
 * (AMN_ERR_BUFFER_TOO_SMALL); a quantized type this build cannot decode
 * (AMN_ERR_UNSUPPORTED). */
AMN_API amn_status amn_dequantize_ggml(int ggml_type, const void* src, size_t src_bytes,
                                       amn_dtype dst_type, void* dst, size_t n_elems);

/* The ggml name of a type id ("Q4_K", "F16"...); NULL for an unknown id. */
AMN_API const char* amn_ggml_type_name(int ggml_type);

/* Elements and bytes of one block (1 and the element size for plain types
 * such as F16). Both pointers must be non-NULL; unknown id: invalid. */
AMN_API amn_status amn_ggml_block_size(int ggml_type, size_t* block_elems, size_t* block_bytes);

/* ---- Families with side inputs ------------------------------------------- *
 * Each takes a params struct naming every tensor as pointer + byte length
 * (each must hold exactly the bytes its shape needs), a range of output rows
 * (elements for bnb4), and the output as dst_type (F32, F16 or BF16) at dst,
 * which holds dst_bytes bytes and receives (end - begin) rows, row-major,
 * starting at dst. dst must not overlap any input. Zero-initialise a params
 * struct, then set its fields. */

/* FP8 scale layouts. */
typedef enum amn_fp8_scale_kind {
  AMN_FP8_SCALE_TENSOR = 0, /* one scale for the whole tensor */
  AMN_FP8_SCALE_ROW = 1,    /* scales[rows] (per output channel, [rows][1]) */
  AMN_FP8_SCALE_BLOCK = 2   /* scales[ceil(rows/block_rows)][ceil(cols/block_cols)] */
} amn_fp8_scale_kind;

/* An FP8 weight with scales (weight_scale / DeepSeek weight_scale_inv: the
 * stored scale multiplies):
 *   dst[r][c] = Round(f32(code[r][c]) * f32(scale for (r, c)))
 * one F32 multiply, then the output conversion of docs/formats.md. */
typedef struct amn_fp8_params {
  amn_dtype code_type;     /* AMN_E4M3 or AMN_E5M2 */
  uint64_t rows;           /* >= 0 */
  uint64_t cols;           /* >= 1 */
  const void* codes;       /* u8 [rows][cols] */
  size_t codes_bytes;      /* rows * cols */
  amn_fp8_scale_kind scale_kind;
  amn_dtype scale_type;    /* AMN_F32, AMN_F16 or AMN_BF16 */
  const void* scales;      /* scale_type values, laid out as scale_kind says */
  size_t scales_bytes;
  uint64_t block_rows;     /* AMN_FP8_SCALE_BLOCK: >= 1 (edge blocks may be partial) */
  uint64_t block_cols;     /* AMN_FP8_SCALE_BLOCK: >= 1 */
} amn_fp8_params;

/* Rows [row_begin, row_end) of the [rows][cols] weight. */
AMN_API amn_status amn_dequantize_fp8(const amn_fp8_params* params, uint64_t row_begin,
                                      uint64_t row_end, amn_dtype dst_type, void* dst,
                                      size_t dst_bytes);

/* How a GPTQ checkpoint stores its zero points. */
typedef enum amn_gptq_zeros {
  AMN_GPTQ_ZEROS_V1 = 0, /* "gptq" format (AutoGPTQ): stored zero - 1, amn adds 1 */
  AMN_GPTQ_ZEROS_V2 = 1  /* "gptq_v2": stored as is */
} amn_gptq_zeros;

/* A GPTQ / GPTQModel packed layer (docs/schemes/gptq.md). K = in_features,
 * N = out_features; bits*K and bits*N multiples of 32. For input feature i
 * and output feature j, g = g_idx[i] (or i / group_size without g_idx):
 *   w(i, j) = Round((f32(q(i,j)) - f32(z(g,j))) * f32(scales[g][j]))
 * q and z read LSB-first from int32 bit streams, z + 1 for V1. */
typedef struct amn_gptq_params {
  uint32_t bits;             /* 2, 3, 4 or 8 */
  uint64_t in_features;      /* K */
  uint64_t out_features;     /* N */
  uint64_t groups;           /* rows of scales and qzeros */
  uint64_t group_size;       /* used when g_idx is absent: groups >= ceil(K / group_size) */
  amn_gptq_zeros zeros;
  amn_dtype scale_type;      /* AMN_F32, AMN_F16 or AMN_BF16 */
  amn_orientation orientation;
  const void* qweight;       /* int32 [K*bits/32][N] */
  size_t qweight_bytes;
  const void* qzeros;        /* int32 [groups][N*bits/32] */
  size_t qzeros_bytes;
  const void* scales;        /* scale_type [groups][N] */
  size_t scales_bytes;
  const void* g_idx;         /* int32 [K] with values in [0, groups), or NULL with 0 bytes */
  size_t g_idx_bytes;
} amn_gptq_params;

/* Rows [row_begin, row_end) of the orientation: AMN_OUT_IN rows are output
 * features (K elements each), AMN_IN_OUT rows input features (N each). */
AMN_API amn_status amn_dequantize_gptq(const amn_gptq_params* params, uint64_t row_begin,
                                       uint64_t row_end, amn_dtype dst_type, void* dst,
                                       size_t dst_bytes);

/* An AutoAWQ GEMM 4-bit layer (docs/schemes/awq.md); N a multiple of 8,
 * groups = ceil(K / group_size), nibble interleave {0,4,1,5,2,6,3,7}:
 *   w(i, j) = Round((f32(q(i,j)) - f32(z(i/group_size, j))) * f32(scales[i/group_size][j])) */
typedef struct amn_awq_params {
  uint64_t in_features;      /* K >= 1 */
  uint64_t out_features;     /* N, a positive multiple of 8 */
  uint64_t group_size;       /* >= 1 */
  amn_dtype scale_type;      /* AMN_F32, AMN_F16 or AMN_BF16 */
  amn_orientation orientation;
  const void* qweight;       /* int32 [K][N/8] */
  size_t qweight_bytes;
  const void* qzeros;        /* int32 [groups][N/8] */
  size_t qzeros_bytes;
  const void* scales;        /* scale_type [groups][N] */
  size_t scales_bytes;
} amn_awq_params;

/* Rows [row_begin, row_end) of the orientation (as amn_dequantize_gptq). */
AMN_API amn_status amn_dequantize_awq(const amn_awq_params* params, uint64_t row_begin,
                                      uint64_t row_end, amn_dtype dst_type, void* dst,
                                      size_t dst_bytes);

/* A bitsandbytes NF4 or FP4 tensor (the codebook in quant_map decides),
 * plain or double quant (docs/schemes/bitsandbytes.md):
 *   dst[e] = Round(cb[nibble(e)] * absmax[e / block_size])
 *   double quant: absmax[b] = nested_quant_map[absmax_u8[b]]
 *                             * nested_absmax[b / nested_block_size] + nested_offset
 * cb = quant_map, except +0.0 at an index >= 8 reads as -0.0 (FP4). */
typedef struct amn_bnb4_params {
  uint64_t n_elems;                /* N, the quant_state shape's product */
  uint64_t block_size;             /* elements per absmax: even, >= 2 (usually 64) */
  const void* packed;              /* u8 [ceil(N/2)], element 2k in the HIGH nibble of byte k */
  size_t packed_bytes;
  const void* quant_map;           /* f32 [16] */
  size_t quant_map_bytes;
  const void* absmax;              /* f32 [nb] (double quant: u8 [nb]), nb = ceil(N/block_size) */
  size_t absmax_bytes;
  int double_quant;                /* non-zero: the nested fields below are used */
  const void* nested_absmax;       /* f32 [ceil(nb / nested_block_size)] */
  size_t nested_absmax_bytes;
  const void* nested_quant_map;    /* f32 [256] */
  size_t nested_quant_map_bytes;
  uint64_t nested_block_size;      /* >= 1 (usually 256) */
  float nested_offset;
} amn_bnb4_params;

/* Elements [begin, end) of the flat tensor into dst[0, end - begin). */
AMN_API amn_status amn_dequantize_bnb4(const amn_bnb4_params* params, uint64_t begin,
                                       uint64_t end, amn_dtype dst_type, void* dst,
                                       size_t dst_bytes);

/* An LLM.int8() weight (bitsandbytes int8_vectorwise_dequant):
 *   dst[r][c] = Round((f32(w[r][c]) * SCB[r]) * f32(7.874015718698502e-3)) */
typedef struct amn_bnb_int8_params {
  uint64_t rows;
  uint64_t cols;
  const void* weight;   /* i8 [rows][cols] */
  size_t weight_bytes;
  const void* scb;      /* f32 [rows] */
  size_t scb_bytes;
} amn_bnb_int8_params;

/* Rows [row_begin, row_end). */
AMN_API amn_status amn_dequantize_bnb_int8(const amn_bnb_int8_params* params, uint64_t row_begin,
                                           uint64_t row_end, amn_dtype dst_type, void* dst,
                                           size_t dst_bytes);

/* A compressed-tensors "pack-quantized" int4/int8 layer [rows = out][cols =
 * in] (docs/schemes/compressed-tensors-int.md); pf = 32 / num_bits, values
 * stored as q + 2^(num_bits-1), LSB-first:
 *   v = RoundToScaleType(f32(q - z) * f32(scale[r][c / group_size])); dst = Round(v) */
typedef struct amn_packed_int_params {
  uint64_t rows;
  uint64_t cols;
  uint32_t num_bits;            /* 4 or 8 */
  uint64_t group_size;          /* divides cols; cols for "channel" and "tensor" */
  int tensor_scale;             /* non-zero: strategy "tensor", one scale, no zero point */
  amn_dtype scale_type;         /* AMN_BF16, AMN_F16 or AMN_F32 */
  const void* weight_packed;    /* int32 [rows][ceil(cols / pf)] */
  size_t weight_packed_bytes;
  const void* weight_scale;     /* scale_type [rows][cols / group_size], or [1] */
  size_t weight_scale_bytes;
  const void* weight_zero_point; /* int32 [ceil(rows/pf)][cols/group_size]; NULL, 0 if symmetric */
  size_t weight_zero_point_bytes;
  int zero_point_i8;            /* non-zero: weight_zero_point is i8 [rows][cols / group_size] */
} amn_packed_int_params;

/* Rows [row_begin, row_end) of the [rows][cols] weight. */
AMN_API amn_status amn_dequantize_packed_int(const amn_packed_int_params* params,
                                             uint64_t row_begin, uint64_t row_end,
                                             amn_dtype dst_type, void* dst, size_t dst_bytes);

/* A compressed-tensors NVFP4 weight [rows][cols] (docs/schemes/fp4.md);
 * element 2k is the LOW nibble of byte k; E2M1 codes:
 *   dst[r][c] = Round(e2m1(code[r][c]) * (f32(scale[r][c/16]) / global_scale)) */
typedef struct amn_nvfp4_params {
  uint64_t rows;
  uint64_t cols;                /* a multiple of 16 */
  const void* packed;           /* u8 [rows][cols/2] */
  size_t packed_bytes;
  const void* scales;           /* E4M3 [rows][cols/16] */
  size_t scales_bytes;
  const void* global_scale;     /* f32, one value (4 bytes) */
  size_t global_scale_bytes;
} amn_nvfp4_params;

/* Rows [row_begin, row_end). */
AMN_API amn_status amn_dequantize_nvfp4(const amn_nvfp4_params* params, uint64_t row_begin,
                                        uint64_t row_end, amn_dtype dst_type, void* dst,
                                        size_t dst_bytes);

/* gpt-oss MXFP4 in safetensors (`*_blocks` + E8M0 `*_scales`), 32 values
 * per group, element 2k the LOW nibble of byte k:
 *   value[e][r][c] = Round(e2m1(code) * 2^(scales[e][r][c/32] - 127))
 * (scale 255 is +Inf, as transformers computes it). */
typedef struct amn_mxfp4_params {
  uint64_t experts;      /* product of the dims before [R][G][16]; 1 for a 3-D tensor */
  uint64_t rows;         /* R */
  uint64_t groups;       /* G */
  const void* blocks;    /* u8 [experts][R][G][16] */
  size_t blocks_bytes;
  const void* scales;    /* u8 [experts][R][G] */
  size_t scales_bytes;
  int transpose;         /* non-zero: transformers' [experts][G*32][R]; 0: [experts][R][G*32] */
} amn_mxfp4_params;

/* Rows [row_begin, row_end) of the flattened output: experts * (transpose ?
 * G*32 : R) rows of (transpose ? R : G*32) elements. */
AMN_API amn_status amn_dequantize_mxfp4(const amn_mxfp4_params* params, uint64_t row_begin,
                                        uint64_t row_end, amn_dtype dst_type, void* dst,
                                        size_t dst_bytes);

/* ---- Encoders (quantize, `amn forget`) ------------------------------------ *
 * Plain BF16/F16/F32 rows to FP8 with scales, bitsandbytes NF4/FP4 (plain
 * and double quant) and LLM.int8(); identical bytes on every CPU target.
 * Formulas, rounding and tie rules: docs/schemes/forget.md. A NaN or an
 * infinity in the input is refused with AMN_ERR_INVALID_ARGUMENT
 * (amn_last_error names the element's index); the outputs are then
 * unspecified. Outputs must not overlap the input or each other. */

/* What quantization took from one call's elements, x against its decoded
 * x' (as double), summed in an order fixed by the element index (the same
 * bytes on every target): Lethe distance = sum_abs / elements, relative
 * RMSE = sqrt(sum_sq_err / sum_sq_ref). */
typedef struct amn_quant_error {
  uint64_t elements;
  double sum_abs;
  double max_abs;
  double sum_sq_err;
  double sum_sq_ref;
} amn_quant_error;

/* The input of every encoder: rows x cols row-major elements. */
typedef struct amn_quantize_src {
  amn_dtype type;    /* AMN_F32, AMN_F16 or AMN_BF16 */
  uint64_t rows;
  uint64_t cols;
  const void* data;  /* rows * cols elements, little-endian, any alignment */
  size_t data_bytes; /* exactly rows * cols * element size */
} amn_quantize_src;

/* FP8 with one scale per group_rows x group_cols group (per tensor: rows x
 * cols; per channel: 1 x cols; fine-grained: 128 x 128; edge groups partial):
 *   scale = amax / max_finite (448 E4M3, 57344 E5M2), all-zero group: 1,
 *           a quotient that underflows to 0: 2^-149 (smallest subnormal)
 *   code  = RNE(clamp(x / scale, -max_finite, max_finite))
 * The scale grid holds ceil(rows / group_rows) * ceil(cols / group_cols)
 * f32 entries, row-major. */
typedef struct amn_quantize_fp8_params {
  amn_quantize_src src;
  uint64_t group_rows; /* >= 1 */
  uint64_t group_cols; /* >= 1 */
  amn_dtype format;    /* AMN_E4M3 or AMN_E5M2 */
  int scales_given;    /* non-zero: scales are read (finite, > 0), else computed */
} amn_quantize_fp8_params;

/* codes: rows * cols bytes; scales: the grid (written unless scales_given);
 * error may be NULL. */
AMN_API amn_status amn_quantize_fp8(const amn_quantize_fp8_params* params, float* scales,
                                    size_t scales_len, uint8_t* codes, size_t codes_bytes,
                                    amn_quant_error* error);

typedef enum amn_bnb4_type { AMN_BNB_NF4 = 0, AMN_BNB_FP4 = 1 } amn_bnb4_type;

/* bitsandbytes 4-bit over the flat rows * cols elements in blocks of
 * block_size: absmax = max |x| per block (unless absmax_given), each code
 * from x * (1 / absmax) by bitsandbytes' decision tree, two codes per byte,
 * the first in the HIGH nibble. */
typedef struct amn_quantize_bnb4_params {
  amn_quantize_src src;
  uint64_t block_size; /* even, >= 2 (bitsandbytes: 64) */
  amn_bnb4_type type;
  int absmax_given;    /* non-zero: absmax is read (finite, >= 0), else computed */
} amn_quantize_bnb4_params;

/* absmax: f32 [ceil(n / block_size)]; packed: u8 [ceil(n / 2)]; error may
 * be NULL. */
AMN_API amn_status amn_quantize_bnb4(const amn_quantize_bnb4_params* params, float* absmax,
                                     size_t absmax_len, uint8_t* packed, size_t packed_bytes,
                                     amn_quant_error* error);

/* Double quant of a tensor's absmax vector (bitsandbytes' compress_statistics):
 * offset = mean(absmax); blocks of nested_block_size (bitsandbytes: 256) over
 * absmax - offset: nested_absmax = max |v|, codes = the signed dynamic map's
 * entry nearest to v / nested_absmax. codes: u8 [absmax_len]; nested_absmax:
 * f32 [ceil(absmax_len / nested_block_size)]. */
AMN_API amn_status amn_quantize_bnb_nested(const float* absmax, size_t absmax_len,
                                           uint64_t nested_block_size, uint8_t* codes,
                                           size_t codes_len, float* nested_absmax,
                                           size_t nested_absmax_len, float* offset);

/* The codebooks bitsandbytes stores beside such weights: `.quant_map` (16
 * f32) and `.nested_quant_map` (256 f32). */
AMN_API amn_status amn_bnb4_codebook(amn_bnb4_type type, float* out, size_t out_len);
AMN_API amn_status amn_bnb_dynamic_map(float* out, size_t out_len);

/* LLM.int8() row-wise: SCB = max |x| per row (unless scb_given),
 * code = clamp(round_half_even(x * (127 / SCB)), -127, 127). */
typedef struct amn_quantize_bnb_int8_params {
  amn_quantize_src src;
  int scb_given; /* non-zero: scb is read (finite, >= 0), else computed */
} amn_quantize_bnb_int8_params;

/* scb: f32 [rows]; codes: i8 [rows * cols]; error may be NULL. */
AMN_API amn_status amn_quantize_bnb_int8(const amn_quantize_bnb_int8_params* params, float* scb,
                                         size_t scb_len, int8_t* codes, size_t codes_len,
                                         amn_quant_error* error);

/* ---- ggml block types, encoding ------------------------------------------ *
 * One row of n_elems F32 values (n_elems a multiple of the type's block
 * elements: 32; 64 for NVFP4 / Q2_0, 128 for Q1_0, 256 for TQ1_0 / TQ2_0)
 * into ggml blocks of `ggml_type`
 * at dst, the same bytes as ggml's ggml_quantize_chunk for that row.
 * Types: Q4_0 = 2, Q4_1 = 3, Q5_0 = 6, Q5_1 = 7, Q8_0 = 8, IQ4_NL = 20,
 * TQ1_0 = 34, TQ2_0 = 35, MXFP4 = 39, NVFP4 = 40, Q1_0 = 41, Q2_0 = 42,
 * Q2_K = 10 ... Q6_K = 14,
 * IQ4_XS = 23, IQ3_XXS = 18, IQ3_S = 21, IQ2_XXS = 16, IQ2_XS = 17, IQ2_S = 22, IQ1_S = 19 and
 * IQ1_M = 29 (IQ2_XXS, IQ2_XS and IQ1_S need imatrix: NULL is
 * AMN_ERR_INVALID_ARGUMENT naming the type, as ggml refuses them without
 * one); any other id is AMN_ERR_UNSUPPORTED (known) or
 * AMN_ERR_INVALID_ARGUMENT (unknown). A tensor of several rows is
 * one call per row (these types are block-local, so the rows could also go
 * in one call as one long row). imatrix: NULL (ggml's reference quantizers,
 * what llama-quantize writes without an importance matrix), or n_elems
 * importance weights, one per element of this row (for a tensor, the
 * imatrix file's per-column weights; finite), giving ggml's quantize_<type>
 * with quant_weights (Q8_0, MXFP4, TQ1_0, TQ2_0, NVFP4, Q1_0, Q2_0 ignore
 * them, as ggml does;
 * the row is the unit its sum of squares is taken over). dst_bytes must be
 * at least amn_ggml_row_size(ggml_type, n_elems); dst must not overlap src or imatrix. A NaN or an infinity in src
 * is AMN_ERR_INVALID_ARGUMENT (amn_last_error names its index); dst is then
 * unspecified. Formulas: docs/schemes/ggml-encode.md. */
AMN_API amn_status amn_quantize_ggml(int ggml_type, const float* src, size_t n_elems,
                                     const float* imatrix, void* dst, size_t dst_bytes);

/* Bytes of n_elems elements of `ggml_type` (n_elems a whole number of its
 * blocks; ggml_row_size). bytes must be non-NULL. */
AMN_API amn_status amn_ggml_row_size(int ggml_type, size_t n_elems, size_t* bytes);

/* ---- Kernel enumeration and self-test ------------------------------------ *
 * The library's kernel table: every row kernel with fixed synthetic side
 * inputs (scales, zeros, codebooks), so any input bytes are valid. Kernel i
 * turns n_elems outputs' worth of input bytes into n_elems elements of its
 * output dtype; amn_kernel_run uses the target dispatch picks
 * (amn_active_target), amn_kernel_run_reference the scalar reference
 * (encoders: block_elems inputs per unit, output sized by
 * amn_kernel_output_bytes). An engine tests itself by comparing the two
 * byte for byte. Indexes are stable within one library build only: look
 * kernels up by name. */

/* Number of kernels (i runs over [0, count)). */
AMN_API size_t amn_kernel_count(void);

/* Kernel i's name, "<input>_to_<output>" (e.g. "q4_k_to_bf16"); NULL past the end. */
AMN_API const char* amn_kernel_name(size_t i);

/* Elements per input block: n_elems must be a multiple of it (1 for
 * element-wise kernels). Invalid past the end or with a NULL pointer. */
AMN_API amn_status amn_kernel_block_elems(size_t i, size_t* block_elems);

/* Input bytes kernel i reads for n_elems outputs (a multiple of its block). */
AMN_API amn_status amn_kernel_input_bytes(size_t i, size_t n_elems, size_t* bytes);

/* Kernel i's output element type (AMN_F32, AMN_F16 or AMN_BF16; for an
 * encoder "<in>_to_<scheme>", its code type or the type of its scales). */
AMN_API amn_status amn_kernel_output_dtype(size_t i, amn_dtype* dtype);

/* Output bytes kernel i writes for n_elems inputs (a multiple of its block):
 * n_elems elements of its output dtype, or for an encoder whole units of
 * codes and their scales. */
AMN_API amn_status amn_kernel_output_bytes(size_t i, size_t n_elems, size_t* bytes);

/* Runs kernel i: reads amn_kernel_input_bytes(i, n_elems) bytes of src
 * (src_bytes may be larger), writes n_elems outputs to dst, which holds
 * dst_bytes bytes and must not overlap src. */
AMN_API amn_status amn_kernel_run(size_t i, const void* src, size_t src_bytes, void* dst,
                                  size_t dst_bytes, size_t n_elems);

/* The same, through the scalar reference (ignores AMN_ISA and the cap). */
AMN_API amn_status amn_kernel_run_reference(size_t i, const void* src, size_t src_bytes,
                                            void* dst, size_t dst_bytes, size_t n_elems);

/* The ISA target kernel i's dispatch table runs now ("AVX2"...); NULL past
 * the end. */
AMN_API const char* amn_kernel_target(size_t i);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* AMN_AMN_H_ */
