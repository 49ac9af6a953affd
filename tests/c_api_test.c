/* The C ABI from plain C: it compiles as C11, links, converts known values,
 * and reports every argument error with the right status and no writes. */
#include <stdio.h>
#include <string.h>

#include "amn/amn.h"

static int g_passed = 0;
static int g_failed = 0;

#define CHECK(cond)                                               \
  do {                                                            \
    if (cond) {                                                   \
      ++g_passed;                                                 \
    } else {                                                      \
      ++g_failed;                                                 \
      fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
    }                                                             \
  } while (0)

int main(void) {
  CHECK(amn_version() != NULL && strchr(amn_version(), '.') != NULL);
  CHECK(amn_active_target() != NULL && strlen(amn_active_target()) > 0);
  CHECK(strcmp(amn_status_string(AMN_ERR_BUFFER_TOO_SMALL), "buffer too small") == 0);

  /* Known values: 1.0, -2.0, 65520 (F16 overflow), a BF16 tie to even. */
  const float src[4] = {1.0f, -2.0f, 65520.0f, 1.00390625f};
  uint16_t bf16[4] = {0};
  uint16_t f16[4] = {0};
  CHECK(amn_f32_to_bf16(src, 4, bf16, 4) == AMN_OK);
  CHECK(bf16[0] == 0x3F80 && bf16[1] == 0xC000 && bf16[2] == 0x4780 && bf16[3] == 0x3F80);
  CHECK(amn_f32_to_f16(src, 4, f16, 4) == AMN_OK);
  CHECK(f16[0] == 0x3C00 && f16[1] == 0xC000 && f16[2] == 0x7C00 && f16[3] == 0x3C04);

  float back[4] = {0};
  CHECK(amn_f16_to_f32(f16, 2, back, 4) == AMN_OK);
  CHECK(back[0] == 1.0f && back[1] == -2.0f && back[2] == 0.0f);
  const uint8_t e4m3[3] = {0x7E, 0x01, 0xFF}; /* 448, 2^-9, -NaN */
  uint16_t out16[3] = {0};
  CHECK(amn_e4m3_to_bf16(e4m3, 3, out16, 3) == AMN_OK);
  CHECK(out16[0] == 0x43E0 && out16[1] == 0x3B00 && out16[2] == 0xFFF0);
  const uint8_t e5m2[2] = {0x7B, 0xFC}; /* 57344, -Inf */
  CHECK(amn_e5m2_to_f16(e5m2, 2, out16, 3) == AMN_OK);
  CHECK(out16[0] == 0x7B00 && out16[1] == 0xFC00);

  /* Argument errors: nothing is written. */
  uint16_t guard[2] = {0xAAAA, 0xAAAA};
  CHECK(amn_f32_to_bf16(src, 3, guard, 2) == AMN_ERR_BUFFER_TOO_SMALL);
  CHECK(guard[0] == 0xAAAA && guard[1] == 0xAAAA);
  CHECK(amn_f32_to_bf16(NULL, 1, guard, 2) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(amn_f32_to_bf16(src, 1, NULL, 1) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(amn_f32_to_bf16(NULL, 0, NULL, 0) == AMN_OK);
  CHECK(amn_f16_to_bf16(f16, 4, f16 + 1, 4) == AMN_ERR_INVALID_ARGUMENT); /* overlap */
  CHECK(amn_bf16_to_f32(bf16, (size_t)-1, back, (size_t)-1) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(guard[0] == 0xAAAA);

  CHECK(amn_set_isa_cap("no-such-target") == AMN_ERR_INVALID_ARGUMENT);
  CHECK(amn_set_isa_cap("baseline") == AMN_OK);
  CHECK(amn_f32_to_bf16(src, 4, bf16, 4) == AMN_OK && bf16[3] == 0x3F80);
  CHECK(amn_set_isa_cap(NULL) == AMN_OK);

  printf("c_api_test: %d passed, %d failed\n", g_passed, g_failed);
  return g_failed == 0 ? 0 : 1;
}
