#include "limits/zone/member_bucket.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace limits::zone {
namespace {

TEST(MemberBucketTest, SpendsOnlyWhatItHoldsAndAppliesDirectivesInOrderOnly) {
  MemberBucket b;
  EXPECT_FALSE(b.TrySpend());
  EXPECT_TRUE(b.Apply({7, 3}));
  EXPECT_EQ(b.unused(), 7u);
  EXPECT_FALSE(b.Apply({4, 2}));  // older than the last applied: dropped
  EXPECT_FALSE(b.Apply({4, 3}));
  EXPECT_EQ(b.unused(), 7u);
  EXPECT_TRUE(b.Apply({-10, 4}));  // a return takes at most what is left
  EXPECT_EQ(b.unused(), 0u);
  EXPECT_TRUE(b.Apply({INT64_MIN, 5}));  // from the network: any value is safe
  EXPECT_EQ(b.unused(), 0u);
  EXPECT_TRUE(b.Apply({1, 6}));
  EXPECT_TRUE(b.TrySpend());
  EXPECT_FALSE(b.TrySpend());
  const MemberReport r1 = b.Report({PartitionCount{0, 9}});
  const MemberReport r2 = b.Report({});
  EXPECT_LT(r1.seq, r2.seq);
  EXPECT_EQ(r2.applied_directive, 6u);
  EXPECT_EQ(r2.unused, 0u);
}

TEST(MemberBucketTest, ARestartedHomeNumbersAnewAndAnEarlierHomesDirectivesAreDropped) {
  MemberBucket b;
  ASSERT_TRUE(b.Apply({5, 9, 1}));
  EXPECT_TRUE(b.Apply({2, 1, 2}));  // the next incarnation's first directive
  EXPECT_EQ(b.unused(), 7u);
  EXPECT_FALSE(b.Apply({4, 10, 1}));  // late, from the earlier home
  EXPECT_EQ(b.unused(), 7u);
  const MemberReport r = b.Report({});
  EXPECT_EQ(r.applied_home, 2u);
  EXPECT_EQ(r.applied_directive, 1u);
}

}  // namespace
}  // namespace limits::zone
