/* The C ABI from plain C99 (-std=c99 -pedantic): every function of amn.h is
 * called (the family calls in c_api_families_test.c). Values are checked
 * against the GGUF fixtures' expected BF16 and against results worked out by
 * hand from the formulas in amn.h; argument errors return the right status
 * and write nothing (canaries); every kernel of the table matches its scalar
 * reference byte for byte. The value checks run once per distinct ISA target
 * this CPU reaches through amn_set_isa_cap (the emulated fleet runs the
 * whole binary under each CPU model). */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <stdlib.h>

#include "c_api_test.h"

int g_passed = 0;
int g_failed = 0;

/* xorshift64: the same pseudo-random bytes on every run. */
static uint64_t g_rng = 0x9E3779B97F4A7C15u;
static uint8_t next_byte(void) {
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 7;
  g_rng ^= g_rng << 17;
  return (uint8_t)(g_rng >> 32);
}

/* ---- Library, status, conversions ---------------------------------------- */

static void check_library(void) {
  CHECK(amn_abi_version() == AMN_ABI_VERSION && AMN_ABI_VERSION == 1);
  CHECK(amn_version() != NULL && strchr(amn_version(), '.') != NULL);
  CHECK(amn_active_target() != NULL && strlen(amn_active_target()) > 0);
  CHECK(strcmp(amn_status_string(AMN_OK), "ok") == 0);
  CHECK(strcmp(amn_status_string(AMN_ERR_BUFFER_TOO_SMALL), "buffer too small") == 0);
  CHECK(strlen(amn_status_string(AMN_ERR_INVALID_ARGUMENT)) > 0);
  CHECK(strlen(amn_status_string(AMN_ERR_UNSUPPORTED)) > 0);
  CHECK(strlen(amn_status_string(AMN_ERR_BAD_ENVIRONMENT)) > 0);
  CHECK(strlen(amn_status_string(AMN_ERR_INTERNAL)) > 0);
  CHECK(strcmp(amn_status_string((amn_status)99), "unknown status") == 0);
  CHECK(amn_dtype_size(AMN_F32) == 4 && amn_dtype_size(AMN_F16) == 2 &&
        amn_dtype_size(AMN_BF16) == 2 && amn_dtype_size(AMN_E4M3) == 1 &&
        amn_dtype_size(AMN_E5M2) == 1 && amn_dtype_size((amn_dtype)9) == 0);
}

static void check_conversions(void) {
  /* Known values: 1.0, -2.0, 65520 (F16 overflow), a BF16 tie to even. */
  const float src[4] = {1.0f, -2.0f, 65520.0f, 1.00390625f};
  uint16_t bf16[4] = {0};
  uint16_t f16[4] = {0};
  float back[4] = {0};
  const uint8_t e4m3[3] = {0x7E, 0x01, 0xFF}; /* 448, 2^-9, -NaN */
  const uint8_t e5m2[2] = {0x7B, 0xFC};       /* 57344, -Inf */
  uint16_t out16[3] = {0};
  float out32[3] = {0};
  CHECK(amn_f32_to_bf16(src, 4, bf16, 4) == AMN_OK);
  CHECK(bf16[0] == 0x3F80 && bf16[1] == 0xC000 && bf16[2] == 0x4780 && bf16[3] == 0x3F80);
  CHECK(strcmp(amn_last_error(), "") == 0);
  CHECK(amn_f32_to_f16(src, 4, f16, 4) == AMN_OK);
  CHECK(f16[0] == 0x3C00 && f16[1] == 0xC000 && f16[2] == 0x7C00 && f16[3] == 0x3C04);
  CHECK(amn_f16_to_f32(f16, 2, back, 4) == AMN_OK);
  CHECK(back[0] == 1.0f && back[1] == -2.0f && back[2] == 0.0f);
  CHECK(amn_bf16_to_f32(bf16, 2, back, 2) == AMN_OK && back[0] == 1.0f && back[1] == -2.0f);
  CHECK(amn_f16_to_bf16(f16, 2, out16, 3) == AMN_OK && out16[0] == 0x3F80 && out16[1] == 0xC000);
  CHECK(amn_bf16_to_f16(bf16, 2, out16, 3) == AMN_OK && out16[0] == 0x3C00 && out16[1] == 0xC000);
  CHECK(amn_e4m3_to_bf16(e4m3, 3, out16, 3) == AMN_OK);
  CHECK(out16[0] == 0x43E0 && out16[1] == 0x3B00 && out16[2] == 0xFFF0);
  CHECK(amn_e4m3_to_f32(e4m3, 2, out32, 3) == AMN_OK && out32[0] == 448.0f &&
        out32[1] == 1.0f / 512);
  CHECK(amn_e4m3_to_f16(e4m3, 1, out16, 3) == AMN_OK && out16[0] == 0x5F00);
  CHECK(amn_e5m2_to_f16(e5m2, 2, out16, 3) == AMN_OK);
  CHECK(out16[0] == 0x7B00 && out16[1] == 0xFC00);
  CHECK(amn_e5m2_to_f32(e5m2, 1, out32, 1) == AMN_OK && out32[0] == 57344.0f);
  CHECK(amn_e5m2_to_bf16(e5m2, 1, out16, 1) == AMN_OK && out16[0] == 0x4760);
}

