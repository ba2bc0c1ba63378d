#include "node/tenant_series.h"

#include <gtest/gtest.h>

#include <map>

#include "testing/fake_clock.h"
#include "testing/temp_dir.h"
#include "testing/test_store.h"

namespace limits {
namespace {

using namespace std::chrono_literals;

// tenant -> value of one family in a collection.
std::map<std::string, double> Series(const std::vector<prometheus::MetricFamily>& families, const std::string& name) {
  std::map<std::string, double> out;
  for (const auto& f : families) {
    if (f.name != name) continue;
    for (const auto& m : f.metric) {
      out[m.label.empty() ? "" : m.label[0].value] =
          f.type == prometheus::MetricType::Counter ? m.counter.value : m.gauge.value;
    }
  }
  return out;
}

class TenantSeriesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    t_ = testing::TestStore::Open(dir_, clock_, 2);
    for (int32_t p = 0; p < 2; ++p) {
      const int64_t gen = manager_.Assign(p);
      manager_.SetReady(p, gen, 0, false);
    }
  }
  // `n` streams of `tenant` in partition p.
  void Streams(const std::string& tenant, int n, int32_t p = 0) {
    std::vector<Record> recs;
    for (int i = 0; i < n; ++i) {
      recs.push_back(Record{.tenant = tenant, .stream_hash = static_cast<uint64_t>(i) * 2 + static_cast<uint64_t>(p),
                            .bytes = 1, .policy = "", .timestamp_ms = clock_.NowMillis(), .offset = next_[p]++});
    }
    ASSERT_TRUE(t_.store->Apply(p, recs, next_[p]).ok());
  }

  testing::TempDir dir_;
  testing::FakeClock clock_;
  testing::TestStore t_;
  PartitionManager manager_{clock_, 30s};
  TenantCounters bytes_, evictions_;
  int64_t next_[2] = {0, 0};
};

// Issue 8, item 21: at most max_series tenants have series of their own (the most streams);
// the rest are summed under "other".
TEST_F(TenantSeriesTest, Item21_SeriesAreCappedTopNByStreamsTheRestSummedAsOther) {
  Streams("big", 5);
  Streams("mid", 3);
  Streams("small", 1);
  Streams("tiny", 1, 1);
  bytes_.Add("big", 100);
  bytes_.Add("small", 7);
  bytes_.Add("tiny", 3);
  TenantSeries series(*t_.store, manager_, bytes_, evictions_, 2);
  const auto families = series.Collect();
  EXPECT_EQ(Series(families, "loki_ingest_limits_streams"),
            (std::map<std::string, double>{{"big", 5}, {"mid", 3}, {"other", 2}}));
  EXPECT_EQ(Series(families, "loki_ingest_limits_active_streams"),
            (std::map<std::string, double>{{"big", 5}, {"mid", 3}, {"other", 2}}));
  EXPECT_EQ(Series(families, "loki_ingest_limits_tenant_ingested_bytes_total"),
            (std::map<std::string, double>{{"big", 100}, {"other", 10}}));
  EXPECT_EQ(Series(families, "limitsd_tenants").at(""), 4);
}

// Issue 8, item 9: streams of partitions not served count apart, as retained.
TEST_F(TenantSeriesTest, Item9_StreamsOfPartitionsNotServedAreRetainedNotCounted) {
  Streams("t", 4, 0);
  Streams("t", 2, 1);
  manager_.Revoke(1);
  TenantSeries series(*t_.store, manager_, bytes_, evictions_, 10);
  const auto families = series.Collect();
  EXPECT_EQ(Series(families, "loki_ingest_limits_streams").at("t"), 4);
  EXPECT_EQ(Series(families, "loki_ingest_limits_active_streams").at("t"), 4);
  EXPECT_EQ(Series(families, "limitsd_retained_streams").at("t"), 2);
}

// Issue 8, item 21: a tenant without streams loses its series (after one more scrape, so its
// last increments are exposed once).
TEST_F(TenantSeriesTest, Item21_CountersOfForgottenTenantsEndAfterOneScrape) {
  Streams("t", 1);
  evictions_.Add("gone", 5);  // evicted its last streams
  TenantSeries series(*t_.store, manager_, bytes_, evictions_, 10);
  EXPECT_EQ(Series(series.Collect(), "loki_ingest_limits_stream_evictions_total").at("gone"), 5);
  EXPECT_FALSE(Series(series.Collect(), "loki_ingest_limits_stream_evictions_total").count("gone"));
  EXPECT_EQ(evictions_.Value("gone"), 0);
}

}  // namespace
}  // namespace limits
