// Pacer: the schedule of an open-loop load at a target rate — operation k is due at
// start + k / rate — so a slow answer never delays the start of later operations (a closed
// loop would slow down with the server and hide its latency). Behind schedule, operations are
// due at once until the load catches up, as in wrk2. Pure arithmetic; immutable, thread-safe.
#pragma once

#include <chrono>
#include <cstdint>

namespace limits::loadgen {

class Pacer {
 public:
  using Clock = std::chrono::steady_clock;

  // per_second <= 0: unpaced, every operation is due at `start`.
  Pacer(double per_second, Clock::time_point start) : rate_(per_second), start_(start) {}

  bool paced() const { return rate_ > 0; }
  Clock::time_point start() const { return start_; }

  // When operation k (0-based) is due: start + ceil(k / rate), in nanoseconds.
  Clock::time_point DueAt(uint64_t k) const;
  // How many operations are due by `t`: the k with DueAt(k) <= t (operation 0 is due at start).
  // Unpaced: UINT64_MAX from start on.
  uint64_t DueBy(Clock::time_point t) const;

 private:
  double rate_;
  Clock::time_point start_;
};

}  // namespace limits::loadgen
