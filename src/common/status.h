// Status: the outcome of an operation that can fail, carried by value across every layer.
// Libraries we call report errors by value (rocksdb::Status, RdKafka::ErrorCode, grpc::Status),
// and our code runs inside their callbacks, so exceptions stop at startup; see STYLE.md §3.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace limits {

enum class StatusCode : uint8_t {
  kOk,
  kNotFound,
  kInvalidArgument,
  kCorruption,
  kIOError,
  kUnavailable,
  kShutdown,
  kFailedPrecondition,
  kInternal,
  kWouldBlock,  // the call would have had to wait (for a lock) and changed nothing; retry where waiting is fine
};

std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK

  static Status OK() { return Status(); }
  static Status NotFound(std::string msg) { return {StatusCode::kNotFound, std::move(msg)}; }
  static Status InvalidArgument(std::string msg) { return {StatusCode::kInvalidArgument, std::move(msg)}; }
  static Status Corruption(std::string msg) { return {StatusCode::kCorruption, std::move(msg)}; }
  static Status IOError(std::string msg) { return {StatusCode::kIOError, std::move(msg)}; }
  static Status Unavailable(std::string msg) { return {StatusCode::kUnavailable, std::move(msg)}; }
  static Status Shutdown(std::string msg) { return {StatusCode::kShutdown, std::move(msg)}; }
  static Status FailedPrecondition(std::string msg) {
    return {StatusCode::kFailedPrecondition, std::move(msg)};
  }
  static Status Internal(std::string msg) { return {StatusCode::kInternal, std::move(msg)}; }
  static Status WouldBlock(std::string msg) { return {StatusCode::kWouldBlock, std::move(msg)}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  bool IsNotFound() const { return code_ == StatusCode::kNotFound; }
  bool IsInvalidArgument() const { return code_ == StatusCode::kInvalidArgument; }
  bool IsCorruption() const { return code_ == StatusCode::kCorruption; }
  bool IsWouldBlock() const { return code_ == StatusCode::kWouldBlock; }

  // Adds the context of one more hop, as Go's %w does: "open p00017: <message>".
  Status Prefixed(std::string_view context) const;

  // "Corruption: checkpoint of p00017: short value"; "OK" when ok.
  std::string ToString() const;

  friend bool operator==(const Status&, const Status&) = default;

 private:
  Status(StatusCode code, std::string msg) : code_(code), message_(std::move(msg)) {}

  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// Evaluates a Status expression and returns it from the enclosing function when not ok.
#define RETURN_IF_ERROR(expr)                          \
  do {                                                 \
    ::limits::Status limits_status_ = (expr);          \
    if (!limits_status_.ok()) return limits_status_;   \
  } while (false)

[[noreturn]] void CheckFailed(const char* file, int line, const char* condition, std::string_view message);

// A broken invariant is a bug: abort with the location rather than continue on bad state.
#define LIMITS_CHECK(cond, message)                                           \
  do {                                                                        \
    if (!(cond)) ::limits::CheckFailed(__FILE__, __LINE__, #cond, (message)); \
  } while (false)

}  // namespace limits
