// The C ABI (amn/amn.h): argument checks, then the checked C++ kernels.
#include "amn/amn.h"

#include <cstdint>
#include <span>

#include "amn/convert.h"
#include "amn/targets.h"
#include "amn/version.h"
#include "dispatch/dispatch_policy.h"

namespace {

// Checks pointers, lengths and overlap for a src_len -> dst_len call.
template <typename TIn, typename TOut>
amn_status CheckBuffers(const TIn* src, size_t src_len, const TOut* dst, size_t dst_len) {
  if ((src == nullptr && src_len != 0) || (dst == nullptr && dst_len != 0)) {
    return AMN_ERR_INVALID_ARGUMENT;
  }
  if (src_len > SIZE_MAX / sizeof(TIn) || dst_len > SIZE_MAX / sizeof(TOut)) {
    return AMN_ERR_INVALID_ARGUMENT;
  }
  if (dst_len < src_len) return AMN_ERR_BUFFER_TOO_SMALL;
  const auto src_begin = reinterpret_cast<uintptr_t>(src);
  const auto dst_begin = reinterpret_cast<uintptr_t>(dst);
  const uintptr_t src_bytes = src_len * sizeof(TIn);
  const uintptr_t dst_bytes = src_len * sizeof(TOut);  // what will be written
  if (src_bytes > UINTPTR_MAX - src_begin || dst_bytes > UINTPTR_MAX - dst_begin) {
    return AMN_ERR_INVALID_ARGUMENT;
  }
  if (src_bytes != 0 && src_begin < dst_begin + dst_bytes && dst_begin < src_begin + src_bytes) {
    return AMN_ERR_INVALID_ARGUMENT;
  }
  if (!amn::internal::PrepareDispatch().ok()) return AMN_ERR_BAD_ENVIRONMENT;
  return AMN_OK;
}

template <typename TIn, typename TOut>
amn_status Convert(amn::Status (*convert)(std::span<const TIn>, std::span<TOut>),
                   const TIn* src, size_t src_len, TOut* dst, size_t dst_len) {
  const amn_status checked = CheckBuffers(src, src_len, dst, dst_len);
  if (checked != AMN_OK) return checked;
  if (src_len == 0) return AMN_OK;
  const amn::Status status = convert({src, src_len}, {dst, dst_len});
  return status.ok() ? AMN_OK : AMN_ERR_INVALID_ARGUMENT;
}

}  // namespace

extern "C" {

const char* amn_status_string(amn_status status) {
  switch (status) {
    case AMN_OK: return "ok";
    case AMN_ERR_INVALID_ARGUMENT: return "invalid argument";
    case AMN_ERR_BUFFER_TOO_SMALL: return "buffer too small";
    case AMN_ERR_UNSUPPORTED: return "unsupported";
    case AMN_ERR_BAD_ENVIRONMENT: return "AMN_ISA names no target of this build";
  }
  return "unknown status";
}

const char* amn_version(void) { return AMN_VERSION_STRING; }

const char* amn_active_target(void) { return amn::TargetName(amn::ActiveTarget()).data(); }

amn_status amn_set_isa_cap(const char* name) {
  const amn::Status status = amn::SetTargetCap(name == nullptr ? "" : name);
  return status.ok() ? AMN_OK : AMN_ERR_INVALID_ARGUMENT;
}

amn_status amn_f32_to_bf16(const float* s, size_t n, uint16_t* d, size_t m) { return Convert(amn::ConvertF32ToBf16, s, n, d, m); }
amn_status amn_f32_to_f16(const float* s, size_t n, uint16_t* d, size_t m) { return Convert(amn::ConvertF32ToF16, s, n, d, m); }
amn_status amn_bf16_to_f32(const uint16_t* s, size_t n, float* d, size_t m) { return Convert(amn::ConvertBf16ToF32, s, n, d, m); }
amn_status amn_f16_to_f32(const uint16_t* s, size_t n, float* d, size_t m) { return Convert(amn::ConvertF16ToF32, s, n, d, m); }
amn_status amn_f16_to_bf16(const uint16_t* s, size_t n, uint16_t* d, size_t m) { return Convert(amn::ConvertF16ToBf16, s, n, d, m); }
amn_status amn_bf16_to_f16(const uint16_t* s, size_t n, uint16_t* d, size_t m) { return Convert(amn::ConvertBf16ToF16, s, n, d, m); }
amn_status amn_e4m3_to_f32(const uint8_t* s, size_t n, float* d, size_t m) { return Convert(amn::ConvertE4m3ToF32, s, n, d, m); }
amn_status amn_e4m3_to_bf16(const uint8_t* s, size_t n, uint16_t* d, size_t m) { return Convert(amn::ConvertE4m3ToBf16, s, n, d, m); }
amn_status amn_e4m3_to_f16(const uint8_t* s, size_t n, uint16_t* d, size_t m) { return Convert(amn::ConvertE4m3ToF16, s, n, d, m); }
amn_status amn_e5m2_to_f32(const uint8_t* s, size_t n, float* d, size_t m) { return Convert(amn::ConvertE5m2ToF32, s, n, d, m); }
amn_status amn_e5m2_to_bf16(const uint8_t* s, size_t n, uint16_t* d, size_t m) { return Convert(amn::ConvertE5m2ToBf16, s, n, d, m); }
amn_status amn_e5m2_to_f16(const uint8_t* s, size_t n, uint16_t* d, size_t m) { return Convert(amn::ConvertE5m2ToF16, s, n, d, m); }

}  // extern "C"
