/* Loads every tensor of a model into memory with the C ABI
 * (amn/amn_model.h): what an inference engine does instead of reading a
 * dequantized file. Plain C99.
 *
 *   load_model_c MODEL [bf16|f16|f32] [THREADS]
 *
 * Prints the same lines as load_model_cpp (examples/load_model.cc). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amn/amn_model.h"

static uint64_t fnv1a(const unsigned char* p, uint64_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  uint64_t i;
  for (i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

int main(int argc, char** argv) {
  const char* type = argc > 2 ? argv[2] : "bf16";
  const amn_dtype dtype = strcmp(type, "f32") == 0 ? AMN_F32 : strcmp(type, "f16") == 0 ? AMN_F16 : AMN_BF16;
  const unsigned threads = argc > 3 ? (unsigned)atoi(argv[3]) : 1;
  amn_model* model = NULL;
  amn_status status;
  size_t count, i, d;
  unsigned char** weights;
  unsigned long long total = 0;

  if (argc < 2) {
    fprintf(stderr, "usage: %s MODEL [bf16|f16|f32] [THREADS]\n", argv[0]);
    return 2;
  }
  /* Headers only, within the default limits for untrusted input. */
  status = amn_model_open(argv[1], &model);
  if (status != AMN_OK) {
    fprintf(stderr, "%s: %s\n", amn_status_string(status), amn_last_error());
    return 1;
  }
  count = amn_model_tensor_count(model);
  weights = (unsigned char**)calloc(count ? count : 1, sizeof(*weights));
  if (weights == NULL) return 1;
  for (i = 0; i < count; ++i) {
    amn_tensor_info info;
    uint64_t bytes;
    amn_model_tensor_info(model, i, &info);
    /* info.bytes is for info.dtype; tensors that convert take the asked type. */
    bytes = info.converts ? info.elements * amn_dtype_size(dtype) : info.bytes;
    weights[i] = (unsigned char*)malloc(bytes ? (size_t)bytes : 1);
    if (weights[i] == NULL) return 1;
    status = amn_model_dequantize_tensor_at(model, i, dtype, weights[i], (size_t)bytes, threads);
    if (status != AMN_OK) {
      fprintf(stderr, "%s: %s\n", amn_status_string(status), amn_last_error());
      return 1;
    }
    total += bytes;
    printf("%s %s [", info.name, info.converts ? (dtype == AMN_F32 ? "F32" : dtype == AMN_F16 ? "F16" : "BF16") : info.dtype);
    for (d = 0; d < info.rank; ++d) printf("%s%llu", d ? ", " : "", (unsigned long long)info.shape[d]);
    printf("] from %s%s%s fnv1a=%016llx\n", info.source_dtype, info.quantized ? ", " : "", info.scheme,
           (unsigned long long)fnv1a(weights[i], bytes));
  }
  printf("loaded %lu tensors, %llu bytes\n", (unsigned long)count, total);
  for (i = 0; i < count; ++i) free(weights[i]);
  free(weights);
  amn_model_close(model);
  return 0;
}
