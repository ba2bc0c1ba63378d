#include "limits/partition_lifecycler.h"

#include <gtest/gtest.h>

#include <map>

#include "testing/fake_clock.h"
#include "testing/temp_dir.h"
#include "testing/test_store.h"

namespace limits {
namespace {

using namespace std::chrono_literals;

class FakeOffsetSource final : public OffsetSource {
 public:
  std::vector<PartitionOffsets> Lookup(std::span<const int32_t> partitions, int64_t window_start_ms) override {
    last_window_start_ms = window_start_ms;
    ++calls;
    std::vector<PartitionOffsets> out;
    for (int32_t p : partitions) {
      auto it = offsets.find(p);
      out.push_back(it == offsets.end() ? PartitionOffsets{.partition = p, .ok = false, .error = "unreachable"}
                                        : it->second);
    }
    return out;
  }
  std::map<int32_t, PartitionOffsets> offsets;
  int64_t last_window_start_ms = 0;
  int calls = 0;
};

PartitionOffsets Offsets(int32_t p, int64_t start, int64_t end, int64_t window_start) {
  return {.partition = p, .ok = true, .error = {}, .start = start, .end = end, .window_start = window_start};
}

class PartitionLifecyclerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    opened_ = testing::TestStore::Open(dir_, clock_, 4, windows_);
    db_ = opened_.db.get();
    store_ = opened_.store.get();
    lifecycler_ = std::make_unique<PartitionLifecycler>(
        *store_, source_, manager_, clock_,
        PartitionLifecycler::Options{.windows = windows_, .revoked_retention = 600s, .check_interval = 1h});
    ASSERT_TRUE(lifecycler_->Start([this](std::vector<AssignmentPlan> p) {
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

  AssignmentPlan AssignAndPlan(int32_t p) {
    const int64_t gen = manager_.Assign(p);
    plans_.clear();
    lifecycler_->ProcessAssignment({{p, gen}});
    EXPECT_EQ(plans_.size(), 1u);
    return plans_.empty() ? AssignmentPlan{} : plans_[0];
  }

  testing::TempDir dir_;
  testing::FakeClock clock_;
  Windows windows_{.active_s = 3600, .rate_s = 300, .bucket_s = 60, .produce_interval_s = 60};
  testing::TestStore opened_;
  storage::Db* db_ = nullptr;
  UsageStore* store_ = nullptr;
  FakeOffsetSource source_;
  PartitionManager manager_{clock_, 30s};
  std::unique_ptr<PartitionLifecycler> lifecycler_;
  std::vector<AssignmentPlan> plans_;
};

TEST_F(PartitionLifecyclerTest, ResumesAtTheCheckpointAndReplaysToTheEndSnapshot) {
  Seed(0, 100, 5);
  source_.offsets[0] = Offsets(0, 0, 150, 20);
  const AssignmentPlan plan = AssignAndPlan(0);
  EXPECT_EQ(plan.resume_offset, 100);
  EXPECT_EQ(plan.end_offset, 150);
  EXPECT_FALSE(plan.nothing_to_replay());
  EXPECT_EQ(source_.last_window_start_ms, clock_.NowMillis() - 3600'000);
  EXPECT_EQ(store_->ActiveStreams(0, "t", ""), 5u);  // data kept
}

TEST_F(PartitionLifecyclerTest, SkipsToTheWindowStartWhenTheCheckpointIsOlder) {
  Seed(1, 10, 2);
  source_.offsets[1] = Offsets(1, 0, 500, 300);
  EXPECT_EQ(AssignAndPlan(1).resume_offset, 300);
}

TEST_F(PartitionLifecyclerTest, CaughtUpMeansReadyAtOnce) {
  Seed(2, 150, 3);
  source_.offsets[2] = Offsets(2, 0, 150, 0);
  const AssignmentPlan plan = AssignAndPlan(2);
  EXPECT_TRUE(plan.nothing_to_replay());
  EXPECT_FALSE(plan.lookup_failed);
}

TEST_F(PartitionLifecyclerTest, ACheckpointBelowTheLogStartDropsTheData) {
  Seed(0, 100, 5);
  source_.offsets[0] = Offsets(0, 120, 200, 130);  // retention deleted 100..119 unseen
  const AssignmentPlan plan = AssignAndPlan(0);
  EXPECT_EQ(plan.resume_offset, 130);
  EXPECT_EQ(store_->ActiveStreams(0, "t", ""), 0u);
  EXPECT_FALSE(store_->CheckpointOf(0).has_value());
  EXPECT_TRUE(db_->HasPartition(0));  // re-created empty for the replay
}

TEST_F(PartitionLifecyclerTest, DataWithoutACheckpointIsDropped) {
  ASSERT_TRUE(store_->EnsurePartition(3).ok());
  {
    storage::WriteBatch b(*db_);
    b.PutRow(3, "\x01t\0\0\0\0\0\0\0\x03", "junk");  // a leftover row, covered by no checkpoint
    ASSERT_TRUE(db_->Write(b).ok());
  }
  source_.offsets[3] = Offsets(3, 0, 40, 0);
  EXPECT_EQ(AssignAndPlan(3).resume_offset, 0);
  bool any = false;
  ASSERT_TRUE(db_->ScanPartition(3, "", [&](auto, auto) { return any = true, false; }).ok());
  EXPECT_FALSE(any);
}

TEST_F(PartitionLifecyclerTest, ACheckpointBeyondTheLogEndIsNotTrusted) {
  Seed(1, 900, 2);
  source_.offsets[1] = Offsets(1, 0, 50, 10);  // the topic was recreated
  EXPECT_EQ(AssignAndPlan(1).resume_offset, 10);
  EXPECT_EQ(store_->ActiveStreams(1, "t", ""), 0u);
}

TEST_F(PartitionLifecyclerTest, StaleStreamsAreEvictedBeforeReplay) {
  Seed(0, 10, 3, clock_.NowMillis() - 3000'000);
  clock_.Advance(1000s);  // now outside the window
  source_.offsets[0] = Offsets(0, 0, 10, 10);
  AssignAndPlan(0);
  EXPECT_EQ(store_->UsageOf("t", PartitionSet{0}).total_streams, 0u);
}

TEST_F(PartitionLifecyclerTest, AFailedLookupIsReadyAndResumesAtTheCheckpointOrTheBeginning) {
  Seed(0, 70, 1);
  AssignmentPlan plan = AssignAndPlan(0);
  EXPECT_TRUE(plan.lookup_failed);
  EXPECT_TRUE(plan.nothing_to_replay());
  EXPECT_EQ(plan.resume_offset, 70);
  EXPECT_EQ(AssignAndPlan(1).resume_offset, kOffsetBeginning);
}

TEST_F(PartitionLifecyclerTest, NoPlanForAPartitionRevokedMeanwhile) {
  const int64_t gen = manager_.Assign(0);
  manager_.Revoke(0);
  source_.offsets[0] = Offsets(0, 0, 10, 0);
  plans_.clear();
  lifecycler_->ProcessAssignment({{0, gen}});
  EXPECT_TRUE(plans_.empty());
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
  // Partition 1 comes back before the deadline: the assignment cancels its eviction.
  source_.offsets[1] = Offsets(1, 0, 10, 0);
  AssignAndPlan(1);
  clock_.Advance(2s);
  lifecycler_->EvictDueRevoked();
  EXPECT_FALSE(db_->HasPartition(0));
  EXPECT_TRUE(db_->HasPartition(1));
  EXPECT_EQ(store_->Revoked()->size(), 0u);
}

TEST_F(PartitionLifecyclerTest, ARestartDoesNotExtendRetentionAndSchedulesUnmarkedPartitions) {
  Seed(2, 10, 1);
  Seed(3, 10, 1);
  ASSERT_TRUE(store_->MarkRevoked(std::vector<int32_t>{3}, clock_.NowMillis() - 500'000, clock_.NowMillis() + 10'000).ok());
  lifecycler_->Stop();
  PartitionManager fresh(clock_, 30s);
  PartitionLifecycler restarted(*store_, source_, fresh, clock_,
                                PartitionLifecycler::Options{.windows = windows_, .revoked_retention = 600s,
                                                             .check_interval = 1h});
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
