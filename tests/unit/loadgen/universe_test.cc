#include "loadgen/universe.h"

#include <gtest/gtest.h>

#include <unordered_set>

namespace limits::loadgen {
namespace {

UniverseOptions Options(uint32_t tenants, uint64_t streams, uint64_t seed = 1) {
  UniverseOptions o;
  o.tenants = tenants;
  o.streams_per_tenant = streams;
  o.seed = seed;
  return o;
}

TEST(UniverseTest, TenantNamesAndPolicies) {
  UniverseOptions o = Options(3, 10);
  o.tenant_prefix = "t";
  o.policies = {"", "gold"};
  const Universe u(o);
  EXPECT_EQ(u.Tenant(0), "t0");
  EXPECT_EQ(u.Tenant(2), "t2");
  EXPECT_EQ(u.Policy(0), "");
  EXPECT_EQ(u.Policy(1), "gold");
  EXPECT_EQ(u.Policy(4), "");
  EXPECT_EQ(Universe(Options(1, 1)).Policy(7), "");
}

TEST(UniverseTest, EveryStreamOfEveryTenantHasItsOwnHash) {
  const Universe u(Options(50, 4000));
  std::unordered_set<uint64_t> seen;
  for (uint32_t t = 0; t < u.tenants(); ++t) {
    for (uint64_t i = 0; i < u.streams_per_tenant(); ++i) seen.insert(u.StreamHash(t, i));
  }
  EXPECT_EQ(seen.size(), 50u * 4000u);
  // The hashes spread evenly over partitions (hash % 64), as Loki's do.
  std::vector<int> per_partition(64);
  for (uint64_t h : seen) ++per_partition[h % 64];
  for (int n : per_partition) EXPECT_NEAR(n, 200'000 / 64, 300);
}

// The same seed gives the same streams in every run and build: a load (or a bench scenario)
// is reproducible. These values pin the function.
TEST(UniverseTest, HashesDependOnlyOnSeedTenantAndIndex) {
  const Universe a(Options(4, 100, 1)), b(Options(9, 5, 1)), c(Options(4, 100, 2));
  EXPECT_EQ(a.StreamHash(3, 4), b.StreamHash(3, 4));
  EXPECT_NE(a.StreamHash(3, 4), c.StreamHash(3, 4));
  EXPECT_NE(a.StreamHash(0, 1), a.StreamHash(1, 0));
  EXPECT_EQ(Mix64(0), 0u);
  EXPECT_EQ(Mix64(1), 0x5692161d100b05e5ULL);
  EXPECT_EQ(a.StreamHash(0, 0), Mix64(Mix64(1) * 0x9e3779b97f4a7c15ULL));
}

TEST(UniverseTest, RecordsVisitTenantsInTurnAndWalkTheirStreams) {
  const Universe u(Options(3, 2));
  const std::vector<std::pair<uint32_t, uint64_t>> want = {{0, 0}, {1, 0}, {2, 0}, {0, 1}, {1, 1}, {2, 1}, {0, 0}};
  for (uint64_t n = 0; n < want.size(); ++n) {
    EXPECT_EQ(u.RecordAt(n).tenant, want[n].first) << n;
    EXPECT_EQ(u.RecordAt(n).stream, want[n].second) << n;
  }
}

TEST(UniverseTest, SpreadTimestampsRiseFromNowMinusSpreadToNow) {
  const int64_t now = 1'764'000'000'000;
  EXPECT_EQ(SpreadTimestampMs(now, 0, 0.3), now);
  EXPECT_EQ(SpreadTimestampMs(now, 600'000, 0), now - 600'000);
  EXPECT_EQ(SpreadTimestampMs(now, 600'000, 0.5), now - 300'000);
  EXPECT_EQ(SpreadTimestampMs(now, 600'000, 1), now);
  EXPECT_EQ(SpreadTimestampMs(now, 600'000, 7), now);  // clamped
  int64_t last = 0;
  for (int i = 0; i <= 1000; ++i) {
    const int64_t ts = SpreadTimestampMs(now + i, 5'400'000, i / 1000.0);  // wall time moves too
    EXPECT_GE(ts, last);
    last = ts;
  }
}

}  // namespace
}  // namespace limits::loadgen
