/* An out-of-tree C99 consumer of the installed libamn (.ci/package-check
 * builds it with `pkg-config --cflags --libs anamnesis` against a staging
 * prefix, nothing from the build tree). It dequantizes a GGUF Q8_0 block and
 * an FP8 E4M3 row through the C ABI and compares the bit patterns with values
 * derived here from the formats' definitions, not from amn. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "amn/amn.h"

static int failures = 0;

static void Check(int ok, const char* what) {
  if (!ok) {
    fprintf(stderr, "FAIL: %s (%s)\n", what, amn_last_error());
    ++failures;
  }
}

/* ggml Q8_0: one block = F16 scale d, then 32 int8 codes; x[i] = d * q[i].
 * d = 0.5 is F16 0x3800 (stored little-endian); codes -16..15, so every
 * value is exact in F32. */
static void Q8_0Row(void) {
  uint8_t block[34];
  float out[32];
  int i;
  block[0] = 0x00;
  block[1] = 0x38;
  for (i = 0; i < 32; ++i) block[2 + i] = (uint8_t)(int8_t)(i - 16);
  Check(amn_dequantize_ggml(8, block, sizeof block, AMN_F32, out, 32) == AMN_OK,
        "amn_dequantize_ggml Q8_0");
  for (i = 0; i < 32; ++i) {
    float want = 0.5f * (float)(i - 16);
    uint32_t got_bits, want_bits;
    memcpy(&got_bits, &out[i], 4);
    memcpy(&want_bits, &want, 4);
    if (got_bits != want_bits) {
      fprintf(stderr, "Q8_0 element %d: got 0x%08x, want 0x%08x\n", i, (unsigned)got_bits,
              (unsigned)want_bits);
      Check(0, "Q8_0 bytes");
    }
  }
}

/* FP8 E4M3 (bias 7) times one F32 tensor scale 2.0, to BF16. By hand:
 * 0x38 = 1.0 -> 2.0 = 0x4000; 0x40 = 2.0 -> 4.0 = 0x4080; 0xC0 = -2.0 -> -4.0
 * = 0xC080; 0x3C = 1.5 -> 3.0 = 0x4040; 0x01 = 2^-9 (subnormal) -> 2^-8 =
 * 0x3B80; 0x7E = 448 (largest finite) -> 896 = 1.75 * 2^9 = 0x4460; 0x00 ->
 * +0 = 0x0000; 0x80 -> -0 = 0x8000. */
static void Fp8Row(void) {
  static const uint8_t codes[8] = {0x38, 0x40, 0xC0, 0x3C, 0x01, 0x7E, 0x00, 0x80};
  static const uint16_t want[8] = {0x4000, 0x4080, 0xC080, 0x4040,
                                   0x3B80, 0x4460, 0x0000, 0x8000};
  const float scale = 2.0f;
  amn_fp8_params p;
  uint16_t out[8];
  int i;
  memset(&p, 0, sizeof p);
  p.code_type = AMN_E4M3;
  p.rows = 1;
  p.cols = 8;
  p.codes = codes;
  p.codes_bytes = sizeof codes;
  p.scale_kind = AMN_FP8_SCALE_TENSOR;
  p.scale_type = AMN_F32;
  p.scales = &scale;
  p.scales_bytes = sizeof scale;
  Check(amn_dequantize_fp8(&p, 0, 1, AMN_BF16, out, sizeof out) == AMN_OK,
        "amn_dequantize_fp8 E4M3");
  for (i = 0; i < 8; ++i) {
    if (out[i] != want[i]) {
      fprintf(stderr, "E4M3 element %d: got 0x%04x, want 0x%04x\n", i, (unsigned)out[i],
              (unsigned)want[i]);
      Check(0, "E4M3 bytes");
    }
  }
}

int main(void) {
  Check(amn_abi_version() == AMN_ABI_VERSION, "amn_abi_version matches amn.h");
  Q8_0Row();
  Fp8Row();
  printf("C consumer: libamn %s, target %s: %s\n", amn_version(), amn_active_target(),
         failures == 0 ? "ok" : "FAILED");
  return failures == 0 ? 0 : 1;
}
