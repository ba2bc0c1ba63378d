#include "limits/usage/usage_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>
#include <tuple>

#include "limits/decision/admission.h"
#include "limits/zone/zone_quota.h"
#include "storage/codec.h"
#include "testing/fake_clock.h"
#include "testing/temp_dir.h"
#include "testing/test_store.h"

namespace limits {
namespace {

using testing::FakeClock;
using testing::TempDir;
using namespace std::chrono_literals;

constexpr int32_t kPartitions = 4;

// A stream hash that lands in `partition`.
uint64_t HashIn(int32_t partition, uint64_t n, int32_t partitions = kPartitions) {
  return n * static_cast<uint64_t>(partitions) + static_cast<uint64_t>(partition);
}

// UpdateCond against the tenant's limits as LimitsChecker calls it: an Admission of this
// node's share of them over `serving`, fresh for the call.
Status UpdateCondWithLimits(UsageStore& store, std::string_view tenant, std::span<const StreamUpdate> streams,
                            const TenantLimits& limits, const PartitionSet& serving, UpdateCondResult* out,
                            Wait wait = Wait::kMay) {
  Admission admission(limits, serving.Count(), static_cast<uint32_t>(store.num_partitions()));
  return store.UpdateCond(tenant, streams, admission, serving, out, wait);
}

class UsageStoreTest : public ::testing::Test {
 protected:
  void SetUp() override { Open(); }

  void Open(int32_t partitions = kPartitions, uint32_t max_policies = kDefaultMaxPoliciesPerTenant,
            const std::function<void(UsageStoreOptions&)>& adjust = nullptr) {
    opened_ = {};  // closes the previous store and database first
    opened_ = testing::TestStore::Open(dir_, clock_, partitions, windows_, max_policies, adjust);
    ASSERT_TRUE(opened_.store);
    db_ = opened_.db.get();
    store_ = opened_.store.get();
  }

  Record Rec(std::string_view tenant, uint64_t hash, int64_t offset, int64_t ts_ms = -1, std::string_view policy = "",
             uint64_t bytes = 100) {
    return Record{.tenant = tenant, .stream_hash = hash, .bytes = bytes, .policy = policy,
                  .timestamp_ms = ts_ms < 0 ? clock_.NowMillis() : ts_ms, .offset = offset};
  }

  // Applies n records for `tenant` with streams 0..n-1 in `partition`, offsets from `first`.
  ApplyStats ApplyStreams(int32_t partition, std::string_view tenant, int n, int64_t first = 0) {
    std::vector<Record> recs;
    for (int i = 0; i < n; ++i) recs.push_back(Rec(tenant, HashIn(partition, i), first + i));
    ApplyStats stats;
    Status s = store_->Apply(partition, recs, first + n, &stats);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return stats;
  }

  std::vector<Verdict> Check(std::string_view tenant, const std::vector<uint64_t>& hashes, const TenantLimits& limits,
                             const PartitionSet& serving, std::string_view policy = "",
                             std::vector<uint32_t>* to_produce = nullptr) {
    std::vector<StreamUpdate> updates;
    for (uint64_t h : hashes) updates.push_back({.stream_hash = h, .bytes = 10, .policy = policy});
    UpdateCondResult out;
    Status s = UpdateCondWithLimits(*store_, tenant, updates, limits, serving, &out);
    EXPECT_TRUE(s.ok()) << s.ToString();
    if (to_produce) *to_produce = out.to_produce;
    return out.verdicts;
  }

  // What a consumer does meanwhile: 1000 streams of tenant "other" in 50 batches over the
  // partitions.
  void ApplyOtherTenantsStreams() {
    for (int b = 0; b < 50; ++b) {
      const int32_t p = b % kPartitions;
      std::vector<Record> recs;
      for (int i = 0; i < 20; ++i) recs.push_back(Rec("other", HashIn(p, static_cast<uint64_t>(b * 20 + i)), b * 20 + i));
      ASSERT_TRUE(store_->Apply(p, recs, b * 20 + 20).ok());
    }
  }

  static TenantLimits Limit(uint64_t max_streams) {
    TenantLimits l;
    l.max_global_streams_per_user = max_streams;
    return l;
  }

  static int Count(const std::vector<Verdict>& v, Verdict what) {
    return static_cast<int>(std::count(v.begin(), v.end(), what));
  }

  // (tenant, hash) -> (policy, last seen, last produced) of the rows on disk.
  using Rows = std::map<std::pair<std::string, uint64_t>, std::tuple<std::string, uint32_t, uint32_t>>;
  Rows DiskRows(int32_t partition) {
    Rows rows;
    Status s = db_->ScanPartition(partition, "", [&](std::string_view k, std::string_view v) {
      std::string_view tenant;
      uint64_t hash;
      storage::StreamRow row;
      EXPECT_TRUE(storage::DecodeStreamKey(k, &tenant, &hash));
      EXPECT_TRUE(storage::DecodeStreamRow(v, &row).ok());
      rows[{std::string(tenant), hash}] = {row.policy, row.last_seen_s, row.last_produced_s};
      return true;
    });
    if (s.IsNotFound()) return rows;
    EXPECT_TRUE(s.ok()) << s.ToString();
    return rows;
  }
  Rows MemoryRows(int32_t partition) {
    Rows rows;
    store_->ForEachStream(partition, [&](std::string_view tenant, uint64_t hash, std::string_view policy,
                                         const StreamEntry& e) {
      rows[{std::string(tenant), hash}] = {std::string(policy), e.last_seen_s, e.last_produced_s};
    });
    return rows;
  }

  // Every (tenant, policy) count the store keeps equals a brute-force count of its streams.
  void ExpectCountsEqualFullScan() {
    const int64_t cutoff = clock_.NowSeconds() - windows_.active_s;
    for (int32_t p = 0; p < store_->num_partitions(); ++p) {
      std::map<std::pair<std::string, std::string>, uint64_t> expected;
      std::set<std::pair<std::string, std::string>> groups;
      store_->ForEachStream(p, [&](std::string_view tenant, uint64_t, std::string_view policy, const StreamEntry& e) {
        groups.insert({std::string(tenant), std::string(policy)});
        if (e.last_seen_s >= cutoff) ++expected[{std::string(tenant), std::string(policy)}];
      });
      for (const auto& g : groups) {
        EXPECT_EQ(store_->ActiveStreams(p, g.first, g.second), expected[g])
            << "partition " << p << " tenant " << g.first << " policy " << g.second;
      }
    }
  }

