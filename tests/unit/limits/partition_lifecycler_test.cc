#include "limits/lifecycle/partition_lifecycler.h"

#include <gtest/gtest.h>

#include <map>
#include <mutex>

#include "testing/fake_clock.h"
#include "testing/fake_log.h"
#include "testing/temp_dir.h"
#include "testing/test_store.h"
#include "testing/wait_for.h"

namespace limits {
namespace {

using namespace std::chrono_literals;
using testing::EvenLog;

class PartitionLifecyclerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    opened_ = testing::TestStore::Open(dir_, clock_, 4, windows_);
    db_ = opened_.db.get();
    store_ = opened_.store.get();
    PartitionLifecycler::Options o{.windows = windows_, .revoked_retention = 600s, .check_interval = 1h, .lookup = {}, .lookup_threads = 8};
    o.lookup.backoff = 1ms;
    o.lookup.max_backoff = 1ms;
    o.lookup.give_up = 120s;
    lifecycler_ = std::make_unique<PartitionLifecycler>(*store_, source_, manager_, clock_, o);
    ASSERT_TRUE(lifecycler_->Start([this](std::vector<AssignmentPlan> p) {
                  std::lock_guard lock(mu_);
                  plans_.insert(plans_.end(), p.begin(), p.end());
                }).ok());
  }

  // Puts streams into a partition with a checkpoint, as the consumer would have.
  void Seed(int32_t partition, int64_t next_offset, int streams, int64_t seen_ms = -1) {
    std::vector<Record> recs;
    for (int i = 0; i < streams; ++i) {
      recs.push_back(Record{.tenant = "t", .stream_hash = static_cast<uint64_t>(i * 4 + partition), .bytes = 1,
                            .policy = "", .timestamp_ms = seen_ms < 0 ? clock_.NowMillis() : seen_ms,
                            .offset = next_offset - streams + i});
    }
    ASSERT_TRUE(store_->Apply(partition, recs, next_offset).ok());
  }

  // A log of n records one second apart whose record `first_inside` is the first inside the window.
  testing::FakePartitionLog Log(int64_t start, int64_t n, int64_t first_inside) {
    const int64_t cutoff = clock_.NowMillis() - int64_t{windows_.active_s} * 1000;
    return EvenLog(start, n, cutoff - (first_inside - start) * 1000 + 500, 1000);
  }

  AssignmentPlan AssignAndPlan(int32_t p) {
    const int64_t gen = manager_.Assign(p);
    Plans().clear();
    lifecycler_->ProcessAssignment({{p, gen}});
    EXPECT_EQ(Plans().size(), 1u);
    return Plans().empty() ? AssignmentPlan{} : Plans()[0];
  }

  std::vector<AssignmentPlan>& Plans() { return plans_; }  // threads done, or single-threaded
  std::optional<AssignmentPlan> PlanOf(int32_t p) {
    std::lock_guard lock(mu_);
    for (const AssignmentPlan& plan : plans_) {
      if (plan.partition == p) return plan;
    }
    return std::nullopt;
  }

  testing::TempDir dir_;
  testing::FakeClock clock_;
  Windows windows_{.active_s = 3600, .rate_s = 300, .bucket_s = 60, .produce_interval_s = 60};
  testing::TestStore opened_;
  storage::Db* db_ = nullptr;
  UsageStore* store_ = nullptr;
  testing::FakeLog source_;
  PartitionManager manager_{clock_, 30s};
  std::unique_ptr<PartitionLifecycler> lifecycler_;
  std::mutex mu_;
  std::vector<AssignmentPlan> plans_;  // GUARDED_BY(mu_) while threads run
};

TEST_F(PartitionLifecyclerTest, ResumesAtTheCheckpointAndReplaysToTheEndSnapshot) {
  Seed(0, 100, 5);
  source_.logs[0] = Log(0, 150, 20);
  const AssignmentPlan plan = AssignAndPlan(0);
  EXPECT_EQ(plan.resume_offset, 100);
  EXPECT_EQ(plan.end_offset, 150);
  EXPECT_FALSE(plan.nothing_to_replay());
  EXPECT_EQ(source_.probes[0], 0);
  EXPECT_EQ(store_->ActiveStreams(0, "t", ""), 5u);  // data kept
}

