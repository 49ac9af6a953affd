// The C ABI (amn/amn.h), part 5: the kernel table (amn::Kernels(),
// amn/kernel_registry.h) for enumeration and self-tests: names, sizes,
// output types, the dispatched and reference runs, and the probed target.
#include <cstddef>
#include <cstdint>
#include <span>

#include "amn/amn.h"
#include "amn/kernel_registry.h"
#include "amn/targets.h"
#include "dispatch/c_api_internal.h"

namespace amn::capi {
namespace {

const KernelInfo* FindKernel(size_t i) {
  const std::span<const KernelInfo> kernels = Kernels();
  return i < kernels.size() ? &kernels[i] : nullptr;
}

amn_dtype ToDtype(ElemType type) {
  switch (type) {
    case ElemType::kF32: return AMN_F32;
    case ElemType::kF16: return AMN_F16;
    case ElemType::kBf16: return AMN_BF16;
    case ElemType::kF8E4m3: return AMN_E4M3;
    case ElemType::kF8E5m2: return AMN_E5M2;
  }
  return AMN_F32;
}

// Input bytes for n_elems outputs (KernelInBytes with checked arithmetic).
amn_status InputBytes(const char* fn, const KernelInfo& k, size_t n_elems, uint64_t* bytes) {
  if (n_elems % k.block_elems != 0) {
    return Fail(AMN_ERR_INVALID_ARGUMENT, fn, "n_elems is not a multiple of the kernel's block");
  }
  const bool ok = k.in_block_bytes == 0
                      ? Mul(n_elems, ElemTypeBytes(k.in), bytes)
                      : Mul(n_elems / k.block_elems, k.in_block_bytes, bytes);
  if (!ok || *bytes > SIZE_MAX) return Fail(AMN_ERR_INVALID_ARGUMENT, fn, "input size overflows");
  return AMN_OK;
}

// Output bytes for n_elems outputs (KernelOutBytes with checked arithmetic;
// n_elems is already a multiple of the kernel's block).
bool OutputBytes(const KernelInfo& k, size_t n_elems, uint64_t* bytes) {
  const bool ok = k.out_unit_bytes == 0 ? Mul(n_elems, ElemTypeBytes(k.out), bytes)
                                        : Mul(n_elems / k.block_elems, k.out_unit_bytes, bytes);
  return ok && *bytes <= SIZE_MAX;
}

amn_status Run(const char* fn, bool reference, size_t i, const void* src, size_t src_bytes,
               void* dst, size_t dst_bytes, size_t n_elems) {
  const KernelInfo* k = FindKernel(i);
  if (k == nullptr) return Fail(AMN_ERR_INVALID_ARGUMENT, fn, "no kernel at this index");
  uint64_t in_bytes = 0, out_bytes = 0;
  const amn_status sized = InputBytes(fn, *k, n_elems, &in_bytes);
  if (sized != AMN_OK) return sized;
  if (!OutputBytes(*k, n_elems, &out_bytes)) {
    return Fail(AMN_ERR_INVALID_ARGUMENT, fn, "output size overflows");
  }
  if (!ValidSpan(src, src_bytes)) {
    return Fail(AMN_ERR_INVALID_ARGUMENT, fn, "src is NULL or wraps around the address space");
  }
  if (!ValidSpan(dst, dst_bytes)) {
    return Fail(AMN_ERR_INVALID_ARGUMENT, fn, "dst is NULL or wraps around the address space");
  }
  if (src_bytes < in_bytes) return Fail(AMN_ERR_INVALID_ARGUMENT, fn, "src_bytes is too small");
  if (dst_bytes < out_bytes) return Fail(AMN_ERR_BUFFER_TOO_SMALL, fn, "dst_bytes is too small");
  if (Overlaps(src, static_cast<size_t>(in_bytes), dst, static_cast<size_t>(out_bytes))) {
    return Fail(AMN_ERR_INVALID_ARGUMENT, fn, "src and dst overlap");
  }
  if (!reference) {
    const amn_status dispatch = CheckDispatch(fn);
    if (dispatch != AMN_OK) return dispatch;
  }
  if (n_elems == 0) return Succeed();
  (reference ? k->run_reference : k->run)(src, n_elems, dst);
  return Succeed();
}

}  // namespace
}  // namespace amn::capi

using namespace amn::capi;  // NOLINT: the entry points below only forward

extern "C" {

size_t amn_kernel_count(void) { return amn::Kernels().size(); }

const char* amn_kernel_name(size_t i) {
  const amn::KernelInfo* k = FindKernel(i);
  // The table's names are string literals, so data() is NUL-terminated.
  return k == nullptr ? nullptr : k->name.data();
}

amn_status amn_kernel_block_elems(size_t i, size_t* block_elems) {
  constexpr const char* kFn = "amn_kernel_block_elems";
  const amn::KernelInfo* k = FindKernel(i);
  if (k == nullptr) return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "no kernel at this index");
  if (block_elems == nullptr) return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "block_elems is NULL");
  *block_elems = k->block_elems;
  return Succeed();
}

amn_status amn_kernel_input_bytes(size_t i, size_t n_elems, size_t* bytes) {
  constexpr const char* kFn = "amn_kernel_input_bytes";
  const amn::KernelInfo* k = FindKernel(i);
  if (k == nullptr) return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "no kernel at this index");
  if (bytes == nullptr) return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "bytes is NULL");
  uint64_t in_bytes = 0;
  const amn_status sized = InputBytes(kFn, *k, n_elems, &in_bytes);
  if (sized != AMN_OK) return sized;
  *bytes = static_cast<size_t>(in_bytes);
  return Succeed();
}

amn_status amn_kernel_output_dtype(size_t i, amn_dtype* dtype) {
  constexpr const char* kFn = "amn_kernel_output_dtype";
  const amn::KernelInfo* k = FindKernel(i);
  if (k == nullptr) return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "no kernel at this index");
  if (dtype == nullptr) return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "dtype is NULL");
  *dtype = ToDtype(k->out);
  return Succeed();
}

amn_status amn_kernel_output_bytes(size_t i, size_t n_elems, size_t* bytes) {
  constexpr const char* kFn = "amn_kernel_output_bytes";
  const amn::KernelInfo* k = FindKernel(i);
  if (k == nullptr) return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "no kernel at this index");
  if (bytes == nullptr) return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "bytes is NULL");
  if (n_elems % k->block_elems != 0) {
    return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "n_elems is not a multiple of the kernel's block");
  }
  uint64_t out = 0;
  if (!OutputBytes(*k, n_elems, &out)) {
    return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "output size overflows");
  }
  *bytes = static_cast<size_t>(out);
  return Succeed();
}

amn_status amn_kernel_run(size_t i, const void* src, size_t src_bytes, void* dst,
                          size_t dst_bytes, size_t n_elems) {
  return Guarded("amn_kernel_run", [&] {
    return Run("amn_kernel_run", false, i, src, src_bytes, dst, dst_bytes, n_elems);
  });
}

amn_status amn_kernel_run_reference(size_t i, const void* src, size_t src_bytes, void* dst,
                                    size_t dst_bytes, size_t n_elems) {
  return Guarded("amn_kernel_run_reference", [&] {
    return Run("amn_kernel_run_reference", true, i, src, src_bytes, dst, dst_bytes, n_elems);
  });
}

const char* amn_kernel_target(size_t i) {
  const amn::KernelInfo* k = FindKernel(i);
  if (k == nullptr) return nullptr;
  try {
    // Highway's target names are string literals.
    return amn::TargetName(k->probe()).data();
  } catch (...) {
    return nullptr;
  }
}

}  // extern "C"
