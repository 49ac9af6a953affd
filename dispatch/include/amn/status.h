// Status: how every fallible library call reports failure (never by abort,
// exit, exception or print). A code, a message, and where it happened.
#ifndef AMN_STATUS_H_
#define AMN_STATUS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "amn/export.h"

namespace amn {

enum class StatusCode : int {
  kOk = 0,
  kInvalidArgument,  // the caller passed something unusable (sizes, names)
  kTruncated,        // the input ends before a structure it declares
  kInvalid,          // the input is malformed
  kUnsupported,      // well-formed, but a feature this build does not handle
  kLimitExceeded,    // a declared size or count is over a ParseLimits bound
  kIo,               // the operating system refused a read or write
  kCancelled,        // the caller asked the work to stop
};

AMN_API std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  Status&& WithByteOffset(uint64_t offset) && {
    byte_offset_ = offset;
    return std::move(*this);
  }
  Status&& WithTensor(std::string name) && {
    tensor_ = std::move(name);
    return std::move(*this);
  }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  std::optional<uint64_t> byte_offset() const { return byte_offset_; }
  const std::string& tensor() const { return tensor_; }

  // One line: "<code>: <message> (tensor 'x', byte offset N)".
  AMN_API std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
  std::optional<uint64_t> byte_offset_;
  std::string tensor_;
};

}  // namespace amn

#define AMN_RETURN_IF_ERROR(expr)             \
  do {                                        \
    ::amn::Status amn_status_ = (expr);       \
    if (!amn_status_.ok()) return amn_status_; \
  } while (0)

#endif  // AMN_STATUS_H_
