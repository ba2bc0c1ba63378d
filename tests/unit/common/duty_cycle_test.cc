#include "common/duty_cycle.h"

#include <gtest/gtest.h>

namespace limits {
namespace {

using namespace std::chrono_literals;
using Clock = DutyCycle::Clock;

TEST(DutyCycleTest, ACheapTaskRunsOncePerInterval) {
  const Clock::time_point t0{};
  DutyCycle d(200ms, 50, t0);
  EXPECT_FALSE(d.Due(t0 + 199ms));
  EXPECT_TRUE(d.Due(t0 + 200ms));
  d.Ran(t0 + 200ms, t0 + 201ms);  // 1 ms: 50 ms is less than the interval
  EXPECT_FALSE(d.Due(t0 + 399ms));
  EXPECT_TRUE(d.Due(t0 + 400ms));
}

// A trim of 15 ms (10 M streams) every 200 ms would be 7.5 % of the consumer thread; it
// waits 50 times what it took instead, keeping it near 2 %.
TEST(DutyCycleTest, ADearTaskWaitsAMultipleOfWhatItTook) {
  const Clock::time_point t0{};
  DutyCycle d(200ms, 50, t0);
  d.Ran(t0 + 200ms, t0 + 215ms);
  EXPECT_FALSE(d.Due(t0 + 200ms + 749ms));
  EXPECT_TRUE(d.Due(t0 + 200ms + 750ms));
  d.Ran(t0 + 950ms, t0 + 950ms);  // nothing to do: the interval again
  EXPECT_TRUE(d.Due(t0 + 1150ms));
}

}  // namespace
}  // namespace limits
