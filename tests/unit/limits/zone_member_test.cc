#include "limits/zone/zone_member.h"

#include <gtest/gtest.h>

namespace limits::zone {
namespace {

using Mode = ZoneBucket::Mode;
constexpr int64_t kLease = 60'000;
const BucketKey kKey{"t", ""};
const BucketKey kGold{"t", "gold"};

TEST(ZoneMemberTest, ANodeThatHasNotHeardFromTheHomeAdmitsNothing) {
  ZoneMember m(kLease);
  EXPECT_EQ(m.StateOf(kKey, "h", 640, 64, 1'000).mode, Mode::kUnknown);
  m.Heard("other", {}, 1'000);
  EXPECT_EQ(m.StateOf(kKey, "h", 640, 64, 1'000).mode, Mode::kUnknown);  // leases are per home
}

TEST(ZoneMemberTest, UnderALeaseABucketIsColdOnItsFloorsUntilADirectiveMakesItHot) {
  ZoneMember m(kLease);
  m.Heard("h", {kGold}, 1'000);
  const ZoneBucket cold = m.StateOf(kKey, "h", 640, 64, 2'000);
  ASSERT_EQ(cold.mode, Mode::kCold);
  EXPECT_EQ(cold.floors.total(), 320u);
  EXPECT_EQ(cold.floors.partitions(), 64);
  // The floors turn with the bucket, as at the home: same limit, partitions and key.
  const PartitionFloors home(640, 64, HashOf(kKey));
  for (int32_t p = 0; p < 64; ++p) EXPECT_EQ(cold.floors.Of(p), home.Of(p));
  // Hot at the home, not yet here: the home counts this member's floors until it applies a
  // directive, and this member reports it next time.
  EXPECT_EQ(m.StateOf(kGold, "h", 640, 64, 2'000).mode, Mode::kCold);
  EXPECT_EQ(m.Pending("h"), std::vector<BucketKey>{kGold});
  ASSERT_TRUE(m.Apply(kGold, {4, 1, 9}));
  EXPECT_EQ(m.StateOf(kGold, "h", 640, 64, 2'000).mode, Mode::kHot);
  EXPECT_TRUE(m.Pending("h").empty());
}

TEST(ZoneMemberTest, TheLeaseRunsFromWhenTheExchangeBeganAndALateAnswerChangesNothing) {
  ZoneMember m(kLease);
  m.Heard("h", {}, 10'000);
  EXPECT_EQ(m.StateOf(kKey, "h", 640, 64, 10'000 + kLease).mode, Mode::kCold);
  EXPECT_EQ(m.StateOf(kKey, "h", 640, 64, 10'001 + kLease).mode, Mode::kUnknown);
  m.Heard("h", {kKey}, 20'000);
  m.Heard("h", {}, 15'000);  // an earlier exchange's answer, arriving late
  EXPECT_EQ(m.Pending("h"), std::vector<BucketKey>{kKey});
  EXPECT_EQ(m.StateOf(kKey, "h", 640, 64, 20'000 + kLease).mode, Mode::kCold);
  EXPECT_EQ(m.StateOf(kKey, "h", 640, 64, 20'001 + kLease).mode, Mode::kUnknown);
}

TEST(ZoneMemberTest, TheFirstDirectiveMakesTheBucketHotHereForGood) {
  ZoneMember m(kLease);
  EXPECT_EQ(m.Find(kKey), nullptr);
  m.Heard("h", {kKey}, 0);
  ASSERT_TRUE(m.Apply(kKey, {3, 1, 7}));
  ZoneBucket hot = m.StateOf(kKey, "h", 640, 64, 0);
  ASSERT_EQ(hot.mode, Mode::kHot);
  ASSERT_EQ(hot.member, m.Find(kKey));
  EXPECT_TRUE(hot.member->closed());
  EXPECT_EQ(hot.member->unused(), 3u);
  EXPECT_FALSE(m.Apply(kKey, {5, 1, 7}));  // not newer
  m.Heard("h", {}, 1'000);
  EXPECT_EQ(m.StateOf(kKey, "h", 640, 64, 1'000).mode, Mode::kHot);  // never cold again
}

// A member silent past its lease (a paused process, a partition) may have been forgotten by
// the home, which then freed its headroom: it spends none of it, then or later.
TEST(ZoneMemberTest, AHotBucketWhoseLeaseRanOutDropsItsHeadroom) {
  ZoneMember m(1'000);
  m.Heard("h", {}, 0);
  ASSERT_TRUE(m.Apply(kKey, {10, 1, 1}));
  ZoneBucket st = m.StateOf(kKey, "h", 64, 8, 1'000);
  ASSERT_EQ(st.mode, ZoneBucket::Mode::kHot);
  EXPECT_TRUE(st.member->TrySpend());
  EXPECT_EQ(m.StateOf(kKey, "h", 64, 8, 1'001).mode, ZoneBucket::Mode::kUnknown);
  m.Heard("h", {kKey}, 1'002);
  st = m.StateOf(kKey, "h", 64, 8, 1'003);
  ASSERT_EQ(st.mode, ZoneBucket::Mode::kHot);
  EXPECT_EQ(st.member->unused(), 0u);
  EXPECT_FALSE(st.member->TrySpend());
}

}  // namespace
}  // namespace limits::zone
