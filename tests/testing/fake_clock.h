// FakeClock: a Clock that moves only when a test moves it. Its steady clock moves with its wall
// clock, but for steps of the wall clock alone (StepWall: an NTP step, a VM resumed).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#include "common/clock.h"

namespace limits::testing {

class FakeClock final : public Clock {
 public:
  explicit FakeClock(int64_t now_ms = 1'700'000'000'000) : now_ms_(now_ms) {}
  int64_t NowMillis() const override { return now_ms_.load(std::memory_order_relaxed); }
  int64_t SteadyMillis() const override { return NowMillis() - stepped_ms_.load(std::memory_order_relaxed); }
  void Set(int64_t now_ms) { now_ms_.store(now_ms, std::memory_order_relaxed); }
  void Advance(std::chrono::milliseconds d) { now_ms_.fetch_add(d.count(), std::memory_order_relaxed); }
  // Moves the wall clock alone.
  void StepWall(std::chrono::milliseconds d) {
    stepped_ms_.fetch_add(d.count(), std::memory_order_relaxed);
    now_ms_.fetch_add(d.count(), std::memory_order_relaxed);
  }
  int64_t NowSeconds() const { return NowMillis() / 1000; }

 private:
  std::atomic<int64_t> now_ms_;
  std::atomic<int64_t> stepped_ms_{0};
};

}  // namespace limits::testing