  TempDir dir_;
  FakeClock clock_;
  Windows windows_{.active_s = 3600, .rate_s = 300, .bucket_s = 60, .produce_interval_s = 60};
  testing::TestStore opened_;
  storage::Db* db_ = nullptr;
  UsageStore* store_ = nullptr;
  PartitionSet all_ = PartitionSet::All(kPartitions);
};

// --- apply, checkpoint, reopen ----------------------------------------------------------

TEST_F(UsageStoreTest, ApplyPersistsRowsWithTheCheckpointAndSurvivesReopen) {
  ApplyStreams(0, "a", 10);
  ApplyStreams(1, "a", 5);
  ApplyStreams(1, "b", 3, 5);
  EXPECT_EQ(store_->ActiveStreams(0, "a", ""), 10u);
  EXPECT_EQ(store_->CheckpointOf(1)->next_offset, 8);
  EXPECT_EQ(DiskRows(0), MemoryRows(0));
  EXPECT_EQ(DiskRows(1), MemoryRows(1));
  EXPECT_EQ((*db_->ReadCheckpoint(1))->next_offset, 8);
  EXPECT_EQ((*db_->ReadCheckpoint(1))->newest_record_ms, clock_.NowMillis());

  const Rows before0 = MemoryRows(0), before1 = MemoryRows(1);
  Open();
  EXPECT_EQ(MemoryRows(0), before0);
  EXPECT_EQ(MemoryRows(1), before1);
  EXPECT_EQ(store_->ActiveStreams(0, "a", ""), 10u);
  EXPECT_EQ(store_->ActiveStreams(1, "b", ""), 3u);
  EXPECT_EQ(store_->CheckpointOf(1)->next_offset, 8);
  EXPECT_FALSE(store_->CheckpointOf(2).has_value());
  EXPECT_EQ(store_->Partitions(), (std::vector<int32_t>{0, 1}));
  ExpectCountsEqualFullScan();
}

TEST_F(UsageStoreTest, ReapplyingIsIdempotent) {
  std::vector<Record> recs;
  for (int i = 0; i < 100; ++i) recs.push_back(Rec("a", HashIn(2, i % 10), i));
  ASSERT_TRUE(store_->Apply(2, recs, 100).ok());
  const TenantUsage once = store_->UsageOf("a", all_);
  EXPECT_EQ(once.active_streams, 10u);
  EXPECT_EQ(once.rate_window_bytes, 100u * 100);

  ApplyStats stats;
  ASSERT_TRUE(store_->Apply(2, recs, 100, &stats).ok());
  EXPECT_EQ(stats.already_applied, 100u);
  EXPECT_EQ(stats.applied, 0u);
  EXPECT_EQ(store_->UsageOf("a", all_).rate_window_bytes, once.rate_window_bytes);

  // After a restart, re-delivery from an older offset applies only what is new.
  Open();
  for (int i = 100; i < 150; ++i) recs.push_back(Rec("a", HashIn(2, 10 + i % 5), i));
  stats = {};
  ASSERT_TRUE(store_->Apply(2, recs, 150, &stats).ok());
  EXPECT_EQ(stats.already_applied, 100u);
  EXPECT_EQ(stats.applied, 50u);
  EXPECT_EQ(store_->ActiveStreams(2, "a", ""), 15u);
  EXPECT_EQ(store_->UsageOf("a", all_).rate_window_bytes, 150u * 100);
}

TEST_F(UsageStoreTest, BufferedApplyPersistsOnlyAtFlushAndCoalesces) {
  std::vector<Record> recs;
  for (int i = 0; i < 50; ++i) recs.push_back(Rec("a", HashIn(0, i % 5), i));
  ASSERT_TRUE(store_->ApplyBuffered(0, recs, 50).ok());
  EXPECT_TRUE(DiskRows(0).empty());
  EXPECT_FALSE((*db_->ReadCheckpoint(0)).has_value());
  ASSERT_TRUE(store_->Flush().ok());
  EXPECT_EQ(DiskRows(0).size(), 5u);
  EXPECT_EQ((*db_->ReadCheckpoint(0))->next_offset, 50);
}

// A partition that finished replaying is shrunk to fit (as a load is): nothing it holds or has
// still to write may change, whether its changed streams were listed or left to a scan.
TEST_F(UsageStoreTest, ShrinkingAPartitionKeepsItsStreamsCountsRatesAndPendingWrites) {
  std::vector<Record> recs;
  for (int i = 0; i < 3000; ++i) recs.push_back(Rec(i % 3 == 0 ? "a" : "b", HashIn(0, i % 1000), i));
  ASSERT_TRUE(store_->ApplyBuffered(0, recs, 3000).ok());
  const Rows before = MemoryRows(0);
  const TenantUsage usage = store_->UsageOf("b", all_);
  store_->ShrinkPartition(0);
  EXPECT_EQ(MemoryRows(0), before);
  EXPECT_EQ(store_->UsageOf("b", all_).total_streams, usage.total_streams);
  EXPECT_EQ(store_->UsageOf("b", all_).rate_window_bytes, usage.rate_window_bytes);
  ExpectCountsEqualFullScan();
  ASSERT_TRUE(store_->Flush().ok());
  EXPECT_EQ(DiskRows(0), before);
  // A few more changes (listed, not scanned), then shrink again before they are written.
  ASSERT_TRUE(store_->ApplyBuffered(0, std::vector<Record>{Rec("a", HashIn(0, 5000), 3000)}, 3001).ok());
  store_->ShrinkPartition(0);
  ASSERT_TRUE(store_->Flush().ok());
  EXPECT_EQ(DiskRows(0), MemoryRows(0));
  EXPECT_EQ(DiskRows(0).size(), before.size() + 1);
}

TEST_F(UsageStoreTest, NextOffsetCoversSkippedRecordsAndNeverGoesBack) {
  ASSERT_TRUE(store_->Apply(0, std::vector<Record>{Rec("a", HashIn(0, 1), 10)}, 25).ok());
  EXPECT_EQ(store_->CheckpointOf(0)->next_offset, 25);
  ASSERT_TRUE(store_->Apply(0, std::vector<Record>{}, 20).ok());
  EXPECT_EQ(store_->CheckpointOf(0)->next_offset, 25);
  ASSERT_TRUE(store_->Apply(0, std::vector<Record>{}, 30).ok());  // e.g. only own records
  EXPECT_EQ((*db_->ReadCheckpoint(0))->next_offset, 30);
}

TEST_F(UsageStoreTest, RecordsOutsideTheWindowOrInvalidAreCountedAndSkipped) {
  const int64_t now = clock_.NowMillis();
  std::vector<Record> recs = {
      Rec("a", HashIn(0, 1), 0, now - 3601'000),        // outside the active window
      Rec("a", HashIn(0, 2), 1, now - 3600'000),        // exactly at its edge: kept
      Rec("", HashIn(0, 3), 2),                          // no tenant
      Rec(std::string(256, 't'), HashIn(0, 4), 3),      // tenant too long
      Rec("a", HashIn(0, 5), 4, now + 3600'000),        // from the future: seen now
      Rec("a", HashIn(0, 6), 5, now, std::string(256, 'p')),  // policy too long: counted under no policy
      Rec("a", HashIn(0, 7), 6, now, "\xff\xfe"),              // policy not UTF-8: likewise
  };
  ApplyStats stats;
  ASSERT_TRUE(store_->Apply(0, recs, 7, &stats).ok());
  EXPECT_EQ(stats.applied, 4u);
  EXPECT_EQ(stats.outside_window, 1u);
  EXPECT_EQ(stats.invalid, 2u);
  EXPECT_EQ(stats.policy_overflow, 2u);
  const Rows rows = MemoryRows(0);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(std::get<1>(rows.at({"a", HashIn(0, 5)})), clock_.NowSeconds());
  EXPECT_EQ(std::get<0>(rows.at({"a", HashIn(0, 6)})), "");
  EXPECT_EQ(std::get<0>(rows.at({"a", HashIn(0, 7)})), "");
  EXPECT_EQ(store_->ignored_policies().Of(PolicyNameCheck::kTooLong), 1u);
  EXPECT_EQ(store_->ignored_policies().Of(PolicyNameCheck::kNotUtf8), 1u);
  EXPECT_EQ(store_->CheckpointOf(0)->next_offset, 7);
}

// --- limits ------------------------------------------------------------------------------

TEST_F(UsageStoreTest, AcceptsUpToTheLimitThenRejectsNewStreamsOnly) {
  std::vector<uint64_t> hashes;
  for (int i = 0; i < 8; ++i) hashes.push_back(static_cast<uint64_t>(i));  // spread over partitions
  std::vector<Verdict> v = Check("a", hashes, Limit(5), all_);
  EXPECT_EQ(Count(v, Verdict::kAccepted), 5);
  EXPECT_EQ(Count(v, Verdict::kMaxStreams), 3);
  // Known streams keep being accepted at the limit; new ones are still rejected.
  EXPECT_EQ(Count(Check("a", {hashes[0], hashes[1], 100}, Limit(5), all_), Verdict::kAccepted), 2);
  // Other tenants are not affected.
  EXPECT_EQ(Count(Check("b", hashes, Limit(5), all_), Verdict::kAccepted), 5);
  EXPECT_EQ(store_->UsageOf("a", all_).active_streams, 5u);
}

TEST_F(UsageStoreTest, ZeroMeansUnlimited) {
  std::vector<uint64_t> hashes;
  for (uint64_t i = 0; i < 500; ++i) hashes.push_back(i);
  EXPECT_EQ(Count(Check("a", hashes, Limit(0), all_), Verdict::kAccepted), 500);
}

TEST_F(UsageStoreTest, ALimitBelowThePartitionCountIsNotUnlimited) {
  Open(64);
  const PartitionSet all64 = PartitionSet::All(64);
  std::vector<uint64_t> hashes;
  for (uint64_t i = 0; i < 640; ++i) hashes.push_back(i);  // 10 streams in each of 64 partitions
  std::vector<Verdict> v = Check("a", hashes, Limit(10), all64);
  EXPECT_EQ(Count(v, Verdict::kAccepted), 10);  // Loki: 10 / 64 == 0 -> all 640 accepted

  // A node serving one partition of 64 admits ceil(10 / 64) = 1 stream there.
  std::vector<uint64_t> in_p5;
  for (uint64_t i = 0; i < 10; ++i) in_p5.push_back(HashIn(5, i, 64));
  v = Check("b", in_p5, Limit(10), PartitionSet{5});
  EXPECT_EQ(Count(v, Verdict::kAccepted), 1);
}

TEST_F(UsageStoreTest, PoolingOverServedPartitionsAbsorbsHashSkew) {
  // All of a tenant's streams hash into one partition: per-partition limits (Loki) would
  // reject after limit / P of them; the pool admits the node's whole share.
  std::vector<uint64_t> skewed;
  for (uint64_t i = 0; i < 20; ++i) skewed.push_back(HashIn(3, i));
  EXPECT_EQ(Count(Check("a", skewed, Limit(12), all_), Verdict::kAccepted), 12);
}

TEST_F(UsageStoreTest, StreamsOfUnservedPartitionsAreNotServed) {
  std::vector<Verdict> v = Check("a", {HashIn(0, 1), HashIn(1, 1), HashIn(2, 1)}, Limit(100), PartitionSet{0, 2});
  EXPECT_EQ(v, (std::vector<Verdict>{Verdict::kAccepted, Verdict::kNotServed, Verdict::kAccepted}));
  EXPECT_TRUE(MemoryRows(1).empty());
}

TEST_F(UsageStoreTest, PolicyLimitsCountOnlyTheirOwnStreams) {
  TenantLimits limits = Limit(3);
  limits.policy_override_limits = {{"gold", {.max_global_streams_per_user = 2}}};
  std::vector<uint64_t> gold = {1, 2, 3, 4}, plain = {11, 12, 13, 14}, bronze = {21, 22};
  EXPECT_EQ(Count(Check("a", gold, limits, all_, "gold"), Verdict::kAccepted), 2);
  // "bronze" has no limit of its own: it shares the default bucket with policy-less streams.
  EXPECT_EQ(Count(Check("a", bronze, limits, all_, "bronze"), Verdict::kAccepted), 2);
  EXPECT_EQ(Count(Check("a", plain, limits, all_), Verdict::kAccepted), 1);
  const TenantUsage u = store_->UsageOf("a", all_);
  EXPECT_EQ(u.active_streams, 5u);
  EXPECT_EQ(u.active_by_policy, (std::map<std::string, uint64_t>{{"", 1}, {"bronze", 2}, {"gold", 2}}));
}

// Loki's TestUsageStore_PolicyBasedStreamLimits (pkg/limits/store_test.go), its four cases
// with the same limits and pushes; Loki runs them on one partition, where its per-partition
// limit is the global one, as this node's pool of every partition is.
TEST_F(UsageStoreTest, Issue26_LokisPolicyBasedStreamLimitsCases) {
  auto hashes = [](uint64_t first, uint64_t last) {
    std::vector<uint64_t> out;
    for (uint64_t h = first; h <= last; ++h) out.push_back(h);
    return out;
  };
  auto counts = [](const std::vector<Verdict>& v) {
    return std::pair<int, int>{Count(v, Verdict::kAccepted), Count(v, Verdict::kMaxStreams)};
  };
  {  // policy-specific stream limits override default limits (streams without a policy)
    TenantLimits l = Limit(10);
    l.policy_override_limits = {{"high-priority", {.max_global_streams_per_user = 5}},
                                {"low-priority", {.max_global_streams_per_user = 3}}};
    EXPECT_EQ(counts(Check("t1", hashes(1, 11), l, all_)), (std::pair<int, int>{10, 1}));
  }
  {  // streams with different policies tracked separately
    TenantLimits l = Limit(10);
    l.policy_override_limits = {{"high-priority", {.max_global_streams_per_user = 3}},
                                {"low-priority", {.max_global_streams_per_user = 2}}};
    EXPECT_EQ(counts(Check("t2", hashes(1, 4), l, all_, "high-priority")), (std::pair<int, int>{3, 1}));
    EXPECT_EQ(counts(Check("t2", hashes(5, 7), l, all_, "low-priority")), (std::pair<int, int>{2, 1}));
  }
  {  // default streams tracked separately from policy streams
    TenantLimits l = Limit(5);
    l.policy_override_limits = {{"special-policy", {.max_global_streams_per_user = 3}}};
    EXPECT_EQ(counts(Check("t3", hashes(1, 6), l, all_)), (std::pair<int, int>{5, 1}));
    EXPECT_EQ(counts(Check("t3", hashes(7, 10), l, all_, "special-policy")), (std::pair<int, int>{3, 1}));
    EXPECT_EQ(counts(Check("t3", hashes(11, 11), l, all_)), (std::pair<int, int>{0, 1}));
  }
  {  // policies without custom limits use the default bucket
    TenantLimits l = Limit(4);
    l.policy_override_limits = {{"custom-policy", {.max_global_streams_per_user = 2}}};
    EXPECT_EQ(counts(Check("t4", hashes(1, 3), l, all_, "custom-policy")), (std::pair<int, int>{2, 1}));
    EXPECT_EQ(counts(Check("t4", hashes(4, 8), l, all_, "other-policy")), (std::pair<int, int>{4, 1}));
  }
}

// Loki #23751: inherit_limits gives the policy a bucket of its own at the tenant's limit, so
// its streams no longer share (and halve) the default bucket; a policy with only a rate of
// its own still counts in the default bucket.
TEST_F(UsageStoreTest, Issue26_InheritLimitsIsABucketOfItsOwnAtTheTenantsLimit) {
  TenantLimits l = Limit(4);
  l.policy_override_limits = {{"inherit", {.inherit_limits = true}}, {"rate-only", {.ingestion_rate_mb = 1.0}}};
  EXPECT_EQ(Count(Check("a", {1, 2, 3, 4, 5}, l, all_, "inherit"), Verdict::kAccepted), 4);
  EXPECT_EQ(Count(Check("a", {11, 12, 13}, l, all_), Verdict::kAccepted), 3);
  EXPECT_EQ(Count(Check("a", {21, 22}, l, all_, "rate-only"), Verdict::kAccepted), 1);  // shares the default's 4
  const TenantUsage u = store_->UsageOf("a", all_);
  EXPECT_EQ(u.active_by_policy, (std::map<std::string, uint64_t>{{"", 3}, {"inherit", 4}, {"rate-only", 1}}));
}

TEST_F(UsageStoreTest, RecordsFromOtherZonesCountTowardTheLimit) {
  ApplyStreams(0, "a", 4);
  EXPECT_EQ(Count(Check("a", {HashIn(1, 1), HashIn(1, 2)}, Limit(5), all_), Verdict::kAccepted), 1);
}

// --- the active window -------------------------------------------------------------------

TEST_F(UsageStoreTest, AStreamCountsExactlyWhileInsideTheActiveWindow) {
  ASSERT_EQ(Count(Check("a", {HashIn(0, 1)}, Limit(1), all_), Verdict::kAccepted), 1);
  clock_.Advance(3600s);  // seen exactly active_s ago: still active
  EXPECT_EQ(store_->ActiveStreams(0, "a", ""), 1u);
  EXPECT_EQ(Count(Check("a", {HashIn(0, 2)}, Limit(1), all_), Verdict::kMaxStreams), 1);
  clock_.Advance(1s);  // now outside, with no eviction pass: it must not count
  EXPECT_EQ(store_->ActiveStreams(0, "a", ""), 0u);
  EXPECT_EQ(store_->UsageOf("a", all_).total_streams, 1u);  // still held until evicted
  EXPECT_EQ(Count(Check("a", {HashIn(0, 2)}, Limit(1), all_), Verdict::kAccepted), 1);
  // The expired stream seen again is new again, and now over the limit.
  EXPECT_EQ(Count(Check("a", {HashIn(0, 1)}, Limit(1), all_), Verdict::kMaxStreams), 1);
}

TEST_F(UsageStoreTest, SeeingAStreamAgainKeepsItActive) {
  Check("a", {HashIn(0, 1)}, Limit(1), all_);
  for (int i = 0; i < 5; ++i) {
    clock_.Advance(3000s);
    EXPECT_EQ(Count(Check("a", {HashIn(0, 1)}, Limit(1), all_), Verdict::kAccepted), 1);
  }
  EXPECT_EQ(store_->ActiveStreams(0, "a", ""), 1u);
}

TEST_F(UsageStoreTest, StreamsAreProducedAtMostOncePerInterval) {
  const uint32_t delay = windows_.ProduceDelay(HashIn(0, 1), static_cast<uint32_t>(clock_.NowSeconds()));
  std::vector<uint32_t> produce;
  Check("a", {HashIn(0, 1), HashIn(0, 2)}, Limit(0), all_, "", &produce);
  EXPECT_EQ(produce, (std::vector<uint32_t>{0, 1}));
  clock_.Advance(59s);
  Check("a", {HashIn(0, 1), HashIn(0, 3)}, Limit(0), all_, "", &produce);
  EXPECT_EQ(produce, (std::vector<uint32_t>{1}));  // only the new one
  clock_.Advance(std::chrono::seconds(delay - 59));
  Check("a", {HashIn(0, 1), HashIn(0, 3)}, Limit(0), all_, "", &produce);
  EXPECT_EQ(produce, (std::vector<uint32_t>{0}));
  // Rejected streams are never produced.
  Check("b", {HashIn(0, 1), HashIn(0, 2)}, Limit(1), all_, "", &produce);
  EXPECT_EQ(produce, (std::vector<uint32_t>{0}));
}

// A stream is due again after its own delay (ProduceDelay: the interval plus up to a
// quarter), so that streams produced together do not stay due together.
TEST_F(UsageStoreTest, AStreamIsDueAgainAfterItsOwnDelay) {
  const auto now = static_cast<uint32_t>(clock_.NowSeconds());
  uint64_t late = HashIn(0, 1);
  for (int i = 0; i < 1000 && windows_.ProduceDelay(late, now) < 65; ++i) late = HashIn(0, late + 1);
  const uint32_t delay = windows_.ProduceDelay(late, now);
  ASSERT_GE(delay, 65u);
  std::vector<uint32_t> produce;
  Check("a", {late}, Limit(0), all_, "", &produce);
  EXPECT_EQ(produce, (std::vector<uint32_t>{0}));
  clock_.Advance(60s);
  Check("a", {late}, Limit(0), all_, "", &produce);
  EXPECT_TRUE(produce.empty());
  clock_.Advance(std::chrono::seconds(delay - 61));
  Check("a", {late}, Limit(0), all_, "", &produce);
  EXPECT_TRUE(produce.empty());
  clock_.Advance(1s);
  Check("a", {late}, Limit(0), all_, "", &produce);
  EXPECT_EQ(produce, (std::vector<uint32_t>{0}));
}

// A request writes nothing; the next flush (the consumer's, every second) persists it.
TEST_F(UsageStoreTest, UpdateCondChangesMemoryAndTheNextFlushPersistsIt) {
  Check("a", {HashIn(0, 1), HashIn(1, 1)}, Limit(10), all_);
  EXPECT_TRUE(DiskRows(0).empty());
  EXPECT_EQ(store_->UsageOf("a", all_).active_streams, 2u);
  ASSERT_TRUE(store_->Flush().ok());
  EXPECT_EQ(DiskRows(0), MemoryRows(0));
  EXPECT_EQ(DiskRows(1), MemoryRows(1));
  EXPECT_EQ(std::get<2>(DiskRows(0).begin()->second), clock_.NowSeconds());  // last produced
}

// A known stream's refresh is not written by itself (each flush would otherwise rewrite every
// stream requested in the last second); its row follows when it is next produced, or when
// QueueRefreshes() runs for its partition (a revocation, which a stop includes).
TEST_F(UsageStoreTest, ARefreshIsWrittenWhenProducedOrQueuedNotPerFlush) {
  Check("a", {HashIn(0, 1)}, Limit(10), all_);
  ASSERT_TRUE(store_->Flush().ok());
  const uint32_t first = std::get<1>(DiskRows(0).begin()->second);  // last seen
  clock_.Advance(10s);
  Check("a", {HashIn(0, 1)}, Limit(10), all_);  // refreshed, not due to be produced (60 s)
  ASSERT_TRUE(store_->Flush().ok());
  EXPECT_EQ(std::get<1>(DiskRows(0).begin()->second), first);
  EXPECT_EQ(std::get<1>(MemoryRows(0).begin()->second), first + 10);
  store_->QueueRefreshes(std::vector<int32_t>{1});  // another partition's: nothing of partition 0
  ASSERT_TRUE(store_->Flush().ok());
  EXPECT_EQ(std::get<1>(DiskRows(0).begin()->second), first);
  store_->QueueRefreshes(std::vector<int32_t>{0});
  ASSERT_TRUE(store_->Flush().ok());
  EXPECT_EQ(DiskRows(0), MemoryRows(0));
  clock_.Advance(65s);  // 75 s: past any stream's delay (the interval and at most a quarter)
  Check("a", {HashIn(0, 1)}, Limit(10), all_);  // due to be produced: written
  ASSERT_TRUE(store_->Flush().ok());
  EXPECT_EQ(std::get<1>(DiskRows(0).begin()->second), first + 75);
  EXPECT_EQ(std::get<2>(DiskRows(0).begin()->second), first + 75);  // last produced
}

std::vector<UsageStore::StreamRate> Rates(UsageStore& store, const std::vector<std::pair<uint64_t, uint64_t>>& bytes,
                                          const PartitionSet& serving) {
  std::vector<StreamUpdate> u;
  for (const auto& [hash, b] : bytes) u.push_back({.stream_hash = hash, .bytes = b, .policy = ""});
  std::vector<UsageStore::StreamRate> out;
  Status s = store.UpdateRates("a", u, serving, &out);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return out;
}

TEST_F(UsageStoreTest, UpdateCondDoesNotCountBytesUpdateRatesDoes) {
  Check("a", {HashIn(0, 1), HashIn(1, 1)}, Limit(0), all_);
  EXPECT_EQ(store_->UsageOf("a", all_).rate_window_bytes, 0u);
  Rates(*store_, {{HashIn(0, 1), 6000}}, all_);
  clock_.Advance(60s);
  auto r = Rates(*store_, {{HashIn(0, 1), 3000}, {HashIn(1, 1), 600}}, all_);
  EXPECT_EQ(store_->UsageOf("a", all_).rate_window_bytes, 9600u);
  EXPECT_EQ(store_->UsageOf("a", PartitionSet{1}).rate_window_bytes, 600u);
  // Rates: bytes over the populated buckets of the window (two 60 s buckets; one).
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].bytes_per_s, 9000u / 120);
  EXPECT_EQ(r[1].bytes_per_s, 600u / 60);
  clock_.Advance(300s);
  EXPECT_EQ(store_->UsageOf("a", all_).rate_window_bytes, 0u);
}

// Issue 10 item 3: UpdateRates as Loki's — every hash of a served partition gets a rate
// (callers send segmentation keys); hashes that are not streams never become streams.
TEST_F(UsageStoreTest, UpdateRatesAnswersEveryHashAndNeverCreatesStreams) {
  Check("a", {HashIn(0, 1), HashIn(1, 1)}, Limit(0), all_);
  auto r = Rates(*store_, {{HashIn(0, 1), 60}, {HashIn(0, 2), 120}, {HashIn(1, 1), 60}}, PartitionSet{0});
  ASSERT_EQ(r.size(), 2u);  // unserved partition 1: no result
  EXPECT_EQ(r[0].stream_hash, HashIn(0, 1));
  EXPECT_EQ(r[1].stream_hash, HashIn(0, 2));  // a segmentation key: a rate, not a stream
  EXPECT_EQ(r[1].bytes_per_s, 120u / 60);
  EXPECT_EQ(store_->UsageOf("a", all_).total_streams, 2u);
  EXPECT_EQ(store_->ActiveStreams(0, "a", ""), 1u);
  // A key's rate accumulates like a stream's.
  r = Rates(*store_, {{HashIn(0, 2), 60}}, all_);
  EXPECT_EQ(r[0].bytes_per_s, 180u / 60);
  // A tenant with only keys is known to the node; its keys go once their window is over.
  Rates(*store_, {{HashIn(2, 9), 10}}, all_);
  clock_.Advance(3601s);  // expired streams are not revived by UpdateRates: a rate only
  EXPECT_EQ(Rates(*store_, {{HashIn(0, 1), 60}}, all_).size(), 1u);
  EXPECT_EQ(store_->ActiveStreams(0, "a", ""), 0u);
  ASSERT_TRUE(store_->EvictExpired().ok());
  clock_.Advance(301s);
  ASSERT_TRUE(store_->EvictExpired().ok());
  EXPECT_EQ(store_->num_tenants(), 0u);
  // A stream's rate is persisted with its row, by the next flush.
  Check("a", {HashIn(0, 1)}, Limit(0), all_);
  Rates(*store_, {{HashIn(0, 1), 120}}, all_);
  ASSERT_TRUE(store_->Flush().ok());
  Open();
  EXPECT_EQ(store_->UsageOf("a", all_).rate_window_bytes, 120u);
}

// --- eviction and dropping ---------------------------------------------------------------

TEST_F(UsageStoreTest, EvictExpiredRemovesOldStreamsFromMemoryAndDisk) {
  ApplyStreams(0, "a", 5);
  ApplyStreams(1, "b", 3);
  clock_.Advance(1800s);
  ApplyStreams(0, "a", 2, 5);  // re-sees streams 0 and 1
  clock_.Advance(1801s);  // the first batch's other streams (2, 3, 4) and all of b are out
  Result<uint64_t> evicted = store_->EvictExpired();
  ASSERT_TRUE(evicted.ok());
  EXPECT_EQ(*evicted, 6u);
  EXPECT_EQ(MemoryRows(0).size(), 2u);
  EXPECT_TRUE(MemoryRows(1).empty());
  EXPECT_EQ(DiskRows(0), MemoryRows(0));
  EXPECT_TRUE(DiskRows(1).empty());
  EXPECT_EQ(store_->UsageOf("b", all_).total_streams, 0u);
  ExpectCountsEqualFullScan();
  Open();
  EXPECT_EQ(MemoryRows(0).size(), 2u);
}

TEST_F(UsageStoreTest, ReopenSkipsAndDeletesRowsThatExpiredWhileDown) {
  ApplyStreams(0, "a", 3);
  clock_.Advance(1000s);
  ApplyStreams(0, "a", 1, 3);
  clock_.Advance(3000s);  // the first three expired while "down"
  Open();
  const Rows rows = MemoryRows(0);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows.begin()->first, std::make_pair(std::string("a"), HashIn(0, 0)));
  EXPECT_EQ(DiskRows(0), MemoryRows(0));
  EXPECT_EQ(store_->ActiveStreams(0, "a", ""), 1u);
}

TEST_F(UsageStoreTest, DropPartitionForgetsItsRowsAndCheckpointOnly) {
  ApplyStreams(0, "a", 5);
  ApplyStreams(1, "a", 5);
  ASSERT_TRUE(store_->DropPartition(0).ok());
  EXPECT_TRUE(MemoryRows(0).empty());
  EXPECT_FALSE(store_->CheckpointOf(0).has_value());
  EXPECT_FALSE(db_->HasPartition(0));
  EXPECT_FALSE((*db_->ReadCheckpoint(0)).has_value());
  EXPECT_EQ(MemoryRows(1).size(), 5u);
  // Applying re-creates it from scratch.
  ApplyStats stats = ApplyStreams(0, "a", 2);
  EXPECT_EQ(stats.applied, 2u);
  Open();
  EXPECT_EQ(MemoryRows(0).size(), 2u);
  EXPECT_EQ(store_->CheckpointOf(0)->next_offset, 2);
}

TEST_F(UsageStoreTest, OpenDeletesACheckpointThatHasNoData) {
  {
    storage::WriteBatch batch(*db_);
    batch.PutCheckpoint(3, {.next_offset = 99, .newest_record_ms = 0});
    ASSERT_TRUE(db_->Write(batch).ok());
  }
  Open();
  EXPECT_FALSE((*db_->ReadCheckpoint(3)).has_value());
  EXPECT_FALSE(store_->CheckpointOf(3).has_value());
}

TEST_F(UsageStoreTest, OpenRefusesPartitionsBeyondTheTopic) {
  ASSERT_TRUE(store_->EnsurePartition(3).ok());
  opened_.store.reset();
  UsageStoreOptions so;
  so.num_partitions = 2;
  so.windows = windows_;
  so.clock = &clock_;
  auto store = UsageStore::Open(*db_, so);
  ASSERT_FALSE(store.ok());
  EXPECT_THAT(store.status().message(), ::testing::HasSubstr("p00003 is on disk but the topic has only 2"));
}

TEST_F(UsageStoreTest, UndecodableRowsAreSkippedAtLoad) {
  ApplyStreams(0, "a", 2);
  {
    storage::WriteBatch batch(*db_);
    batch.PutRow(0, storage::EncodeStreamKey("a", 12345), "garbage");
    batch.PutRow(0, "bad key", storage::EncodeStreamRow({}));
    ASSERT_TRUE(db_->Write(batch).ok());
  }
  Open();
  EXPECT_EQ(MemoryRows(0).size(), 2u);
}

TEST_F(UsageStoreTest, ReadOnlyOpenChangesNothingAndReportsWhatItFound) {
  ApplyStreams(0, "a", 3);
  clock_.Advance(3000s);
  ApplyStreams(1, "a", 2);
  ASSERT_TRUE(store_->EnsurePartition(2).ok());  // data without a checkpoint
  {
    storage::WriteBatch batch(*db_);
    batch.PutCheckpoint(3, {.next_offset = 1, .newest_record_ms = 0});  // checkpoint without data
    batch.PutRow(1, storage::EncodeStreamKey("a", 999), "bad");
    ASSERT_TRUE(db_->Write(batch).ok());
  }
  clock_.Advance(1000s);  // partition 0's streams expired while closed
  opened_.store.reset();
  UsageStoreOptions so;
  so.num_partitions = kPartitions;
  so.windows = windows_;
  so.clock = &clock_;
  so.read_only = true;
  auto ro = UsageStore::Open(*db_, so);
  ASSERT_TRUE(ro.ok()) << ro.status().ToString();
  const LoadStats& stats = (*ro)->load_stats();
  EXPECT_EQ(stats.partitions, 3u);
  EXPECT_EQ(stats.streams, 2u);
  EXPECT_EQ(stats.expired_rows, 3u);
  EXPECT_EQ(stats.undecodable_rows, 1u);
  EXPECT_EQ(stats.orphan_checkpoints, 1u);
  EXPECT_EQ(stats.without_checkpoint, std::vector<int32_t>{2});
  EXPECT_EQ(DiskRows(0).size(), 3u);  // nothing deleted
  EXPECT_TRUE((*db_->ReadCheckpoint(3)).has_value());
  EXPECT_EQ((*ro)->Apply(0, std::vector<Record>{}, 1).code(), StatusCode::kFailedPrecondition);
  UpdateCondResult out;
  std::vector<StreamUpdate> u = {{.stream_hash = 1, .bytes = 1, .policy = ""}};
  EXPECT_EQ(UpdateCondWithLimits(**ro, "a", u, Limit(1), all_, &out).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ((*ro)->DropPartition(0).code(), StatusCode::kFailedPrecondition);
}

TEST_F(UsageStoreTest, BadRequestsAreRejected) {
  UpdateCondResult out;
  std::vector<StreamUpdate> ok = {{.stream_hash = 1, .bytes = 1, .policy = ""}};
  EXPECT_TRUE(UpdateCondWithLimits(*store_, "", ok, Limit(1), all_, &out).IsInvalidArgument());
  EXPECT_TRUE(UpdateCondWithLimits(*store_, std::string(300, 'x'), ok, Limit(1), all_, &out).IsInvalidArgument());
  EXPECT_TRUE(store_->Apply(kPartitions, std::vector<Record>{}, 0).IsInvalidArgument());
}

// A BucketQuota of one limited bucket that every policy counts in, with `cap` places.
class CapQuota final : public BucketQuota {
 public:
  explicit CapQuota(uint64_t cap) : cap_(cap) {}
  size_t BucketOf(std::string_view) const override { return 0; }
  bool OwnBucket(std::string_view) const override { return false; }
  bool Limited(size_t) const override { return true; }
  void CountPartition(int32_t partition, TenantStreams& ts, int64_t cutoff_s) override {
    ++partitions_counted;
    ts.ForEachPolicy(cutoff_s, [&](std::string_view, uint32_t active) {
      used += active;
      counted[partition] += active;
    });
  }
  bool TryAdmit(size_t, int32_t partition) override {
    asked.push_back(partition);
    if (used >= cap_) return false;
    ++used;
    return true;
  }
  void Release(size_t, int32_t) override {
    if (used > 0) --used;
  }

  int partitions_counted = 0;
  std::map<int32_t, uint64_t> counted;  // by partition
  std::vector<int32_t> asked;           // the partition of each stream asking for a place
  uint64_t used = 0;

 private:
  const uint64_t cap_;
};

// The store admits against whatever quota its caller gives (bucket_quota.h), not only an
// Admission of the tenant's limits: it counts the tenant's partitions of the pool into it
// when a stream needs a place, takes places only from it, and counts nothing when every
// stream is known.
TEST_F(UsageStoreTest, UpdateCondAdmitsAgainstTheCallersQuota) {
  ApplyStreams(0, "a", 2);
  ApplyStreams(1, "a", 1);
  std::vector<StreamUpdate> fresh = {{.stream_hash = HashIn(2, 1), .bytes = 1, .policy = ""},
                                     {.stream_hash = HashIn(3, 1), .bytes = 1, .policy = "gold"},
                                     {.stream_hash = HashIn(2, 2), .bytes = 1, .policy = ""}};
  CapQuota quota(4);
  UpdateCondResult out;
  ASSERT_TRUE(store_->UpdateCond("a", fresh, quota, all_, &out).ok());
  EXPECT_EQ(quota.partitions_counted, 2);  // partitions 0 and 1 hold the tenant; 2 and 3 not yet
  EXPECT_EQ(quota.counted, (std::map<int32_t, uint64_t>{{0, 2}, {1, 1}}));
  EXPECT_EQ(quota.asked, (std::vector<int32_t>{2, 2, 3}));  // each stream's own partition
  EXPECT_EQ(quota.used, 4u);
  // Partition 2's streams are admitted first: one place left.
  EXPECT_EQ(out.verdicts, (std::vector<Verdict>{Verdict::kAccepted, Verdict::kMaxStreams, Verdict::kMaxStreams}));
  ASSERT_EQ(out.admitted.size(), 1u);
  EXPECT_EQ(out.admitted[0].index, 0u);

  CapQuota known(0);
  std::vector<StreamUpdate> refresh = {{.stream_hash = HashIn(0, 0), .bytes = 1, .policy = ""},
                                       {.stream_hash = HashIn(2, 1), .bytes = 1, .policy = ""}};
  ASSERT_TRUE(store_->UpdateCond("a", refresh, known, all_, &out).ok());
  EXPECT_EQ(known.partitions_counted, 0);
  EXPECT_EQ(out.verdicts, (std::vector<Verdict>{Verdict::kAccepted, Verdict::kAccepted}));
}

// A zone's cold bucket admits on each partition's floor: the store counts the tenant
// partition by partition and asks for each stream's own one (issue 27).
TEST_F(UsageStoreTest, AZoneQuotaAdmitsOnTheFloorOfEachStreamsPartition) {
  ApplyStreams(0, "a", 2);
  // L = 16 over 4 partitions: floors of 2. Partition 0 is full, the others are empty.
  zone::ZoneQuota quota(PolicyBuckets(), {zone::ZoneBucket{zone::ZoneBucket::Mode::kCold,
                                                           zone::PartitionFloors(16, kPartitions, 0), nullptr}});
  std::vector<StreamUpdate> u = {{.stream_hash = HashIn(0, 7), .bytes = 1, .policy = ""},
                                 {.stream_hash = HashIn(1, 7), .bytes = 1, .policy = ""},
                                 {.stream_hash = HashIn(1, 8), .bytes = 1, .policy = ""},
                                 {.stream_hash = HashIn(1, 9), .bytes = 1, .policy = ""}};
  UpdateCondResult out;
  ASSERT_TRUE(store_->UpdateCond("a", u, quota, all_, &out).ok());
  EXPECT_EQ(out.verdicts, (std::vector<Verdict>{Verdict::kMaxStreams, Verdict::kAccepted, Verdict::kAccepted,
                                                Verdict::kMaxStreams}));
  EXPECT_EQ(quota.Triggered(), std::vector<size_t>{0});
}

// Issue 24, item 1: a policy the node does not keep (over 255 bytes, not UTF-8) was a
// whole-call error; Loki takes it verbatim from a client header. Each such stream counts
// under no policy, in the default bucket; its neighbours are answered as usual.
TEST_F(UsageStoreTest, Item1_PoliciesNotKeptCountUnderNoPolicyAndFailNothing) {
  TenantLimits limits = Limit(3);
  limits.policy_override_limits = {{"gold", {.max_global_streams_per_user = 1}}};
  const std::string long_policy(256, 'p');
  std::vector<StreamUpdate> u = {{.stream_hash = HashIn(0, 1), .bytes = 1, .policy = long_policy},
                                 {.stream_hash = HashIn(1, 1), .bytes = 1, .policy = "\xc3\x28"},  // not UTF-8
                                 {.stream_hash = HashIn(2, 1), .bytes = 1, .policy = "gold"},
                                 {.stream_hash = HashIn(3, 1), .bytes = 1, .policy = ""},
                                 {.stream_hash = HashIn(0, 2), .bytes = 1, .policy = long_policy}};
  UpdateCondResult out;
  ASSERT_TRUE(UpdateCondWithLimits(*store_, "a", u, limits, all_, &out).ok());
  // Lower partitions are admitted first: the default bucket's three places go to 0, 4 and 1.
  EXPECT_EQ(out.verdicts, (std::vector<Verdict>{Verdict::kAccepted, Verdict::kAccepted, Verdict::kAccepted,
                                                Verdict::kMaxStreams, Verdict::kAccepted}));
  EXPECT_EQ(store_->UsageOf("a", all_).active_by_policy, (std::map<std::string, uint64_t>{{"", 3}, {"gold", 1}}));
  EXPECT_EQ(store_->ignored_policies().Of(PolicyNameCheck::kTooLong), 2u);
  EXPECT_EQ(store_->ignored_policies().Of(PolicyNameCheck::kNotUtf8), 1u);
  // As a name a tenant's overrides give a limit of its own, an over-long one is impossible
  // (the config refuses it), so such a stream can never escape a limit by its name.
  for (const Rows& rows : {DiskRows(0), MemoryRows(0)}) {
    for (const auto& [key, row] : rows) EXPECT_LE(std::get<0>(row).size(), kMaxPolicyLength);
  }
}

// Issue 24, item 2: a known stream re-sent under a policy with a limit of its own skipped
// admission (40 known streams all accepted under a policy limited to 10), and alternating
// policies grew a tenant limited to 40 by 10 a round. A move into another bucket is an
// admission there; it leaves a place in the bucket it came from.
TEST_F(UsageStoreTest, Item2_APolicyChangeIsAnAdmissionIntoTheNewBucket) {
  TenantLimits limits = Limit(40);
  limits.policy_override_limits = {{"gold", {.max_global_streams_per_user = 10}}};
  std::vector<uint64_t> forty;
  for (uint64_t i = 0; i < 40; ++i) forty.push_back(HashIn(static_cast<int32_t>(i % kPartitions), i));
  EXPECT_EQ(Count(Check("a", forty, limits, all_), Verdict::kAccepted), 40);
  // All 40 again, under gold: 10 move, 30 stay where they were (rejected, still counted).
  std::vector<Verdict> v = Check("a", forty, limits, all_, "gold");
  EXPECT_EQ(Count(v, Verdict::kAccepted), 10);
  EXPECT_EQ(Count(v, Verdict::kMaxStreams), 30);
  EXPECT_EQ(store_->UsageOf("a", all_).active_by_policy, (std::map<std::string, uint64_t>{{"", 30}, {"gold", 10}}));
  // Alternating: the default bucket has 10 places again; never more than 40 + 10 in all.
  for (int round = 0; round < 6; ++round) {
    std::vector<uint64_t> fresh;
    for (uint64_t i = 0; i < 10; ++i) fresh.push_back(HashIn(static_cast<int32_t>(i % kPartitions), 1000 + 10 * round + i));
    Check("a", fresh, limits, all_, round % 2 ? "gold" : "");
    Check("a", forty, limits, all_, round % 2 ? "" : "gold");
    TenantUsage usage = store_->UsageOf("a", all_);
    ASSERT_LE(usage.active_by_policy[""], 40u) << "round " << round;
    ASSERT_LE(usage.active_by_policy["gold"], 10u) << "round " << round;
    ASSERT_EQ(usage.active_streams, 50u) << "round " << round;
  }
  // A move within the default bucket (full; to a policy without a limit of its own) is no
  // admission. forty[1] is in the default bucket: gold took partition 0's ten.
  v = Check("a", {forty[1]}, limits, all_, "bronze");
  EXPECT_EQ(v[0], Verdict::kAccepted);
  EXPECT_EQ(store_->UsageOf("a", all_).active_by_policy["bronze"], 1u);
  ExpectCountsEqualFullScan();
}

// Issue 24, item 2: a move is an admission, so it is produced (other zones count the stream
// in its new bucket) and logged before the answer.
TEST_F(UsageStoreTest, Item2_AMoveIsProducedAndLoggedLikeANewStream) {
  TenantLimits limits = Limit(10);
  limits.policy_override_limits = {{"gold", {.max_global_streams_per_user = 10}}};
  std::vector<uint32_t> produced;
  Check("a", {HashIn(1, 1)}, limits, all_, "", &produced);
  EXPECT_EQ(produced.size(), 1u);
  Check("a", {HashIn(1, 1)}, limits, all_, "", &produced);
  EXPECT_TRUE(produced.empty());  // a refresh within the produce interval
  std::vector<StreamUpdate> u = {{.stream_hash = HashIn(1, 1), .bytes = 1, .policy = "gold"}};
  UpdateCondResult out;
  ASSERT_TRUE(UpdateCondWithLimits(*store_, "a", u, limits, all_, &out).ok());
  EXPECT_EQ(out.to_produce.size(), 1u);
  ASSERT_EQ(out.admitted.size(), 1u);
  EXPECT_EQ(out.admitted[0].policy, "gold");
}

// Issue 24, item 3: "too many policies" (reason 4) rejected a stream within every limit. A
// name beyond max_policies_per_tenant counts under no policy; a name with a limit of its own
// always gets one, so a tenant that filled its table with junk names cannot hide a limited
// policy's streams in the default bucket.
TEST_F(UsageStoreTest, Item3_NamesBeyondTheCapCountUnderNoPolicyButLimitedNamesAreAlwaysKept) {
  Open(kPartitions, /*max_policies=*/2);
  TenantLimits limits = Limit(100);
  limits.policy_override_limits = {{"gold", {.max_global_streams_per_user = 2}}};
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(Check("a", {HashIn(0, static_cast<uint64_t>(i))}, limits, all_, "junk-" + std::to_string(i))[0],
              Verdict::kAccepted);
  }
  EXPECT_EQ(store_->ignored_policies().Of(PolicyNameCheck::kBeyondCap), 3u);
  std::vector<Verdict> v = Check("a", {HashIn(1, 1), HashIn(1, 2), HashIn(1, 3)}, limits, all_, "gold");
  EXPECT_EQ(v, (std::vector<Verdict>{Verdict::kAccepted, Verdict::kAccepted, Verdict::kMaxStreams}));
  EXPECT_EQ(store_->UsageOf("a", all_).active_by_policy,
            (std::map<std::string, uint64_t>{{"", 3}, {"gold", 2}, {"junk-0", 1}, {"junk-1", 1}}));
}

// --- what clients can make the node hold --------------------------------------------------

// Issue 24, item 4: UpdateRates with distinct hashes grew the node by 89 B per hash with no
// bound (+269 MB for 3 M hashes), kept for minutes. Rate keys are bounded per tenant and per
// node: a key over a bound is answered with its own bytes and not kept; keys that leave the
// rate window give their place back.
TEST_F(UsageStoreTest, Item4_RateKeysAreBoundedPerTenantAndPerNode) {
  Open(kPartitions, kDefaultMaxPoliciesPerTenant, [](UsageStoreOptions& o) {
    o.max_rate_keys_per_tenant = 100;
    o.max_rate_keys = 150;
  });
  auto flood = [&](const std::string& tenant, uint64_t first, uint64_t n) {
    std::vector<StreamUpdate> u;
    for (uint64_t h = first; h < first + n; ++h) u.push_back({.stream_hash = h, .bytes = 600, .policy = ""});
    std::vector<UsageStore::StreamRate> rates;
    EXPECT_TRUE(store_->UpdateRates(tenant, u, all_, &rates).ok());
    EXPECT_EQ(rates.size(), n);  // every hash is answered
    for (const auto& r : rates) EXPECT_EQ(r.bytes_per_s, 10u) << r.stream_hash;  // 600 B over one 60 s bucket
  };
  flood("a", 0, 1000);
  EXPECT_EQ(store_->directory().rate_keys().held(), 100u);
  EXPECT_EQ(store_->directory().rate_keys().refused_tenant(), 900u);
  flood("b", 0, 1000);  // the node's bound: 50 more
  EXPECT_EQ(store_->directory().rate_keys().held(), 150u);
  EXPECT_EQ(store_->directory().rate_keys().refused_node(), 950u);
  // A kept key keeps summing; a refused one is only ever its own bytes.
  std::vector<UsageStore::StreamRate> rates;
  std::vector<StreamUpdate> again = {{.stream_hash = 5, .bytes = 600, .policy = ""},
                                     {.stream_hash = 500, .bytes = 600, .policy = ""}};
  ASSERT_TRUE(store_->UpdateRates("a", again, all_, &rates).ok());
  EXPECT_EQ(rates[0].bytes_per_s, 20u);
  EXPECT_EQ(rates[1].bytes_per_s, 10u);
  // Past the rate window the keys are forgotten and their places free again.
  clock_.Advance(std::chrono::seconds(windows_.rate_s + windows_.bucket_s));
  ASSERT_TRUE(store_->EvictExpired().ok());
  EXPECT_EQ(store_->directory().rate_keys().held(), 0u);
  flood("c", 0, 100);
  EXPECT_EQ(store_->directory().rate_keys().held(), 100u);
}

// Issue 24, item 4: distinct tenants cost ~3 KB each up to 2^24. The node holds at most
// max_tenants; a new tenant over it is answered, not stored: a limited stream is rejected (a
// limit cannot hold without its count), an unlimited one accepted, a rate key answered.
TEST_F(UsageStoreTest, Item4_TenantsAreBoundedAndWhatIsOverTheBoundIsAnsweredNotStored) {
  Open(kPartitions, kDefaultMaxPoliciesPerTenant, [](UsageStoreOptions& o) { o.max_tenants = 3; });
  for (int t = 0; t < 3; ++t) {
    EXPECT_EQ(Check("t" + std::to_string(t), {HashIn(0, 1)}, Limit(10), all_)[0], Verdict::kAccepted);
  }
  EXPECT_EQ(Check("t3", {HashIn(0, 1), HashIn(1, 1)}, Limit(10), all_),
            (std::vector<Verdict>{Verdict::kTenantsFull, Verdict::kTenantsFull}));
  EXPECT_EQ(Check("t4", {HashIn(0, 1)}, Limit(0), all_)[0], Verdict::kAccepted);  // unlimited
  std::vector<UsageStore::StreamRate> rates;
  std::vector<StreamUpdate> one = {{.stream_hash = 9, .bytes = 60, .policy = ""}};
  ASSERT_TRUE(store_->UpdateRates("t5", one, all_, &rates).ok());
  ASSERT_EQ(rates.size(), 1u);
  EXPECT_EQ(rates[0].bytes_per_s, 1u);
  EXPECT_EQ(store_->num_tenants(), 3u);
  EXPECT_GT(store_->directory().refused_tenants(), 0u);
  // Known tenants are served as always, and a place freed by eviction is taken again.
  EXPECT_EQ(Check("t0", {HashIn(0, 1), HashIn(2, 2)}, Limit(10), all_),
            (std::vector<Verdict>{Verdict::kAccepted, Verdict::kAccepted}));
  clock_.Advance(std::chrono::seconds(windows_.active_s + 1));
  ASSERT_TRUE(store_->EvictExpired().ok());
  EXPECT_EQ(Check("t3", {HashIn(0, 1)}, Limit(10), all_)[0], Verdict::kAccepted);
}

// --- durability of admissions -----------------------------------------------------------

// Issue 24, item 5: admitted streams lived in memory until the next flush (~1 s): a SIGKILL
// right after the answer lost them, and the restarted node admitted as many again (a tenant
// limited to 100 ended with 200). Admissions are in the admission log before UpdateCond
// returns; reopening without a flush (what a crash leaves) finds them.
TEST_F(UsageStoreTest, Item5_AdmissionsSurviveACrashBeforeTheFlush) {
  TenantLimits limits = Limit(10);
  limits.policy_override_limits = {{"gold", {.max_global_streams_per_user = 5}}};
  std::vector<uint64_t> hashes;
  for (uint64_t i = 0; i < 10; ++i) hashes.push_back(i);  // over every partition
  EXPECT_EQ(Count(Check("a", hashes, limits, all_), Verdict::kAccepted), 10);
  EXPECT_EQ(Count(Check("a", {0, 1}, limits, all_, "gold"), Verdict::kAccepted), 2);  // moves are admissions too
  EXPECT_EQ(Count(Check("a", {HashIn(2, 50)}, limits, all_, "gold"), Verdict::kAccepted), 1);
  ASSERT_TRUE(store_->DropPartition(2).ok());  // its admissions go with its data
  const TenantUsage before = store_->UsageOf("a", all_);
  std::map<int32_t, Rows> rows;
  for (int32_t p = 0; p < kPartitions; ++p) rows[p] = MemoryRows(p);

  Open();  // no Flush: as after a SIGKILL
  EXPECT_EQ(store_->UsageOf("a", all_).active_by_policy, before.active_by_policy);
  EXPECT_EQ(store_->load_stats().admissions_replayed, 10u);  // 13 logged, 3 of them in the dropped partition
  for (int32_t p = 0; p < kPartitions; ++p) {
    Rows now = MemoryRows(p);
    ASSERT_EQ(now.size(), rows[p].size()) << p;
    for (const auto& [key, row] : rows[p]) {
      EXPECT_EQ(std::get<0>(now.at(key)), std::get<0>(row)) << p;  // policy
      EXPECT_EQ(std::get<1>(now.at(key)), std::get<1>(row)) << p;  // last seen
    }
  }
  // The limit holds across the crash: the default bucket holds 6 (partition 2's went with
  // it, 2 moved to gold): room for 4.
  EXPECT_EQ(Count(Check("a", {100, 101, 103, 104, 105}, limits, all_), Verdict::kMaxStreams), 1);
  const TenantUsage after = store_->UsageOf("a", all_);
  EXPECT_EQ(after.active_by_policy, (std::map<std::string, uint64_t>{{"", 10}, {"gold", 2}}));
  // The first flush writes their rows and deletes the log; a second crash finds the rows.
  ASSERT_TRUE(store_->Flush().ok());
  size_t files = 0;
  for (const auto& f : std::filesystem::directory_iterator(dir_.Sub("db") + "/admissions")) {
    files += f.is_regular_file() && f.file_size() > 0;
  }
  EXPECT_EQ(files, 0u);  // only the next file, empty
  Open();
  EXPECT_EQ(store_->load_stats().admissions_replayed, 0u);
  EXPECT_EQ(store_->UsageOf("a", all_).active_by_policy, after.active_by_policy);
  ExpectCountsEqualFullScan();
}

// An append that fails (a full disk) neither fails the call nor loses the admission: the
// rows are flushed before the answer, so a crash right after it finds them.
TEST_F(UsageStoreTest, Item5_AFailedLogAppendFlushesTheRowsBeforeTheAnswer) {
  EXPECT_EQ(Count(Check("a", {HashIn(0, 1)}, Limit(10), all_), Verdict::kAccepted), 1);
  store_->admission_log()->FailNextAppendsForTest(1);
  EXPECT_EQ(Count(Check("a", {HashIn(1, 1)}, Limit(10), all_), Verdict::kAccepted), 1);
  EXPECT_TRUE(store_->health().ok());
  EXPECT_EQ(store_->admission_log()->failures(), 1u);
  Open();  // no Flush: as after a SIGKILL
  EXPECT_EQ(store_->load_stats().admissions_replayed, 0u);  // both came back as rows
  EXPECT_EQ(store_->UsageOf("a", all_).active_streams, 2u);
}

// The log's tail torn by a crash mid-write: what precedes it is restored.
TEST_F(UsageStoreTest, Item5_ATornAdmissionLogTailLosesOnlyTheTornRecord) {
  EXPECT_EQ(Count(Check("a", {HashIn(0, 1)}, Limit(10), all_), Verdict::kAccepted), 1);
  EXPECT_EQ(Count(Check("a", {HashIn(1, 1)}, Limit(10), all_), Verdict::kAccepted), 1);
  opened_ = {};
  std::string file;
  for (const auto& f : std::filesystem::directory_iterator(dir_.Sub("db") + "/admissions")) file = f.path();
  ASSERT_FALSE(file.empty());
  std::filesystem::resize_file(file, std::filesystem::file_size(file) - 3);
  Open();
  EXPECT_EQ(store_->load_stats().admissions_replayed, 1u);
  EXPECT_EQ(store_->load_stats().admission_log_corrupt, 1u);
  EXPECT_EQ(store_->UsageOf("a", all_).active_streams, 1u);
}

// --- consistency under a random workload, and under concurrency --------------------------

TEST_F(UsageStoreTest, CountsEqualAFullScanUnderARandomWorkload) {
  std::mt19937_64 rng(1234);
  const std::vector<std::string> tenants = {"a", "b", "c"};
  const std::vector<std::string> policies = {"", "gold", "silver"};
  TenantLimits limits = Limit(40);
  limits.policy_override_limits = {{"gold", {.max_global_streams_per_user = 10}}};
  std::vector<int64_t> offsets(kPartitions, 0);
  for (int round = 0; round < 300; ++round) {
    const int op = static_cast<int>(rng() % 10);
    if (op < 5) {
      const int32_t p = static_cast<int32_t>(rng() % kPartitions);
      std::vector<Record> recs;
      for (int i = 0; i < 20; ++i) {
        const int64_t ts = clock_.NowMillis() - static_cast<int64_t>(rng() % 5000'000);
        recs.push_back(Rec(tenants[rng() % 3], HashIn(p, rng() % 60), offsets[p]++, ts, policies[rng() % 3]));
      }
      ASSERT_TRUE(store_->Apply(p, recs, offsets[p]).ok());
    } else if (op < 8) {
      std::vector<uint64_t> hashes;
      for (int i = 0; i < 10; ++i) hashes.push_back(rng() % 240);
      Check(tenants[rng() % 3], hashes, limits, all_, policies[rng() % 3]);
    } else if (op < 9) {
      clock_.Advance(std::chrono::seconds(rng() % 900));
    } else {
      ASSERT_TRUE(store_->EvictExpired().ok());
    }
    if (round % 50 == 49) ExpectCountsEqualFullScan();
  }
  ExpectCountsEqualFullScan();
  std::vector<Rows> before;
  for (int32_t p = 0; p < kPartitions; ++p) {
    EXPECT_EQ(DiskRows(p), MemoryRows(p)) << "partition " << p;
    before.push_back(MemoryRows(p));
  }
  Open();
  ExpectCountsEqualFullScan();
  // Rows that expired while closed are dropped at open; everything else comes back.
  const int64_t cutoff = clock_.NowSeconds() - windows_.active_s;
  for (int32_t p = 0; p < kPartitions; ++p) {
    Rows expected;
    for (const auto& [k, v] : before[static_cast<size_t>(p)]) {
      if (std::get<1>(v) >= cutoff) expected[k] = v;
    }
    EXPECT_EQ(MemoryRows(p), expected) << "partition " << p;
  }
}

TEST_F(UsageStoreTest, ConcurrentAdmissionsNeverExceedTheLimit) {
  constexpr int kThreads = 4, kPerThread = 200;
  std::atomic<int> accepted{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        std::vector<StreamUpdate> u = {{.stream_hash = static_cast<uint64_t>(t * 100000 + i), .bytes = 1, .policy = ""}};
        UpdateCondResult out;
        ASSERT_TRUE(UpdateCondWithLimits(*store_, "shared", u, Limit(150), all_, &out).ok());
        accepted += out.verdicts[0] == Verdict::kAccepted ? 1 : 0;
      }
    });
  }
  // Meanwhile the consumer applies other tenants' records into the same partitions.
  std::thread consumer([&] { ApplyOtherTenantsStreams(); });
  for (auto& th : threads) th.join();
  consumer.join();
  EXPECT_EQ(accepted.load(), 150);
  EXPECT_EQ(store_->UsageOf("shared", all_).active_streams, 150u);
  EXPECT_EQ(store_->UsageOf("other", all_).active_streams, 1000u);
  ExpectCountsEqualFullScan();
  ASSERT_TRUE(store_->Flush().ok());
  for (int32_t p = 0; p < kPartitions; ++p) EXPECT_EQ(DiskRows(p), MemoryRows(p));
}

