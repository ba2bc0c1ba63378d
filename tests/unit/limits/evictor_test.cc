#include "limits/evictor.h"

#include <gtest/gtest.h>

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
  prometheus::Registry registry;
  Evictor evictor(*store, 1h, registry);
  evictor.EvictOnce();
  EXPECT_EQ(store->TotalStreams(), 3u);
  clock.Advance(7201s);
  evictor.EvictOnce();
  EXPECT_EQ(store->TotalStreams(), 0u);
  std::map<std::string, double> counted;
  for (const auto& f : registry.Collect()) {
    if (f.name != "loki_ingest_limits_stream_evictions_total") continue;
    for (const auto& m : f.metric) counted[m.label.at(0).value] = m.counter.value;
  }
  EXPECT_EQ(counted, (std::map<std::string, double>{{"a", 2}, {"b", 1}}));
}

TEST(EvictorTest, StopsPromptly) {
  testing::TempDir dir;
  testing::FakeClock clock;
  testing::TestStore t = testing::TestStore::Open(dir, clock, 2);
  UsageStore* store = t.store.get();
  prometheus::Registry registry;
  Evictor evictor(*store, 1h, registry);
  evictor.Start();
  const auto t0 = std::chrono::steady_clock::now();
  evictor.Stop();  // not an hour
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
}

}  // namespace
}  // namespace limits
