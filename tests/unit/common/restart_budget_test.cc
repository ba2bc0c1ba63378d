#include "common/restart_budget.h"

#include <gtest/gtest.h>

namespace limits {
namespace {

using namespace std::chrono_literals;

TEST(RestartBudgetTest, AtMostMaxRestartsWithinTheWindow) {
  RestartBudget budget(3, 10min);
  EXPECT_TRUE(budget.TrySpend(0));
  EXPECT_TRUE(budget.TrySpend(1'000));
  EXPECT_TRUE(budget.TrySpend(2'000));
  EXPECT_EQ(budget.Spent(2'000), 3);
  EXPECT_FALSE(budget.TrySpend(3'000));  // the fourth within 10 minutes
  EXPECT_EQ(budget.Spent(3'000), 3);      // a refusal is not counted
}

TEST(RestartBudgetTest, RestartsOlderThanTheWindowNoLongerCount) {
  RestartBudget budget(2, 1min);
  EXPECT_TRUE(budget.TrySpend(0));
  EXPECT_TRUE(budget.TrySpend(30'000));
  EXPECT_FALSE(budget.TrySpend(59'999));
  EXPECT_TRUE(budget.TrySpend(60'000));  // the first one left the window
  EXPECT_EQ(budget.Spent(60'000), 2);
  EXPECT_EQ(budget.Spent(200'000), 0);
}

TEST(RestartBudgetTest, ZeroMeansNeverRestart) {
  RestartBudget budget(0, 1min);
  EXPECT_FALSE(budget.TrySpend(0));
}

}  // namespace
}  // namespace limits
