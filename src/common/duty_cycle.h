// DutyCycle: paces a periodic task whose cost varies with the data it walks (malloc_trim:
// ~1 ms at 1 M streams, ~15 ms at 10 M), so that it runs at most once per interval and, when
// it grows dear, takes no more than about 1/cost_multiple of its thread.
#pragma once

#include <algorithm>
#include <chrono>

namespace limits {

class DutyCycle {
 public:
  using Clock = std::chrono::steady_clock;

  DutyCycle(Clock::duration interval, int cost_multiple, Clock::time_point now)
      : interval_(interval), cost_multiple_(cost_multiple), next_(now + interval) {}

  bool Due(Clock::time_point now) const { return now >= next_; }
  // The task ran (or found nothing to do) from `start` to `end`: the next run waits the
  // interval, or cost_multiple times what this one took if that is longer.
  void Ran(Clock::time_point start, Clock::time_point end) {
    next_ = start + std::max(interval_, cost_multiple_ * (end - start));
  }

 private:
  Clock::duration interval_;
  int cost_multiple_;
  Clock::time_point next_;
};

}  // namespace limits