// Requests spanning partitions hold their partitions together; some without waiting (as on
// gRPC's thread: a busy lock is kWouldBlock, then the call runs again waiting). No deadlock,
// no admission beyond the limit, and every call that would block changed nothing.
TEST_F(UsageStoreTest, ConcurrentRequestsOverManyPartitionsWithAndWithoutWaitingKeepTheLimit) {
  constexpr int kThreads = 4, kRequests = 150, kPerRequest = 3;
  std::atomic<int> accepted{0}, would_block{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRequests; ++r) {
        std::vector<StreamUpdate> u;
        for (int i = 0; i < kPerRequest; ++i) {
          u.push_back({.stream_hash = static_cast<uint64_t>((t * kRequests + r) * kPerRequest + i), .bytes = 1, .policy = ""});
        }
        UpdateCondResult out;
        Status s =
            UpdateCondWithLimits(*store_, "shared", u, Limit(700), all_, &out, t % 2 == 0 ? Wait::kNever : Wait::kMay);
        if (s.IsWouldBlock()) {
          ++would_block;
          s = UpdateCondWithLimits(*store_, "shared", u, Limit(700), all_, &out, Wait::kMay);
        }
        ASSERT_TRUE(s.ok()) << s.ToString();
        for (Verdict v : out.verdicts) accepted += v == Verdict::kAccepted ? 1 : 0;
      }
    });
  }
  std::thread consumer([&] { ApplyOtherTenantsStreams(); });
  for (auto& th : threads) th.join();
  consumer.join();
  EXPECT_EQ(accepted.load(), 700);
  EXPECT_EQ(store_->UsageOf("shared", all_).active_streams, 700u);
  ExpectCountsEqualFullScan();
  RecordProperty("would_block", would_block.load());
}

