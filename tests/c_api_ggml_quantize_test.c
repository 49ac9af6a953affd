/* The C ABI's ggml encoders (amn_quantize_ggml, amn_ggml_row_size), plain
 * C99: blocks whose bytes follow by hand from ggml's formulas (scales chosen
 * so d is exactly 1.0, F16 0x3C00; rounding ties placed on purpose), and the
 * argument errors. Byte-for-byte agreement with ggml itself is
 * ggml_encode_test's; with the C++ API, ggml_encode_target_test's. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "c_api_test.h"

/* Q8_0: d = amax / 127 = 1, q = roundf(x): half away from zero. */
static void check_q8_0(void) {
  float x[32] = {0};
  uint8_t out[34 + 4];
  const int8_t want[7] = {127, -127, 64, -64, 0, -3, 3};
  int j, same = 1;
  x[0] = 127.0f; x[1] = -127.0f; x[2] = 63.5f; x[3] = -63.5f; x[4] = 0.49f;
  x[5] = -2.5f; x[6] = 2.5f;
  memset(out, 0xA5, sizeof(out));
  CHECK(amn_quantize_ggml(8, x, 32, NULL, out, 34) == AMN_OK);
  CHECK(out[0] == 0x00 && out[1] == 0x3C);
  for (j = 0; j < 7; ++j) same = same && (int8_t)out[2 + j] == want[j];
  for (j = 7; j < 32; ++j) same = same && out[2 + j] == 0;
  CHECK(same);
  CHECK(all_bytes(out + 34, 4, 0xA5));
}

/* Q4_0: the largest magnitude is -8, so d = max / -8 = 1; code =
 * min(15, trunc(x / d + 8.5)); byte j = code(j) | code(j + 16) << 4. */
static void check_q4_0(void) {
  float x[32] = {0};
  uint8_t out[18];
  x[0] = -8.0f;  /* code 0 */
  x[16] = 7.0f;  /* 15.5 -> 15 */
  x[1] = 0.5f;   /* 9.0 -> 9 */
  x[17] = -0.5f; /* 8.0 -> 8 */
  x[2] = 7.9f;   /* 16.4 -> 16 -> min 15 */
  CHECK(amn_quantize_ggml(2, x, 32, NULL, out, sizeof(out)) == AMN_OK);
  CHECK(out[0] == 0x00 && out[1] == 0x3C);
  CHECK(out[2] == (0 | 15 << 4) && out[3] == (9 | 8 << 4) && out[4] == (15 | 8 << 4));
  CHECK(out[5] == (8 | 8 << 4));
  /* All zeros: d = 0 / -8 = -0.0, stored as F16 0x8000; every code 8. */
  memset(x, 0, sizeof(x));
  CHECK(amn_quantize_ggml(2, x, 32, NULL, out, sizeof(out)) == AMN_OK);
  CHECK(out[0] == 0x00 && out[1] == 0x80 && out[2] == 0x88 && out[17] == 0x88);
}

/* TQ2_0: d = amax = 1, trit = lroundf(x) + 1 in bits 2k of byte m for
 * element m + 32 k (first 128 elements; d after the 64 code bytes). */
static void check_tq2_0(void) {
  float x[256] = {0};
  uint8_t out[66];
  x[0] = 1.0f;    /* 2 */
  x[32] = -1.0f;  /* 0 */
  x[64] = 0.5f;   /* round away: 1 -> 2 */
  x[96] = -0.49f; /* 0 -> 1 */
  CHECK(amn_quantize_ggml(35, x, 256, NULL, out, sizeof(out)) == AMN_OK);
  CHECK(out[0] == (2 | 0 << 2 | 2 << 4 | 1 << 6));
  CHECK(out[1] == 0x55 && out[63] == 0x55);
  CHECK(out[64] == 0x00 && out[65] == 0x3C);
}

void check_quantize_ggml(void) {
  check_q8_0();
  check_q4_0();
  check_tq2_0();
}

void check_quantize_ggml_errors(void) {
  float x[256] = {0};
  float imatrix[256];
  uint8_t out[300];
  size_t bytes = 0;
  int i;
  for (i = 0; i < 256; ++i) imatrix[i] = 1.0f;
  CHECK(amn_ggml_row_size(2, 64, &bytes) == AMN_OK && bytes == 36);
  CHECK(amn_ggml_row_size(34, 512, &bytes) == AMN_OK && bytes == 108);
  CHECK(amn_ggml_row_size(14, 256, &bytes) == AMN_OK && bytes == 210);
  CHECK(amn_ggml_row_size(2, 33, &bytes) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(amn_ggml_row_size(-1, 32, &bytes) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(amn_ggml_row_size(2, 32, NULL) == AMN_ERR_INVALID_ARGUMENT);
  /* A NaN: refused, and the message names its index. */
  x[37] = NAN;
  CHECK(amn_quantize_ggml(8, x, 64, NULL, out, 68) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(strstr(amn_last_error(), "element 37") != NULL);
  x[37] = 0.0f;
  x[5] = -INFINITY;
  CHECK(amn_quantize_ggml(39, x, 64, NULL, out, 34) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(strstr(amn_last_error(), "element 5") != NULL);
  x[5] = 0.0f;
  /* Sizes, pointers, types. */
  CHECK(amn_quantize_ggml(8, x, 48, NULL, out, 68) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(amn_quantize_ggml(8, x, 64, NULL, out, 67) == AMN_ERR_BUFFER_TOO_SMALL);
  CHECK(amn_quantize_ggml(8, NULL, 64, NULL, out, 68) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(amn_quantize_ggml(8, x, 64, NULL, NULL, 68) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(amn_quantize_ggml(8, x, 64, NULL, (uint8_t*)x + 4, 68) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(amn_quantize_ggml(-2, x, 64, NULL, out, 68) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(amn_quantize_ggml(15, x, 256, NULL, out, 292) == AMN_ERR_UNSUPPORTED); /* Q8_K */
  /* IQ2_XXS: ggml encodes it only with an importance matrix. */
  CHECK(amn_quantize_ggml(16, x, 256, NULL, out, 66) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(strstr(amn_last_error(), "IQ2_XXS") != NULL);
  CHECK(amn_quantize_ggml(16, x, 256, imatrix, out, 66) == AMN_OK);
  CHECK(amn_quantize_ggml(14, x, 256, NULL, out, 210) == AMN_OK);             /* Q6_K */
  CHECK(amn_quantize_ggml(14, x, 256, imatrix, out, 210) == AMN_OK); /* with weights */
  /* Q8_0 ignores an importance matrix in ggml: the same bytes as without. */
  {
    uint8_t with[68], without[68];
    for (i = 0; i < 64; ++i) x[i] = (float)(i % 7) - 3.0f;
    CHECK(amn_quantize_ggml(8, x, 64, imatrix, with, sizeof(with)) == AMN_OK);
    CHECK(amn_quantize_ggml(8, x, 64, NULL, without, sizeof(without)) == AMN_OK);
    CHECK(memcmp(with, without, sizeof(with)) == 0);
    CHECK(amn_quantize_ggml(2, x, 256, imatrix, out, 144) == AMN_OK);
    CHECK(amn_quantize_ggml(2, x, 256, imatrix, imatrix, 144) == AMN_ERR_INVALID_ARGUMENT);
  }
  CHECK(amn_quantize_ggml(2, NULL, 0, NULL, NULL, 0) == AMN_OK);
}
