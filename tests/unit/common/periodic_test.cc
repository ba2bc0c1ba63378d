#include "common/periodic.h"

#include <gtest/gtest.h>

#include <atomic>

#include "testing/wait_for.h"

namespace limits {
namespace {

using namespace std::chrono_literals;

TEST(PeriodicTest, RunsEveryInterval) {
  std::atomic<int> runs{0};
  Periodic p;
  p.Start(10ms, [&] { ++runs; });
  EXPECT_TRUE(testing::WaitFor([&] { return runs.load() >= 3; }, 10s));
}

TEST(PeriodicTest, TriggerRunsAtOnceAndStopDoesNotWaitOutTheInterval) {
  std::atomic<int> runs{0};
  Periodic p;
  p.Start(1h, [&] { ++runs; });
  p.Trigger();
  ASSERT_TRUE(testing::WaitFor([&] { return runs.load() == 1; }, 10s));
  p.Trigger();
  ASSERT_TRUE(testing::WaitFor([&] { return runs.load() == 2; }, 10s));
  const auto before = std::chrono::steady_clock::now();
  p.Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - before, 10s);
  EXPECT_EQ(runs.load(), 2);
}

}  // namespace
}  // namespace limits
