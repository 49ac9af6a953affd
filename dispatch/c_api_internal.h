// Internal to the C ABI (dispatch/c_api*.cc): the checks every entry point
// shares, the amn::Status -> amn_status mapping and the per-thread last
// error. Nothing here allocates, throws or prints.
#ifndef AMN_DISPATCH_C_API_INTERNAL_H_
#define AMN_DISPATCH_C_API_INTERNAL_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <type_traits>

#include "amn/amn.h"
#include "amn/elem_type.h"
#include "amn/status.h"

namespace amn::capi {

// Records "<function>: <what>" as this thread's last error; returns status.
amn_status Fail(amn_status status, const char* function, const char* what);

// Clears this thread's last error; returns AMN_OK.
amn_status Succeed();

// Maps a C++ status (kInvalidArgument and the input codes -> invalid
// argument, kUnsupported -> unsupported, the rest -> internal) and records
// its message.
amn_status FromStatus(const char* function, const Status& status);

// AMN_ERR_BAD_ENVIRONMENT while AMN_ISA names no target, else AMN_OK.
amn_status CheckDispatch(const char* function);

// Runs body() (which returns amn_status), turning any exception of the C++
// layer into AMN_ERR_INTERNAL so that none crosses the C boundary.
template <typename Body>
amn_status Guarded(const char* function, const Body& body) noexcept {
  try {
    return body();
  } catch (...) {
    return Fail(AMN_ERR_INTERNAL, function, "the C++ layer threw (out of memory?)");
  }
}

// a * b, false on overflow.
inline bool Mul(uint64_t a, uint64_t b, uint64_t* product) {
  return !__builtin_mul_overflow(a, b, product);
}

// ceil(a / b) for b >= 1, without overflow.
inline uint64_t CeilDiv(uint64_t a, uint64_t b) { return a == 0 ? 0 : (a - 1) / b + 1; }

// The value of an enum a C caller passed. C lets any int sit in a C enum,
// while C++ may assume none outside the enumerators' range: the value is
// read as its underlying type, never loaded as the enum (UBSan's "enum").
template <typename Enum>
int64_t EnumValue(const Enum& e) {
  std::underlying_type_t<Enum> value;
  std::memcpy(&value, &e, sizeof(value));
  return static_cast<int64_t>(value);
}

// amn_dtype -> ElemType for the three float types (outputs and scales).
// Enums from the caller are taken by reference, read with EnumValue.
bool FloatType(const amn_dtype& type, ElemType* elem);

// One input tensor of a call, as the caller described it.
struct Input {
  const char* name;   // the params field, for the error message
  const void* data;
  size_t bytes;
  uint64_t expected;  // the bytes its shape needs
};

// The checks every family call makes once its shape is valid, in this
// order: each input non-NULL when non-empty, not wrapping the address space
// and exactly `expected` bytes (invalid argument); `out_bytes` (what the call
// writes) representable and dst non-NULL when it is non-zero (invalid);
// dst_bytes >= out_bytes (buffer too small); dst[0, out_bytes) disjoint from
// every input (invalid); AMN_ISA valid (bad environment).
amn_status CheckCall(const char* function, std::initializer_list<Input> inputs, const void* dst,
                     size_t dst_bytes, uint64_t out_bytes);

// Checks row_begin <= row_end <= n_rows (invalid argument otherwise) and
// sets *out_bytes = (row_end - row_begin) * row_elems elements of out_type
// (invalid argument when that overflows).
amn_status CheckRows(const char* function, uint64_t row_begin, uint64_t row_end, uint64_t n_rows,
                     uint64_t row_elems, ElemType out_type, uint64_t* out_bytes);

// Whether [a, a + a_bytes) and [b, b + b_bytes) share a byte (empty spans
// share none). Both spans must not wrap.
bool Overlaps(const void* a, size_t a_bytes, const void* b, size_t b_bytes);

// Whether [p, p + bytes) is a valid span: non-NULL when non-empty, no wrap.
bool ValidSpan(const void* p, size_t bytes);

}  // namespace amn::capi

#endif  // AMN_DISPATCH_C_API_INTERNAL_H_
