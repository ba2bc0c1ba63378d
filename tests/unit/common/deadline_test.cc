#include "common/deadline.h"

#include <gtest/gtest.h>

namespace limits {
namespace {

using namespace std::chrono_literals;
using SystemTime = std::chrono::system_clock::time_point;

TEST(DeadlineTest, GrpcsNoDeadlineIsNoneAndNoneStaysNoneOnTheWayBack) {
  EXPECT_EQ(FromSystemDeadline(SystemTime::max()), kNoDeadline);
  EXPECT_EQ(ToSystemDeadline(kNoDeadline), SystemTime::max());
  EXPECT_EQ(Within(kNoDeadline, 0.75), kNoDeadline);
  EXPECT_FALSE(Expired(kNoDeadline));
}

TEST(DeadlineTest, ASystemDeadlineIsTheSameTimeFromNowOnTheSteadyClock) {
  const auto before = std::chrono::steady_clock::now();
  const Deadline d = FromSystemDeadline(std::chrono::system_clock::now() + 5s);
  const auto after = std::chrono::steady_clock::now();
  EXPECT_GE(d, before + 5s);
  EXPECT_LE(d, after + 5s);
  const SystemTime back = ToSystemDeadline(d);
  EXPECT_LE(back, std::chrono::system_clock::now() + 5s);
  EXPECT_GT(back, std::chrono::system_clock::now() + 4s);
  EXPECT_FALSE(Expired(d));
  EXPECT_TRUE(Expired(FromSystemDeadline(std::chrono::system_clock::now() - 1s)));
}

TEST(DeadlineTest, WithinIsAShareOfTheTimeLeftAndAPassedDeadlineLeavesNone) {
  const auto now = std::chrono::steady_clock::now();
  const Deadline d = Within(now + 4s, 0.75);
  EXPECT_GE(d, now + 3s - 10ms);
  EXPECT_LE(d, std::chrono::steady_clock::now() + 3s);
  EXPECT_TRUE(Expired(Within(now - 1s, 0.75)));
}

}  // namespace
}  // namespace limits
