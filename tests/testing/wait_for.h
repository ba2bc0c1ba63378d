// WaitFor: polls a condition until it holds or a deadline passes — never a bare sleep as
// synchronisation. Deadlines scale with LIMITSD_TEST_TIMEOUT_MULTIPLIER for slow machines.
#pragma once

#include <chrono>
#include <cstdlib>
#include <functional>
#include <thread>

namespace limits::testing {

inline double TimeoutMultiplier() {
  const char* m = std::getenv("LIMITSD_TEST_TIMEOUT_MULTIPLIER");
  const double v = m ? std::atof(m) : 1.0;
  return v > 0 ? v : 1.0;
}

// True once pred() holds; false when `timeout` (scaled) passes first.
inline bool WaitFor(const std::function<bool()>& pred, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(static_cast<int64_t>(timeout.count() * TimeoutMultiplier()));
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

}  // namespace limits::testing
