#include "limits/usage/active_counter.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace limits {
namespace {

// A group of streams as TenantStreams keeps it: each stream's last-seen second beside the
// counter, so the counter can ask for a minute's streams.
class Group {
 public:
  // A new stream last seen at `s`; returns its index.
  size_t Add(uint32_t s) {
    seen_.push_back(s);
    counter_.Add(s);
    return seen_.size() - 1;
  }
  void Move(size_t i, uint32_t to) {
    counter_.Move(seen_[i], to);
    seen_[i] = to;
  }
  void Remove(size_t i) {
    counter_.Remove(seen_[i]);
    seen_.erase(seen_.begin() + static_cast<long>(i));
  }
  uint32_t Active(int64_t cutoff) {
    return counter_.Active(cutoff, [&](uint32_t minute_start, auto&& fn) {
      ++scans_;
      for (uint32_t s : seen_) {
        if (s - minute_start < 60) fn(s);
      }
    });
  }
  uint32_t Expected(int64_t cutoff) const {
    uint32_t n = 0;
    for (uint32_t s : seen_) n += s >= cutoff ? 1 : 0;
    return n;
  }
  size_t size() const { return seen_.size(); }
  uint32_t seen(size_t i) const { return seen_[i]; }
  const ActiveCounter& counter() const { return counter_; }
  int scans() const { return scans_; }

 private:
  ActiveCounter counter_;
  std::vector<uint32_t> seen_;
  int scans_ = 0;
};

TEST(ActiveCounterTest, CountsStreamsAtOrAfterTheCutoff) {
  Group g;
  g.Add(100);
  g.Add(100);
  g.Add(105);
  EXPECT_EQ(g.Active(0), 3u);
  EXPECT_EQ(g.Active(100), 3u);  // seen exactly at the cutoff: still active
  EXPECT_EQ(g.Active(101), 1u);
  EXPECT_EQ(g.Active(105), 1u);
  EXPECT_EQ(g.Active(106), 0u);
  EXPECT_TRUE(g.counter().empty());
}

TEST(ActiveCounterTest, MovingAStreamForwardKeepsItActive) {
  Group g;
  const size_t s = g.Add(10);
  g.Move(s, 50);
  EXPECT_EQ(g.Active(11), 1u);
  g.Move(s, 50);
  EXPECT_EQ(g.Active(50), 1u);
  g.Remove(s);
  EXPECT_EQ(g.Active(50), 0u);
}

// Moves within one count (a later minute) change nothing; within the cutoff's minute, whose
// streams are counted by second, a move still carries the stream past the cutoff.
TEST(ActiveCounterTest, MovesWithinAMinuteKeepTheCountExactToTheSecond) {
  Group g;
  const size_t s = g.Add(660 + 5);  // minute 11
  g.Add(660 + 20);
  EXPECT_EQ(g.Active(600), 2u);
  g.Move(s, 660 + 10);  // same minute, later than the cutoff's: one count, unchanged
  EXPECT_EQ(g.counter().keys(), 1u);
  EXPECT_EQ(g.Active(660 + 8), 2u);  // minute 11 is now counted by second: 670 and 680
  g.Move(s, 660 + 15);  // within the cutoff's minute: from one second's count to another
  EXPECT_EQ(g.Active(660 + 12), 2u);
  EXPECT_EQ(g.Active(660 + 16), 1u);
  EXPECT_EQ(g.Active(660 + 21), 0u);
}

TEST(ActiveCounterTest, ForgottenSecondsAreNotForgottenTwice) {
  Group g;
  const size_t at10 = g.Add(10);
  g.Add(20);
  EXPECT_EQ(g.Active(15), 1u);  // 10 is forgotten
  const size_t at12 = g.Add(12);  // below the horizon: already inactive, never counted
  EXPECT_EQ(g.Active(15), 1u);
  EXPECT_EQ(g.counter().horizon(), 15u);
  g.Move(at10, 30);  // an expired stream seen again counts afresh
  EXPECT_EQ(g.Active(15), 2u);
  g.Remove(at12);  // a stream below the horizon takes nothing from the count
  EXPECT_EQ(g.Active(15), 2u);
}

TEST(ActiveCounterTest, CutoffGoingBackwardsChangesNothing) {
  Group g;
  g.Add(10);
  g.Add(30);
  EXPECT_EQ(g.Active(20), 1u);
  EXPECT_EQ(g.Active(5), 1u);
}

// Streams of later minutes are counted by minute; the cutoff's minute by second, from one
// scan when the cutoff enters it — and none for a minute that holds no stream.
TEST(ActiveCounterTest, TheCutoffsMinuteIsCountedBySecondFromOneScan) {
  Group g;
  g.Add(600 + 10);  // minute 10
  g.Add(600 + 50);
  g.Add(660 + 5);   // minute 11
  g.Add(780 + 1);   // minute 13
  EXPECT_EQ(g.Active(600), 4u);
  EXPECT_EQ(g.scans(), 1);
  EXPECT_EQ(g.Active(611), 3u);  // same minute: no scan
  EXPECT_EQ(g.Active(651), 2u);
  EXPECT_EQ(g.scans(), 1);
  EXPECT_EQ(g.Active(720), 1u);  // minute 12 holds no stream: no scan
  EXPECT_EQ(g.scans(), 1);
  const size_t late = g.Add(720 + 30);  // seen in the cutoff's minute: counted by second
  EXPECT_EQ(g.Active(750), 2u);
  g.Move(late, 781);
  EXPECT_EQ(g.Active(781), 2u);  // minute 13, scanned: both at 781
  EXPECT_EQ(g.scans(), 2);
  EXPECT_EQ(g.Active(782), 0u);
}

// A 90-minute spread of distinct seconds keeps at most a count per minute plus the cutoff
// minute's seconds, not a count per second.
TEST(ActiveCounterTest, KeepsACountPerMinuteNotPerSecond) {
  Group g;
  const uint32_t start = 1'000'000'020;
  for (uint32_t s = 0; s < 5400; ++s) g.Add(start + s);
  EXPECT_EQ(g.Active(start), 5400u);
  EXPECT_LE(g.counter().keys(), 5400u / 60 + 60 + 1);
  EXPECT_EQ(g.Active(start + 3000), 2400u);
  EXPECT_LE(g.counter().keys(), 2400u / 60 + 60 + 1);
}

// A model check: random moves, adds and removes against a brute-force count, with windows
// shorter and longer than a minute.
TEST(ActiveCounterTest, AgreesWithABruteForceCount) {
  for (const uint32_t window : {50u, 600u}) {
    std::mt19937 rng(7);
    Group g;
    uint32_t now = 1000;
    for (int step = 0; step < 20000; ++step) {
      const int op = static_cast<int>(rng() % 10);
      if (op < 3 || g.size() == 0) {
        g.Add(now - static_cast<uint32_t>(rng() % (window / 2)));
      } else if (op < 8) {
        const size_t i = rng() % g.size();
        g.Move(i, std::max<uint32_t>(g.seen(i), now - static_cast<uint32_t>(rng() % 5)));
      } else {
        g.Remove(rng() % g.size());
      }
      if (rng() % 4 == 0) now += static_cast<uint32_t>(rng() % (window / 10));
      const int64_t cutoff = int64_t{now} - window;
      ASSERT_EQ(g.Active(cutoff), g.Expected(cutoff)) << "window " << window << " step " << step;
    }
  }
}

}  // namespace
}  // namespace limits
