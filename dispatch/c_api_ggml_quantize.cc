// The C ABI (amn/amn.h) of the ggml encoders: amn_quantize_ggml over one F32
// row, and amn_ggml_row_size. Spans are checked here (non-NULL when
// non-empty, no wrap, dst exactly the row's bytes and disjoint from src and
// imatrix), then the checked C++ call amn::QuantizeGgml runs, whose
// refusals (NaN/Inf with the element's index, no encoder) come back as
// AMN_ERR_INVALID_ARGUMENT / AMN_ERR_UNSUPPORTED with its message.
#include <cstddef>
#include <cstdint>
#include <span>

#include "amn/amn.h"
#include "amn/ggml_dequant.h"
#include "amn/quantize.h"
#include "dispatch/c_api_internal.h"

namespace amn::capi {
namespace {

const GgmlTypeInfo* FindTypeC(int ggml_type) {
  return ggml_type < 0 ? nullptr : FindGgmlType(static_cast<uint32_t>(ggml_type));
}

amn_status RowSizeC(const char* fn, int ggml_type, size_t n_elems, size_t* bytes) {
  const GgmlTypeInfo* info = FindTypeC(ggml_type);
  if (info == nullptr) return Fail(AMN_ERR_INVALID_ARGUMENT, fn, "unknown ggml_type");
  if (n_elems % info->block_elems != 0) {
    return Fail(AMN_ERR_INVALID_ARGUMENT, fn,
                "n_elems is not a whole number of the type's blocks");
  }
  uint64_t b = 0;
  if (!Mul(n_elems / info->block_elems, info->block_bytes, &b) || b > SIZE_MAX) {
    return Fail(AMN_ERR_INVALID_ARGUMENT, fn, "the row's size overflows");
  }
  *bytes = static_cast<size_t>(b);
  return AMN_OK;
}

amn_status QuantizeGgmlC(int ggml_type, const float* src, size_t n_elems, const float* imatrix,
                         void* dst, size_t dst_bytes) {
  constexpr const char* kFn = "amn_quantize_ggml";
  size_t row_bytes = 0;
  amn_status st = RowSizeC(kFn, ggml_type, n_elems, &row_bytes);
  if (st != AMN_OK) return st;
  uint64_t src_bytes = 0;
  if (!Mul(n_elems, 4, &src_bytes) || src_bytes > SIZE_MAX) {
    return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "n_elems overflows");
  }
  const size_t in_bytes = static_cast<size_t>(src_bytes);
  if (!ValidSpan(src, in_bytes) || (n_elems != 0 && src == nullptr)) {
    return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "src is NULL or wraps the address space");
  }
  if (imatrix != nullptr && !ValidSpan(imatrix, in_bytes)) {
    return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "imatrix wraps the address space");
  }
  if (!ValidSpan(dst, dst_bytes) || (row_bytes != 0 && dst == nullptr)) {
    return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "dst is NULL or wraps the address space");
  }
  if (dst_bytes < row_bytes) return Fail(AMN_ERR_BUFFER_TOO_SMALL, kFn, "dst");
  if (Overlaps(dst, row_bytes, src, in_bytes) ||
      (imatrix != nullptr && Overlaps(dst, row_bytes, imatrix, in_bytes))) {
    return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "dst overlaps src or imatrix");
  }
  st = CheckDispatch(kFn);
  if (st != AMN_OK) return st;
  const FloatRows in{ElemType::kF32,
                     n_elems == 0 ? std::span<const std::byte>()
                                  : std::span<const std::byte>(
                                        reinterpret_cast<const std::byte*>(src), in_bytes),
                     n_elems == 0 ? 0u : 1u, n_elems};
  const std::span<const float> weights =
      imatrix == nullptr ? std::span<const float>() : std::span<const float>(imatrix, n_elems);
  const std::span<std::byte> out =
      row_bytes == 0 ? std::span<std::byte>()
                     : std::span<std::byte>(static_cast<std::byte*>(dst), row_bytes);
  const Status s = QuantizeGgml(static_cast<GgmlType>(ggml_type), in, weights, out, nullptr);
  if (!s.ok()) return FromStatus(kFn, s);
  return Succeed();
}

}  // namespace
}  // namespace amn::capi

extern "C" {

using amn::capi::Fail;
using amn::capi::Guarded;

amn_status amn_ggml_row_size(int ggml_type, size_t n_elems, size_t* bytes) {
  constexpr const char* kFn = "amn_ggml_row_size";
  if (bytes == nullptr) return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "bytes is NULL");
  const amn_status st = amn::capi::RowSizeC(kFn, ggml_type, n_elems, bytes);
  return st == AMN_OK ? amn::capi::Succeed() : st;
}

amn_status amn_quantize_ggml(int ggml_type, const float* src, size_t n_elems,
                             const float* imatrix, void* dst, size_t dst_bytes) {
  return Guarded("amn_quantize_ggml", [&] {
    return amn::capi::QuantizeGgmlC(ggml_type, src, n_elems, imatrix, dst, dst_bytes);
  });
}

}  // extern "C"
