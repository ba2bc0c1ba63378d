#include "limits/active_counter.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace limits {
namespace {

TEST(ActiveCounterTest, CountsStreamsAtOrAfterTheCutoff) {
  ActiveCounter c;
  c.Add(100);
  c.Add(100);
  c.Add(105);
  EXPECT_EQ(c.Active(0), 3u);
  EXPECT_EQ(c.Active(100), 3u);  // seen exactly at the cutoff: still active
  EXPECT_EQ(c.Active(101), 1u);
  EXPECT_EQ(c.Active(105), 1u);
  EXPECT_EQ(c.Active(106), 0u);
  EXPECT_TRUE(c.empty());
}

TEST(ActiveCounterTest, MovingAStreamForwardKeepsItActive) {
  ActiveCounter c;
  c.Add(10);
  c.Move(10, 50);
  EXPECT_EQ(c.Active(11), 1u);
  c.Move(50, 50);
  EXPECT_EQ(c.Active(50), 1u);
  c.Remove(50);
  EXPECT_EQ(c.Active(50), 0u);
}

TEST(ActiveCounterTest, ForgottenSecondsAreNotForgottenTwice) {
  ActiveCounter c;
  c.Add(10);
  c.Add(20);
  EXPECT_EQ(c.Active(15), 1u);  // 10 is forgotten
  c.Remove(10);                 // the stream at 10 is later evicted or moved: no double count
  EXPECT_EQ(c.Active(15), 1u);
  c.Add(12);  // below the horizon: already inactive, never counted
  EXPECT_EQ(c.Active(15), 1u);
  EXPECT_EQ(c.horizon(), 15u);
  c.Move(10, 30);  // an expired stream seen again counts afresh
  EXPECT_EQ(c.Active(15), 2u);
}

TEST(ActiveCounterTest, CutoffGoingBackwardsChangesNothing) {
  ActiveCounter c;
  c.Add(10);
  c.Add(30);
  EXPECT_EQ(c.Active(20), 1u);
  EXPECT_EQ(c.Active(5), 1u);
}

// A model check: random moves, adds and removes against a brute-force count.
TEST(ActiveCounterTest, AgreesWithABruteForceCount) {
  std::mt19937 rng(7);
  ActiveCounter c;
  std::vector<uint32_t> seen;  // last seen of each live stream
  uint32_t now = 1000;
  const uint32_t window = 50;
  for (int step = 0; step < 20000; ++step) {
    const int op = static_cast<int>(rng() % 10);
    if (op < 3 || seen.empty()) {
      const uint32_t t = now - static_cast<uint32_t>(rng() % 20);
      seen.push_back(t);
      c.Add(t);
    } else if (op < 8) {
      const size_t i = rng() % seen.size();
      const uint32_t to = std::max<uint32_t>(seen[i], now - static_cast<uint32_t>(rng() % 5));
      c.Move(seen[i], to);
      seen[i] = to;
    } else {
      const size_t i = rng() % seen.size();
      c.Remove(seen[i]);
      seen.erase(seen.begin() + static_cast<long>(i));
    }
    if (rng() % 4 == 0) now += static_cast<uint32_t>(rng() % 3);
    const int64_t cutoff = int64_t{now} - window;
    // Streams below the horizon can never be counted again until seen again; drop them from
    // the model the way the store evicts them, to keep the model's "active" definition.
    uint32_t expected = 0;
    for (uint32_t t : seen) expected += t >= cutoff ? 1 : 0;
    ASSERT_EQ(c.Active(cutoff), expected) << "step " << step;
  }
}

}  // namespace
}  // namespace limits
