/* The C ABI's encoders (amn_quantize_fp8, amn_quantize_bnb4,
 * amn_quantize_bnb_nested, amn_quantize_bnb_int8, the codebooks) from plain
 * C99: values worked out by hand from the formulas in amn.h, the Lethe sums
 * of a small case, and argument errors with the right status. */
#include <math.h>

#include "c_api_test.h"

/* FP8 E4M3 per row: row 0 {448, -224, 1, 0} -> amax 448, scale 1: codes
 * 0x7E, 0xF6 (-224 = -1.75 * 2^7), 0x38, 0x00; row 1 all zero -> scale 1,
 * codes 0. Per tensor E5M2 of {57344, 1}: scale 1, codes 0x7B and 0x3C. */
void check_quantize_fp8(void) {
  const float x[8] = {448.0f, -224.0f, 1.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
  const uint8_t want[8] = {0x7E, 0xF6, 0x38, 0x00, 0, 0, 0, 0};
  const float y[2] = {57344.0f, 1.0f};
  amn_quantize_fp8_params p;
  float scales[2];
  uint8_t codes[8];
  amn_quant_error e;
  memset(&p, 0, sizeof(p));
  p.src.type = AMN_F32;
  p.src.rows = 2;
  p.src.cols = 4;
  p.src.data = x;
  p.src.data_bytes = sizeof(x);
  p.group_rows = 1;
  p.group_cols = 4;
  p.format = AMN_E4M3;
  CHECK(amn_quantize_fp8(&p, scales, 2, codes, sizeof(codes), &e) == AMN_OK);
  CHECK(scales[0] == 1.0f && scales[1] == 1.0f);
  CHECK(memcmp(codes, want, 8) == 0);
  CHECK(e.elements == 8 && e.sum_abs == 0.0 && e.max_abs == 0.0);
  CHECK(e.sum_sq_ref == 448.0 * 448 + 224.0 * 224 + 1);

  p.src.rows = 1;
  p.src.cols = 2;
  p.src.data = y;
  p.src.data_bytes = sizeof(y);
  p.group_cols = 2;
  p.format = AMN_E5M2;
  CHECK(amn_quantize_fp8(&p, scales, 1, codes, 2, NULL) == AMN_OK);
  CHECK(scales[0] == 1.0f && codes[0] == 0x7B && codes[1] == 0x3C);

  /* Given scale 2: 57344 / 2 = 28672 = 1.75 * 2^14 -> 0x77; 1 / 2 -> 0x38. */
  p.scales_given = 1;
  scales[0] = 2.0f;
  CHECK(amn_quantize_fp8(&p, scales, 1, codes, 2, NULL) == AMN_OK);
  CHECK(codes[0] == 0x77 && codes[1] == 0x38);
}

/* NF4, one block of 4 with absmax 2: x / 2 = {1, -1, 0, 0.25} -> codes 15,
 * 0, 7, 10 -> bytes 0xF0, 0x7A. FP4: 3, 11, 0, 7 -> 0x3B, 0x07. */
void check_quantize_bnb4(void) {
  const uint16_t x[4] = {0x4000, 0xC000, 0x0000, 0x3F00}; /* BF16 2, -2, 0, 0.5 */
  amn_quantize_bnb4_params p;
  float absmax[1];
  uint8_t packed[2];
  float cb[16];
  amn_quant_error e;
  memset(&p, 0, sizeof(p));
  p.src.type = AMN_BF16;
  p.src.rows = 1;
  p.src.cols = 4;
  p.src.data = x;
  p.src.data_bytes = sizeof(x);
  p.block_size = 4;
  p.type = AMN_BNB_NF4;
  CHECK(amn_quantize_bnb4(&p, absmax, 1, packed, 2, &e) == AMN_OK);
  CHECK(absmax[0] == 2.0f && packed[0] == 0xF0 && packed[1] == 0x7A);
  /* 0.5 decodes to 0.24611230194568634 * 2. */
  CHECK(amn_bnb4_codebook(AMN_BNB_NF4, cb, 16) == AMN_OK);
  CHECK(e.elements == 4 && e.max_abs == (double)0.5f - (double)(cb[10] * 2.0f));
  p.type = AMN_BNB_FP4;
  CHECK(amn_quantize_bnb4(&p, absmax, 1, packed, 2, NULL) == AMN_OK);
  CHECK(packed[0] == 0x3B && packed[1] == 0x07);
  CHECK(amn_bnb4_codebook(AMN_BNB_FP4, cb, 16) == AMN_OK);
  CHECK(cb[3] == 1.0f && cb[11] == -1.0f);
}

/* Nested: absmax {1, 3} -> offset 2, v = {-1, 1}, nested_absmax 1, codes of
 * -1 and +1 in the dynamic map: the map's first entry is -0.99296875 and
 * its last 1.0, so -1 takes code 0 and +1 code 255. */
void check_quantize_bnb_nested(void) {
  const float absmax[2] = {1.0f, 3.0f};
  uint8_t codes[2];
  float nested[1], offset = 0.0f, map[256];
  CHECK(amn_quantize_bnb_nested(absmax, 2, 256, codes, 2, nested, 1, &offset) == AMN_OK);
  CHECK(offset == 2.0f && nested[0] == 1.0f && codes[0] == 0 && codes[1] == 255);
  CHECK(amn_bnb_dynamic_map(map, 256) == AMN_OK);
  CHECK(map[127] == 0.0f && map[255] == 1.0f && f32_bits(map[0]) == 0xBF7E3333u);
}

/* INT8: row {2, -1, 0.5} -> SCB 2, x * 63.5 = {127, -63.5, 31.75} -> 127,
 * -64 (half to even), 32. */
void check_quantize_bnb_int8(void) {
  const float x[3] = {2.0f, -1.0f, 0.5f};
  amn_quantize_bnb_int8_params p;
  float scb[1];
  int8_t codes[3];
  memset(&p, 0, sizeof(p));
  p.src.type = AMN_F32;
  p.src.rows = 1;
  p.src.cols = 3;
  p.src.data = x;
  p.src.data_bytes = sizeof(x);
  CHECK(amn_quantize_bnb_int8(&p, scb, 1, codes, 3, NULL) == AMN_OK);
  CHECK(scb[0] == 2.0f && codes[0] == 127 && codes[1] == -64 && codes[2] == 32);
}

void check_quantize(void) {
  check_quantize_fp8();
  check_quantize_bnb4();
  check_quantize_bnb_nested();
  check_quantize_bnb_int8();
}

void check_quantize_errors(void) {
  float x[4] = {1.0f, 2.0f, 3.0f, 4.0f};
  amn_quantize_bnb4_params p;
  amn_quantize_bnb_int8_params q;
  amn_quantize_fp8_params f;
  float absmax[2], scales[1];
  uint8_t packed[2], codes[4];
  int8_t i8[4];
  memset(&p, 0, sizeof(p));
  p.src.type = AMN_F32;
  p.src.rows = 1;
  p.src.cols = 4;
  p.src.data = x;
  p.src.data_bytes = sizeof(x);
  p.block_size = 4;
  CHECK(amn_quantize_bnb4(NULL, absmax, 1, packed, 2, NULL) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(amn_quantize_bnb4(&p, absmax, 1, packed, 1, NULL) == AMN_ERR_BUFFER_TOO_SMALL);
  CHECK(amn_quantize_bnb4(&p, absmax, 0, packed, 2, NULL) == AMN_ERR_BUFFER_TOO_SMALL);
  p.block_size = 3;
  CHECK(amn_quantize_bnb4(&p, absmax, 2, packed, 2, NULL) == AMN_ERR_INVALID_ARGUMENT);
  p.block_size = 4;
  p.src.data_bytes = 15;
  CHECK(amn_quantize_bnb4(&p, absmax, 1, packed, 2, NULL) == AMN_ERR_INVALID_ARGUMENT);
  p.src.data_bytes = sizeof(x);
  /* An output on top of the input. */
  CHECK(amn_quantize_bnb4(&p, absmax, 1, (uint8_t*)x, 2, NULL) == AMN_ERR_INVALID_ARGUMENT);
  /* NaN and Inf are refused, naming the element. */
  x[2] = NAN;
  CHECK(amn_quantize_bnb4(&p, absmax, 1, packed, 2, NULL) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(strstr(amn_last_error(), "element 2") != NULL);
  memset(&q, 0, sizeof(q));
  q.src = p.src;
  x[2] = INFINITY;
  CHECK(amn_quantize_bnb_int8(&q, absmax, 1, i8, 4, NULL) == AMN_ERR_INVALID_ARGUMENT);
  memset(&f, 0, sizeof(f));
  f.src = p.src;
  f.group_rows = 1;
  f.group_cols = 4;
  f.format = AMN_E4M3;
  CHECK(amn_quantize_fp8(&f, scales, 1, codes, 4, NULL) == AMN_ERR_INVALID_ARGUMENT);
  x[2] = 3.0f;
  f.format = AMN_F32;
  CHECK(amn_quantize_fp8(&f, scales, 1, codes, 4, NULL) == AMN_ERR_INVALID_ARGUMENT);
  f.format = AMN_E4M3;
  f.scales_given = 1;
  scales[0] = 0.0f;
  CHECK(amn_quantize_fp8(&f, scales, 1, codes, 4, NULL) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(amn_bnb4_codebook((amn_bnb4_type)7, absmax, 16) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(amn_bnb_dynamic_map(absmax, 2) == AMN_ERR_BUFFER_TOO_SMALL);
}
