// Result<T>: either a T or the Status that explains why there is none.
// GCC 12 has no std::expected in C++20; this is the small subset we need.
#pragma once

#include <utility>
#include <variant>

#include "common/status.h"

namespace limits {

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design, like absl::StatusOr
  Result(Status status) : v_(std::move(status)) {  // NOLINT
    LIMITS_CHECK(!std::get<Status>(v_).ok(), "Result built from an OK status has no value");
  }

  bool ok() const { return std::holds_alternative<T>(v_); }

  // The error; OK when a value is held.
  Status status() const& { return ok() ? Status::OK() : std::get<Status>(v_); }
  Status status() && { return ok() ? Status::OK() : std::move(std::get<Status>(v_)); }

  T& value() & { return Checked(); }
  const T& value() const& { return const_cast<Result*>(this)->Checked(); }
  T&& value() && { return std::move(Checked()); }

  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(Checked()); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  T& Checked() {
    LIMITS_CHECK(ok(), std::get<Status>(v_).ToString());
    return std::get<T>(v_);
  }

  std::variant<T, Status> v_;
};

#define LIMITS_CONCAT_INNER(a, b) a##b
#define LIMITS_CONCAT(a, b) LIMITS_CONCAT_INNER(a, b)

// ASSIGN_OR_RETURN(auto x, Compute()); or ASSIGN_OR_RETURN(existing, Compute());
// Returns the error Status from the enclosing function when the Result holds none.
#define ASSIGN_OR_RETURN(lhs, expr) ASSIGN_OR_RETURN_IMPL(LIMITS_CONCAT(limits_result_, __LINE__), lhs, expr)
#define ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                          \
  if (!tmp.ok()) return std::move(tmp).status(); \
  lhs = std::move(tmp).value()

}  // namespace limits
