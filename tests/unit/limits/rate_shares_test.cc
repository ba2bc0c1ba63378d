#include "limits/zone/rate_shares.h"

#include <gtest/gtest.h>

namespace limits::zone {
namespace {

const BucketKey kKey{"tenant", ""};
constexpr double kRate = 1000;  // bytes/s

TEST(RateSharesTest, ABucketRefillsAtNothingUntilItsHomeGivesAShareAndAsksForARoundAtFirst) {
  RateShares shares;
  bool first = false;
  EXPECT_EQ(shares.ShareFor(kKey, kRate, 100, &first), 0.0);
  EXPECT_TRUE(first);
  EXPECT_EQ(shares.ShareFor(kKey, kRate, 100, &first), 0.0);
  EXPECT_FALSE(first);
  shares.Apply({{kKey, kWholeRate / 4}});
  EXPECT_EQ(shares.ShareFor(kKey, kRate, 0, &first), 0.25);
  EXPECT_EQ(*shares.Current(kKey), 0.25);
  EXPECT_FALSE(shares.Current({"other", ""}).has_value());
  shares.Apply({{{"other", ""}, kWholeRate}});  // a share of a bucket not asked here: ignored
  EXPECT_FALSE(shares.Current({"other", ""}).has_value());
}

TEST(RateSharesTest, DemandRisesAtOnceFallsByHalvesAndABucketWithNeitherIsForgotten) {
  RateShares shares;
  bool first = false;
  shares.ShareFor(kKey, kRate, 500, &first);
  ASSERT_EQ(shares.Reports(0).size(), 1u);  // the first window counts as a second
  shares.ShareFor(kKey, kRate, 2000, &first);
  std::vector<RateReport> r = shares.Reports(1000);  // 2000 bytes in a second: twice the rate
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].demand, 2 * kWholeRate);
  EXPECT_EQ(r[0].applied, 0u);
  shares.Apply({{kKey, kWholeRate / 2}});
  r = shares.Reports(2000);  // nothing asked: halves
  EXPECT_EQ(r[0].demand, kWholeRate);
  EXPECT_EQ(r[0].applied, kWholeRate / 2);
  shares.ShareFor(kKey, kRate, 250, &first);
  r = shares.Reports(2500);  // 250 bytes in half a second: half the rate, the mean of the two
  EXPECT_EQ(r[0].demand, 3 * kWholeRate / 4);
  for (int64_t t = 3000; t < 20'000; t += 1000) r = shares.Reports(t);
  EXPECT_EQ(r[0].demand, 0u);               // below a thousandth, with nothing asked: none
  EXPECT_EQ(r[0].applied, kWholeRate / 2);  // still reported: it holds a share
  shares.Apply({{kKey, 0}});
  EXPECT_EQ(shares.Reports(21'000).size(), 1u);  // tells the home it applies nothing now
  EXPECT_TRUE(shares.Reports(22'000).empty());
  EXPECT_FALSE(shares.Current(kKey).has_value());
}

}  // namespace
}  // namespace limits::zone
