#include "limits/lifecycle/evictor.h"

#include <gtest/gtest.h>

#include "limits/decision/rate_limiter.h"
#include "testing/fake_clock.h"
#include "testing/temp_dir.h"
#include "testing/test_store.h"

namespace limits {
namespace {

using namespace std::chrono_literals;

TEST(EvictorTest, EvictsExpiredStreamsAndCountsThemPerTenant) {
  testing::TempDir dir;
  testing::FakeClock clock;
  testing::TestStore t = testing::TestStore::Open(dir, clock, 2);
  UsageStore* store = t.store.get();
  std::vector<Record> recs;
  for (int i = 0; i < 3; ++i) {
    recs.push_back(Record{.tenant = i < 2 ? "a" : "b", .stream_hash = static_cast<uint64_t>(i * 2), .bytes = 1,
                          .policy = "", .timestamp_ms = clock.NowMillis(), .offset = i});
  }
  ASSERT_TRUE(store->Apply(0, recs, 3).ok());
  RateLimiter rates;
  ASSERT_TRUE(rates.TryTake("a", 100, /*rate=*/1000, /*burst=*/1000, clock.NowMillis()));
  std::vector<IdleSweep> sweeps;
  sweeps.push_back({.what = "idle_rate_buckets_forgotten",
                    .forget = [&rates](int64_t now_ms) { return rates.ForgetFull(now_ms); }});
  Evictor evictor(*store, std::move(sweeps), clock, 1h);
  evictor.EvictOnce();
  EXPECT_EQ(store->TotalStreams(), 3u);
  EXPECT_EQ(rates.size(), 1u);  // not full again yet (100 ms to refill)
  clock.Advance(7201s);
  evictor.EvictOnce();
  EXPECT_EQ(store->TotalStreams(), 0u);
  EXPECT_EQ(store->num_tenants(), 0u);  // forgotten with their last stream
  EXPECT_EQ(rates.size(), 0u);          // full again: forgotten
  EXPECT_EQ(evictor.evictions().Value("a"), 2);
  EXPECT_EQ(evictor.evictions().Value("b"), 1);
}

TEST(EvictorTest, StopsPromptly) {
  testing::TempDir dir;
  testing::FakeClock clock;
  testing::TestStore t = testing::TestStore::Open(dir, clock, 2);
  UsageStore* store = t.store.get();
  Evictor evictor(*store, {}, clock, 1h);
  evictor.Start();
  const auto t0 = std::chrono::steady_clock::now();
  evictor.Stop();  // not an hour
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
}

}  // namespace
}  // namespace limits
