// Status formatting.
#include "amn/status.h"

namespace amn {

std::string_view StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "ok";
    case StatusCode::kInvalidArgument: return "invalid argument";
    case StatusCode::kTruncated: return "truncated";
    case StatusCode::kInvalid: return "invalid";
    case StatusCode::kUnsupported: return "unsupported";
    case StatusCode::kLimitExceeded: return "limit exceeded";
    case StatusCode::kIo: return "I/O error";
    case StatusCode::kCancelled: return "cancelled";
  }
  return "unknown";
}

std::string Status::ToString() const {
  std::string text(StatusCodeName(code_));
  if (!message_.empty()) text += ": " + message_;
  if (!tensor_.empty() || byte_offset_) {
    text += " (";
    if (!tensor_.empty()) text += "tensor '" + tensor_ + "'";
    if (!tensor_.empty() && byte_offset_) text += ", ";
    if (byte_offset_) text += "byte offset " + std::to_string(*byte_offset_);
    text += ")";
  }
  return text;
}

}  // namespace amn
