#include "limits/lifecycle/partition_manager.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "limits/lifecycle/record_filter.h"
#include "testing/fake_clock.h"

namespace limits {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

TEST(PartitionManagerTest, OnlyReadyPartitionsAreServed) {
  testing::FakeClock clock;
  PartitionManager pm(clock, 30s);
  const int64_t g1 = pm.Assign(1);
  const int64_t g2 = pm.Assign(2);
  EXPECT_NE(g1, g2);
  EXPECT_EQ(pm.Get(1)->state, PartitionState::kPending);
  EXPECT_TRUE(pm.Serving()->empty());
  pm.StartReplay(1, g1, 100, 200);
  EXPECT_EQ(pm.Get(1)->state, PartitionState::kReplaying);
  EXPECT_TRUE(pm.Serving()->empty());
  pm.SetReady(2, g2, 50, false);
  EXPECT_TRUE(pm.Serving()->Contains(2));
  EXPECT_FALSE(pm.Serving()->Contains(1));
  EXPECT_EQ(pm.ReadyAssignedAtNanos(), (std::map<int32_t, int64_t>{{2, clock.NowMillis() * 1'000'000}}));
  pm.Revoke(2);
  EXPECT_TRUE(pm.Serving()->empty());
  EXPECT_FALSE(pm.IsAssigned(2));
}

TEST(PartitionManagerTest, LateResultsOfAnEarlierAssignmentAreIgnored) {
  testing::FakeClock clock;
  PartitionManager pm(clock, 30s);
  const int64_t old_gen = pm.Assign(3);
  pm.Revoke(3);
  const int64_t new_gen = pm.Assign(3);
  pm.SetReady(3, old_gen, 10, false);
  EXPECT_EQ(pm.Get(3)->state, PartitionState::kPending);
  EXPECT_FALSE(pm.IsCurrent(3, old_gen));
  EXPECT_TRUE(pm.IsCurrent(3, new_gen));
  pm.SetReady(3, new_gen, 10, true);
  EXPECT_TRUE(pm.Get(3)->lookup_failed);
}

TEST(PartitionManagerTest, ReplayProgressHasRateAndEta) {
  testing::FakeClock clock;
  PartitionManager pm(clock, 30s);
  const int64_t g = pm.Assign(0);
  pm.StartReplay(0, g, 1000, 2001);  // target 2000
  clock.Advance(2s);
  pm.UpdateProgress(0, 1401);
  ReplayProgress r = pm.Get(0)->replay;
  EXPECT_EQ(r.remaining(), 600);
  EXPECT_DOUBLE_EQ(r.records_per_s, 200.5);
  EXPECT_NEAR(r.eta_s, 600 / 200.5, 1e-9);
  clock.Advance(1s);
  pm.SetReady(0, g, 2001, false);
  r = pm.Get(0)->replay;
  EXPECT_EQ(r.finished_ms - r.started_ms, 3000);
  EXPECT_EQ(r.eta_s, 0);
}

TEST(PartitionManagerTest, ReadinessWaitsForEveryAssignedPartitionOrForWaitAssign) {
  testing::FakeClock clock;
  PartitionManager pm(clock, 30s);
  Readiness r = pm.CheckReadiness();
  EXPECT_FALSE(r.ready);
  EXPECT_THAT(r.reason, HasSubstr("waiting for a partition assignment (0s of 30s)"));
  EXPECT_FALSE(pm.SettledOnce());
  clock.Advance(30s);
  EXPECT_TRUE(pm.CheckReadiness().ready);  // nothing assigned after wait_assign: ready anyway
  EXPECT_TRUE(pm.SettledOnce());
  const int64_t g0 = pm.Assign(0);
  const int64_t g1 = pm.Assign(1);
  pm.StartReplay(1, g1, 0, 10);
  r = pm.CheckReadiness();
  EXPECT_FALSE(r.ready);
  EXPECT_THAT(r.reason, HasSubstr("2 of 2 assigned partitions not ready: 0 pending, 1 replaying (10 left)"));
  pm.SetReady(0, g0, 0, false);
  pm.SetReady(1, g1, 10, false);
  r = pm.CheckReadiness();
  EXPECT_TRUE(r.ready);
  EXPECT_EQ(r.reason, "ready: 2 partitions");
}

// Issue 8, item 17: "ready with nothing assigned" is for a node that never got partitions;
// one whose assignment was lost or revoked is not ready until it gets partitions again.
TEST(PartitionManagerTest, Item17_NothingAssignedAfterALostAssignmentIsNotReady) {
  testing::FakeClock clock;
  PartitionManager pm(clock, 30s);
  const int64_t g = pm.Assign(0);
  pm.SetReady(0, g, 0, false);
  EXPECT_TRUE(pm.CheckReadiness().ready);
  pm.Revoke(0);  // lost
  clock.Advance(60s);
  Readiness r = pm.CheckReadiness();
  EXPECT_FALSE(r.ready);
  EXPECT_THAT(r.reason, HasSubstr("no partitions assigned (the assignment was revoked or lost)"));
}

// Issue 10 item 3: readiness is latched once every assigned partition has been ready, as
// Loki's is — but never over a node that holds nothing (item 17) or before the first ready.
TEST(PartitionManagerTest, ReadinessLatchesAfterTheFirstReadyButNotOverNothingAssigned) {
  testing::FakeClock clock;
  PartitionManager pm(clock, 30s, /*latch_readiness=*/true);
  const int64_t g0 = pm.Assign(0);
  pm.Assign(1);
  pm.SetReady(0, g0, 0, false);
  EXPECT_FALSE(pm.CheckReadiness().ready);  // never ready yet: nothing to latch
  pm.Revoke(1);                             // partition 0 alone: every assigned partition ready
  EXPECT_TRUE(pm.CheckReadiness().ready);
  const int64_t g2 = pm.Assign(2);  // a rebalance hands over a partition to replay
  pm.StartReplay(2, g2, 0, 10);
  Readiness r = pm.CheckReadiness();
  EXPECT_TRUE(r.ready);
  EXPECT_THAT(r.reason, HasSubstr("latched"));
  EXPECT_THAT(r.reason, HasSubstr("1 of 2 assigned partitions not ready: 2 replaying"));
  EXPECT_FALSE(pm.Serving()->Contains(2));  // the latch changes /ready only, never what is served
  pm.Revoke(0);
  pm.Revoke(2);
  r = pm.CheckReadiness();
  EXPECT_FALSE(r.ready);
  EXPECT_THAT(r.reason, HasSubstr("no partitions assigned"));

  PartitionManager unlatched(clock, 30s, /*latch_readiness=*/false);
  const int64_t u0 = unlatched.Assign(0);
  unlatched.SetReady(0, u0, 0, false);
  unlatched.Assign(1);
  EXPECT_FALSE(unlatched.CheckReadiness().ready);
}

TEST(RecordFilterTest, ReadyPartitionsSkipOnlyTheirOwnInstancesRecords) {
  using S = PartitionState;
  // Replaying: everything is applied, own records included.
  EXPECT_TRUE(ShouldApply(S::kReplaying, "zone-a", std::string_view("me"), "zone-a", "me"));
  EXPECT_TRUE(ShouldApply(S::kPending, "zone-a", std::nullopt, "zone-a", "me"));
  // Ready: by instance when the record names one...
  EXPECT_FALSE(ShouldApply(S::kReady, "zone-a", std::string_view("me"), "zone-a", "me"));
  EXPECT_TRUE(ShouldApply(S::kReady, "zone-a", std::string_view("previous-owner"), "zone-a", "me"));
  EXPECT_TRUE(ShouldApply(S::kReady, "zone-b", std::string_view("other"), "zone-a", "me"));
  // ...else by zone.
  EXPECT_FALSE(ShouldApply(S::kReady, "zone-a", std::nullopt, "zone-a", "me"));
  EXPECT_TRUE(ShouldApply(S::kReady, "zone-b", std::nullopt, "zone-a", "me"));
}

}  // namespace
}  // namespace limits
