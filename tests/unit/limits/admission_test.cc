#include "limits/decision/admission.h"

#include <gtest/gtest.h>

namespace limits {
namespace {

TEST(PoolShareTest, ANodeServingEveryPartitionGetsTheWholeLimit) {
  EXPECT_EQ(PoolShare(5000, 64, 64), 5000u);
  EXPECT_EQ(PoolShare(10, 64, 64), 10u);
}

TEST(PoolShareTest, ShareRoundsUpAndIsNeverZero) {
  EXPECT_EQ(PoolShare(5000, 1, 64), 79u);  // 78.125
  EXPECT_EQ(PoolShare(5000, 32, 64), 2500u);
  EXPECT_EQ(PoolShare(10, 1, 64), 1u);  // Loki: 10 / 64 == 0, i.e. unlimited
  EXPECT_EQ(PoolShare(1, 1, 64), 1u);
  EXPECT_EQ(PoolShare(63, 1, 64), 1u);
  EXPECT_EQ(PoolShare(65, 1, 64), 2u);
  EXPECT_EQ(PoolShare(10, 7, 64), 2u);  // 1.09
}

TEST(PoolShareTest, ZeroMeansUnlimited) { EXPECT_EQ(PoolShare(0, 64, 64), kUnlimited); }

TEST(PoolShareTest, HugeLimitsDoNotOverflow) {
  EXPECT_EQ(PoolShare(UINT64_MAX, 64, 64), UINT64_MAX);
  EXPECT_EQ(PoolShare(UINT64_MAX - 1, 1, 2), UINT64_MAX / 2);
  EXPECT_EQ(PoolShare(UINT64_MAX / 2, 100000, 100000), UINT64_MAX / 2);
}

TEST(PoolShareTest, SharesOverAllNodesOvershootByLessThanTheNodeCount) {
  for (uint64_t limit : {1u, 7u, 10u, 100u, 640u, 5000u}) {
    for (uint32_t nodes : {1u, 3u, 5u, 8u, 64u}) {
      uint64_t total = 0;
      for (uint32_t n = 0; n < nodes; ++n) total += PoolShare(limit, 64 / nodes + (n < 64 % nodes ? 1 : 0), 64);
      EXPECT_GE(total, limit);
      EXPECT_LT(total, limit + nodes) << limit << " over " << nodes;
    }
  }
}

TEST(AdmissionTest, PoliciesWithTheirOwnLimitHaveTheirOwnBucket) {
  TenantLimits limits;
  limits.max_global_streams_per_user = 2;
  limits.policy_override_limits = {{"gold", {.max_global_streams_per_user = 1}},
                                   {"free", {.max_global_streams_per_user = 0}}};
  Admission a(limits, 64, 64);
  EXPECT_EQ(a.BucketOf(""), Admission::kDefaultBucket);
  EXPECT_EQ(a.BucketOf("bronze"), Admission::kDefaultBucket);  // no own limit: default bucket
  EXPECT_NE(a.BucketOf("gold"), Admission::kDefaultBucket);
  EXPECT_FALSE(a.Limited(a.BucketOf("free")));
  EXPECT_TRUE(a.TryAdmit(a.BucketOf("gold"), 0));
  EXPECT_FALSE(a.TryAdmit(a.BucketOf("gold"), 0));
  EXPECT_TRUE(a.TryAdmit(Admission::kDefaultBucket, 0));
  EXPECT_TRUE(a.TryAdmit(Admission::kDefaultBucket, 0));
  EXPECT_FALSE(a.TryAdmit(Admission::kDefaultBucket, 0));
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(a.TryAdmit(a.BucketOf("free"), 0));
}

}  // namespace
}  // namespace limits
