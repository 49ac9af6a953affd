/* The model C ABI (amn/amn_model.h), plain C99: the npz_reference fixture
 * opened as it is and a gguf_reference fixture wrapped in a GGUF file,
 * each tensor decoded with 1, 3 and 0 (every core) threads and compared with
 * the fixtures' expected bytes (numpy's, gguf-py's); then the errors: NULL
 * arguments, missing and malformed files, unknown names and indices, bad
 * dtypes and short buffers, each a status and a message. The comparison with
 * remember's own file for every family is model_tensor_api_test's. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "amn/amn_model.h"
#include "c_api_test.h"

int g_passed = 0;
int g_failed = 0;

static char g_fixtures[4096];
static char g_tmp[4096];

/* The whole file at `path` (malloc'd; *size its length); NULL when absent. */
static uint8_t* read_file(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  uint8_t* data;
  long n;
  if (f == NULL) return NULL;
  fseek(f, 0, SEEK_END);
  n = ftell(f);
  fseek(f, 0, SEEK_SET);
  data = (uint8_t*)malloc(n > 0 ? (size_t)n : 1);
  if (data != NULL && n > 0 && fread(data, 1, (size_t)n, f) != (size_t)n) {
    free(data);
    data = NULL;
  }
  fclose(f);
  *size = (size_t)n;
  return data;
}

static int write_file(const char* path, const uint8_t* data, size_t size) {
  FILE* f = fopen(path, "wb");
  int ok;
  if (f == NULL) return 0;
  ok = fwrite(data, 1, size, f) == size;
  return fclose(f) == 0 && ok;
}

static void fixture_path(char* out, size_t cap, const char* rel) {
  snprintf(out, cap, "%s/%s", g_fixtures, rel);
}

/* A sink gathering the chunks into `data`, checking they are consecutive;
 * stop_at > 0 stops at that call. */
typedef struct gather {
  uint8_t* data;
  size_t capacity, filled;
  int calls, stop_at, out_of_order;
} gather;

static int gather_sink(void* user, uint64_t offset, const void* bytes, size_t size) {
  gather* g = (gather*)user;
  ++g->calls;
  if (g->stop_at > 0 && g->calls == g->stop_at) return 7;
  if (offset != g->filled || g->filled + size > g->capacity) {
    g->out_of_order = 1;
    return 1;
  }
  memcpy(g->data + g->filled, bytes, size);
  g->filled += size;
  return 0;
}

/* Worker threads for a call that would use `n`: 1 under emulation
 * (AMN_TEST_EMULATED: qemu-user 7.2 hangs in pthread_create, docs/targets.md). */
static unsigned test_threads(unsigned n) { return getenv("AMN_TEST_EMULATED") != NULL ? 1 : n; }

/* Decodes tensor `index` as BF16 with 1, 3 and 0 threads (by index and by
 * name) and checks every result equals want[0, want_bytes). */
static void check_decodes(const amn_model* model, size_t index, const uint8_t* want, size_t want_bytes) {
  amn_tensor_info info;
  unsigned threads[3];
  size_t t;
  threads[0] = 1;
  threads[1] = test_threads(3);
  threads[2] = test_threads(0);
  CHECK(amn_model_tensor_info(model, index, &info) == AMN_OK);
  CHECK(info.bytes == want_bytes);
  for (t = 0; t < 3; ++t) {
    uint8_t* got = (uint8_t*)malloc(want_bytes + 1);
    if (got == NULL) return;
    memset(got, 0xA5, want_bytes + 1);
    CHECK(amn_model_dequantize_tensor_at(model, index, AMN_BF16, got, want_bytes + 1, threads[t]) == AMN_OK);
    CHECK(memcmp(got, want, want_bytes) == 0);
    CHECK(got[want_bytes] == 0xA5); /* only the tensor's bytes are written */
    memset(got, 0, want_bytes);
    CHECK(amn_model_dequantize_tensor(model, info.name, AMN_BF16, got, want_bytes, threads[t]) == AMN_OK);
    CHECK(memcmp(got, want, want_bytes) == 0);
    {
      gather g;
      memset(&g, 0, sizeof(g));
      memset(got, 0, want_bytes);
      g.data = got;
      g.capacity = want_bytes;
      CHECK(amn_model_dequantize_tensor_chunks(model, index, AMN_BF16, 1000, threads[t], gather_sink, &g) == AMN_OK);
      CHECK(g.filled == want_bytes && !g.out_of_order);
      CHECK(g.calls > 1 || want_bytes <= 1000);
      CHECK(memcmp(got, want, want_bytes) == 0);
    }
    free(got);
  }
}

