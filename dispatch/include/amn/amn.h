/* anamnesis C ABI: single kernels for engines that embed them, without the
 * parsers or the CLI. Plain C (C99 and later, or C++). Every function checks
 * its arguments and returns a status; nothing aborts, prints or allocates.
 * Element values are raw bit patterns: F16/BF16 as uint16_t, FP8 as uint8_t.
 * Results are identical on every CPU (docs/c-api.md). */
#ifndef AMN_AMN_H_
#define AMN_AMN_H_

#include <stddef.h>
#include <stdint.h>

#include "amn/export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum amn_status {
  /* Success: dst[0, src_len) holds the results. */
  AMN_OK = 0,
  /* A pointer is NULL while its length is non-zero, the buffers overlap, a
   * length overflows the address space, or a name is unknown. Nothing was
   * written. */
  AMN_ERR_INVALID_ARGUMENT = 1,
  /* dst_len < src_len. Nothing was written. */
  AMN_ERR_BUFFER_TOO_SMALL = 2,
  /* The request is valid but this CPU or build cannot carry it out. */
  AMN_ERR_UNSUPPORTED = 3,
  /* The AMN_ISA environment variable names no target of this build; kernels
   * refuse to run until it is fixed or amn_set_isa_cap() overrides it. */
  AMN_ERR_BAD_ENVIRONMENT = 4
} amn_status;

/* A static, human-readable name for a status ("ok", "buffer too small"...). */
AMN_API const char* amn_status_string(amn_status status);

/* The library version, "MAJOR.MINOR.PATCH". */
AMN_API const char* amn_version(void);

/* The ISA target kernels dispatch to now, e.g. "AVX3_DL", "AVX2", "NEON". */
AMN_API const char* amn_active_target(void);

/* Caps dispatch at the named target or below (as AMN_ISA does); NULL or ""
 * removes the cap. Not thread-safe with kernels running concurrently. */
AMN_API amn_status amn_set_isa_cap(const char* name);

/* Conversions: src_len elements from src into dst, which holds dst_len
 * elements. Narrowing rounds to nearest even; see docs/formats.md. */
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

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* AMN_AMN_H_ */