// Requests of tenants on different stripes run over the same partitions at once (as do
// UpdateRates calls and the consumer): each tenant's limit holds exactly, nothing is lost, and
// a column family that no assignment created is created once although two stripes' requests
// may reach it together.
TEST_F(UsageStoreTest, TenantsOnDifferentStripesShareThePartitionsAndEachKeepsItsLimit) {
  std::vector<std::string> tenants;
  std::vector<bool> stripe_taken(StripedMutex::kStripes, false);
  for (int t = 0; tenants.size() < 4; ++t) {
    std::string name = "tenant-" + std::to_string(t);
    if (stripe_taken[TenantKey::StripeOf(name)]) continue;
    stripe_taken[TenantKey::StripeOf(name)] = true;
    tenants.push_back(std::move(name));
  }
  constexpr int kRequests = 150, kPerRequest = 4;  // a stream in every partition of each request
  std::vector<std::atomic<int>> accepted(tenants.size());
  std::vector<std::thread> threads;
  for (size_t t = 0; t < tenants.size(); ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRequests; ++r) {
        std::vector<StreamUpdate> u;
        for (int32_t p = 0; p < kPerRequest; ++p) {
          u.push_back({.stream_hash = HashIn(p, static_cast<uint64_t>(r)), .bytes = 1, .policy = ""});
        }
        UpdateCondResult out;
        Status s =
            UpdateCondWithLimits(*store_, tenants[t], u, Limit(300), all_, &out, t % 2 == 0 ? Wait::kNever : Wait::kMay);
        if (s.IsWouldBlock()) s = UpdateCondWithLimits(*store_, tenants[t], u, Limit(300), all_, &out, Wait::kMay);
        ASSERT_TRUE(s.ok()) << s.ToString();
        for (Verdict v : out.verdicts) accepted[t] += v == Verdict::kAccepted ? 1 : 0;
        std::vector<UsageStore::StreamRate> rates;
        ASSERT_TRUE(store_->UpdateRates(tenants[t], u, all_, &rates).ok());
      }
    });
  }
  std::thread consumer([&] { ApplyOtherTenantsStreams(); });
  for (auto& th : threads) th.join();
  consumer.join();
  for (size_t t = 0; t < tenants.size(); ++t) {
    EXPECT_EQ(accepted[t].load(), 300) << tenants[t];
    EXPECT_EQ(store_->UsageOf(tenants[t], all_).active_streams, 300u) << tenants[t];
  }
  EXPECT_EQ(store_->Partitions().size(), static_cast<size_t>(kPartitions));
  ExpectCountsEqualFullScan();
  ASSERT_TRUE(store_->Flush().ok());
  for (int32_t p = 0; p < kPartitions; ++p) EXPECT_EQ(DiskRows(p), MemoryRows(p));
}

