// Clock: the one source of "now" for everything time-dependent (windows, eviction, TTL),
// so tests inject a FakeClock instead of sleeping. Implementations are thread-safe.
#pragma once

#include <cstdint>

namespace limits {

class Clock {
 public:
  virtual ~Clock() = default;
  // Milliseconds since the Unix epoch.
  virtual int64_t NowMillis() const = 0;

  // The process-wide wall clock.
  static const Clock& System();
};

}  // namespace limits
