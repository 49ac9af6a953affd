/* Shared by the C ABI test's files (c_api_test.c, c_api_families_test.c):
 * the check counters and macro, little-endian byte helpers, and the family
 * checks. Plain C99. */
#ifndef AMN_TESTS_C_API_TEST_H_
#define AMN_TESTS_C_API_TEST_H_

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "amn/amn.h"

extern int g_passed;
extern int g_failed;

/* Counts a check; a failure prints the condition, the active target and
 * the library's last error. */
#define CHECK(cond)                                                                \
  do {                                                                             \
    if (cond) {                                                                    \
      ++g_passed;                                                                  \
    } else {                                                                       \
      ++g_failed;                                                                  \
      fprintf(stderr, "%s:%d: CHECK(%s) failed [target %s] %s\n", __FILE__, __LINE__, \
              #cond, amn_active_target(), amn_last_error());                       \
    }                                                                              \
  } while (0)

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static inline void put_le16(uint8_t* p, uint16_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
}

static inline void put_le32(uint8_t* p, uint32_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
  p[2] = (uint8_t)(v >> 16);
  p[3] = (uint8_t)(v >> 24);
}

static inline void put_f32(uint8_t* p, float f) {
  uint32_t bits;
  memcpy(&bits, &f, sizeof(bits));
  put_le32(p, bits);
}

static inline uint32_t get_le32(const uint8_t* p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint32_t f32_bits(float f) {
  uint32_t bits;
  memcpy(&bits, &f, sizeof(bits));
  return bits;
}

/* Whether n floats equal the expected ones bit for bit (so -0 != +0). */
static inline int same_f32(const float* got, const float* want, size_t n) {
  size_t i;
  for (i = 0; i < n; ++i) {
    if (f32_bits(got[i]) != f32_bits(want[i])) {
      fprintf(stderr, "  element %zu: got %g (0x%08" PRIx32 "), want %g (0x%08" PRIx32 ")\n", i,
              (double)got[i], f32_bits(got[i]), (double)want[i], f32_bits(want[i]));
      return 0;
    }
  }
  return 1;
}

static inline int all_bytes(const void* p, size_t n, uint8_t value) {
  const uint8_t* b = (const uint8_t*)p;
  size_t i;
  for (i = 0; i < n; ++i) {
    if (b[i] != value) return 0;
  }
  return 1;
}

/* Family checks (c_api_families_test.c): values worked out by hand from the
 * formulas in amn.h, and argument errors that must write nothing. */
void check_fp8(void);
void check_fp8_errors(void);
void check_gptq(void);
void check_gptq_errors(void);
void check_awq(void);
void check_bnb4(void);
void check_bnb_int8(void);
void check_packed_int(void);
void check_nvfp4(void);
void check_mxfp4(void);

/* Encoder checks (c_api_quantize_test.c). */
void check_quantize(void);
void check_quantize_errors(void);

/* ggml encoder checks (c_api_ggml_quantize_test.c). */
void check_quantize_ggml(void);
void check_quantize_ggml_errors(void);

#endif /* AMN_TESTS_C_API_TEST_H_ */
