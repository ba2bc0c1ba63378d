#include "common/flag_cursor.h"

#include <gtest/gtest.h>

namespace limits {
namespace {

TEST(FlagCursorTest, BothFormsGiveTheSameValue) {
  FlagCursor c({"--config=/etc/a.toml", "--config", "/etc/b.toml", "--set=kafka.brokers=h:9092", "--set", "x=y"});
  ASSERT_TRUE(c.Next());
  EXPECT_TRUE(c.is_flag());
  EXPECT_EQ(c.arg(), "--config");
  EXPECT_EQ(c.Value(), "/etc/a.toml");
  ASSERT_TRUE(c.Next());
  EXPECT_EQ(c.arg(), "--config");
  EXPECT_EQ(c.Value(), "/etc/b.toml");
  ASSERT_TRUE(c.Next());
  EXPECT_EQ(c.arg(), "--set");
  EXPECT_EQ(c.Value(), "kafka.brokers=h:9092");  // split at the first '=' only
  ASSERT_TRUE(c.Next());
  EXPECT_EQ(c.Value(), "x=y");
  EXPECT_FALSE(c.Next());
}

TEST(FlagCursorTest, AMissingValueIsNullopt) {
  FlagCursor c({"--db"});
  ASSERT_TRUE(c.Next());
  EXPECT_EQ(c.Value(), std::nullopt);
  FlagCursor empty({"--db="});
  ASSERT_TRUE(empty.Next());
  EXPECT_EQ(empty.Value(), "");  // given, and empty: the caller decides whether that is valid
}

TEST(FlagCursorTest, OptionalValueStopsAtTheNextFlag) {
  FlagCursor c({"--check-config", "--set", "a=b", "--check-config", "file.toml", "--check-config=f2", "--check-config"});
  ASSERT_TRUE(c.Next());
  EXPECT_EQ(c.OptionalValue(), std::nullopt);
  ASSERT_TRUE(c.Next());
  EXPECT_EQ(c.arg(), "--set");
  EXPECT_EQ(c.Value(), "a=b");
  ASSERT_TRUE(c.Next());
  EXPECT_EQ(c.OptionalValue(), "file.toml");
  ASSERT_TRUE(c.Next());
  EXPECT_EQ(c.OptionalValue(), "f2");
  ASSERT_TRUE(c.Next());
  EXPECT_EQ(c.OptionalValue(), std::nullopt);
  EXPECT_FALSE(c.Next());
}

TEST(FlagCursorTest, PositionalsAndInlineValuesOnSwitches) {
  FlagCursor c({"partitions", "--json=yes", "-", "--", "p=1"});
  ASSERT_TRUE(c.Next());
  EXPECT_FALSE(c.is_flag());
  EXPECT_EQ(c.arg(), "partitions");
  ASSERT_TRUE(c.Next());
  EXPECT_EQ(c.arg(), "--json");
  EXPECT_TRUE(c.has_inline_value());
  ASSERT_TRUE(c.Next());
  EXPECT_FALSE(c.is_flag());
  ASSERT_TRUE(c.Next());
  EXPECT_FALSE(c.is_flag());
  ASSERT_TRUE(c.Next());
  EXPECT_FALSE(c.is_flag());
  EXPECT_EQ(c.arg(), "p=1");  // only flags are split
}

}  // namespace
}  // namespace limits