// Wait::kNever finds a partition held by someone else (here a scan of it): kWouldBlock, and
// nothing of the request changed, in that partition or any other. Once free, it is served.
TEST_F(UsageStoreTest, WithoutWaitingABusyPartitionIsWouldBlockAndChangesNothing) {
  {
    // Creating a partition's column family is disk work: not done without waiting either.
    std::vector<StreamUpdate> u = {{.stream_hash = HashIn(0, 0), .bytes = 1, .policy = ""}};
    UpdateCondResult out;
    EXPECT_TRUE(UpdateCondWithLimits(*store_, "t", u, Limit(100), all_, &out, Wait::kNever).IsWouldBlock());
  }
  const std::vector<int32_t> partitions = {0, 1, 2, 3};  // as assignment does
  ASSERT_TRUE(store_->EnsurePartitions(partitions).ok());
  ASSERT_EQ(Count(Check("t", {HashIn(1, 0)}, Limit(100), all_), Verdict::kAccepted), 1);
  std::mutex mu;
  std::condition_variable cv;
  bool holding = false, release = false;
  std::thread holder([&] {
    store_->ForEachStream(1, [&](std::string_view, uint64_t, std::string_view, const StreamEntry&) {
      std::unique_lock lock(mu);
      holding = true;
      cv.notify_all();
      cv.wait(lock, [&] { return release; });
    });
  });
  {
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return holding; });
  }
  std::vector<StreamUpdate> u = {{.stream_hash = HashIn(2, 0), .bytes = 1, .policy = ""}, {.stream_hash = HashIn(1, 1), .bytes = 1, .policy = ""}};
  UpdateCondResult out;
  Status s = UpdateCondWithLimits(*store_, "t", u, Limit(100), all_, &out, Wait::kNever);
  EXPECT_TRUE(s.IsWouldBlock()) << s.ToString();
  // A request that only needs the pool counted (a new stream of a limited tenant) needs the
  // busy partition too.
  std::vector<StreamUpdate> elsewhere = {{.stream_hash = HashIn(3, 0), .bytes = 1, .policy = ""}};
  s = UpdateCondWithLimits(*store_, "t", elsewhere, Limit(100), all_, &out, Wait::kNever);
  EXPECT_TRUE(s.IsWouldBlock()) << s.ToString();
  // Unlimited, nothing to count: partition 3 alone is enough.
  s = UpdateCondWithLimits(*store_, "u", elsewhere, Limit(kUnlimited), all_, &out, Wait::kNever);
  EXPECT_TRUE(s.ok()) << s.ToString();
  // One that may wait, waits for the holder.
  std::atomic<bool> waited_done{false};
  std::thread waiter([&] {
    UpdateCondResult w;
    EXPECT_TRUE(UpdateCondWithLimits(*store_, "t", u, Limit(100), all_, &w, Wait::kMay).ok());
    waited_done = true;
  });
  EXPECT_EQ(store_->StreamsIn(2), 0u);  // nothing of "t" in partition 2 (partition 1 is busy: not read here)
  EXPECT_EQ(store_->StreamsIn(3), 1u);  // only "u"'s
  EXPECT_FALSE(waited_done.load());
  {
    std::lock_guard lock(mu);
    release = true;
  }
  cv.notify_all();
  holder.join();
  waiter.join();
  EXPECT_EQ(store_->UsageOf("t", all_).active_streams, 3u);
  s = UpdateCondWithLimits(*store_, "t", elsewhere, Limit(100), all_, &out, Wait::kNever);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(out.verdicts[0], Verdict::kAccepted);
  EXPECT_EQ(store_->UsageOf("t", all_).active_streams, 4u);
  ExpectCountsEqualFullScan();
}

