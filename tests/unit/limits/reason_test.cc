// The reason codes are a wire contract with Loki (pkg/limits/reason.go on Loki's main): a
// renumbering here changes what Loki's distributor does with a stream.
#include "limits/decision/reason.h"

#include <gtest/gtest.h>

namespace limits {
namespace {

TEST(ReasonTest, Issue26_LokisCodesKeepLokisNumbersAndTexts) {
  EXPECT_EQ(kReasonUnknown, 0u);
  EXPECT_EQ(kReasonFailed, 1u);
  EXPECT_EQ(kReasonMaxStreams, 2u);
  EXPECT_EQ(kReasonNotOwned, 3u);
  EXPECT_EQ(kReasonStreamShardsCapped, 4u);
  EXPECT_EQ(ReasonText(kReasonUnknown), "unknown reason");
  EXPECT_EQ(ReasonText(kReasonFailed), "failed");
  EXPECT_EQ(ReasonText(kReasonMaxStreams), "max streams");
  EXPECT_EQ(ReasonText(kReasonNotOwned), "not owned");
  EXPECT_EQ(ReasonText(kReasonStreamShardsCapped), "shards capped");
  EXPECT_EQ(ReasonText(5), "unknown reason");
}

TEST(ReasonTest, Issue26_LimitsdsOwnCodesAreOutsideTheRangeLokiAppendsTo) {
  EXPECT_EQ(kReasonRateLimited, 1001u);
  EXPECT_EQ(ReasonText(kReasonRateLimited), "rate limited");
}

}  // namespace
}  // namespace limits
