#include "limits/lifecycle/stall_detector.h"

#include <gtest/gtest.h>

#include "testing/fake_clock.h"
#include "testing/fake_log.h"

namespace limits {
namespace {

using namespace std::chrono_literals;
using testing::EvenLog;
using testing::FakeClock;
using testing::FakeLog;

class StallDetectorTest : public ::testing::Test {
 protected:
  StallDetectorTest() {
    log_.logs[0] = EvenLog(0, 100, 0, 1);  // offsets 0-99
    log_.logs[1] = EvenLog(0, 100, 0, 1);
  }
  FakeClock clock_;
  FakeLog log_;
  StallDetector detector_{log_, clock_, {.timeout = 60s, .confirm = 15s, .lookup_timeout = 1s}};

  // A check that finds the positions behind, and one `confirm` later.
  StallCheck CheckTwice() {
    StallCheck first = detector_.Check();
    EXPECT_TRUE(first.stalled.empty());
    clock_.Advance(15s);
    return detector_.Check();
  }
};

TEST_F(StallDetectorTest, NothingIsLookedUpBeforeTheTimeout) {
  detector_.Report({{.partition = 0, .generation = 1, .offset = 40}});
  clock_.Advance(59s);
  StallCheck c = detector_.Check();
  EXPECT_TRUE(c.stalled.empty());
  EXPECT_EQ(c.looked_up, 0u);
  EXPECT_EQ(log_.Calls(0), 0);
}

TEST_F(StallDetectorTest, APositionThatDoesNotMoveWithRecordsBeyondItIsAStall) {
  detector_.Report({{.partition = 0, .generation = 1, .offset = 40}, {.partition = 1, .generation = 1, .offset = 100}});
  clock_.Advance(30s);
  detector_.Report({{.partition = 0, .generation = 1, .offset = 40}, {.partition = 1, .generation = 1, .offset = 100}});
  clock_.Advance(30s);
  StallCheck c = CheckTwice();
  ASSERT_EQ(c.stalled.size(), 1u);  // partition 1 is at its end: idle, not stalled
  EXPECT_EQ(c.stalled[0].partition, 0);
  EXPECT_EQ(c.stalled[0].position, 40);
  EXPECT_EQ(c.stalled[0].end, 100);
  EXPECT_EQ(c.stalled[0].idle_ms, 75'000);
  EXPECT_EQ(c.looked_up, 1u);  // partition 1 was re-armed by the first look-up
  EXPECT_FALSE(c.outage);
  // Reported once: re-armed.
  clock_.Advance(15s);
  EXPECT_TRUE(detector_.Check().stalled.empty());
}

// Records that had just arrived when the position was looked up are consumed before the
// confirmation: no stall.
TEST_F(StallDetectorTest, RecordsConsumedBeforeTheConfirmationAreNoStall) {
  detector_.Report({{.partition = 0, .generation = 1, .offset = 99}});
  clock_.Advance(60s);
  EXPECT_TRUE(detector_.Check().stalled.empty());  // 99 < 100: behind
  clock_.Advance(1s);
  detector_.Report({{.partition = 0, .generation = 1, .offset = 100}});
  clock_.Advance(14s);
  EXPECT_EQ(detector_.Check().looked_up, 0u);
  clock_.Advance(60s);
  const StallCheck c = detector_.Check();
  EXPECT_EQ(c.looked_up, 1u);
  EXPECT_TRUE(c.stalled.empty());
}

TEST_F(StallDetectorTest, ProgressReArms) {
  detector_.Report({{.partition = 0, .generation = 1, .offset = 40}});
  clock_.Advance(50s);
  detector_.Report({{.partition = 0, .generation = 1, .offset = 41}});
  clock_.Advance(50s);
  EXPECT_EQ(detector_.Check().looked_up, 0u);
  clock_.Advance(10s);
  EXPECT_EQ(CheckTwice().stalled.size(), 1u);
}

TEST_F(StallDetectorTest, AReassignmentReArmsAndForgottenPartitionsAreNotLookedUp) {
  detector_.Report({{.partition = 0, .generation = 1, .offset = 40}, {.partition = 1, .generation = 1, .offset = 10}});
  clock_.Advance(50s);
  detector_.Report({{.partition = 0, .generation = 2, .offset = 40}});  // 1 revoked, 0 assigned again
  clock_.Advance(50s);
  EXPECT_EQ(detector_.Check().looked_up, 0u);
  EXPECT_EQ(log_.Calls(1), 0);
}

// An idle partition at its end costs one look-up per timeout, not one per round.
TEST_F(StallDetectorTest, AnIdlePartitionIsLookedUpOncePerTimeout) {
  detector_.Report({{.partition = 1, .generation = 1, .offset = 100}});
  clock_.Advance(60s);
  EXPECT_EQ(detector_.Check().looked_up, 1u);
  clock_.Advance(30s);
  EXPECT_EQ(detector_.Check().looked_up, 0u);
  clock_.Advance(30s);
  EXPECT_EQ(detector_.Check().looked_up, 1u);
  EXPECT_EQ(log_.Calls(1), 2);
}

// A failed look-up is an outage: no stall, the round ends, and the next round starts with
// the partitions not yet looked up.
TEST_F(StallDetectorTest, AFailedLookUpIsAnOutageNotAStall) {
  log_.fail_bounds[0] = 1;
  detector_.Report({{.partition = 0, .generation = 1, .offset = 40}, {.partition = 1, .generation = 1, .offset = 40}});
  clock_.Advance(60s);
  StallCheck c = detector_.Check();
  EXPECT_TRUE(c.outage);
  EXPECT_TRUE(c.stalled.empty());
  EXPECT_EQ(c.looked_up, 1u);
  EXPECT_NE(c.outage_error.find("injected"), std::string::npos);
  c = CheckTwice();  // partition 1 now; 0 was re-armed
  ASSERT_EQ(c.stalled.size(), 1u);
  EXPECT_EQ(c.stalled[0].partition, 1);
  clock_.Advance(60s);
  c = CheckTwice();
  EXPECT_FALSE(c.outage);
  ASSERT_EQ(c.stalled.size(), 2u);
}

// Nothing consumed yet (-1) reads from the log start; so does a position below it.
TEST_F(StallDetectorTest, AnUnknownOrDeletedPositionCountsFromTheLogStart) {
  log_.logs[2] = EvenLog(100, 0, 0, 1);  // start = end = 100: retention deleted everything
  log_.logs[3] = EvenLog(100, 5, 0, 1);
  detector_.Report({{.partition = 2, .generation = 1, .offset = -1},
                    {.partition = 3, .generation = 1, .offset = 20},
                    {.partition = 0, .generation = 1, .offset = -1}});
  clock_.Advance(60s);
  StallCheck c = CheckTwice();
  ASSERT_EQ(c.stalled.size(), 2u);
  EXPECT_EQ(c.stalled[0].partition, 0);
  EXPECT_EQ(c.stalled[1].partition, 3);
}

TEST_F(StallDetectorTest, ResetForgetsEverything) {
  detector_.Report({{.partition = 0, .generation = 1, .offset = 40}});
  clock_.Advance(60s);
  detector_.Reset();
  EXPECT_EQ(detector_.Check().looked_up, 0u);
}

}  // namespace
}  // namespace limits