// Issue 8, item 6: a tenant with ever new policies exhausts only its own table; another
// tenant's are not; a forgotten policy makes room. Issue 24, item 3: a name beyond the cap
// never rejects a stream (it was reason 4): requests and records alike count it under no
// policy, the default bucket, where Loki counts every policy without a limit of its own.
TEST_F(UsageStoreTest, Item6_PolicyCapIsPerTenantAndPoliciesAreForgotten) {
  Open(kPartitions, /*max_policies=*/3);
  const PartitionSet all = PartitionSet::All(kPartitions);
  const TenantLimits unlimited = Limit(0);
  for (int p = 0; p < 3; ++p) {
    EXPECT_EQ(Check("greedy", {HashIn(0, static_cast<uint64_t>(p))}, unlimited, all, std::string("p").append(std::to_string(p)))[0],
              Verdict::kAccepted);
  }
  EXPECT_EQ(Check("greedy", {HashIn(1, 9)}, unlimited, all, "p3")[0], Verdict::kAccepted);
  EXPECT_EQ(store_->ActiveStreams(1, "greedy", ""), 1u);
  EXPECT_EQ(store_->ignored_policies().Of(PolicyNameCheck::kBeyondCap), 1u);
  EXPECT_EQ(Check("greedy", {HashIn(1, 9)}, unlimited, all, "p2")[0], Verdict::kAccepted);  // a known policy
  EXPECT_EQ(store_->ActiveStreams(1, "greedy", "p2"), 1u);
  for (int p = 0; p < 5; ++p) {  // the cap is per tenant: another tenant is unaffected
    EXPECT_EQ(Check("other", {HashIn(2, static_cast<uint64_t>(p))}, unlimited, all,
                    std::string("q").append(std::to_string(p % 3)))[0],
              Verdict::kAccepted);
  }
  // A record of a fourth policy from the topic counts under no policy.
  ApplyStats st;
  ASSERT_TRUE(store_->Apply(3, std::vector<Record>{Rec("greedy", HashIn(3, 1), 0, -1, "p9")}, 1, &st).ok());
  EXPECT_EQ(st.policy_overflow, 1u);
  EXPECT_EQ(store_->ActiveStreams(3, "greedy", ""), 1u);
  // Once p0's stream expires and is evicted, p0 is forgotten and a new policy fits.
  clock_.Advance(std::chrono::seconds(windows_.active_s + 1));
  EXPECT_EQ(Check("greedy", {HashIn(0, 1)}, unlimited, all, "p1")[0], Verdict::kAccepted);
  EXPECT_EQ(Check("greedy", {HashIn(0, 2)}, unlimited, all, "p2")[0], Verdict::kAccepted);
  ASSERT_TRUE(store_->EvictExpired().ok());
  EXPECT_EQ(Check("greedy", {HashIn(1, 10)}, unlimited, all, "p3")[0], Verdict::kAccepted);
  EXPECT_EQ(store_->ActiveStreams(1, "greedy", "p3"), 1u);
}

