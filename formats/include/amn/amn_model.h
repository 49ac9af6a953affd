/* anamnesis C ABI for model files: open a quantized or plain model
 * (safetensors file or directory, GGUF, .npy/.npz, PyTorch .pth/.pt or
 * pytorch_model*.bin directory), list the tensors remember would write, and
 * decode any of them straight into the caller's memory, without writing a
 * file. The bytes are those `amn remember --to <dtype>` writes for the
 * tensor (docs/library.md). Plain C (C99 and later, or C++); errors are an
 * amn_status with amn_last_error() naming the file, tensor or argument, as
 * in amn/amn.h. Functions check their arguments and never abort or throw;
 * unlike the kernels in amn/amn.h they open files and allocate. */
#ifndef AMN_AMN_MODEL_H_
#define AMN_AMN_MODEL_H_

#include <stddef.h>
#include <stdint.h>

#include "amn/amn.h"
#include "amn/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An open model: its parsed headers and what remember plans for it. */
typedef struct amn_model amn_model;

/* One tensor as remember writes it. Quantized companions (scales, zero
 * points, g_idx, absmax, quant_state, SCB, ...) have no entry: they are read
 * with their weight, whose entry names the scheme. Every pointer is owned by
 * the model and stays valid, unchanged, until amn_model_close. */
typedef struct amn_tensor_info {
  const char* name;          /* as remember writes it (GPTQ "x.qweight" -> "x.weight"); UTF-8 */
  const char* source_dtype;  /* as stored: "F8_E4M3", "I32" (GPTQ qweight), "Q4_K", "F16" */
  const char* scheme;        /* quantized weights: "GPTQ 4-bit, group 128, ..."; else "" */
  const char* dtype;         /* written by remember's default: "BF16" (quantized formats),
                                the stored type in .npy/.npz/.pth files, or a kept "I64" */
  const char* shard;         /* the input file holding it */
  int quantized;             /* 1 for a quantized weight */
  /* 1 when the dtype argument of amn_model_dequantize_tensor applies
   * (quantized weights and float tensors); 0 for integer, bool and FP8
   * tensors that are no quantized weight, which keep their dtype and bytes. */
  int converts;
  size_t rank;
  const uint64_t* shape;     /* rank entries, row-major (GGUF dimensions reversed) */
  uint64_t elements;         /* the product of shape */
  uint64_t bytes;            /* of the tensor as `dtype`; as type T: elements * amn_dtype_size(T)
                                when converts, else bytes */
} amn_tensor_info;

/* Opens `path` (a UTF-8/locale path, or "ollama:NAME" / "hf:ORG/NAME" as the
 * CLI takes them) reading headers only, with the limits of untrusted input
 * (the C++ ParseLimits defaults: docs/limits.md), and plans its tensors.
 * *model is set on success and NULL on failure. Errors: NULL arguments
 * (AMN_ERR_INVALID_ARGUMENT); a missing or unreadable file (AMN_ERR_IO); a
 * malformed file or one over the limits (AMN_ERR_INVALID_INPUT); a scheme or
 * ggml type this build cannot decode (AMN_ERR_UNSUPPORTED). */
AMN_API amn_status amn_model_open(const char* path, amn_model** model);

/* Frees the model; NULL is allowed. No other call on it may be running. */
AMN_API void amn_model_close(amn_model* model);

/* The number of tensors amn_model_tensor_info lists; 0 for NULL. */
AMN_API size_t amn_model_tensor_count(const amn_model* model);

/* Tensor `index` (0 .. count-1; shard by shard, by name within a shard).
 * Out of range: AMN_ERR_INVALID_ARGUMENT. */
AMN_API amn_status amn_model_tensor_info(const amn_model* model, size_t index, amn_tensor_info* info);

/* The index of the tensor named `name`; AMN_ERR_INVALID_ARGUMENT when no
 * tensor has it (companions included). */
AMN_API amn_status amn_model_find_tensor(const amn_model* model, const char* name, size_t* index);

/* Decodes tensor `name` (or `index`) as `dtype` (AMN_F32, AMN_F16 or
 * AMN_BF16; tensors with converts == 0 keep theirs) into dst, which holds
 * dst_bytes bytes: the tensor's bytes are written at dst, the rest is left
 * alone. threads: 1 decodes on the calling thread and creates none; n > 1
 * uses n threads; 0 one per core. The same bytes for any thread count.
 * Memory besides dst: one chunk of input per thread. Thread-safe: calls on
 * one model may run at once, on the same tensor or different ones.
 * Errors: unknown name or index, a dtype other than F32/F16/BF16, dst NULL
 * (AMN_ERR_INVALID_ARGUMENT); dst_bytes under the tensor's bytes
 * (AMN_ERR_BUFFER_TOO_SMALL, nothing written); a file that is truncated or
 * malformed where its data is read or over the limits (AMN_ERR_INVALID_INPUT);
 * a failed read or a file changed while read (AMN_ERR_IO). On those last
 * two, dst may hold part of the tensor. */
AMN_API amn_status amn_model_dequantize_tensor(const amn_model* model, const char* name,
                                               amn_dtype dtype, void* dst, size_t dst_bytes,
                                               unsigned threads);
AMN_API amn_status amn_model_dequantize_tensor_at(const amn_model* model, size_t index,
                                                  amn_dtype dtype, void* dst, size_t dst_bytes,
                                                  unsigned threads);

/* Receives consecutive byte ranges of a decoded tensor: `size` bytes at
 * `offset` in it (the first call has offset 0, each next one starts where
 * the last ended). `bytes` is valid only during the call. Return 0 to go
 * on, anything else to stop. */
typedef int (*amn_tensor_sink)(void* user, uint64_t offset, const void* bytes, size_t size);

/* Tensor `index` as `dtype`, handed to `sink` chunk by chunk, in order, on
 * the calling thread: for tensors too big for one buffer (or bound for
 * device memory). At most 2 x threads chunks of about chunk_bytes (0: 4 MiB;
 * a chunk holds whole rows or blocks where the scheme needs them) are held
 * at a time. threads as amn_model_dequantize_tensor. The bytes are those
 * amn_model_dequantize_tensor writes. A sink returning non-zero stops the
 * call with AMN_ERR_CANCELLED; the other errors are
 * amn_model_dequantize_tensor's (sink NULL: AMN_ERR_INVALID_ARGUMENT). */
AMN_API amn_status amn_model_dequantize_tensor_chunks(const amn_model* model, size_t index,
                                                      amn_dtype dtype, size_t chunk_bytes,
                                                      unsigned threads, amn_tensor_sink sink,
                                                      void* user);

#ifdef __cplusplus
}
#endif

#endif /* AMN_AMN_MODEL_H_ */
