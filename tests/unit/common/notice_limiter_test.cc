#include "common/notice_limiter.h"

#include <gtest/gtest.h>

#include <string>

namespace limits {
namespace {

TEST(NoticeLimiterTest, OncePerKeyAMinuteAndAtMostMaxKeys) {
  NoticeLimiter n(/*max_keys=*/3, /*window_ms=*/60'000);
  EXPECT_TRUE(n.Allow("a", 1000));
  EXPECT_FALSE(n.Allow("a", 2000));
  EXPECT_TRUE(n.Allow("b", 2000));
  EXPECT_TRUE(n.Allow("c", 2000));
  // A flood of new keys is held at the cap for the rest of the minute.
  for (int i = 0; i < 100'000; ++i) EXPECT_FALSE(n.Allow("tenant-" + std::to_string(i), 3000));
  EXPECT_FALSE(n.Allow("a", 60'999));
  // The next minute starts afresh; so does a clock that went back.
  EXPECT_TRUE(n.Allow("a", 61'000));
  EXPECT_TRUE(n.Allow("tenant-1", 61'000));
  EXPECT_FALSE(n.Allow("a", 61'500));
  EXPECT_TRUE(n.Allow("a", 500));
}

}  // namespace
}  // namespace limits
