#include "loadgen/pacer.h"

#include <cmath>
#include <limits>

namespace limits::loadgen {

Pacer::Clock::time_point Pacer::DueAt(uint64_t k) const {
  if (!paced() || k == 0) return start_;
  const long double ns = std::ceil(static_cast<long double>(k) * 1e9L / static_cast<long double>(rate_));
  return start_ + std::chrono::nanoseconds(static_cast<int64_t>(ns));
}

uint64_t Pacer::DueBy(Clock::time_point t) const {
  if (t < start_) return 0;
  if (!paced()) return std::numeric_limits<uint64_t>::max();
  const int64_t elapsed = std::chrono::duration_cast<std::chrono::nanoseconds>(t - start_).count();
  // The estimate from the rate, then corrected against DueAt itself, so that the two can never
  // disagree by a rounding step: exactly the k with DueAt(k) <= t count.
  const long double estimate = static_cast<long double>(elapsed) * static_cast<long double>(rate_) / 1e9L;
  auto n = static_cast<uint64_t>(std::floor(estimate)) + 1;
  while (DueAt(n) <= t) ++n;
  while (n > 1 && DueAt(n - 1) > t) --n;
  return n;
}

}  // namespace limits::loadgen