// Issue 8, item 21: tenants are forgotten with their last stream, on every path.
TEST_F(UsageStoreTest, Item21_TenantsAreForgottenWithTheirLastStream) {
  const PartitionSet all = PartitionSet::All(kPartitions);
  for (int t = 0; t < 100; ++t) ApplyStreams(t % kPartitions, "tenant-" + std::to_string(t), 3, t * 3);
  EXPECT_EQ(store_->num_tenants(), 100u);
  // A tenant all of whose new streams are rejected is not kept.
  EXPECT_EQ(Count(Check("rejected", {HashIn(0, 1)}, Limit(0), PartitionSet{}), Verdict::kNotServed), 1);
  EXPECT_EQ(store_->num_tenants(), 100u);
  clock_.Advance(std::chrono::seconds(windows_.active_s + 1));
  ASSERT_TRUE(store_->EvictExpired().ok());
  EXPECT_EQ(store_->num_tenants(), 0u);
  EXPECT_EQ(Check("late", {HashIn(0, 1)}, Limit(10), all)[0], Verdict::kAccepted);
  EXPECT_EQ(store_->num_tenants(), 1u);
}

// Issue 8, item 7: records whose totalSize sums past 2^64 saturate the tenant's rate; they
// never wrap to a small number.
TEST_F(UsageStoreTest, Item7_TenantRateSaturatesThroughRecords) {
  ASSERT_TRUE(store_->Apply(0,
                            std::vector<Record>{Rec("t", HashIn(0, 1), 0, -1, "", UINT64_MAX - 10),
                                                Rec("t", HashIn(0, 2), 1, -1, "", 100)},
                            2)
                  .ok());
  EXPECT_EQ(store_->UsageOf("t", PartitionSet{0}).rate_window_bytes, UINT64_MAX);
}

// Issue 8, item 9: per-tenant totals count the partitions the node serves; the others (held
// after a revocation, replaying) are reported apart.
TEST_F(UsageStoreTest, Item9_TenantTotalsCountServedPartitionsAndReportTheRestAsRetained) {
  ApplyStreams(0, "t", 4);
  ApplyStreams(1, "t", 2);
  std::map<std::string, TenantTotals> seen;
  store_->ForEachTenant(PartitionSet{0}, [&](const std::string& tenant, const TenantTotals& t) { seen[tenant] = t; });
  ASSERT_EQ(seen.count("t"), 1u);
  EXPECT_EQ(seen["t"].active_streams, 4u);
  EXPECT_EQ(seen["t"].total_streams, 4u);
  EXPECT_EQ(seen["t"].retained_streams, 2u);
}

}  // namespace
}  // namespace limits
