#include "limits/usage/tenant_streams.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <thread>
#include <tuple>
#include <vector>

#include "limits/usage/name_table.h"
#include "limits/usage/partition_set.h"
#include "limits/usage/partition_usage.h"
#include "limits/usage/tenant_directory.h"

namespace limits {
namespace {

constexpr Windows kWindows{.active_s = 100, .rate_s = 30, .bucket_s = 10, .produce_interval_s = 10};
constexpr uint32_t kT = 1'000'000;

TEST(TenantStreamsTest, ObserveCreatesCountsAndKeepsTheNewestTime) {
  TenantShared policies(10);
  TenantStreams ts("t", kWindows, policies);
  const PolicyId none = *ts.Policy("");
  ts.Observe(1, none, kT, 10);
  ts.Observe(1, none, kT - 5, 10);  // an older record: last seen stays, bytes still count
  EXPECT_EQ(ts.Find(1)->last_seen_s, kT);
  EXPECT_EQ(ts.ActiveOf("", kT - 100), 1u);
  EXPECT_EQ(ts.StreamRate(*ts.Find(1), kT).bytes, 20u);
  EXPECT_EQ(ts.TenantRate(kT).bytes, 20u);
  EXPECT_EQ(ts.size(), 1u);
}

TEST(TenantStreamsTest, TheNewestObservationDecidesThePolicy) {
  TenantShared policies(10);
  TenantStreams ts("t", kWindows, policies);
  const PolicyId none = *ts.Policy(""), gold = *ts.Policy("gold");
  ts.Observe(1, none, kT, 0);
  ts.Observe(1, gold, kT + 1, 0);
  EXPECT_EQ(ts.ActiveOf("", 0), 0u);
  EXPECT_EQ(ts.ActiveOf("gold", 0), 1u);
  ts.Observe(1, none, kT, 0);  // older: no switch back
  EXPECT_EQ(ts.Find(1)->policy, gold);
  EXPECT_EQ(ts.PolicyName(gold), "gold");
}

// Issue 8, item 6: a policy no stream uses any more is forgotten, its id free again.
TEST(TenantStreamsTest, Item6_PoliciesAreReleasedWhenNoStreamUsesThem) {
  TenantShared policies(2);
  {
    TenantStreams ts("t", kWindows, policies);
    const PolicyId a = *ts.Policy("a");
    ts.Observe(1, a, kT, 0);
    EXPECT_FALSE(ts.Policy("b") && ts.Policy("c"));  // the table holds two
    ts.Observe(1, *ts.Policy("b"), kT + 1, 0);       // the stream moves to b: a is empty
    ts.DrainWrites([](uint64_t, const StreamEntry&) {}, [](uint64_t) {});
    EXPECT_FALSE(policies.policies().Find("a").has_value());
    EXPECT_TRUE(ts.Policy("c").has_value());  // a's place is free again
    EXPECT_EQ(ts.EvictBefore(kT + 100), 1u);
    EXPECT_EQ(ts.num_policies(), 0u);
  }
  EXPECT_EQ(policies.policies().size(), 1u);  // "" alone, held for good
}

TEST(TenantStreamsTest, EvictBeforeRemovesAndQueuesDeletionsBeforePuts) {
  TenantShared policies(10);
  TenantStreams ts("t", kWindows, policies);
  const PolicyId none = *ts.Policy("");
  for (uint64_t h = 0; h < 4; ++h) ts.Observe(h, none, kT + static_cast<uint32_t>(h), 1);
  std::vector<std::string> ops;
  ts.DrainWrites([&](uint64_t h, const StreamEntry&) { ops.push_back("put " + std::to_string(h)); },
                 [&](uint64_t h) { ops.push_back("del " + std::to_string(h)); });
  EXPECT_EQ(ops.size(), 4u);
  EXPECT_FALSE(ts.HasPendingWrites());
  EXPECT_EQ(ts.EvictBefore(kT + 2), 2u);
  ts.Observe(0, *ts.Policy(""), kT + 150, 1);  // evicted, then seen again before the flush
  ops.clear();
  ts.DrainWrites([&](uint64_t h, const StreamEntry&) { ops.push_back("put " + std::to_string(h)); },
                 [&](uint64_t h) { ops.push_back("del " + std::to_string(h)); });
  ASSERT_EQ(ops.size(), 3u);
  std::sort(ops.begin(), ops.begin() + 2);  // deletions come in map order
  EXPECT_EQ(ops, (std::vector<std::string>{"del 0", "del 1", "put 0"}));
  EXPECT_EQ(ts.size(), 3u);
  EXPECT_EQ(ts.ActiveOf("", kT + 2), 3u);
}

// A replay marks every stream: past an eighth of them the drain scans the table for dirty bits
// instead of keeping a list. Either way each changed stream is written once per drain, evicted
// ones are deleted first, and nothing is left pending.
TEST(TenantStreamsTest, ManyChangedStreamsAreEachWrittenOnceWithOrWithoutTheList) {
  TenantShared policies(10);
  TenantStreams ts("t", kWindows, policies);
  const PolicyId none = *ts.Policy("");
  auto drain = [&ts] {
    std::map<uint64_t, int> puts;
    std::vector<uint64_t> dels;
    ts.DrainWrites([&](uint64_t h, const StreamEntry&) { ++puts[h]; }, [&](uint64_t h) { dels.push_back(h); });
    EXPECT_FALSE(ts.HasPendingWrites());
    return std::make_pair(puts, dels);
  };
  for (uint64_t h = 0; h < 5000; ++h) ts.Observe(h, none, kT, 1);  // scan mode from the start
  auto [puts, dels] = drain();
  EXPECT_EQ(puts.size(), 5000u);
  EXPECT_TRUE(std::all_of(puts.begin(), puts.end(), [](const auto& p) { return p.second == 1; }));
  EXPECT_TRUE(dels.empty());

  // A few changes (below an eighth) use the list; seen twice, written once.
  for (uint64_t h = 0; h < 100; ++h) ts.Observe(h, none, kT + 1, 1);
  for (uint64_t h = 0; h < 100; ++h) ts.Observe(h, none, kT + 2, 1);
  std::tie(puts, dels) = drain();
  EXPECT_EQ(puts.size(), 100u);
  EXPECT_EQ(puts.rbegin()->first, 99u);
  EXPECT_TRUE(std::all_of(puts.begin(), puts.end(), [](const auto& p) { return p.second == 1; }));

  // Many changes after some were listed, plus evictions: the listed ones are not lost.
  for (uint64_t h = 4000; h < 4100; ++h) ts.Observe(h, none, kT + 200, 1);
  EXPECT_EQ(ts.EvictBefore(kT + 1), 4900u - 100u);  // streams 100..3999 and 4100..4999, last seen at kT
  for (uint64_t h = 10000; h < 11000; ++h) ts.Observe(h, none, kT + 200, 1);
  std::tie(puts, dels) = drain();
  EXPECT_EQ(puts.size(), 1100u);
  EXPECT_EQ(puts.count(4000), 1u);
  EXPECT_EQ(puts.count(10999), 1u);
  EXPECT_EQ(dels.size(), 4800u);
  EXPECT_EQ(ts.size(), 100u + 100u + 1000u);
}

TEST(TenantStreamsTest, RestoreRebuildsCountsAndRates) {
  TenantShared policies(10);
  TenantStreams ts("t", kWindows, policies);
  const uint64_t rates[] = {5, 0, 7};
  ts.Restore(9, *ts.Policy("p"), kT, kT - 50, kT - kT % 10, rates, 3);
  EXPECT_EQ(ts.ActiveOf("p", kT - 100), 1u);
  EXPECT_FALSE(ts.HasPendingWrites());
  EXPECT_EQ(ts.StreamRate(*ts.Find(9), kT).bytes, 12u);
  EXPECT_EQ(ts.TenantRate(kT).bytes, 12u);
  uint64_t out[3];
  EXPECT_EQ(ts.RateNewestFirst(*ts.Find(9), out), kT - kT % 10);
  EXPECT_EQ(std::vector<uint64_t>(out, out + 3), (std::vector<uint64_t>{5, 0, 7}));
}

TEST(TenantStreamsTest, RateSlotsAreReused) {
  TenantShared policies(10);
  TenantStreams ts("t", kWindows, policies);
  ts.Observe(1, *ts.Policy(""), kT, 100);
  ts.EvictBefore(kT + 1);
  ts.Observe(2, *ts.Policy(""), kT + 200, 1);
  ts.Observe(3, *ts.Policy(""), kT + 200, 1);
  EXPECT_EQ(ts.StreamRate(*ts.Find(2), kT + 200).bytes, 1u);  // no bytes inherited from stream 1
}

// Counts per policy and stream rates against a brute-force model, through observations in and
// out of order, policy switches, bytes-less refreshes, evictions and a cutoff crossing many
// minutes (the counter counts most streams by minute and rescans the cutoff's minute).
TEST(TenantStreamsTest, CountsAndRatesAgreeWithABruteForceModel) {
  constexpr Windows w{.active_s = 600, .rate_s = 300, .bucket_s = 60, .produce_interval_s = 10};
  TenantShared policies(10);
  TenantStreams ts("t", w, policies);
  const PolicyId ids[] = {*ts.Policy(""), *ts.Policy("gold")};
  struct Model {
    uint32_t last_seen;
    int policy;
    std::vector<std::pair<uint32_t, uint64_t>> bytes;  // (second, bytes) observed
  };
  std::map<uint64_t, Model> model;
  std::mt19937 rng(11);
  uint32_t now = 1'700'000'000;
  for (int step = 0; step < 30000; ++step) {
    const uint64_t hash = rng() % 400;
    const uint32_t seen = now - static_cast<uint32_t>(rng() % 120);
    const int policy = rng() % 8 == 0 ? 1 : 0;
    const uint64_t bytes = rng() % 3 == 0 ? 0 : rng() % 1000;
    if (seen >= now - w.active_s) {
      ts.Observe(hash, ids[policy], seen, bytes);
      auto [it, fresh] = model.try_emplace(hash, Model{seen, policy, {}});
      if (!fresh && seen >= it->second.last_seen) it->second = Model{seen, policy, std::move(it->second.bytes)};
      if (bytes > 0) it->second.bytes.emplace_back(seen, bytes);
    }
    if (rng() % 8 == 0) now += static_cast<uint32_t>(rng() % 20);
    const int64_t cutoff = int64_t{now} - w.active_s;
    if (rng() % 500 == 0) {
      ts.EvictBefore(cutoff);
      std::erase_if(model, [&](const auto& e) { return e.second.last_seen < cutoff; });
    }
    if (step % 7 != 0) continue;
    uint32_t expected[2] = {0, 0};
    for (const auto& [h, m] : model) expected[m.policy] += m.last_seen >= cutoff ? 1 : 0;
    ASSERT_EQ(ts.ActiveOf("", cutoff), expected[0]) << "step " << step;
    ASSERT_EQ(ts.ActiveOf("gold", cutoff), expected[1]) << "step " << step;
    const auto& [h, m] = *model.begin();
    // The stream's rate: bytes in buckets that start after now - rate and inside the ring of
    // its last-seen bucket.
    uint64_t rate = 0;
    const uint32_t newest = m.last_seen - m.last_seen % w.bucket_s;
    for (const auto& [at, b] : m.bytes) {
      const uint32_t start = at - at % w.bucket_s;
      if (start + w.rate_s > newest && static_cast<int64_t>(start) > int64_t{now} - w.rate_s && start <= now) rate += b;
    }
    ASSERT_EQ(ts.StreamRate(*ts.Find(h), now).bytes, rate) << "step " << step;
  }
}

TEST(NameTableTest, IdsAreCountedBoundedAndReused) {
  NameTable t(3);
  EXPECT_EQ(t.Acquire("a"), 0u);
  EXPECT_EQ(t.Acquire("b"), 1u);
  EXPECT_EQ(t.Acquire("a"), 0u);  // a second reference
  EXPECT_EQ(t.Find("b"), 1u);
  EXPECT_FALSE(t.Find("c").has_value());
  EXPECT_EQ(t.Acquire("c"), 2u);
  EXPECT_FALSE(t.Acquire("d").has_value());  // full
  EXPECT_EQ(t.Name(1), "b");
  t.Release(1);
  EXPECT_FALSE(t.Find("b").has_value());
  EXPECT_EQ(t.Acquire("d"), 1u);  // b's id, reused
  t.Release(0);
  EXPECT_EQ(t.Find("a"), 0u);  // one reference left
  t.Release(0);
  EXPECT_EQ(t.size(), 2u);
}

TEST(NameTableTest, ConcurrentAcquiresAgree) {
  NameTable t(1000);
  std::vector<std::vector<uint32_t>> ids(4);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      for (int n = 0; n < 500; ++n) ids[static_cast<size_t>(i)].push_back(*t.Acquire("name-" + std::to_string(n)));
    });
  }
  for (auto& th : threads) th.join();
  for (int i = 1; i < 4; ++i) EXPECT_EQ(ids[static_cast<size_t>(i)], ids[0]);
  EXPECT_EQ(t.size(), 500u);
}

