// The table of every kernel, for code that iterates them all: `amn bench`,
// perf/ suites, the differential fuzzer and the per-target tests. Entries
// hold unchecked row functions; library users call the checked API in
// amn/convert.h (or amn.h from C) instead.
#ifndef AMN_KERNEL_REGISTRY_H_
#define AMN_KERNEL_REGISTRY_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "amn/elem_type.h"
#include "amn/export.h"
#include "amn/targets.h"

namespace amn {

// A row function: n_elems inputs -> n_elems outputs. No checks: the buffers
// must hold KernelInBytes(kernel, n_elems) input bytes and n_elems outputs
// and must not overlap.
using RowFn = void (*)(const void* in, size_t n_elems, void* out);

struct KernelInfo {
  std::string_view name;    // "<in>_to_<out>", e.g. "f32_to_bf16"
  std::string_view family;  // the dispatch TU, e.g. "float_convert"
  ElemType in;
  ElemType out;
  RowFn run;            // dispatched to the active target
  RowFn run_reference;  // the scalar reference in kernels/ref/
  TargetId (*probe)();  // the target `run` dispatches to now
  // Block-quantized inputs (ggml): n_elems must be a multiple of block_elems
  // and the input is n_elems / block_elems blocks of in_block_bytes bytes
  // (any bytes are a valid input); `in` then only names the scale type.
  // 0 / 1 for plain inputs of `in` elements.
  uint32_t in_block_bytes = 0;
  uint32_t block_elems = 1;
  // Encoders (family "*_encode"): n_elems inputs give n_elems / block_elems
  // units of out_unit_bytes output bytes (codes, then their scales); `out`
  // then names the code type (FP8) or the scale type. 0 for decoders: the
  // output is n_elems elements of `out`.
  uint32_t out_unit_bytes = 0;
};

// Input bytes for n_elems outputs.
inline size_t KernelInBytes(const KernelInfo& kernel, size_t n_elems) {
  return kernel.in_block_bytes == 0 ? n_elems * ElemTypeBytes(kernel.in)
                                    : n_elems / kernel.block_elems * kernel.in_block_bytes;
}

// Output bytes for n_elems outputs (n_elems a multiple of block_elems).
inline size_t KernelOutBytes(const KernelInfo& kernel, size_t n_elems) {
  return kernel.out_unit_bytes == 0 ? n_elems * ElemTypeBytes(kernel.out)
                                    : n_elems / kernel.block_elems * kernel.out_unit_bytes;
}

AMN_API std::span<const KernelInfo> Kernels();

}  // namespace amn

#endif  // AMN_KERNEL_REGISTRY_H_
