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

// Issue 8 item 8: decimals are exact (float arithmetic rejected "0.07h" as a fraction of a ms).
TEST(UnitsTest, Item8_DecimalDurationsAndSizesAreExact) {
  EXPECT_EQ(*ParseDuration("0.07h"), milliseconds(252'000));
  EXPECT_EQ(*ParseDuration("1.001s"), milliseconds(1'001));
  EXPECT_EQ(*ParseDuration("0.1s"), milliseconds(100));
  EXPECT_EQ(*ParseDuration("2.35m"), milliseconds(141'000));
  EXPECT_EQ(*ParseDuration("1.5h0.001s"), milliseconds(5'400'001));
  EXPECT_EQ(*ParseDuration("1.000000000000000000000000s"), milliseconds(1'000));  // trailing zeros
  EXPECT_EQ(*ParseDuration("0003s"), milliseconds(3'000));
  EXPECT_EQ(*ParseDuration(".5s"), milliseconds(500));
  EXPECT_EQ(*ParseSize("1.001MB"), 1'001'000u);
  EXPECT_EQ(*ParseSize("0.1KB"), 100u);
  EXPECT_EQ(*ParseSize("1.1GB"), 1'100'000'000u);
  EXPECT_EQ(*ParseSize("0.25KiB"), 256u);
  EXPECT_EQ(*ParseSize("18446744073709551615"), UINT64_MAX);  // exact up to the last byte
  EXPECT_EQ(*ParseSize("16777215.99999904632568359375TiB"), UINT64_MAX - 1048575);  // 2^64 - 2^20
  // Not whole: named as such, never rounded.
  EXPECT_NE(ParseDuration("1.0005s").status().message().find("not a whole number of milliseconds"), std::string::npos);
  EXPECT_NE(ParseSize("1.0000001KB").status().message().find("not a whole number of bytes"), std::string::npos);
  // Beyond what the result type holds: "too large", never wrapped.
  EXPECT_NE(ParseSize("18446744073709551616").status().message().find("too large"), std::string::npos);
  EXPECT_NE(ParseSize("16777216TiB").status().message().find("too large"), std::string::npos);
  EXPECT_NE(ParseDuration("106751991168d").status().message().find("too large"), std::string::npos);
  EXPECT_NE(ParseDuration("99999999999999999999999999999999h").status().message().find("too large"),
            std::string::npos);
  for (const char* bad : {".s", "1..5s", "1.5.5s", ".", "1e3s"}) EXPECT_FALSE(ParseDuration(bad).ok()) << bad;
}

}  // namespace
}  // namespace limits::config