// Issue 8, items 6 and 21: a tenant is forgotten when no partition holds a stream of it; its
// id, and the room in the directory, are reused.
TEST(TenantDirectoryTest, Item21_TenantsWithoutStreamsAreForgotten) {
  TenantDirectory directory(2, 4);
  PartitionUsage p0(0, kWindows, directory), p1(1, kWindows, directory);
  TenantStreams* a0 = p0.FindOrCreate("a");
  TenantStreams* a1 = p1.FindOrCreate("a");
  ASSERT_TRUE(a0 && a1);
  EXPECT_NE(p0.FindOrCreate("b"), nullptr);
  EXPECT_EQ(p0.FindOrCreate("c"), nullptr);  // two tenants at most
  EXPECT_EQ(directory.size(), 2u);
  TenantId a = 0;
  ASSERT_EQ(p0.Find("a", &a), a0);
  p0.EraseIfEmpty(TenantKey("a"), a);
  EXPECT_EQ(p0.Find("a"), nullptr);
  EXPECT_EQ(p1.Find("a"), a1);  // partition 1 still holds it
  p1.EraseIfEmpty(TenantKey("a"), a);
  EXPECT_FALSE(directory.Find("a").has_value());
  EXPECT_NE(p0.FindOrCreate("c"), nullptr);  // room again
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
