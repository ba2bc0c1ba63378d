#include "common/try_lock_until.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <thread>

namespace limits {
namespace {

using Steady = std::chrono::steady_clock;
using namespace std::chrono_literals;

TEST(TryLockUntilTest, TakesAFreeLockEvenPastTheDeadline) {
  std::mutex mu;
  ASSERT_TRUE(TryLockUntil(mu, Steady::time_point{}));
  mu.unlock();
}

TEST(TryLockUntilTest, GivesUpOnALockHeldPastTheDeadline) {
  std::mutex mu;
  std::lock_guard held(mu);
  std::atomic<bool> took{true};
  // Another thread: std::mutex::try_lock by the owner is undefined.
  std::thread t([&] { took = TryLockUntil(mu, Steady::now() + 1ms); });
  t.join();
  EXPECT_FALSE(took.load());
}

TEST(TryLockUntilTest, TakesALockReleasedBeforeTheDeadline) {
  std::mutex mu;
  mu.lock();
  std::atomic<bool> spinning{false};
  std::atomic<bool> took{false};
  std::thread t([&] {
    spinning = true;
    took = TryLockUntil(mu, Steady::now() + 60s);
    if (took) mu.unlock();
  });
  while (!spinning) std::this_thread::yield();
  mu.unlock();
  t.join();
  EXPECT_TRUE(took.load());
}

}  // namespace
}  // namespace limits
