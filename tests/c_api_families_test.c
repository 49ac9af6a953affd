/* The C ABI's family calls (FP8, GPTQ, AWQ, bitsandbytes, compressed-tensors
 * int, NVFP4, MXFP4) from plain C99: one case each with values worked out by
 * hand from the formulas in amn.h (not by amn), row ranges, and argument
 * errors that return the right status and write nothing. */
#include "c_api_test.h"

/* ---- FP8 ------------------------------------------------------------------ */

/* E4M3 codes: 0x38 = 1, 0x40 = 2, 0xB8 = -1, 0x3C = 1.5, 0x00 = 0, 0x7E =
 * 448. E5M2: 0x3C = 1. dst = code * scale. */
void check_fp8(void) {
  const uint8_t codes[6] = {0x38, 0x40, 0xB8, 0x3C, 0x00, 0x7E};
  uint8_t scale_bytes[1 + 2 * 300 * 4];
  amn_fp8_params p;
  float out[1200];
  uint16_t out16[7];
  size_t i;

  /* Per tensor, an F32 scale 0.5 at an odd address. */
  const float want_tensor[6] = {0.5f, 1.0f, -0.5f, 0.75f, 0.0f, 224.0f};
  memset(&p, 0, sizeof(p));
  p.code_type = AMN_E4M3;
  p.rows = 2;
  p.cols = 3;
  p.codes = codes;
  p.codes_bytes = sizeof(codes);
  p.scale_kind = AMN_FP8_SCALE_TENSOR;
  p.scale_type = AMN_F32;
  put_f32(scale_bytes + 1, 0.5f);
  p.scales = scale_bytes + 1;
  p.scales_bytes = 4;
  CHECK(amn_dequantize_fp8(&p, 0, 2, AMN_F32, out, sizeof(out)) == AMN_OK);
  CHECK(same_f32(out, want_tensor, 6));

  /* Per row, BF16 scales {2, -1}: row 1 = {-1.5, -0, -448}. */
  p.scale_kind = AMN_FP8_SCALE_ROW;
  p.scale_type = AMN_BF16;
  put_le16(scale_bytes + 1, 0x4000);
  put_le16(scale_bytes + 3, 0xBF80);
  p.scales_bytes = 4;
  out16[6] = 0xAAAA;
  CHECK(amn_dequantize_fp8(&p, 0, 2, AMN_BF16, out16, 12) == AMN_OK);
  CHECK(out16[0] == 0x4000 && out16[1] == 0x4080 && out16[2] == 0xC000 && out16[3] == 0xBFC0 &&
        out16[4] == 0x8000 && out16[5] == 0xC3E0 && out16[6] == 0xAAAA);
  CHECK(amn_dequantize_fp8(&p, 1, 2, AMN_F16, out16, 6) == AMN_OK);
  CHECK(out16[0] == 0xBE00 && out16[1] == 0x8000 && out16[2] == 0xDF00);

  /* 2x2 blocks over 3x5 (partial edge blocks), F16 scales s[rb][cb] =
   * 3*rb + cb + 1; all codes 1.0 except code (1, 3) = -1. Rows [1, 3). */
  {
    uint8_t block_codes[15];
    const uint16_t f16_of[7] = {0, 0x3C00, 0x4000, 0x4200, 0x4400, 0x4500, 0x4600};
    float want[10];
    size_t r, c;
    memset(block_codes, 0x38, sizeof(block_codes));
    block_codes[1 * 5 + 3] = 0xB8;
    for (i = 0; i < 6; ++i) put_le16(scale_bytes + 1 + 2 * i, f16_of[i + 1]);
    p.rows = 3;
    p.cols = 5;
    p.codes = block_codes;
    p.codes_bytes = sizeof(block_codes);
    p.scale_kind = AMN_FP8_SCALE_BLOCK;
    p.scale_type = AMN_F16;
    p.scales_bytes = 12;
    p.block_rows = 2;
    p.block_cols = 2;
    for (r = 1; r < 3; ++r) {
      for (c = 0; c < 5; ++c) {
        const float s = (float)(3 * (r / 2) + c / 2 + 1);
        want[(r - 1) * 5 + c] = (r == 1 && c == 3) ? -s : s;
      }
    }
    CHECK(amn_dequantize_fp8(&p, 1, 3, AMN_F32, out, 40) == AMN_OK);
    CHECK(same_f32(out, want, 10));
  }

  /* Block rows wider than the library's scale chunk: 2 x 600 E5M2 ones,
   * blocks of 1 x 2, F32 scales s[r][b] = (b % 13) + 1 + 0.5 r. */
  {
    static uint8_t wide_codes[1200];
    static float want[1200];
    memset(wide_codes, 0x3C, sizeof(wide_codes));
    for (i = 0; i < 600; ++i) {
      const size_t r = i / 300, b = i % 300;
      put_f32(scale_bytes + 1 + 4 * i, (float)(b % 13) + 1.0f + 0.5f * (float)r);
    }
    for (i = 0; i < 1200; ++i) {
      const size_t r = i / 600, b = (i % 600) / 2;
      want[i] = (float)(b % 13) + 1.0f + 0.5f * (float)r;
    }
    p.code_type = AMN_E5M2;
    p.rows = 2;
    p.cols = 600;
    p.codes = wide_codes;
    p.codes_bytes = sizeof(wide_codes);
    p.scale_type = AMN_F32;
    p.scales_bytes = 600 * 4;
    p.block_rows = 1;
    p.block_cols = 2;
    CHECK(amn_dequantize_fp8(&p, 0, 2, AMN_F32, out, sizeof(out)) == AMN_OK);
    CHECK(same_f32(out, want, 1200));
    /* The same scales as BF16 (exact: the top half of each F32), row 1. */
    for (i = 0; i < 600; ++i) {
      const size_t r = i / 300, b = i % 300;
      put_le16(scale_bytes + 1 + 2 * i,
               (uint16_t)(f32_bits((float)(b % 13) + 1.0f + 0.5f * (float)r) >> 16));
    }
    p.scale_type = AMN_BF16;
    p.scales_bytes = 600 * 2;
    CHECK(amn_dequantize_fp8(&p, 1, 2, AMN_F32, out, 600 * 4) == AMN_OK);
    CHECK(same_f32(out, want + 600, 600));
  }
}