static void check_conversion_errors(void) {
  const float src[4] = {1.0f, 2.0f, 3.0f, 4.0f};
  uint16_t f16[4] = {0x3C00, 0x4000, 0x4200, 0x4400};
  uint16_t guard[2] = {0xAAAA, 0xAAAA};
  float back[4] = {0};
  CHECK(amn_f32_to_bf16(src, 3, guard, 2) == AMN_ERR_BUFFER_TOO_SMALL);
  CHECK(guard[0] == 0xAAAA && guard[1] == 0xAAAA);
  CHECK(strlen(amn_last_error()) > 0);
  CHECK(amn_f32_to_bf16(NULL, 1, guard, 2) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(amn_f32_to_bf16(src, 1, NULL, 1) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(amn_f32_to_bf16(NULL, 0, NULL, 0) == AMN_OK);
  CHECK(amn_f16_to_bf16(f16, 3, f16 + 1, 3) == AMN_ERR_INVALID_ARGUMENT); /* overlap */
  CHECK(f16[1] == 0x4000 && f16[2] == 0x4200 && f16[3] == 0x4400);
  CHECK(amn_bf16_to_f32(f16, (size_t)-1, back, (size_t)-1) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(guard[0] == 0xAAAA && back[0] == 0.0f);
}

/* ---- GGUF ----------------------------------------------------------------- */

static void check_ggml_table(void) {
  size_t elems = 0, bytes = 0;
  CHECK(amn_ggml_type_name(2) != NULL && strcmp(amn_ggml_type_name(2), "Q4_0") == 0);
  CHECK(strcmp(amn_ggml_type_name(12), "Q4_K") == 0);
  CHECK(strcmp(amn_ggml_type_name(39), "MXFP4") == 0);
  CHECK(strcmp(amn_ggml_type_name(1), "F16") == 0);
  CHECK(amn_ggml_type_name(4) == NULL && amn_ggml_type_name(-1) == NULL &&
        amn_ggml_type_name(1000) == NULL);
  CHECK(amn_ggml_block_size(12, &elems, &bytes) == AMN_OK && elems == 256 && bytes == 144);
  CHECK(amn_ggml_block_size(2, &elems, &bytes) == AMN_OK && elems == 32 && bytes == 18);
  CHECK(amn_ggml_block_size(0, &elems, &bytes) == AMN_OK && elems == 1 && bytes == 4);
  CHECK(amn_ggml_block_size(5, &elems, &bytes) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(amn_ggml_block_size(2, NULL, &bytes) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(amn_ggml_block_size(2, &elems, NULL) == AMN_ERR_INVALID_ARGUMENT);
}

/* Every quantized type of the table decodes (one all-zero block): 27 ids
 * from Q4_0 to Q2_0, including Q8_1 and Q8_K, which have no fixture. */
static void check_ggml_all_types(void) {
  uint8_t block[512];
  float out[256];
  int id, quantized = 0, decoded = 0;
  memset(block, 0, sizeof(block));
  for (id = 0; id < 64; ++id) {
    size_t elems = 0, bytes = 0;
    if (amn_ggml_block_size(id, &elems, &bytes) != AMN_OK || elems == 1) continue;
    ++quantized;
    CHECK(bytes <= sizeof(block) && elems <= 256 && amn_ggml_type_name(id) != NULL);
    if (amn_dequantize_ggml(id, block, bytes, AMN_F32, out, elems) == AMN_OK) {
      ++decoded;
    } else {
      fprintf(stderr, "  ggml type %d (%s) does not decode: %s\n", id, amn_ggml_type_name(id),
              amn_last_error());
    }
  }
  CHECK(quantized == 27 && decoded == quantized);
}

/* One Q4_0 block by hand: d = 2.0 (F16 0x4000); y[l] = d*(lo(qs[l]) - 8),
 * y[l+16] = d*(hi(qs[l]) - 8). qs[0] = 0x9F: y[0] = 14, y[16] = 2; the other
 * qs are 0x88: 0. */
static void check_ggml_hand(void) {
  uint8_t block[18];
  uint16_t out[33];
  float out32[32];
  size_t i;
  int ok = 1;
  put_le16(block, 0x4000);
  memset(block + 2, 0x88, 16);
  block[2] = 0x9F;
  out[32] = 0xAAAA;
  CHECK(amn_dequantize_ggml(2, block, sizeof(block), AMN_BF16, out, 32) == AMN_OK);
  for (i = 0; i < 32; ++i) {
    const uint16_t want = i == 0 ? 0x4160 : i == 16 ? 0x4000 : 0x0000;
    if (out[i] != want) ok = 0;
  }
  CHECK(ok && out[32] == 0xAAAA);
  CHECK(amn_dequantize_ggml(2, block, sizeof(block), AMN_F32, out32, 32) == AMN_OK);
  CHECK(out32[0] == 14.0f && out32[16] == 2.0f && out32[1] == 0.0f);
  CHECK(amn_dequantize_ggml(2, block, sizeof(block), AMN_F16, out, 32) == AMN_OK);
  CHECK(out[0] == 0x4B00 && out[16] == 0x4000);
}

static void check_ggml_errors(void) {
  uint8_t blocks[36];
  uint16_t out[80];
  memset(blocks, 0x11, sizeof(blocks));
  memset(out, 0xAA, sizeof(out));
  CHECK(amn_dequantize_ggml(4, blocks, 18, AMN_BF16, out, 32) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(amn_dequantize_ggml(-3, blocks, 18, AMN_BF16, out, 32) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(amn_dequantize_ggml(1, blocks, 18, AMN_BF16, out, 9) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(amn_dequantize_ggml(2, blocks, 18, AMN_E4M3, out, 32) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(amn_dequantize_ggml(2, blocks, 19, AMN_BF16, out, 32) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(amn_dequantize_ggml(2, blocks, 36, AMN_BF16, out, 32) == AMN_ERR_BUFFER_TOO_SMALL);
  CHECK(amn_dequantize_ggml(2, blocks, 18, AMN_BF16, out, 64) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(amn_dequantize_ggml(2, NULL, 18, AMN_BF16, out, 32) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(amn_dequantize_ggml(2, blocks, 18, AMN_BF16, NULL, 32) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(amn_dequantize_ggml(2, blocks, 36, AMN_F16, blocks + 4, 64) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(all_bytes(out, sizeof(out), 0xAA) && all_bytes(blocks, sizeof(blocks), 0x11));
  CHECK(amn_dequantize_ggml(2, NULL, 0, AMN_BF16, NULL, 0) == AMN_OK);
}

static const char* fixtures_dir(void) {
  const char* env = getenv("AMN_FIXTURES_DIR");
  if (env != NULL && env[0] != '\0') return env;
  return AMN_PROJECT_ROOT "/../shared/fixtures";
}

static uint8_t* read_file(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  uint8_t* data = NULL;
  long end;
  if (f == NULL) return NULL;
  if (fseek(f, 0, SEEK_END) == 0 && (end = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
    data = (uint8_t*)malloc((size_t)end + 1);
    if (data != NULL && fread(data, 1, (size_t)end, f) != (size_t)end) {
      free(data);
      data = NULL;
    }
    *size = (size_t)end;
  }
  fclose(f);
  return data;
}

/* Every gguf_reference/<name>.bin: 16-byte header (type, n, raw_len,
 * golden_len), raw blocks, expected BF16. Returns the number of files. */
static int check_ggml_fixtures(int verbose) {
  char dir_path[4096];
  char path[4096 + 256];
  DIR* dir;
  struct dirent* entry;
  int files = 0;
  snprintf(dir_path, sizeof(dir_path), "%s/gguf_reference", fixtures_dir());
  dir = opendir(dir_path);
  if (dir == NULL) {
    if (verbose) printf("SKIP gguf fixtures: %s not found; set AMN_FIXTURES_DIR\n", dir_path);
    return 0;
  }
  while ((entry = readdir(dir)) != NULL) {
    const size_t len = strlen(entry->d_name);
    size_t size = 0, i;
    uint8_t* data;
    uint16_t* out;
    uint32_t type, n, raw_len, golden_len;
    int same = 1;
    if (len < 5 || strcmp(entry->d_name + len - 4, ".bin") != 0) continue;
    snprintf(path, sizeof(path), "%s/%s", dir_path, entry->d_name);
    data = read_file(path, &size);
    CHECK(data != NULL && size >= 16);
    if (data == NULL || size < 16) {
      free(data);
      continue;
    }
    type = get_le32(data);
    n = get_le32(data + 4);
    raw_len = get_le32(data + 8);
    golden_len = get_le32(data + 12);
    CHECK(golden_len == 2 * (size_t)n && 16 + (size_t)raw_len + golden_len == size);
    if (golden_len != 2 * (size_t)n || 16 + (size_t)raw_len + golden_len != size) {
      free(data);
      continue;
    }
    out = (uint16_t*)malloc(((size_t)n + 1) * sizeof(uint16_t));
    CHECK(out != NULL);
    if (out == NULL) {
      free(data);
      continue;
    }
    out[n] = 0xAAAA;
    CHECK(amn_dequantize_ggml((int)type, data + 16, raw_len, AMN_BF16, out, n) == AMN_OK);
    for (i = 0; i < n && same; ++i) {
      const uint8_t* g = data + 16 + raw_len + 2 * i;
      if (out[i] != (uint16_t)(g[0] | g[1] << 8)) {
        fprintf(stderr, "  %s (%s): element %zu is 0x%04x, expected 0x%02x%02x\n",
                entry->d_name, amn_ggml_type_name((int)type), i, out[i], g[1], g[0]);
        same = 0;
      }
    }
    CHECK(same && out[n] == 0xAAAA);
    ++files;
    free(out);
    free(data);
  }
  closedir(dir);
  return files;
}
/* ---- Kernel table --------------------------------------------------------- */

static void check_kernel_errors(void) {
  const size_t count = amn_kernel_count();
  uint8_t src[64];
  uint8_t dst[256];
  size_t bytes = 0, block = 0, q4_0 = count;
  amn_dtype dtype = AMN_F32;
  size_t i;
  CHECK(count > 100);
  CHECK(amn_kernel_name(count) == NULL && amn_kernel_target(count) == NULL);
  CHECK(amn_kernel_block_elems(count, &block) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(amn_kernel_input_bytes(count, 32, &bytes) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(amn_kernel_output_dtype(count, &dtype) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(amn_kernel_run(count, src, 64, dst, 256, 0) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(amn_kernel_run_reference(count, src, 64, dst, 256, 0) == AMN_ERR_INVALID_ARGUMENT);
  for (i = 0; i < count; ++i) {
    if (strcmp(amn_kernel_name(i), "q4_0_to_bf16") == 0) q4_0 = i;
  }
  CHECK(q4_0 < count);
  if (q4_0 == count) return;
  CHECK(amn_kernel_block_elems(q4_0, &block) == AMN_OK && block == 32);
  CHECK(amn_kernel_block_elems(q4_0, NULL) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(amn_kernel_input_bytes(q4_0, 64, &bytes) == AMN_OK && bytes == 36);
  CHECK(amn_kernel_input_bytes(q4_0, 33, &bytes) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(amn_kernel_input_bytes(q4_0, 32, NULL) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(amn_kernel_output_dtype(q4_0, &dtype) == AMN_OK && dtype == AMN_BF16);
  CHECK(amn_kernel_output_dtype(q4_0, NULL) == AMN_ERR_INVALID_ARGUMENT);
  memset(src, 0x11, sizeof(src));
  memset(dst, 0xAA, sizeof(dst));
  CHECK(amn_kernel_run(q4_0, src, 36, dst, 127, 64) == AMN_ERR_BUFFER_TOO_SMALL);
  CHECK(amn_kernel_run(q4_0, src, 35, dst, 128, 64) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(amn_kernel_run(q4_0, src, 36, dst, 128, 48) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(amn_kernel_run(q4_0, NULL, 36, dst, 128, 64) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(amn_kernel_run(q4_0, src, 36, NULL, 128, 64) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(amn_kernel_run_reference(q4_0, src, 36, dst, 127, 64) == AMN_ERR_BUFFER_TOO_SMALL);
  CHECK(all_bytes(dst, sizeof(dst), 0xAA));
  CHECK(amn_kernel_run(q4_0, src, 36, src + 8, 128, 64) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(amn_kernel_run_reference(q4_0, src, 36, src + 8, 128, 64) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(all_bytes(src, sizeof(src), 0x11));
  CHECK(amn_kernel_run(q4_0, NULL, 0, NULL, 0, 0) == AMN_OK);
}

/* Every kernel: run and run_reference on the same pseudo-random input give
 * the same bytes and stay inside dst (canary). Returns kernels checked. */
static size_t check_kernels_match_reference(void) {
  enum { kCanary = 16, kMinElems = 1031 };
  const size_t count = amn_kernel_count();
  size_t i, checked = 0;
  for (i = 0; i < count; ++i) {
    size_t block = 0, n, in_bytes = 0, out_bytes, b;
    amn_dtype dtype = AMN_F32;
    uint8_t *src, *fast, *ref;
    const char* target = amn_kernel_target(i);
    CHECK(amn_kernel_name(i) != NULL && strlen(amn_kernel_name(i)) > 0);
    CHECK(target != NULL && strlen(target) > 0);
    if (amn_kernel_block_elems(i, &block) != AMN_OK || block == 0) {
      CHECK(0);
      continue;
    }
    n = (kMinElems + block - 1) / block * block;
    CHECK(amn_kernel_input_bytes(i, n, &in_bytes) == AMN_OK);
    CHECK(amn_kernel_output_dtype(i, &dtype) == AMN_OK);
    CHECK(amn_kernel_output_bytes(i, n, &out_bytes) == AMN_OK);
    /* A decoder writes n elements of its dtype. */
    if (strstr(amn_kernel_name(i), "_to_") != NULL && block == 1) {
      CHECK(out_bytes == n * amn_dtype_size(dtype));
    }
    src = (uint8_t*)malloc(in_bytes + 1);
    fast = (uint8_t*)malloc(out_bytes + kCanary);
    ref = (uint8_t*)malloc(out_bytes + kCanary);
    if (src == NULL || fast == NULL || ref == NULL) {
      CHECK(0);
    } else {
      /* The input starts at an odd address: kernels accept any alignment. */
      uint8_t* in = src + 1;
      for (b = 0; b < in_bytes; ++b) in[b] = next_byte();
      memset(fast, 0xA5, out_bytes + kCanary);
      memset(ref, 0x5A, out_bytes + kCanary);
      CHECK(amn_kernel_run(i, in, in_bytes, fast, out_bytes, n) == AMN_OK);
      CHECK(amn_kernel_run_reference(i, in, in_bytes, ref, out_bytes, n) == AMN_OK);
      if (memcmp(fast, ref, out_bytes) != 0) {
        fprintf(stderr, "  kernel %s on %s differs from its reference\n", amn_kernel_name(i),
                target == NULL ? "?" : target);
        CHECK(0);
      }
      CHECK(all_bytes(fast + out_bytes, kCanary, 0xA5) &&
            all_bytes(ref + out_bytes, kCanary, 0x5A));
      ++checked;
    }
    free(src);
    free(fast);
    free(ref);
  }
  return checked;
}

/* ---- Per target ----------------------------------------------------------- */

/* Everything that checks values; run once per ISA target. */
static void check_values(int verbose) {
  const int fixtures = check_ggml_fixtures(verbose);
  const size_t kernels = check_kernels_match_reference();
  check_conversions();
  check_ggml_hand();
  check_fp8();
  check_gptq();
  check_awq();
  check_bnb4();
  check_bnb_int8();
  check_packed_int();
  check_nvfp4();
  check_mxfp4();
  check_quantize();
  check_quantize_ggml();
  printf("c_api_test: target %s: %d gguf fixtures, %zu kernels match their reference\n",
         amn_active_target(), fixtures, kernels);
}

/* Candidate names of Highway targets (amn.h has no target list): each one
 * this build compiled is accepted by amn_set_isa_cap, which then selects the
 * best target the CPU supports at or below it. Every distinct active target
 * runs check_values once; "baseline" is always among them. */
static void check_every_target(void) {
  static const char* const kCandidates[] = {
      "AVX3_SPR", "AVX3_ZEN4", "AVX3_DL", "AVX3", "AVX2",   "SSE4",     "SSSE3",
      "SVE2_128", "SVE_256",   "SVE2",    "SVE",  "NEON",   "EMU128",   "SCALAR", "baseline"};
  char seen[COUNT(kCandidates)][32];
  size_t n_seen = 0, c, s;
  int baseline_seen = 0;
  for (c = 0; c < COUNT(kCandidates); ++c) {
    const char* active;
    int fresh = 1;
    if (amn_set_isa_cap(kCandidates[c]) != AMN_OK) continue;
    active = amn_active_target();
    for (s = 0; s < n_seen; ++s) {
      if (strcmp(seen[s], active) == 0) fresh = 0;
    }
    if (strcmp(kCandidates[c], "baseline") == 0) baseline_seen = 1;
    if (!fresh) continue;
    snprintf(seen[n_seen++], sizeof(seen[0]), "%s", active);
    check_values(n_seen == 1);
  }
  CHECK(baseline_seen && n_seen >= 1);
  CHECK(amn_set_isa_cap("no-such-target") == AMN_ERR_INVALID_ARGUMENT);
  CHECK(strlen(amn_last_error()) > 0);
  CHECK(amn_set_isa_cap(NULL) == AMN_OK);
  CHECK(amn_set_isa_cap("") == AMN_OK);
}

int main(void) {
  /* The emulated fleet names the target each CPU model must dispatch to. */
  const char* expected = getenv("AMN_EXPECT_TARGET");
  if (expected != NULL && expected[0] != '\0') CHECK(strcmp(amn_active_target(), expected) == 0);
  check_library();
  check_conversion_errors();
  check_ggml_table();
  check_ggml_all_types();
  check_ggml_errors();
  check_fp8_errors();
  check_gptq_errors();
  check_kernel_errors();
  check_quantize_errors();
  check_quantize_ggml_errors();
  check_every_target();
  printf("c_api_test: %d passed, %d failed\n", g_passed, g_failed);
  return g_failed == 0 ? 0 : 1;
}
