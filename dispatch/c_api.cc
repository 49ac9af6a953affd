// The C ABI (amn/amn.h), part 1: version, statuses and the last error,
// targets, the element conversions, and the checks the other c_api_*.cc
// files share (dispatch/c_api_internal.h).
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>

#include "amn/amn.h"
#include "amn/convert.h"
#include "amn/targets.h"
#include "amn/version.h"
#include "dispatch/c_api_internal.h"
#include "dispatch/dispatch_policy.h"

namespace amn::capi {
namespace {

// One buffer per thread, reused: amn_last_error() allocates nothing per call.
constexpr size_t kLastErrorBytes = 1024;  // room for a path and a tensor name
thread_local char t_last_error[kLastErrorBytes];

// Appends text at t_last_error[*used], truncating at the buffer's end.
void Append(const char* text, size_t* used) {
  while (*text != '\0' && *used + 1 < kLastErrorBytes) t_last_error[(*used)++] = *text++;
  t_last_error[*used] = '\0';
}

void Record(const char* function, const char* what) {
  size_t used = 0;
  Append(function, &used);
  Append(": ", &used);
  Append(what, &used);
}

}  // namespace

amn_status Fail(amn_status status, const char* function, const char* what) {
  Record(function, what);
  return status;
}

amn_status Succeed() {
  t_last_error[0] = '\0';
  return AMN_OK;
}

amn_status FromStatus(const char* function, const Status& status) {
  if (status.ok()) return Succeed();
  Record(function, status.message().c_str());
  switch (status.code()) {
    case StatusCode::kOk:
      return AMN_OK;
    case StatusCode::kInvalidArgument:
    case StatusCode::kTruncated:
    case StatusCode::kInvalid:
    case StatusCode::kLimitExceeded:
      return AMN_ERR_INVALID_ARGUMENT;
    case StatusCode::kUnsupported:
      return AMN_ERR_UNSUPPORTED;
    case StatusCode::kIo:
    case StatusCode::kCancelled:
      return AMN_ERR_INTERNAL;
  }
  return AMN_ERR_INTERNAL;
}

amn_status CheckDispatch(const char* function) {
  if (internal::PrepareDispatch().ok()) return AMN_OK;
  return Fail(AMN_ERR_BAD_ENVIRONMENT, function, "AMN_ISA names no target of this build");
}

bool FloatType(const amn_dtype& type, ElemType* elem) {
  switch (EnumValue(type)) {
    case AMN_F32: *elem = ElemType::kF32; return true;
    case AMN_F16: *elem = ElemType::kF16; return true;
    case AMN_BF16: *elem = ElemType::kBf16; return true;
    case AMN_E4M3:
    case AMN_E5M2: return false;
  }
  return false;
}

bool ValidSpan(const void* p, size_t bytes) {
  if (bytes == 0) return true;
  return p != nullptr && bytes <= UINTPTR_MAX - reinterpret_cast<uintptr_t>(p);
}

bool Overlaps(const void* a, size_t a_bytes, const void* b, size_t b_bytes) {
  if (a_bytes == 0 || b_bytes == 0) return false;
  const auto a_begin = reinterpret_cast<uintptr_t>(a);
  const auto b_begin = reinterpret_cast<uintptr_t>(b);
  return a_begin < b_begin + b_bytes && b_begin < a_begin + a_bytes;
}

amn_status CheckCall(const char* function, std::initializer_list<Input> inputs, const void* dst,
                     size_t dst_bytes, uint64_t out_bytes) {
  for (const Input& in : inputs) {
    if (!ValidSpan(in.data, in.bytes)) {
      Record(function, in.name);
      size_t used = std::strlen(t_last_error);
      Append(" is NULL or wraps around the address space", &used);
      return AMN_ERR_INVALID_ARGUMENT;
    }
    if (in.bytes != in.expected) {
      Record(function, in.name);
      size_t used = std::strlen(t_last_error);
      Append("_bytes does not match the shape", &used);
      return AMN_ERR_INVALID_ARGUMENT;
    }
  }
  if (out_bytes > SIZE_MAX) {
    return Fail(AMN_ERR_INVALID_ARGUMENT, function, "output size overflows");
  }
  const auto out_size = static_cast<size_t>(out_bytes);
  if (!ValidSpan(dst, out_size)) {
    return Fail(AMN_ERR_INVALID_ARGUMENT, function,
                "dst is NULL or wraps around the address space");
  }
  if (dst_bytes < out_size) {
    return Fail(AMN_ERR_BUFFER_TOO_SMALL, function, "dst_bytes is too small");
  }
  for (const Input& in : inputs) {
    if (Overlaps(dst, out_size, in.data, in.bytes)) {
      Record(function, "dst overlaps ");
      size_t used = std::strlen(t_last_error);
      Append(in.name, &used);
      return AMN_ERR_INVALID_ARGUMENT;
    }
  }
  return CheckDispatch(function);
}

amn_status CheckRows(const char* function, uint64_t row_begin, uint64_t row_end, uint64_t n_rows,
                     uint64_t row_elems, ElemType out_type, uint64_t* out_bytes) {
  if (row_begin > row_end || row_end > n_rows) {
    return Fail(AMN_ERR_INVALID_ARGUMENT, function, "the range is not inside the tensor's rows");
  }
  uint64_t elems = 0;
  if (!Mul(row_end - row_begin, row_elems, &elems) ||
      !Mul(elems, ElemTypeBytes(out_type), out_bytes)) {
    return Fail(AMN_ERR_INVALID_ARGUMENT, function, "output size overflows");
  }
  return AMN_OK;
}

namespace {

// Checks pointers, lengths and overlap for a src_len -> dst_len conversion.
template <typename TIn, typename TOut>
amn_status CheckConversion(const char* function, const TIn* src, size_t src_len, const TOut* dst,
                           size_t dst_len) {
  if ((src == nullptr && src_len != 0) || (dst == nullptr && dst_len != 0)) {
    return Fail(AMN_ERR_INVALID_ARGUMENT, function, "NULL buffer with a non-zero length");
  }
  if (src_len > SIZE_MAX / sizeof(TIn) || dst_len > SIZE_MAX / sizeof(TOut)) {
    return Fail(AMN_ERR_INVALID_ARGUMENT, function, "length overflows");
  }
  if (dst_len < src_len) return Fail(AMN_ERR_BUFFER_TOO_SMALL, function, "dst_len < src_len");
  const size_t src_bytes = src_len * sizeof(TIn);
  const size_t dst_bytes = src_len * sizeof(TOut);  // what will be written
  if (!ValidSpan(src, src_bytes) || !ValidSpan(dst, dst_bytes)) {
    return Fail(AMN_ERR_INVALID_ARGUMENT, function, "a buffer wraps around the address space");
  }
  if (Overlaps(src, src_bytes, dst, dst_bytes)) {
    return Fail(AMN_ERR_INVALID_ARGUMENT, function, "src and dst overlap");
  }
  return CheckDispatch(function);
}

template <typename TIn, typename TOut>
amn_status Convert(const char* function, Status (*convert)(std::span<const TIn>, std::span<TOut>),
                   const TIn* src, size_t src_len, TOut* dst, size_t dst_len) {
  return Guarded(function, [&] {
    const amn_status checked = CheckConversion(function, src, src_len, dst, dst_len);
    if (checked != AMN_OK) return checked;
    if (src_len == 0) return Succeed();
    return FromStatus(function, convert({src, src_len}, {dst, dst_len}));
  });
}

}  // namespace
}  // namespace amn::capi