/* gemma_scope_small.npz (F32 arrays, remembered as F32 by default) against
 * gemma_scope_reference.bin: u32 count, then per array name, ndim + shape,
 * dtype id 11 (F32), data. Asked for as F32 each array is numpy's bytes. */
static void check_npz(void) {
  char path[4200];
  size_t size = 0, at = 4, seen = 0;
  uint8_t* ref;
  amn_model* model = NULL;
  uint32_t count, i;
  fixture_path(path, sizeof(path), "npz_reference/gemma_scope_reference.bin");
  ref = read_file(path, &size);
  if (ref == NULL) {
    printf("c_api_model_test: skipped the npz fixture: %s not found (set AMN_FIXTURES_DIR)\n", path);
    return;
  }
  fixture_path(path, sizeof(path), "npz_reference/gemma_scope_small.npz");
  CHECK(amn_model_open(path, &model) == AMN_OK);
  CHECK(amn_model_tensor_count(model) == 5);
  count = get_le32(ref);
  for (i = 0; i < count && at + 4 <= size; ++i) {
    char name[256];
    const uint32_t name_len = get_le32(ref + at);
    uint32_t ndim, len;
    size_t index = 99;
    amn_tensor_info info;
    at += 4;
    if (name_len >= sizeof(name) || at + name_len > size) break;
    memcpy(name, ref + at, name_len);
    name[name_len] = '\0';
    at += name_len;
    ndim = get_le32(ref + at);
    at += 4 + 8 * (size_t)ndim;
    CHECK(get_le32(ref + at) == 11);
    len = get_le32(ref + at + 4);
    at += 8;
    if (at + len > size) break;
    CHECK(amn_model_find_tensor(model, name, &index) == AMN_OK);
    CHECK(amn_model_tensor_info(model, index, &info) == AMN_OK);
    CHECK(strcmp(info.name, name) == 0);
    CHECK(strcmp(info.dtype, "F32") == 0);
    CHECK(strcmp(info.source_dtype, "F32") == 0);
    CHECK(info.quantized == 0 && info.converts == 1);
    CHECK(info.bytes == len && info.elements * 4 == len);
    {
      uint8_t* got = (uint8_t*)malloc(len);
      if (got != NULL) {
        CHECK(amn_model_dequantize_tensor(model, name, AMN_F32, got, len, test_threads(2)) == AMN_OK);
        CHECK(memcmp(got, ref + at, len) == 0);
        free(got);
      }
    }
    at += len;
    ++seen;
  }
  CHECK(seen == 5);
  amn_model_close(model);
  free(ref);
}

/* smollm2_q4_k.bin (u32 type, n, blocks bytes, golden bytes; blocks; BF16)
 * as the one tensor "blk.0.w" of a GGUF v3 file. */
