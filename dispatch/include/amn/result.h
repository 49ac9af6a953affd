// Result<T>: a value or the Status explaining why there is none.
#ifndef AMN_RESULT_H_
#define AMN_RESULT_H_

#include <optional>
#include <utility>

#include "amn/status.h"

namespace amn {

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {}  // NOLINT: must not be OK

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace amn

// Evaluates a Result expression; on error returns its Status, else moves the
// value into `lhs` (a declaration such as `auto x`).
#define AMN_ASSIGN_OR_RETURN(lhs, expr) AMN_ASSIGN_OR_RETURN_IMPL(AMN_CONCAT(amn_r_, __LINE__), lhs, expr)
#define AMN_CONCAT_INNER(a, b) a##b
#define AMN_CONCAT(a, b) AMN_CONCAT_INNER(a, b)
#define AMN_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                              \
  if (!tmp.ok()) return tmp.status();             \
  lhs = std::move(tmp).value()

#endif  // AMN_RESULT_H_
