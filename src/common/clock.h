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
  // Milliseconds of a clock that never jumps, from an arbitrary start (not comparable across
  // processes): for durations on this node that a wall-clock step must not stretch or cut,
  // such as leases. A fake's is its wall clock.
  virtual int64_t SteadyMillis() const { return NowMillis(); }

  // The process-wide wall clock.
  static const Clock& System();
};

}  // namespace limits