void check_fp8_errors(void) {
  const uint8_t codes[6] = {0x38, 0x40, 0xB8, 0x3C, 0x00, 0x7E};
  uint8_t scales[8];
  uint8_t shared[32];
  float out[8];
  amn_fp8_params p;
  memset(&p, 0, sizeof(p));
  p.code_type = AMN_E4M3;
  p.rows = 2;
  p.cols = 3;
  p.codes = codes;
  p.codes_bytes = 6;
  p.scale_kind = AMN_FP8_SCALE_ROW;
  p.scale_type = AMN_F32;
  put_f32(scales, 1.0f);
  put_f32(scales + 4, 1.0f);
  p.scales = scales;
  p.scales_bytes = 8;
  memset(out, 0xAA, sizeof(out));
  CHECK(amn_dequantize_fp8(NULL, 0, 2, AMN_F32, out, sizeof(out)) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(amn_dequantize_fp8(&p, 0, 2, AMN_F32, out, 20) == AMN_ERR_BUFFER_TOO_SMALL);
  CHECK(amn_dequantize_fp8(&p, 0, 3, AMN_F32, out, sizeof(out)) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(amn_dequantize_fp8(&p, 2, 1, AMN_F32, out, sizeof(out)) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(amn_dequantize_fp8(&p, 0, 2, AMN_E5M2, out, sizeof(out)) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(amn_dequantize_fp8(&p, 0, 2, AMN_F32, NULL, sizeof(out)) == AMN_ERR_INVALID_ARGUMENT);
  p.scales_bytes = 4; /* per row needs rows scales */
  CHECK(amn_dequantize_fp8(&p, 0, 2, AMN_F32, out, sizeof(out)) == AMN_ERR_INVALID_ARGUMENT);
  p.scales_bytes = 8;
  p.scale_kind = (amn_fp8_scale_kind)7;
  CHECK(amn_dequantize_fp8(&p, 0, 2, AMN_F32, out, sizeof(out)) == AMN_ERR_INVALID_ARGUMENT);
  p.scale_kind = AMN_FP8_SCALE_BLOCK; /* block_rows = 0 */
  CHECK(amn_dequantize_fp8(&p, 0, 2, AMN_F32, out, sizeof(out)) == AMN_ERR_INVALID_ARGUMENT);
  p.scale_kind = AMN_FP8_SCALE_ROW;
  p.code_type = AMN_F16;
  CHECK(amn_dequantize_fp8(&p, 0, 2, AMN_F32, out, sizeof(out)) == AMN_ERR_INVALID_ARGUMENT);
  p.code_type = AMN_E4M3;
  p.codes = NULL;
  CHECK(amn_dequantize_fp8(&p, 0, 2, AMN_F32, out, sizeof(out)) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(all_bytes(out, sizeof(out), 0xAA));
  /* dst overlapping the codes, then the scales. */
  memcpy(shared, codes, 6);
  p.codes = shared;
  CHECK(amn_dequantize_fp8(&p, 0, 2, AMN_BF16, shared + 4, 12) == AMN_ERR_INVALID_ARGUMENT);
  p.codes = codes;
  p.scales = shared + 8;
  memcpy(shared + 8, scales, 8);
  CHECK(amn_dequantize_fp8(&p, 0, 2, AMN_BF16, shared, 12) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(memcmp(shared, codes, 6) == 0 && memcmp(shared + 8, scales, 8) == 0);
  /* An empty range writes nothing and needs no dst. */
  CHECK(amn_dequantize_fp8(&p, 1, 1, AMN_F32, NULL, 0) == AMN_OK);
}

/* ---- GPTQ ----------------------------------------------------------------- */

/* K = N = 8, 4 bits: qweight word j = 0x76543210 gives q(i, j) = i. */
static void gptq_layer(amn_gptq_params* p, uint8_t* qweight, uint8_t* qzeros, uint8_t* scales) {
  size_t j;
  memset(p, 0, sizeof(*p));
  for (j = 0; j < 8; ++j) put_le32(qweight + 4 * j, 0x76543210u);
  p->bits = 4;
  p->in_features = 8;
  p->out_features = 8;
  p->groups = 1;
  p->group_size = 8;
  p->zeros = AMN_GPTQ_ZEROS_V1;
  p->scale_type = AMN_F16;
  p->orientation = AMN_OUT_IN;
  p->qweight = qweight;
  p->qweight_bytes = 32;
  p->qzeros = qzeros;
  p->qzeros_bytes = 4;
  p->scales = scales;
  p->scales_bytes = 16;
}

void check_gptq(void) {
  uint8_t qweight[32], qzeros[8], scales[32], g_idx[32];
  amn_gptq_params p;
  float out[64], want[64];
  uint16_t out16[9];
  size_t i, j;
  gptq_layer(&p, qweight, qzeros, scales);
  put_le32(qzeros, 0x77777777u); /* stored 7: z = 8 (v1) */
  for (j = 0; j < 8; ++j) put_le16(scales + 2 * j, j % 2 ? 0x4000 : 0x3C00); /* s = 1 or 2 */

  /* nn.Linear rows j = 1, 2: w(i, j) = (i - 8) * s_j. */
  for (j = 1; j < 3; ++j) {
    for (i = 0; i < 8; ++i) want[(j - 1) * 8 + i] = ((float)i - 8.0f) * (j % 2 ? 2.0f : 1.0f);
  }
  CHECK(amn_dequantize_gptq(&p, 1, 3, AMN_F32, out, 64) == AMN_OK);
  CHECK(same_f32(out, want, 16));
  /* v2 zeros (z = 7), GEMM-native row i = 7: w(7, j) = 0 * s_j = +0. */
  p.zeros = AMN_GPTQ_ZEROS_V2;
  p.orientation = AMN_IN_OUT;
  for (j = 0; j < 8; ++j) want[j] = 0.0f;
  CHECK(amn_dequantize_gptq(&p, 7, 8, AMN_F32, out, 32) == AMN_OK);
  CHECK(same_f32(out, want, 8));
  /* Row i = 0 in v2: w(0, j) = -7 * s_j. */
  for (j = 0; j < 8; ++j) want[j] = -7.0f * (j % 2 ? 2.0f : 1.0f);
  CHECK(amn_dequantize_gptq(&p, 0, 1, AMN_F32, out, 32) == AMN_OK);
  CHECK(same_f32(out, want, 8));

  /* g_idx = i % 2 over two groups: group 0 z = 8, s = 1; group 1 stored 3
   * (z = 4), s = 0.5. Row j = 0 as BF16: (i - 8) for even i, (i - 4) / 2 for
   * odd i = -8, -1.5, -6, -0.5, -4, 0.5, -2, 1.5. */
  p.zeros = AMN_GPTQ_ZEROS_V1;
  p.orientation = AMN_OUT_IN;
  p.groups = 2;
  p.group_size = 0;
  put_le32(qzeros, 0x77777777u);
  put_le32(qzeros + 4, 0x33333333u);
  for (j = 0; j < 8; ++j) {
    put_le16(scales + 2 * j, 0x3C00);
    put_le16(scales + 16 + 2 * j, 0x3800);
  }
  for (i = 0; i < 8; ++i) put_le32(g_idx + 4 * i, (uint32_t)(i % 2));
  p.qzeros_bytes = 8;
  p.scales_bytes = 32;
  p.g_idx = g_idx;
  p.g_idx_bytes = 32;
  out16[8] = 0xAAAA;
  CHECK(amn_dequantize_gptq(&p, 0, 1, AMN_BF16, out16, 16) == AMN_OK);
  CHECK(out16[0] == 0xC100 && out16[1] == 0xBFC0 && out16[2] == 0xC0C0 && out16[3] == 0xBF00 &&
        out16[4] == 0xC080 && out16[5] == 0x3F00 && out16[6] == 0xC000 && out16[7] == 0x3FC0 &&
        out16[8] == 0xAAAA);
}

void check_gptq_errors(void) {
  uint8_t qweight[32], qzeros[4], scales[16], g_idx[32];
  amn_gptq_params p;
  float out[64];
  size_t i;
  gptq_layer(&p, qweight, qzeros, scales);
  put_le32(qzeros, 0x77777777u);
  memset(scales, 0, sizeof(scales));
  memset(out, 0xAA, sizeof(out));
  CHECK(amn_dequantize_gptq(NULL, 0, 8, AMN_F32, out, 256) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(amn_dequantize_gptq(&p, 0, 8, AMN_F32, out, 255) == AMN_ERR_BUFFER_TOO_SMALL);
  CHECK(amn_dequantize_gptq(&p, 0, 9, AMN_F32, out, 256) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(amn_dequantize_gptq(&p, 0, 8, (amn_dtype)42, out, 256) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(amn_dequantize_gptq(&p, 0, 8, AMN_F32, (void*)(qweight + 4), 256) ==
        AMN_ERR_INVALID_ARGUMENT);
  p.bits = 5;
  CHECK(amn_dequantize_gptq(&p, 0, 8, AMN_F32, out, 256) == AMN_ERR_INVALID_ARGUMENT);
  p.bits = 4;
  p.qzeros_bytes = 8;
  CHECK(amn_dequantize_gptq(&p, 0, 8, AMN_F32, out, 256) == AMN_ERR_INVALID_ARGUMENT);
  p.qzeros_bytes = 4;
  p.scales = NULL;
  CHECK(amn_dequantize_gptq(&p, 0, 8, AMN_F32, out, 256) == AMN_ERR_INVALID_ARGUMENT);
  p.scales = scales;
  p.orientation = (amn_orientation)2;
  CHECK(amn_dequantize_gptq(&p, 0, 8, AMN_F32, out, 256) == AMN_ERR_INVALID_ARGUMENT);
  p.orientation = AMN_OUT_IN;
  for (i = 0; i < 8; ++i) put_le32(g_idx + 4 * i, i == 5 ? 1u : 0u); /* groups = 1 */
  p.g_idx = g_idx;
  p.g_idx_bytes = 32;
  CHECK(amn_dequantize_gptq(&p, 0, 8, AMN_F32, out, 256) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(all_bytes(out, sizeof(out), 0xAA));
}

/* ---- AWQ ------------------------------------------------------------------ */

/* K = 2, N = 8, one group. Column j reads nibble REV[j] = {0,4,1,5,2,6,3,7}
 * of its word; row 0's word 0x76543210 gives q = REV[j], row 1's 0xFFFFFFFF
 * q = 15; zeros 1, scales 0.5: w(i, j) = (q - 1) * 0.5. */
void check_awq(void) {
  static const float rev[8] = {0, 4, 1, 5, 2, 6, 3, 7};
  uint8_t qweight[8], qzeros[4], scales[16];
  amn_awq_params p;
  float out[16], want[16];
  uint16_t out16[3];
  size_t j;
  put_le32(qweight, 0x76543210u);
  put_le32(qweight + 4, 0xFFFFFFFFu);
  put_le32(qzeros, 0x11111111u);
  for (j = 0; j < 8; ++j) put_le16(scales + 2 * j, 0x3800);
  memset(&p, 0, sizeof(p));
  p.in_features = 2;
  p.out_features = 8;
  p.group_size = 2;
  p.scale_type = AMN_F16;
  p.orientation = AMN_IN_OUT;
  p.qweight = qweight;
  p.qweight_bytes = sizeof(qweight);
  p.qzeros = qzeros;
  p.qzeros_bytes = sizeof(qzeros);
  p.scales = scales;
  p.scales_bytes = sizeof(scales);
  for (j = 0; j < 8; ++j) {
    want[j] = (rev[j] - 1.0f) * 0.5f;
    want[8 + j] = 7.0f;
  }
  CHECK(amn_dequantize_awq(&p, 0, 2, AMN_F32, out, sizeof(out)) == AMN_OK);
  CHECK(same_f32(out, want, 16));
  /* nn.Linear row j = 1: {w(0, 1), w(1, 1)} = {1.5, 7}. */
  p.orientation = AMN_OUT_IN;
  out16[2] = 0xAAAA;
  CHECK(amn_dequantize_awq(&p, 1, 2, AMN_BF16, out16, 4) == AMN_OK);
  CHECK(out16[0] == 0x3FC0 && out16[1] == 0x40E0 && out16[2] == 0xAAAA);
  /* Errors: N not a multiple of 8, short dst, overlap; nothing written. */
  memset(out, 0xAA, sizeof(out));
  p.out_features = 4;
  CHECK(amn_dequantize_awq(&p, 0, 2, AMN_F32, out, sizeof(out)) == AMN_ERR_INVALID_ARGUMENT);
  p.out_features = 8;
  CHECK(amn_dequantize_awq(&p, 0, 8, AMN_F32, out, 63) == AMN_ERR_BUFFER_TOO_SMALL);
  CHECK(amn_dequantize_awq(&p, 0, 1, AMN_F16, scales + 2, 4) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(amn_dequantize_awq(NULL, 0, 1, AMN_F16, out, 4) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(all_bytes(out, sizeof(out), 0xAA) && get_le32(scales) == 0x38003800u);
}

/* ---- bitsandbytes --------------------------------------------------------- */

/* quant_map cb[k] = k - 8 (cb[8] = +0.0 reads as -0.0); N = 4, block 2;
 * packed {0x9A, 0x8F}: nibbles 9, 10, 8, 15 (high nibble first). */
static void bnb4_tensor(amn_bnb4_params* p, uint8_t* packed, uint8_t* quant_map) {
  size_t k;
  memset(p, 0, sizeof(*p));
  packed[0] = 0x9A;
  packed[1] = 0x8F;
  for (k = 0; k < 16; ++k) put_f32(quant_map + 4 * k, (float)k - 8.0f);
  p->n_elems = 4;
  p->block_size = 2;
  p->packed = packed;
  p->packed_bytes = 2;
  p->quant_map = quant_map;
  p->quant_map_bytes = 64;
}

void check_bnb4(void) {
  uint8_t packed[2], quant_map[64], absmax[8], absmax_u8[2], nested[4], nested_map[1024];
  amn_bnb4_params p;
  uint16_t out16[5];
  float out[4];
  const float want_dq[4] = {2.25f, 4.5f, -0.0f, 29.75f};
  bnb4_tensor(&p, packed, quant_map);
  /* Plain: absmax {2, 0.5}: {1*2, 2*2, -0*0.5, 7*0.5} = {2, 4, -0, 3.5}. */
  put_f32(absmax, 2.0f);
  put_f32(absmax + 4, 0.5f);
  p.absmax = absmax;
  p.absmax_bytes = 8;
  out16[4] = 0xAAAA;
  CHECK(amn_dequantize_bnb4(&p, 0, 4, AMN_BF16, out16, 8) == AMN_OK);
  CHECK(out16[0] == 0x4000 && out16[1] == 0x4080 && out16[2] == 0x8000 && out16[3] == 0x4060 &&
        out16[4] == 0xAAAA);
  CHECK(amn_dequantize_bnb4(&p, 1, 4, AMN_BF16, out16, 6) == AMN_OK);
  CHECK(out16[0] == 0x4080 && out16[1] == 0x8000 && out16[2] == 0x4060);
  /* Double quant: absmax = nested_map[u8] * nested_absmax[0] + offset with
   * nested_map[1] = 0.5, [2] = 1, nested_absmax 4, offset 0.25 -> 2.25, 4.25. */
  memset(nested_map, 0, sizeof(nested_map));
  put_f32(nested_map + 4, 0.5f);
  put_f32(nested_map + 8, 1.0f);
  put_f32(nested, 4.0f);
  absmax_u8[0] = 1;
  absmax_u8[1] = 2;
  p.absmax = absmax_u8;
  p.absmax_bytes = 2;
  p.double_quant = 1;
  p.nested_absmax = nested;
  p.nested_absmax_bytes = 4;
  p.nested_quant_map = nested_map;
  p.nested_quant_map_bytes = sizeof(nested_map);
  p.nested_block_size = 256;
  p.nested_offset = 0.25f;
  CHECK(amn_dequantize_bnb4(&p, 0, 4, AMN_F32, out, sizeof(out)) == AMN_OK);
  CHECK(same_f32(out, want_dq, 4));
  /* Errors, nothing written. */
  memset(out, 0xAA, sizeof(out));
  CHECK(amn_dequantize_bnb4(&p, 0, 4, AMN_F32, out, 15) == AMN_ERR_BUFFER_TOO_SMALL);
  CHECK(amn_dequantize_bnb4(&p, 3, 5, AMN_F32, out, 16) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(amn_dequantize_bnb4(&p, 0, 4, AMN_F32, nested_map + 8, 16) == AMN_ERR_INVALID_ARGUMENT);
  p.nested_absmax = NULL;
  CHECK(amn_dequantize_bnb4(&p, 0, 4, AMN_F32, out, 16) == AMN_ERR_INVALID_ARGUMENT);
  p.double_quant = 0; /* plain absmax must then be f32 [2] = 8 bytes */
  CHECK(amn_dequantize_bnb4(&p, 0, 4, AMN_F32, out, 16) == AMN_ERR_INVALID_ARGUMENT);
  p.block_size = 3;
  CHECK(amn_dequantize_bnb4(&p, 0, 4, AMN_F32, out, 16) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(amn_dequantize_bnb4(NULL, 0, 4, AMN_F32, out, 16) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(all_bytes(out, sizeof(out), 0xAA) && get_le32(nested_map + 8) == f32_bits(1.0f));
}

/* LLM.int8: dst = (f32(w) * SCB[r]) * f32(7.874015718698502e-3). */
void check_bnb_int8(void) {
  const int8_t weight[4] = {127, -127, 64, 0};
  uint8_t scb[8];
  amn_bnb_int8_params p;
  float out[4], want[4];
  const float inv127 = (float)7.874015718698502e-3; /* f32 of the literal: 0x3C010204 */
  volatile float product;
  size_t i;
  CHECK(f32_bits(inv127) == 0x3C010204u);
  put_f32(scb, 127.0f);
  put_f32(scb + 4, 2.0f);
  for (i = 0; i < 4; ++i) {
    product = (float)weight[i] * (i < 2 ? 127.0f : 2.0f);
    want[i] = product * inv127;
  }
  memset(&p, 0, sizeof(p));
  p.rows = 2;
  p.cols = 2;
  p.weight = weight;
  p.weight_bytes = 4;
  p.scb = scb;
  p.scb_bytes = 8;
  CHECK(amn_dequantize_bnb_int8(&p, 0, 2, AMN_F32, out, sizeof(out)) == AMN_OK);
  CHECK(same_f32(out, want, 4));
  CHECK(amn_dequantize_bnb_int8(&p, 1, 2, AMN_F32, out, 8) == AMN_OK);
  CHECK(same_f32(out, want + 2, 2));
  memset(out, 0xAA, sizeof(out));
  CHECK(amn_dequantize_bnb_int8(&p, 0, 2, AMN_F32, out, 15) == AMN_ERR_BUFFER_TOO_SMALL);
  p.scb_bytes = 4;
  CHECK(amn_dequantize_bnb_int8(&p, 0, 2, AMN_F32, out, 16) == AMN_ERR_INVALID_ARGUMENT);
  p.scb_bytes = 8;
  CHECK(amn_dequantize_bnb_int8(&p, 0, 2, AMN_F32, (void*)(scb + 4), 16) ==
        AMN_ERR_INVALID_ARGUMENT);
  CHECK(amn_dequantize_bnb_int8(NULL, 0, 2, AMN_F32, out, 16) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(all_bytes(out, sizeof(out), 0xAA));
}

/* ---- compressed-tensors pack-quantized ------------------------------------ */

/* int4, 2 x 8, one group per row (channel), BF16 scales {1, 2}, packed zero
 * points (row r at bits 4r): uz = 9, 10. Row 0's word 0x76543210 stores
 * u = k, row 1's 0xFEDCBA98 u = 8 + k: v = (u - uz) * s. */
void check_packed_int(void) {
  uint8_t packed[8], scales[4], zeros[4];
  amn_packed_int_params p;
  float out[16], want[16];
  size_t k;
  put_le32(packed, 0x76543210u);
  put_le32(packed + 4, 0xFEDCBA98u);
  put_le16(scales, 0x3F80);
  put_le16(scales + 2, 0x4000);
  put_le32(zeros, 0xA9u);
  memset(&p, 0, sizeof(p));
  p.rows = 2;
  p.cols = 8;
  p.num_bits = 4;
  p.group_size = 8;
  p.scale_type = AMN_BF16;
  p.weight_packed = packed;
  p.weight_packed_bytes = 8;
  p.weight_scale = scales;
  p.weight_scale_bytes = 4;
  p.weight_zero_point = zeros;
  p.weight_zero_point_bytes = 4;
  for (k = 0; k < 8; ++k) {
    want[k] = (float)k - 9.0f;
    want[8 + k] = ((float)k - 2.0f) * 2.0f;
  }
  CHECK(amn_dequantize_packed_int(&p, 0, 2, AMN_F32, out, sizeof(out)) == AMN_OK);
  CHECK(same_f32(out, want, 16));
  /* Symmetric: u - 8. Row 1 = k * 2. */
  p.weight_zero_point = NULL;
  p.weight_zero_point_bytes = 0;
  for (k = 0; k < 8; ++k) want[k] = (float)k * 2.0f;
  CHECK(amn_dequantize_packed_int(&p, 1, 2, AMN_F32, out, 32) == AMN_OK);
  CHECK(same_f32(out, want, 8));
  memset(out, 0xAA, sizeof(out));
  p.group_size = 3;
  CHECK(amn_dequantize_packed_int(&p, 0, 2, AMN_F32, out, 64) == AMN_ERR_INVALID_ARGUMENT);
  p.group_size = 8;
  p.tensor_scale = 1; /* then weight_scale must be one value */
  CHECK(amn_dequantize_packed_int(&p, 0, 2, AMN_F32, out, 64) == AMN_ERR_INVALID_ARGUMENT);
  p.tensor_scale = 0;
  CHECK(amn_dequantize_packed_int(&p, 0, 2, AMN_F32, out, 60) == AMN_ERR_BUFFER_TOO_SMALL);
  CHECK(amn_dequantize_packed_int(&p, 0, 1, AMN_BF16, (void*)packed, 16) ==
        AMN_ERR_INVALID_ARGUMENT);
  CHECK(amn_dequantize_packed_int(NULL, 0, 1, AMN_F32, out, 64) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(all_bytes(out, sizeof(out), 0xAA) && get_le32(packed) == 0x76543210u);
}

/* ---- FP4 ------------------------------------------------------------------ */

/* E2M1: 0, 0.5, 1, 1.5, 2, 3, 4, 6, then the negatives (code 8 = -0). */
static const float kE2m1[16] = {0.0f,  0.5f,  1.0f,  1.5f,  2.0f,  3.0f,  4.0f,  6.0f,
                                -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};
/* Bytes whose low nibble comes first: element e holds code e % 16. */
static const uint8_t kCodes0To15[8] = {0x10, 0x32, 0x54, 0x76, 0x98, 0xBA, 0xDC, 0xFE};

void check_nvfp4(void) {
  uint8_t scales[1] = {0x38}; /* E4M3 1.0 */
  uint8_t global[4];
  amn_nvfp4_params p;
  float out[16], want[16];
  size_t e;
  put_f32(global, 0.5f); /* the scale divides: 1.0 / 0.5 = 2 */
  memset(&p, 0, sizeof(p));
  p.rows = 1;
  p.cols = 16;
  p.packed = kCodes0To15;
  p.packed_bytes = 8;
  p.scales = scales;
  p.scales_bytes = 1;
  p.global_scale = global;
  p.global_scale_bytes = 4;
  for (e = 0; e < 16; ++e) want[e] = kE2m1[e] * 2.0f;
  CHECK(amn_dequantize_nvfp4(&p, 0, 1, AMN_F32, out, sizeof(out)) == AMN_OK);
  CHECK(same_f32(out, want, 16));
  memset(out, 0xAA, sizeof(out));
  p.cols = 8;
  CHECK(amn_dequantize_nvfp4(&p, 0, 1, AMN_F32, out, 64) == AMN_ERR_INVALID_ARGUMENT);
  p.cols = 16;
  p.global_scale_bytes = 2;
  CHECK(amn_dequantize_nvfp4(&p, 0, 1, AMN_F32, out, 64) == AMN_ERR_INVALID_ARGUMENT);
  p.global_scale_bytes = 4;
  CHECK(amn_dequantize_nvfp4(&p, 0, 1, AMN_F32, out, 63) == AMN_ERR_BUFFER_TOO_SMALL);
  CHECK(amn_dequantize_nvfp4(&p, 0, 1, AMN_BF16, global, 32) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(amn_dequantize_nvfp4(NULL, 0, 1, AMN_F32, out, 64) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(all_bytes(out, sizeof(out), 0xAA) && get_le32(global) == f32_bits(0.5f));
}

/* One expert, R = 2 rows, G = 1 group of 32: both rows hold codes 0..15
 * twice; E8M0 scales 127 (x1) and 128 (x2). */
void check_mxfp4(void) {
  uint8_t blocks[32], scales[2] = {127, 128};
  amn_mxfp4_params p;
  float out[64], want[64];
  size_t r, c;
  memcpy(blocks, kCodes0To15, 8);
  memcpy(blocks + 8, kCodes0To15, 8);
  memcpy(blocks + 16, blocks, 16);
  memset(&p, 0, sizeof(p));
  p.experts = 1;
  p.rows = 2;
  p.groups = 1;
  p.blocks = blocks;
  p.blocks_bytes = 32;
  p.scales = scales;
  p.scales_bytes = 2;
  p.transpose = 0;
  for (r = 0; r < 2; ++r) {
    for (c = 0; c < 32; ++c) want[r * 32 + c] = kE2m1[c % 16] * (r == 0 ? 1.0f : 2.0f);
  }
  CHECK(amn_dequantize_mxfp4(&p, 0, 2, AMN_F32, out, sizeof(out)) == AMN_OK);
  CHECK(same_f32(out, want, 64));
  /* Transposed [G*32][R]: rows c = 3, 4 hold {value[0][c], value[1][c]}. */
  p.transpose = 1;
  for (c = 3; c < 5; ++c) {
    for (r = 0; r < 2; ++r) want[(c - 3) * 2 + r] = kE2m1[c] * (r == 0 ? 1.0f : 2.0f);
  }
  CHECK(amn_dequantize_mxfp4(&p, 3, 5, AMN_F32, out, 16) == AMN_OK);
  CHECK(same_f32(out, want, 4));
  memset(out, 0xAA, sizeof(out));
  CHECK(amn_dequantize_mxfp4(&p, 0, 33, AMN_F32, out, sizeof(out)) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(amn_dequantize_mxfp4(&p, 0, 32, AMN_F32, out, sizeof(out) - 1) == AMN_ERR_BUFFER_TOO_SMALL);
  p.scales_bytes = 1;
  CHECK(amn_dequantize_mxfp4(&p, 0, 1, AMN_F32, out, 8) == AMN_ERR_INVALID_ARGUMENT);
  p.scales_bytes = 2;
  CHECK(amn_dequantize_mxfp4(&p, 0, 1, AMN_BF16, blocks + 30, 4) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(amn_dequantize_mxfp4(NULL, 0, 1, AMN_F32, out, 8) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(all_bytes(out, sizeof(out), 0xAA) && blocks[30] == kCodes0To15[6]);
}
