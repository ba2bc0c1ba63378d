// Deadline: when a caller stops waiting for an answer, on the steady clock, passed down from a
// gRPC call's deadline to the calls it makes in turn (a check that asks a zone peer must answer
// Loki before Loki gives up: a call Loki gave up on is a check that failed, and accepted).
#pragma once

#include <chrono>

namespace limits {

using Deadline = std::chrono::steady_clock::time_point;
inline constexpr Deadline kNoDeadline = Deadline::max();

// gRPC's deadlines are on the system clock; none is a time centuries away.
inline Deadline FromSystemDeadline(std::chrono::system_clock::time_point at) {
  const auto now = std::chrono::system_clock::now();
  if (at - now > std::chrono::hours(24 * 365)) return kNoDeadline;
  return std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(at - now);
}

inline std::chrono::system_clock::time_point ToSystemDeadline(Deadline at) {
  if (at == kNoDeadline) return std::chrono::system_clock::time_point::max();
  const auto now = std::chrono::steady_clock::now();
  return std::chrono::system_clock::now() + std::chrono::duration_cast<std::chrono::system_clock::duration>(at - now);
}

// `share` of the time from now to `at`: by when a caller's own calls must end, leaving it the
// rest to answer in.
inline Deadline Within(Deadline at, double share) {
  if (at == kNoDeadline) return kNoDeadline;
  const auto now = std::chrono::steady_clock::now();
  if (at <= now) return now;
  return now + std::chrono::duration_cast<std::chrono::steady_clock::duration>((at - now) * share);
}

inline bool Expired(Deadline at) { return std::chrono::steady_clock::now() >= at; }

}  // namespace limits
