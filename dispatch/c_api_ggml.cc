// The C ABI (amn/amn.h), part 2: ggml block types on top of amn::DequantGgml
// and amn::FindGgmlType (amn/ggml_dequant.h).
#include <cstddef>
#include <cstdint>
#include <span>

#include "amn/amn.h"
#include "amn/ggml_dequant.h"
#include "dispatch/c_api_internal.h"

namespace {

// The traits of a ggml id from C (an int, possibly negative); nullptr if unknown.
const amn::GgmlTypeInfo* FindType(int ggml_type) {
  if (ggml_type < 0) return nullptr;
  return amn::FindGgmlType(static_cast<uint32_t>(ggml_type));
}

}  // namespace

extern "C" {

amn_status amn_dequantize_ggml(int ggml_type, const void* src, size_t src_bytes,
                               amn_dtype dst_type, void* dst, size_t n_elems) {
  using namespace amn::capi;
  constexpr const char* kFn = "amn_dequantize_ggml";
  return Guarded(kFn, [&] {
    const amn::GgmlTypeInfo* info = FindType(ggml_type);
    if (info == nullptr) return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "unknown ggml_type");
    if (!info->quantized) {
      return Fail(AMN_ERR_INVALID_ARGUMENT, kFn,
                  "ggml_type is a plain type (use the conversions), not a block type");
    }
    amn::ElemType out_type;
    if (!FloatType(dst_type, &out_type)) {
      return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "dst_type must be AMN_F32, AMN_F16 or AMN_BF16");
    }
    if (src_bytes % info->block_bytes != 0) {
      return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "src_bytes is not a whole number of blocks");
    }
    uint64_t expected_elems = 0, out_bytes = 0;
    if (!Mul(src_bytes / info->block_bytes, info->block_elems, &expected_elems) ||
        expected_elems > SIZE_MAX) {
      return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "element count overflows");
    }
    if (n_elems > expected_elems) {
      return Fail(AMN_ERR_INVALID_ARGUMENT, kFn,
                  "n_elems is larger than src_bytes / block_bytes * block_elems");
    }
    if (!Mul(n_elems, amn::ElemTypeBytes(out_type), &out_bytes) || out_bytes > SIZE_MAX) {
      return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "n_elems overflows");
    }
    if (!ValidSpan(src, src_bytes)) {
      return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "src is NULL or wraps around the address space");
    }
    if (!ValidSpan(dst, static_cast<size_t>(out_bytes))) {
      return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "dst is NULL or wraps around the address space");
    }
    if (n_elems < expected_elems) {
      return Fail(AMN_ERR_BUFFER_TOO_SMALL, kFn,
                  "n_elems is smaller than src_bytes / block_bytes * block_elems");
    }
    if (Overlaps(src, src_bytes, dst, static_cast<size_t>(out_bytes))) {
      return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "src and dst overlap");
    }
    const amn_status dispatch = CheckDispatch(kFn);
    if (dispatch != AMN_OK) return dispatch;
    if (src_bytes == 0) return Succeed();
    return FromStatus(kFn, amn::DequantGgml(
                               info->type, {static_cast<const uint8_t*>(src), src_bytes},
                               out_type,
                               {static_cast<std::byte*>(dst), static_cast<size_t>(out_bytes)}));
  });
}

const char* amn_ggml_type_name(int ggml_type) {
  const amn::GgmlTypeInfo* info = FindType(ggml_type);
  // The table's names are string literals, so data() is NUL-terminated.
  return info == nullptr ? nullptr : info->name.data();
}

amn_status amn_ggml_block_size(int ggml_type, size_t* block_elems, size_t* block_bytes) {
  using namespace amn::capi;
  constexpr const char* kFn = "amn_ggml_block_size";
  if (block_elems == nullptr || block_bytes == nullptr) {
    return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "NULL output pointer");
  }
  const amn::GgmlTypeInfo* info = FindType(ggml_type);
  if (info == nullptr) return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "unknown ggml_type");
  *block_elems = info->block_elems;
  *block_bytes = info->block_bytes;
  return Succeed();
}

}  // extern "C"