using amn::capi::Convert;

extern "C" {

int amn_abi_version(void) { return AMN_ABI_VERSION; }

const char* amn_status_string(amn_status status) {
  switch (amn::capi::EnumValue(status)) {
    case AMN_OK: return "ok";
    case AMN_ERR_INVALID_ARGUMENT: return "invalid argument";
    case AMN_ERR_BUFFER_TOO_SMALL: return "buffer too small";
    case AMN_ERR_UNSUPPORTED: return "unsupported";
    case AMN_ERR_BAD_ENVIRONMENT: return "AMN_ISA names no target of this build";
    case AMN_ERR_INTERNAL: return "internal error";
    case AMN_ERR_INVALID_INPUT: return "invalid input";
    case AMN_ERR_IO: return "input/output error";
    case AMN_ERR_CANCELLED: return "cancelled";
  }
  return "unknown status";
}

const char* amn_last_error(void) { return amn::capi::t_last_error; }

const char* amn_version(void) { return AMN_VERSION_STRING; }

size_t amn_dtype_size(amn_dtype type) {
  switch (amn::capi::EnumValue(type)) {
    case AMN_F32: return 4;
    case AMN_F16:
    case AMN_BF16: return 2;
    case AMN_E4M3:
    case AMN_E5M2: return 1;
  }
  return 0;
}

const char* amn_active_target(void) {
  try {
    return amn::TargetName(amn::ActiveTarget()).data();
  } catch (...) {
    return "unknown";
  }
}

amn_status amn_set_isa_cap(const char* name) {
  constexpr const char* kFn = "amn_set_isa_cap";
  return amn::capi::Guarded(kFn, [&] {
    const std::string_view target = name == nullptr ? "" : name;
    // Looked up first so that an unknown name costs no C++ error message.
    if (!target.empty() && !amn::FindTarget(target)) {
      return amn::capi::Fail(AMN_ERR_INVALID_ARGUMENT, kFn,
                             "no target of this build has that name");
    }
    return amn::capi::FromStatus(kFn, amn::SetTargetCap(target));
  });
}

amn_status amn_f32_to_bf16(const float* s, size_t n, uint16_t* d, size_t m) { return Convert("amn_f32_to_bf16", amn::ConvertF32ToBf16, s, n, d, m); }
amn_status amn_f32_to_f16(const float* s, size_t n, uint16_t* d, size_t m) { return Convert("amn_f32_to_f16", amn::ConvertF32ToF16, s, n, d, m); }
amn_status amn_bf16_to_f32(const uint16_t* s, size_t n, float* d, size_t m) { return Convert("amn_bf16_to_f32", amn::ConvertBf16ToF32, s, n, d, m); }
amn_status amn_f16_to_f32(const uint16_t* s, size_t n, float* d, size_t m) { return Convert("amn_f16_to_f32", amn::ConvertF16ToF32, s, n, d, m); }
amn_status amn_f16_to_bf16(const uint16_t* s, size_t n, uint16_t* d, size_t m) { return Convert("amn_f16_to_bf16", amn::ConvertF16ToBf16, s, n, d, m); }
amn_status amn_bf16_to_f16(const uint16_t* s, size_t n, uint16_t* d, size_t m) { return Convert("amn_bf16_to_f16", amn::ConvertBf16ToF16, s, n, d, m); }
amn_status amn_e4m3_to_f32(const uint8_t* s, size_t n, float* d, size_t m) { return Convert("amn_e4m3_to_f32", amn::ConvertE4m3ToF32, s, n, d, m); }
amn_status amn_e4m3_to_bf16(const uint8_t* s, size_t n, uint16_t* d, size_t m) { return Convert("amn_e4m3_to_bf16", amn::ConvertE4m3ToBf16, s, n, d, m); }
amn_status amn_e4m3_to_f16(const uint8_t* s, size_t n, uint16_t* d, size_t m) { return Convert("amn_e4m3_to_f16", amn::ConvertE4m3ToF16, s, n, d, m); }
amn_status amn_e5m2_to_f32(const uint8_t* s, size_t n, float* d, size_t m) { return Convert("amn_e5m2_to_f32", amn::ConvertE5m2ToF32, s, n, d, m); }
amn_status amn_e5m2_to_bf16(const uint8_t* s, size_t n, uint16_t* d, size_t m) { return Convert("amn_e5m2_to_bf16", amn::ConvertE5m2ToBf16, s, n, d, m); }
amn_status amn_e5m2_to_f16(const uint8_t* s, size_t n, uint16_t* d, size_t m) { return Convert("amn_e5m2_to_f16", amn::ConvertE5m2ToF16, s, n, d, m); }

}  // extern "C"
