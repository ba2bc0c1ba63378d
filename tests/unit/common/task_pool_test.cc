#include "common/task_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace limits {
namespace {

TEST(TaskPoolTest, RunsInOrderAndRefusesBeyondTheQueue) {
  std::mutex mu;
  std::condition_variable cv;
  bool open = false;
  std::atomic<int> ran{0};
  TaskPool pool({.threads = 1, .max_queued = 2, .max_queued_bytes = 1000});
  auto blocker = [&] {
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return open; });
    ++ran;
  };
  ASSERT_TRUE(pool.TrySubmit(10, blocker));
  // The one thread may not have taken the first task yet: wait until it has.
  while (pool.queued() != 0) std::this_thread::yield();
  EXPECT_TRUE(pool.TrySubmit(10, [&] { ++ran; }));
  EXPECT_TRUE(pool.TrySubmit(10, [&] { ++ran; }));
  EXPECT_FALSE(pool.TrySubmit(10, [&] { ++ran; }));  // two wait already
  EXPECT_EQ(pool.queued(), 2u);
  {
    std::lock_guard lock(mu);
    open = true;
  }
  cv.notify_all();
  pool.Stop();  // runs what is queued, then joins
  EXPECT_EQ(ran.load(), 3);
  EXPECT_FALSE(pool.TrySubmit(1, [] {}));  // stopped
}

TEST(TaskPoolTest, TheByteBudgetBoundsWhatWaits) {
  TaskPool pool({.threads = 0, .max_queued = 100, .max_queued_bytes = 100});
  EXPECT_TRUE(pool.TrySubmit(500, [] {}));   // alone: a request above the budget still gets in
  EXPECT_FALSE(pool.TrySubmit(1, [] {}));    // 500 bytes wait already
  TaskPool other({.threads = 0, .max_queued = 100, .max_queued_bytes = 100});
  EXPECT_TRUE(other.TrySubmit(60, [] {}));
  EXPECT_TRUE(other.TrySubmit(40, [] {}));
  EXPECT_FALSE(other.TrySubmit(1, [] {}));
}

// The HTTP server's pool: a stop drops what waits (its connections are being closed).
TEST(TaskPoolTest, AStopMayDropWhatWaits) {
  std::atomic<int> ran{0};
  TaskPool pool({.threads = 0, .max_queued = 10, .max_queued_bytes = 100, .run_queued_on_stop = false, .name = "t"});
  EXPECT_TRUE(pool.TrySubmit(0, [&] { ++ran; }));
  pool.Stop();
  EXPECT_EQ(ran.load(), 0);
  EXPECT_EQ(pool.queued(), 0u);
}

}  // namespace
}  // namespace limits
