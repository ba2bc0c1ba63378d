#include "limits/zone/zone_quota.h"

#include <gtest/gtest.h>

#include <vector>

#include "limits/usage/tenant_directory.h"
#include "limits/usage/windows.h"

namespace limits::zone {
namespace {

constexpr Windows kWindows{.active_s = 100, .rate_s = 30, .bucket_s = 10, .produce_interval_s = 10};
constexpr uint32_t kNow = 1'000'000;

// One partition's streams of a tenant: `n` active in the tenant's own bucket, `gold` in gold's.
struct Partition {
  TenantShared shared{10};
  TenantStreams ts{"t", kWindows, shared};
  Partition(uint64_t n, uint64_t gold = 0) {
    const PolicyId none = *ts.Policy(""), g = *ts.Policy("gold", true);
    for (uint64_t h = 0; h < n; ++h) ts.Observe(h, none, kNow, 1);
    for (uint64_t h = 0; h < gold; ++h) ts.Observe(1000 + h, g, kNow, 1);
    ts.Observe(5000, none, kNow - 500, 1);  // expired: counts nowhere
  }
};

ZoneBucket Cold(uint64_t limit, int32_t partitions) {
  return ZoneBucket{ZoneBucket::Mode::kCold, PartitionFloors(limit, partitions, 0), nullptr};
}

TEST(ZoneQuotaTest, AColdBucketAdmitsOnEachPartitionsFloorAndAsksToTurnHotAtHalfOfIt) {
  // L = 64 over 4 partitions: floors of 8.
  ZoneQuota q(PolicyBuckets(), {Cold(64, 4)});
  Partition p0(1), p1(8);
  q.CountPartition(0, p0.ts, kNow - 100);
  q.CountPartition(1, p1.ts, kNow - 100);
  EXPECT_TRUE(q.TryAdmit(0, 0));  // 2 of 8
  EXPECT_TRUE(q.TryAdmit(0, 0));  // 3 of 8
  EXPECT_TRUE(q.Triggered().empty());
  EXPECT_FALSE(q.TryAdmit(0, 1));  // full, though partition 0 still has room: no pooling
  EXPECT_EQ(q.Triggered(), std::vector<size_t>{0});
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(q.TryAdmit(0, 0));
  EXPECT_FALSE(q.TryAdmit(0, 0));
  q.Release(0, 0);  // a stream left the bucket: its place is free again
  EXPECT_TRUE(q.TryAdmit(0, 0));
  EXPECT_FALSE(q.TryAdmit(0, 4));  // no such partition
}

TEST(ZoneQuotaTest, TheTriggerFiresAtHalfTheFloor) {
  ZoneQuota q(PolicyBuckets(), {Cold(64, 4)});
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(q.TryAdmit(0, 3));
  EXPECT_TRUE(q.Triggered().empty());
  ASSERT_TRUE(q.TryAdmit(0, 3));  // 4 of 8
  EXPECT_EQ(q.Triggered(), std::vector<size_t>{0});
}

TEST(ZoneQuotaTest, BelowTwiceThePartitionCountTheFirstStreamTurnsItHot) {
  ZoneQuota q(PolicyBuckets(), {Cold(6, 4)});  // floors 1, 1, 1, 0
  EXPECT_FALSE(q.TryAdmit(0, 3));
  EXPECT_EQ(q.Triggered(), std::vector<size_t>{0});
  ZoneQuota r(PolicyBuckets(), {Cold(6, 4)});
  EXPECT_TRUE(r.TryAdmit(0, 0));
  EXPECT_EQ(r.Triggered(), std::vector<size_t>{0});
}

TEST(ZoneQuotaTest, EachBucketByItsOwnState) {
  PolicyBuckets buckets;
  const size_t gold = buckets.Add("gold");
  MemberBucket member;
  ASSERT_TRUE(member.Apply({2, 1, 1}));
  ZoneQuota q(buckets, {ZoneBucket{ZoneBucket::Mode::kHot, {}, &member}, Cold(16, 2)});
  Partition p0(1, 3);
  q.CountPartition(0, p0.ts, kNow - 100);  // gold: 3 of 4 in partition 0
  EXPECT_EQ(q.BucketOf("gold"), gold);
  EXPECT_TRUE(q.OwnBucket("gold"));
  EXPECT_FALSE(q.OwnBucket("silver"));
  // The tenant's bucket is hot: two places of headroom, whatever the partition.
  EXPECT_TRUE(q.TryAdmit(0, 0));
  EXPECT_TRUE(q.TryAdmit(0, 1));
  EXPECT_FALSE(q.TryAdmit(0, 1));
  EXPECT_EQ(member.unused(), 0u);
  q.Release(0, 0);  // a hot place goes back through the home, not into this member's headroom
  EXPECT_EQ(member.unused(), 0u);
  EXPECT_TRUE(q.TryAdmit(gold, 0));
  EXPECT_FALSE(q.TryAdmit(gold, 0));
  EXPECT_EQ(q.Triggered(), std::vector<size_t>{gold});
}

TEST(ZoneQuotaTest, AnUnknownBucketAdmitsNothingAndAnUnlimitedOneEverything) {
  PolicyBuckets buckets;
  const size_t free = buckets.Add("free");
  ZoneQuota q(buckets, {ZoneBucket{ZoneBucket::Mode::kUnknown, {}, nullptr}});  // free: no state given
  EXPECT_TRUE(q.Limited(0));
  EXPECT_FALSE(q.TryAdmit(0, 0));
  EXPECT_FALSE(q.Limited(free));
  for (int i = 0; i < 10; ++i) EXPECT_TRUE(q.TryAdmit(free, 0));
  EXPECT_TRUE(q.Triggered().empty());
}

}  // namespace
}  // namespace limits::zone