static void check_gguf(void) {
  char path[4200], gguf[4200];
  size_t size = 0, at = 0;
  uint8_t* f;
  uint8_t* file;
  uint32_t type, n, raw, golden;
  amn_model* model = NULL;
  amn_tensor_info info;
  fixture_path(path, sizeof(path), "gguf_reference/smollm2_q4_k.bin");
  f = read_file(path, &size);
  if (f == NULL || size < 16) {
    printf("c_api_model_test: skipped the GGUF fixture: %s not found (set AMN_FIXTURES_DIR)\n", path);
    free(f);
    return;
  }
  type = get_le32(f);
  n = get_le32(f + 4);
  raw = get_le32(f + 8);
  golden = get_le32(f + 12);
  CHECK(16 + (size_t)raw + golden == size && golden == 2 * n);
  file = (uint8_t*)calloc(128 + raw, 1);
  if (file == NULL) return;
  memcpy(file, "GGUF", 4);
  put_le32(file + 4, 3);
  put_le32(file + 8, 1); /* u64 tensor count */
  put_le32(file + 16, 0); /* u64 key/value count */
  at = 24;
  put_le32(file + at, 7); /* u64 name length */
  memcpy(file + at + 8, "blk.0.w", 7);
  at += 15;
  put_le32(file + at, 1); /* dimensions */
  put_le32(file + at + 4, n); /* u64 */
  put_le32(file + at + 12, type);
  at += 16 + 8; /* u64 offset 0 */
  at = (at + 31) / 32 * 32;
  memcpy(file + at, f + 16, raw);
  snprintf(gguf, sizeof(gguf), "%s/model.gguf", g_tmp);
  CHECK(write_file(gguf, file, at + raw));
  CHECK(amn_model_open(gguf, &model) == AMN_OK);
  CHECK(amn_model_tensor_count(model) == 1);
  CHECK(amn_model_tensor_info(model, 0, &info) == AMN_OK);
  CHECK(strcmp(info.name, "blk.0.w") == 0);
  CHECK(strcmp(info.source_dtype, "Q4_K") == 0);
  CHECK(strcmp(info.dtype, "BF16") == 0);
  CHECK(strcmp(info.scheme, "ggml Q4_K") == 0);
  CHECK(info.quantized == 1 && info.converts == 1);
  CHECK(info.rank == 1 && info.shape[0] == n && info.elements == n);
  check_decodes(model, 0, f + 16 + raw, golden);
  /* As F32: twice the bytes; the BF16 golden values are those F32 values rounded. */
  {
    float* wide = (float*)malloc((size_t)n * 4);
    uint8_t* narrow = (uint8_t*)malloc((size_t)n * 2);
    if (wide != NULL && narrow != NULL) {
      CHECK(amn_model_dequantize_tensor_at(model, 0, AMN_F32, wide, (size_t)n * 4 - 1, 1) == AMN_ERR_BUFFER_TOO_SMALL);
      CHECK(strstr(amn_last_error(), "blk.0.w") != NULL);
      CHECK(amn_model_dequantize_tensor_at(model, 0, AMN_F32, wide, (size_t)n * 4, 1) == AMN_OK);
      CHECK(amn_f32_to_bf16(wide, n, (uint16_t*)narrow, n) == AMN_OK);
      CHECK(memcmp(narrow, f + 16 + raw, golden) == 0);
    }
    free(wide);
    free(narrow);
  }
  /* Errors on an open model. */
  {
    uint8_t small[8];
    size_t index = 7;
    CHECK(amn_model_dequantize_tensor(model, "no.such.tensor", AMN_BF16, small, sizeof(small), 1) ==
          AMN_ERR_INVALID_ARGUMENT);
    CHECK(strstr(amn_last_error(), "no.such.tensor") != NULL);
    CHECK(amn_model_dequantize_tensor(model, NULL, AMN_BF16, small, sizeof(small), 1) == AMN_ERR_INVALID_ARGUMENT);
    CHECK(amn_model_dequantize_tensor_at(model, 1, AMN_BF16, small, sizeof(small), 1) == AMN_ERR_INVALID_ARGUMENT);
    CHECK(amn_model_dequantize_tensor_at(model, 0, AMN_E4M3, small, sizeof(small), 1) == AMN_ERR_INVALID_ARGUMENT);
    CHECK(amn_model_dequantize_tensor_at(model, 0, (amn_dtype)42, small, sizeof(small), 1) == AMN_ERR_INVALID_ARGUMENT);
    CHECK(amn_model_dequantize_tensor_at(model, 0, AMN_BF16, small, sizeof(small), 1) == AMN_ERR_BUFFER_TOO_SMALL);
    CHECK(amn_model_dequantize_tensor_at(model, 0, AMN_BF16, NULL, golden, 1) == AMN_ERR_INVALID_ARGUMENT);
    CHECK(amn_model_tensor_info(model, 1, &info) == AMN_ERR_INVALID_ARGUMENT);
    {
      gather g;
      uint8_t* got = (uint8_t*)malloc(golden);
      memset(&g, 0, sizeof(g));
      g.data = got;
      g.capacity = golden;
      g.stop_at = 2;
      CHECK(amn_model_dequantize_tensor_chunks(model, 0, AMN_BF16, 512, test_threads(2), gather_sink, &g) == AMN_ERR_CANCELLED);
      CHECK(g.calls == 2);
      CHECK(strstr(amn_last_error(), "returned 7") != NULL);
      CHECK(amn_model_dequantize_tensor_chunks(model, 0, AMN_BF16, 512, 1, NULL, &g) == AMN_ERR_INVALID_ARGUMENT);
      CHECK(amn_model_dequantize_tensor_chunks(model, 1, AMN_BF16, 512, 1, gather_sink, &g) == AMN_ERR_INVALID_ARGUMENT);
      CHECK(amn_model_dequantize_tensor_chunks(model, 0, AMN_E5M2, 512, 1, gather_sink, &g) == AMN_ERR_INVALID_ARGUMENT);
      free(got);
    }
    CHECK(amn_model_tensor_info(model, 0, NULL) == AMN_ERR_INVALID_ARGUMENT);
    CHECK(amn_model_find_tensor(model, "blk.0", &index) == AMN_ERR_INVALID_ARGUMENT);
    CHECK(index == 7);
    CHECK(amn_model_find_tensor(model, "blk.0.w", &index) == AMN_OK && index == 0);
    CHECK(strcmp(amn_last_error(), "") == 0);
  }
  amn_model_close(model);
  /* The same file cut inside its data: opens (headers only) where the
   * header fits, but no tensor outruns the file: refused as invalid input. */
  CHECK(write_file(gguf, file, at + raw / 2));
  model = (amn_model*)(void*)&g_passed; /* any non-NULL value: set to NULL on failure */
  CHECK(amn_model_open(gguf, &model) == AMN_ERR_INVALID_INPUT);
  CHECK(model == NULL);
  CHECK(strlen(amn_last_error()) > strlen("amn_model_open: "));
  unlink(gguf);
  free(file);
  free(f);
}

