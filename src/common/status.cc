#include "common/status.h"

#include <cstdio>
#include <cstdlib>

namespace limits {

std::string_view StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "OK";
    case StatusCode::kNotFound: return "NotFound";
    case StatusCode::kInvalidArgument: return "InvalidArgument";
    case StatusCode::kCorruption: return "Corruption";
    case StatusCode::kIOError: return "IOError";
    case StatusCode::kUnavailable: return "Unavailable";
    case StatusCode::kShutdown: return "Shutdown";
    case StatusCode::kFailedPrecondition: return "FailedPrecondition";
    case StatusCode::kInternal: return "Internal";
    case StatusCode::kWouldBlock: return "WouldBlock";
  }
  return "Unknown";
}

Status Status::Prefixed(std::string_view context) const {
  if (ok()) return *this;
  std::string msg;
  msg.reserve(context.size() + 2 + message_.size());
  msg.append(context).append(": ").append(message_);
  return {code_, std::move(msg)};
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  std::string out(StatusCodeName(code_));
  out.append(": ").append(message_);
  return out;
}

void CheckFailed(const char* file, int line, const char* condition, std::string_view message) {
  std::fprintf(stderr, "%s:%d: check failed: %s: %.*s\n", file, line, condition,
               static_cast<int>(message.size()), message.data());
  std::fflush(stderr);
  std::abort();
}

}  // namespace limits