TEST_F(PartitionLifecyclerTest, SkipsToTheWindowStartWhenTheCheckpointIsOlder) {
  Seed(1, 10, 2, clock_.NowMillis() - 5000'000);
  source_.logs[1] = Log(0, 500, 300);
  EXPECT_EQ(AssignAndPlan(1).resume_offset, 300);
}

TEST_F(PartitionLifecyclerTest, CaughtUpMeansReadyAtOnce) {
  Seed(2, 150, 3);
  source_.logs[2] = Log(0, 150, 0);
  const AssignmentPlan plan = AssignAndPlan(2);
  EXPECT_TRUE(plan.nothing_to_replay());
  EXPECT_FALSE(plan.lookup_failed);
}

TEST_F(PartitionLifecyclerTest, Item11_ACheckpointBelowTheLogStartKeepsTheRows) {
  Seed(0, 100, 5);
  source_.logs[0] = Log(120, 80, 130);  // retention deleted 100..119 unseen
  const AssignmentPlan plan = AssignAndPlan(0);
  EXPECT_EQ(plan.resume_offset, 120);
  EXPECT_EQ(store_->ActiveStreams(0, "t", ""), 5u);  // replay could not rebuild them
  EXPECT_EQ(lifecycler_->stats().dropped.load(), 0u);
}

TEST_F(PartitionLifecyclerTest, DataWithoutACheckpointIsDropped) {
  ASSERT_TRUE(store_->EnsurePartition(3).ok());
  {
    storage::WriteBatch b(*db_);
    b.PutRow(3, "\x01t\0\0\0\0\0\0\0\x03", "junk");  // a leftover row, covered by no checkpoint
    ASSERT_TRUE(db_->Write(b).ok());
  }
  source_.logs[3] = Log(0, 40, 0);
  EXPECT_EQ(AssignAndPlan(3).resume_offset, 0);
  bool any = false;
  ASSERT_TRUE(db_->ScanPartition(3, "", [&](auto, auto) { return any = true, false; }).ok());
  EXPECT_FALSE(any);
}

TEST_F(PartitionLifecyclerTest, Item3_ACheckpointBeyondTheLogEndIsNotTrusted) {
  Seed(1, 900, 2);
  source_.logs[1] = Log(0, 50, 10);  // the topic was recreated
  EXPECT_EQ(AssignAndPlan(1).resume_offset, 10);
  EXPECT_EQ(store_->ActiveStreams(1, "t", ""), 0u);
}

TEST_F(PartitionLifecyclerTest, Item3_ACheckpointBeyondTheEndIsCheckedAgainstRetriedBounds) {
  // The bounds fail twice first: the checkpoint is never used before they answer.
  Seed(1, 900, 2);
  source_.logs[1] = Log(0, 50, 10);
  source_.fail_bounds[1] = 2;
  const AssignmentPlan plan = AssignAndPlan(1);
  EXPECT_FALSE(plan.lookup_failed);
  EXPECT_EQ(plan.resume_offset, 10);
  EXPECT_EQ(plan.end_offset, 50);
}

TEST_F(PartitionLifecyclerTest, StaleStreamsAreEvictedBeforeReplay) {
  Seed(0, 10, 3, clock_.NowMillis() - 3000'000);
  clock_.Advance(1000s);  // now outside the window
  source_.logs[0] = Log(0, 10, 10);
  AssignAndPlan(0);
  EXPECT_EQ(store_->UsageOf("t", PartitionSet{0}).total_streams, 0u);
}

TEST_F(PartitionLifecyclerTest, Item12_AFreshPartitionIsCheckpointedWhenPlanned) {
  source_.logs[2] = Log(0, 30, 10);
  const AssignmentPlan plan = AssignAndPlan(2);
  ASSERT_EQ(plan.resume_offset, 10);
  ASSERT_TRUE(store_->CheckpointOf(2).has_value());
  EXPECT_EQ(store_->CheckpointOf(2)->next_offset, 10);
  std::vector<int32_t> corrupt;
  auto on_disk = db_->ReadCheckpoints(&corrupt);
  ASSERT_TRUE(on_disk.ok());
  ASSERT_TRUE(on_disk->count(2));  // persisted with the column family
  EXPECT_EQ(on_disk->at(2).next_offset, 10);
  EXPECT_TRUE(db_->HasPartition(2));
}

TEST_F(PartitionLifecyclerTest, Item1_LookupFailuresKeepThePartitionUnplannedUntilTheyAnswer) {
  Seed(0, 70, 1);
  source_.logs[0] = Log(0, 100, 0);
  source_.fail_bounds[0] = 2;  // two injected ListOffsets errors
  const int64_t gen = manager_.Assign(0);
  lifecycler_->OnAssigned({{0, gen}});
  ASSERT_TRUE(testing::WaitFor([&] { return PlanOf(0).has_value(); }, 10s));
  EXPECT_FALSE(PlanOf(0)->lookup_failed);  // planned on real offsets: never served without its data
  EXPECT_EQ(PlanOf(0)->resume_offset, 70);
  EXPECT_EQ(PlanOf(0)->end_offset, 100);
  EXPECT_GE(lifecycler_->stats().retries.load(), 2u);
  EXPECT_EQ(lifecycler_->stats().give_ups.load(), 0u);
}

TEST_F(PartitionLifecyclerTest, Item1_OnlyAfterTheGiveUpIsAPartitionServedWithoutItsOffsets) {
  Seed(0, 70, 1);
  source_.fail_bounds[0] = -1;
  source_.fail_bounds[1] = -1;
  const int64_t gen0 = manager_.Assign(0), gen1 = manager_.Assign(1);
  lifecycler_->OnAssigned({{0, gen0}, {1, gen1}});
  ASSERT_TRUE(testing::WaitFor([&] { return source_.Calls(0) >= 3; }, 10s));
  EXPECT_FALSE(PlanOf(0).has_value());  // retrying, not served
  clock_.Advance(121s);
  ASSERT_TRUE(testing::WaitFor([&] { return PlanOf(0) && PlanOf(1); }, 10s));
  EXPECT_TRUE(PlanOf(0)->lookup_failed);
  EXPECT_TRUE(PlanOf(0)->nothing_to_replay());
  EXPECT_EQ(PlanOf(0)->resume_offset, 70);
  EXPECT_EQ(PlanOf(1)->resume_offset, kOffsetBeginning);
  EXPECT_EQ(lifecycler_->stats().give_ups.load(), 2u);
}

TEST_F(PartitionLifecyclerTest, Item1_ASlowPartitionDoesNotHoldTheOthersBack) {
  for (int32_t p = 0; p < 4; ++p) source_.logs[p] = Log(0, 20, 0);
  source_.hold_bounds[0] = true;  // partition 0's leader does not answer yet
  std::vector<std::pair<int32_t, int64_t>> assigned;
  for (int32_t p = 0; p < 4; ++p) assigned.emplace_back(p, manager_.Assign(p));
  lifecycler_->OnAssigned(assigned);
  ASSERT_TRUE(testing::WaitFor([&] { return PlanOf(1) && PlanOf(2) && PlanOf(3); }, 10s));
  EXPECT_FALSE(PlanOf(0).has_value());
  source_.Release(0);
  ASSERT_TRUE(testing::WaitFor([&] { return PlanOf(0).has_value(); }, 10s));
  EXPECT_FALSE(PlanOf(0)->lookup_failed);
}

TEST_F(PartitionLifecyclerTest, NoPlanAndNoNetworkCallForAPartitionRevokedMeanwhile) {
  const int64_t gen = manager_.Assign(0);
  manager_.Revoke(0);
  source_.logs[0] = Log(0, 10, 0);
  Plans().clear();
  lifecycler_->ProcessAssignment({{0, gen}});
  EXPECT_TRUE(Plans().empty());
  EXPECT_EQ(source_.Calls(0), 0);
}

TEST_F(PartitionLifecyclerTest, Item4_AStaleJobKeepsTheNewerRevocationRecord) {
  Seed(0, 10, 2);
  manager_.Assign(1);  // settles the manager
  source_.logs[0] = Log(0, 10, 0);
  source_.hold_bounds[0] = true;
  const int64_t gen = manager_.Assign(0);
  lifecycler_->OnAssigned({{0, gen}});
  ASSERT_TRUE(testing::WaitFor([&] { return source_.Calls(0) == 1; }, 10s));  // its look-up in flight
  manager_.Revoke(0);
  lifecycler_->OnRevoked({0});
  source_.Release(0);
  ASSERT_TRUE(testing::WaitFor([&] { return lifecycler_->stats().stale.load() == 1; }, 10s));
  EXPECT_FALSE(PlanOf(0).has_value());
  ASSERT_TRUE(store_->Revoked()->count(0));  // still scheduled for eviction
  clock_.Advance(601s);
  lifecycler_->EvictDueRevoked();
  EXPECT_FALSE(db_->HasPartition(0));
}

TEST_F(PartitionLifecyclerTest, RevokedPartitionsAreDroppedAfterTheRetentionUnlessReassigned) {
  Seed(0, 10, 2);
  Seed(1, 10, 2);
  manager_.Assign(0);
  manager_.Assign(1);  // settles the manager (an assignment happened)
  manager_.Revoke(0);
  manager_.Revoke(1);
  lifecycler_->OnRevoked({0, 1});
  auto revoked = store_->Revoked();
  ASSERT_EQ(revoked->size(), 2u);
  EXPECT_EQ(revoked->at(0).evict_after_ms, clock_.NowMillis() + 600'000);
  clock_.Advance(599s);
  lifecycler_->EvictDueRevoked();
  EXPECT_TRUE(db_->HasPartition(0));
  // Partition 1 comes back before the deadline: while assigned it is never evicted (the
  // consumer clears the record when it accepts the plan).
  source_.logs[1] = Log(0, 10, 0);
  AssignAndPlan(1);
  clock_.Advance(2s);
  lifecycler_->EvictDueRevoked();
  EXPECT_FALSE(db_->HasPartition(0));
  EXPECT_TRUE(db_->HasPartition(1));
}

TEST_F(PartitionLifecyclerTest, ARestartDoesNotExtendRetentionAndSchedulesUnmarkedPartitions) {
  Seed(2, 10, 1);
  Seed(3, 10, 1);
  ASSERT_TRUE(store_->MarkRevoked(std::vector<int32_t>{3}, clock_.NowMillis() - 500'000, clock_.NowMillis() + 10'000).ok());
  lifecycler_->Stop();
  PartitionManager fresh(clock_, 30s);
  PartitionLifecycler restarted(*store_, source_, fresh, clock_,
                                PartitionLifecycler::Options{.windows = windows_, .revoked_retention = 600s,
                                                             .check_interval = 1h, .lookup = {}, .lookup_threads = 8});
  ASSERT_TRUE(restarted.Start(nullptr).ok());
  auto revoked = store_->Revoked();
  EXPECT_EQ(revoked->at(2).evict_after_ms, clock_.NowMillis() + 600'000);  // scheduled from start-up
  EXPECT_EQ(revoked->at(3).evict_after_ms, clock_.NowMillis() + 10'000);  // kept, not extended
  clock_.Advance(20s);
  restarted.EvictDueRevoked();
  EXPECT_TRUE(db_->HasPartition(3));  // due, but nothing assigned yet and wait_assign not over
  clock_.Advance(10s);
  restarted.EvictDueRevoked();
  EXPECT_FALSE(db_->HasPartition(3));
  EXPECT_TRUE(db_->HasPartition(2));
}

}  // namespace
}  // namespace limits
