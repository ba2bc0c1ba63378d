#include "common/log.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace limits::log {
namespace {

class LogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SetSinkForTest([this](std::string_view line) { lines_.emplace_back(line); });
  }
  void TearDown() override {
    SetSinkForTest(nullptr);
    Configure(Level::kInfo, Format::kJson);
  }
  std::vector<std::string> lines_;
};

TEST_F(LogTest, JsonLineHasLevelComponentMessageAndFields) {
  Configure(Level::kInfo, Format::kJson);
  Info("store", "opened").Kv("partition", 17).Kv("path", "a \"b\"\n").Kv("ok", true).Kv("ratio", 0.5);
  ASSERT_EQ(lines_.size(), 1u);
  const std::string& l = lines_[0];
  EXPECT_EQ(l.front(), '{');
  EXPECT_EQ(l.back(), '}');
  EXPECT_NE(l.find("\"level\":\"info\""), std::string::npos) << l;
  EXPECT_NE(l.find("\"component\":\"store\""), std::string::npos) << l;
  EXPECT_NE(l.find("\"msg\":\"opened\""), std::string::npos) << l;
  EXPECT_NE(l.find("\"partition\":17"), std::string::npos) << l;
  EXPECT_NE(l.find("\"path\":\"a \\\"b\\\"\\n\""), std::string::npos) << l;
  EXPECT_NE(l.find("\"ok\":true"), std::string::npos) << l;
  EXPECT_NE(l.find("\"ratio\":0.5"), std::string::npos) << l;
}

TEST_F(LogTest, LogfmtQuotesOnlyWhatNeedsIt) {
  Configure(Level::kInfo, Format::kLogfmt);
  Warn("kafka", "partition revoked").Kv("partition", 3).Kv("topic", "ingest-limits");
  ASSERT_EQ(lines_.size(), 1u);
  EXPECT_NE(lines_[0].find("level=warn component=kafka msg=\"partition revoked\" partition=3 topic=ingest-limits"),
            std::string::npos)
      << lines_[0];
}

TEST_F(LogTest, BelowTheLevelNothingIsWritten) {
  Configure(Level::kWarn, Format::kJson);
  Info("store", "quiet");
  Debug("store", "quieter");
  Error("store", "loud");
  ASSERT_EQ(lines_.size(), 1u);
  EXPECT_NE(lines_[0].find("loud"), std::string::npos);
}

// Issue 8 item 13, the logger's side: invalid UTF-8 went into JSON lines raw (an invalid
// line for every collector), doubles as %.6g.
TEST_F(LogTest, Item13_NamesAreValidUtf8AndEscapedDoublesShortest) {
  Configure(Level::kInfo, Format::kJson);
  Info("rpc", "bad request").Kv("tenant", "t\xC3\xA9\xFF\x01").Kv("rate", 12345678.9).Kv("nan", std::nan(""));
  ASSERT_EQ(lines_.size(), 1u);
  EXPECT_NE(lines_[0].find("\"tenant\":\"t\xC3\xA9\xEF\xBF\xBD\\u0001\""), std::string::npos) << lines_[0];
  EXPECT_NE(lines_[0].find("\"rate\":12345678.9"), std::string::npos) << lines_[0];
  EXPECT_NE(lines_[0].find("\"nan\":\"NaN\""), std::string::npos) << lines_[0];
  Configure(Level::kInfo, Format::kLogfmt);
  Info("rpc", "bad request").Kv("tenant", "a\x1b[31mb");
  ASSERT_EQ(lines_.size(), 2u);
  EXPECT_NE(lines_[1].find("tenant=\"a\\u001b[31mb\""), std::string::npos) << lines_[1];
}

TEST(LogParseTest, LevelsAndFormats) {
  Level l;
  EXPECT_TRUE(ParseLevel("debug", &l));
  EXPECT_EQ(l, Level::kDebug);
  EXPECT_FALSE(ParseLevel("verbose", &l));
  Format f;
  EXPECT_TRUE(ParseFormat("logfmt", &f));
  EXPECT_EQ(f, Format::kLogfmt);
  EXPECT_FALSE(ParseFormat("xml", &f));
}

}  // namespace
}  // namespace limits::log
