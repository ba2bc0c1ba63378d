#include "limits/tenant_streams.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "limits/intern_table.h"
#include "limits/partition_set.h"

namespace limits {
namespace {

constexpr Windows kWindows{.active_s = 100, .rate_s = 30, .bucket_s = 10, .produce_interval_s = 10};
constexpr uint32_t kT = 1'000'000;

TEST(TenantStreamsTest, ObserveCreatesCountsAndKeepsTheNewestTime) {
  TenantStreams ts("t", kWindows);
  ts.Observe(1, 0, kT, 10);
  ts.Observe(1, 0, kT - 5, 10);  // an older record: last seen stays, bytes still count
  EXPECT_EQ(ts.Find(1)->last_seen_s, kT);
  EXPECT_EQ(ts.ActiveOf(0, kT - 100), 1u);
  EXPECT_EQ(ts.StreamRate(*ts.Find(1), kT).bytes, 20u);
  EXPECT_EQ(ts.TenantRate(kT).bytes, 20u);
  EXPECT_EQ(ts.size(), 1u);
}

TEST(TenantStreamsTest, TheNewestObservationDecidesThePolicy) {
  TenantStreams ts("t", kWindows);
  ts.Observe(1, 0, kT, 0);
  ts.Observe(1, 3, kT + 1, 0);
  EXPECT_EQ(ts.ActiveOf(0, 0), 0u);
  EXPECT_EQ(ts.ActiveOf(3, 0), 1u);
  ts.Observe(1, 0, kT, 0);  // older: no switch back
  EXPECT_EQ(ts.Find(1)->policy, 3);
}

TEST(TenantStreamsTest, EvictBeforeRemovesAndQueuesDeletionsBeforePuts) {
  TenantStreams ts("t", kWindows);
  for (uint64_t h = 0; h < 4; ++h) ts.Observe(h, 0, kT + static_cast<uint32_t>(h), 1);
  std::vector<std::string> ops;
  ts.DrainWrites([&](uint64_t h, const StreamEntry&) { ops.push_back("put " + std::to_string(h)); },
                 [&](uint64_t h) { ops.push_back("del " + std::to_string(h)); });
  EXPECT_EQ(ops.size(), 4u);
  EXPECT_FALSE(ts.HasPendingWrites());
  EXPECT_EQ(ts.EvictBefore(kT + 2), 2u);
  ts.Observe(0, 0, kT + 150, 1);  // evicted, then seen again before the flush
  ops.clear();
  ts.DrainWrites([&](uint64_t h, const StreamEntry&) { ops.push_back("put " + std::to_string(h)); },
                 [&](uint64_t h) { ops.push_back("del " + std::to_string(h)); });
  ASSERT_EQ(ops.size(), 3u);
  std::sort(ops.begin(), ops.begin() + 2);  // deletions come in map order
  EXPECT_EQ(ops, (std::vector<std::string>{"del 0", "del 1", "put 0"}));
  EXPECT_EQ(ts.size(), 3u);
  EXPECT_EQ(ts.ActiveOf(0, kT + 2), 3u);
}

TEST(TenantStreamsTest, RestoreRebuildsCountsAndRates) {
  TenantStreams ts("t", kWindows);
  const uint64_t rates[] = {5, 0, 7};
  ts.Restore(9, 2, kT, kT - 50, kT - kT % 10, rates, 3);
  EXPECT_EQ(ts.ActiveOf(2, kT - 100), 1u);
  EXPECT_FALSE(ts.HasPendingWrites());
  EXPECT_EQ(ts.StreamRate(*ts.Find(9), kT).bytes, 12u);
  EXPECT_EQ(ts.TenantRate(kT).bytes, 12u);
  uint64_t out[3];
  EXPECT_EQ(ts.RateNewestFirst(*ts.Find(9), out), kT - kT % 10);
  EXPECT_EQ(std::vector<uint64_t>(out, out + 3), (std::vector<uint64_t>{5, 0, 7}));
}

TEST(TenantStreamsTest, RateSlotsAreReused) {
  TenantStreams ts("t", kWindows);
  ts.Observe(1, 0, kT, 100);
  ts.EvictBefore(kT + 1);
  ts.Observe(2, 0, kT + 200, 1);
  ts.Observe(3, 0, kT + 200, 1);
  EXPECT_EQ(ts.StreamRate(*ts.Find(2), kT + 200).bytes, 1u);  // no bytes inherited from stream 1
}

TEST(InternTableTest, IdsAreStableAndBounded) {
  InternTable t(3);
  EXPECT_EQ(t.Intern("a"), 0u);
  EXPECT_EQ(t.Intern("b"), 1u);
  EXPECT_EQ(t.Intern("a"), 0u);
  EXPECT_EQ(t.Find("b"), 1u);
  EXPECT_FALSE(t.Find("c").has_value());
  EXPECT_EQ(t.Intern("c"), 2u);
  EXPECT_FALSE(t.Intern("d").has_value());  // full
  EXPECT_EQ(t.Name(1), "b");
  EXPECT_EQ(t.size(), 3u);
}

TEST(InternTableTest, ConcurrentInternsAgree) {
  InternTable t(1000);
  std::vector<std::vector<uint32_t>> ids(4);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      for (int n = 0; n < 500; ++n) ids[static_cast<size_t>(i)].push_back(*t.Intern("name-" + std::to_string(n)));
    });
  }
  for (auto& th : threads) th.join();
  for (int i = 1; i < 4; ++i) EXPECT_EQ(ids[static_cast<size_t>(i)], ids[0]);
  EXPECT_EQ(t.size(), 500u);
}

TEST(PartitionSetTest, AddRemoveContains) {
  PartitionSet s{3, 70};
  EXPECT_TRUE(s.Contains(3));
  EXPECT_TRUE(s.Contains(70));
  EXPECT_FALSE(s.Contains(4));
  EXPECT_FALSE(s.Contains(-1));
  EXPECT_FALSE(s.Contains(1000));
  s.Add(3);
  EXPECT_EQ(s.Count(), 2u);
  s.Remove(3);
  s.Remove(5);
  EXPECT_EQ(s.ToVector(), std::vector<int32_t>{70});
  EXPECT_EQ(PartitionSet::All(64).Count(), 64u);
}

}  // namespace
}  // namespace limits