static void check_open_errors(void) {
  amn_model* model = NULL;
  char path[4200];
  static const uint8_t garbage[64] = {'{', 'n', 'o', 't'};
  CHECK(amn_model_open(NULL, &model) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(amn_model_open("x.safetensors", NULL) == AMN_ERR_INVALID_ARGUMENT);
  CHECK(amn_model_open("", &model) == AMN_ERR_INVALID_ARGUMENT);
  snprintf(path, sizeof(path), "%s/missing.safetensors", g_tmp);
  CHECK(amn_model_open(path, &model) == AMN_ERR_IO);
  CHECK(model == NULL);
  CHECK(strstr(amn_last_error(), "missing.safetensors") != NULL);
  /* A safetensors header length far past the file's end. */
  snprintf(path, sizeof(path), "%s/bad.safetensors", g_tmp);
  {
    uint8_t bad[64];
    memcpy(bad, garbage, sizeof(bad));
    put_le32(bad, 0x7FFFFFF0u);
    put_le32(bad + 4, 0);
    CHECK(write_file(path, bad, sizeof(bad)));
  }
  CHECK(amn_model_open(path, &model) == AMN_ERR_INVALID_INPUT);
  CHECK(model == NULL);
  unlink(path);
  CHECK(amn_model_tensor_count(NULL) == 0);
  amn_model_close(NULL);
  CHECK(strcmp(amn_status_string(AMN_ERR_INVALID_INPUT), "invalid input") == 0);
  CHECK(strlen(amn_status_string(AMN_ERR_IO)) > 0);
  CHECK(strcmp(amn_status_string(AMN_ERR_CANCELLED), "cancelled") == 0);
}

int main(void) {
  const char* env = getenv("AMN_FIXTURES_DIR");
  if (env != NULL && env[0] != '\0') {
    snprintf(g_fixtures, sizeof(g_fixtures), "%s", env);
  } else {
    snprintf(g_fixtures, sizeof(g_fixtures), "%s/../shared/fixtures", AMN_PROJECT_ROOT);
  }
  snprintf(g_tmp, sizeof(g_tmp), "/tmp/amn_c_api_model_XXXXXX");
  if (mkdtemp(g_tmp) == NULL) {
    fprintf(stderr, "c_api_model_test: cannot make a temporary directory\n");
    return 1;
  }
  check_open_errors();
  check_npz();
  check_gguf();
  rmdir(g_tmp);
  printf("c_api_model_test: %d passed, %d failed\n", g_passed, g_failed);
  return g_failed == 0 ? 0 : 1;
}
