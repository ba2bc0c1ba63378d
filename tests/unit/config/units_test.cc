#include "config/units.h"

#include <gtest/gtest.h>

namespace limits::config {
namespace {

using std::chrono::milliseconds;

TEST(UnitsTest, ParsesDurationsAsOperatorsWriteThem) {
  EXPECT_EQ(*ParseDuration("2h"), milliseconds(7'200'000));
  EXPECT_EQ(*ParseDuration("5m"), milliseconds(300'000));
  EXPECT_EQ(*ParseDuration("30s"), milliseconds(30'000));
  EXPECT_EQ(*ParseDuration("500ms"), milliseconds(500));
  EXPECT_EQ(*ParseDuration("1h30m"), milliseconds(5'400'000));
  EXPECT_EQ(*ParseDuration("1.5h"), milliseconds(5'400'000));
  EXPECT_EQ(*ParseDuration("1d"), milliseconds(86'400'000));
  EXPECT_EQ(*ParseDuration("0s"), milliseconds(0));
}

TEST(UnitsTest, RejectsMalformedDurations) {
  for (const char* bad : {"", "5", "m", "5x", "-5m", "5 m", "1.5ms5", "0.5ms", "h1"}) {
    Result<milliseconds> d = ParseDuration(bad);
    EXPECT_FALSE(d.ok()) << bad;
    if (!d.ok()) {
      EXPECT_TRUE(d.status().IsInvalidArgument()) << bad;
    }
  }
  EXPECT_NE(ParseDuration("5x").status().message().find("unknown unit \"x\""), std::string::npos);
  EXPECT_NE(ParseDuration("5").status().message().find("missing unit"), std::string::npos);
}

TEST(UnitsTest, FormatsDurationsShortestExact) {
  EXPECT_EQ(FormatDuration(milliseconds(7'200'000)), "2h");
  EXPECT_EQ(FormatDuration(milliseconds(90'000)), "1m30s");
  EXPECT_EQ(FormatDuration(milliseconds(1'500)), "1s500ms");
  EXPECT_EQ(FormatDuration(milliseconds(0)), "0s");
  EXPECT_EQ(FormatDuration(milliseconds(-60'000)), "-1m");
}

TEST(UnitsTest, ParsesSizes) {
  EXPECT_EQ(*ParseSize("256MiB"), 256ull << 20);
  EXPECT_EQ(*ParseSize("1GiB"), 1ull << 30);
  EXPECT_EQ(*ParseSize("64MB"), 64'000'000ull);
  EXPECT_EQ(*ParseSize("4096"), 4096ull);
  EXPECT_EQ(*ParseSize("512B"), 512ull);
  EXPECT_EQ(*ParseSize("1.5KiB"), 1536ull);
  for (const char* bad : {"", "MiB", "1Mib", "1 MiB", "-1MiB", "0.3B", "1MiBx"}) {
    EXPECT_FALSE(ParseSize(bad).ok()) << bad;
  }
}

TEST(UnitsTest, FormatsSizes) {
  EXPECT_EQ(FormatSize(256ull << 20), "256MiB");
  EXPECT_EQ(FormatSize(1ull << 30), "1GiB");
  EXPECT_EQ(FormatSize(1000), "1000B");
  EXPECT_EQ(FormatSize(1536), "1536B");
}

}  // namespace
}  // namespace limits::config
