#include "common/json.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "common/utf8.h"

namespace limits {
namespace {

std::string Compact(const std::string& key, std::string_view value) {
  JsonWriter w(false);
  w.BeginObject().Field(key, value).EndObject();
  return w.Take();
}

// Issue 8 item 13: bytes >= 0x80 were escaped one by one as Latin-1 code points
// ("ténänt" -> "t\u00c3\u00a9..."), so a UTF-8 name came back as mojibake.
TEST(JsonTest, Item13_ValidUtf8PassesThroughInvalidBytesBecomeReplacementCharacters) {
  EXPECT_EQ(Compact("tenant", "t\xC3\xA9n\xC3\xA4nt"), "{\"tenant\":\"t\xC3\xA9n\xC3\xA4nt\"}");
  EXPECT_EQ(Compact("k", "\xE2\x82\xAC \xF0\x9F\x98\x80"), "{\"k\":\"\xE2\x82\xAC \xF0\x9F\x98\x80\"}");  // € 😀
  // Each byte that starts no valid sequence becomes one U+FFFD: a lone continuation byte, a
  // truncated sequence, an overlong form, a surrogate, beyond U+10FFFF.
  EXPECT_EQ(Compact("k", "a\xFF" "b"), "{\"k\":\"a\xEF\xBF\xBD" "b\"}");
  EXPECT_EQ(Compact("k", "\x80"), "{\"k\":\"\xEF\xBF\xBD\"}");
  EXPECT_EQ(Compact("k", "\xC3"), "{\"k\":\"\xEF\xBF\xBD\"}");
  EXPECT_EQ(Compact("k", "\xC0\xAF"), "{\"k\":\"\xEF\xBF\xBD\xEF\xBF\xBD\"}");
  EXPECT_EQ(Compact("k", "\xED\xA0\x80"), "{\"k\":\"\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\"}");
  EXPECT_EQ(Compact("k", "\xF4\x90\x80\x80"), "{\"k\":\"\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\"}");
  // Control characters are escaped, keys too.
  EXPECT_EQ(Compact("a\x01", std::string("x\0y\x1f\x7f\"\\\n\t", 9)),
            "{\"a\\u0001\":\"x\\u0000y\\u001f\\u007f\\\"\\\\\\n\\t\"}");
  EXPECT_EQ(Compact("k", "\xE2\x80\xA8"), "{\"k\":\"\\u2028\"}");
  // Whatever goes in, what comes out is valid UTF-8.
  std::string all;
  for (int b = 0; b < 256; ++b) all.push_back(static_cast<char>(b));
  EXPECT_TRUE(IsValidUtf8(Compact("k", all)));
}

// Issue 8 item 13: doubles printed as %.6g (1.23457e+07) lost digits.
TEST(JsonTest, Item13_DoublesPrintShortestRoundTrip) {
  auto one = [](double v) {
    JsonWriter w(false);
    w.BeginArray().Double(v).EndArray();
    return w.Take();
  };
  EXPECT_EQ(one(12345678.9), "[12345678.9]");
  EXPECT_EQ(one(0.1), "[0.1]");
  EXPECT_EQ(one(100), "[100]");
  EXPECT_EQ(one(1e16), "[1e+16]");
  EXPECT_EQ(one(1.0 / 3), "[0.3333333333333333]");
  EXPECT_EQ(one(std::numeric_limits<double>::quiet_NaN()), "[null]");
  EXPECT_EQ(one(-std::numeric_limits<double>::infinity()), "[null]");
  for (double v : {12345678.9, 0.1, 1.0 / 3, 5e-324, 1.7976931348623157e308}) {
    EXPECT_EQ(std::strtod(ShortestDouble(v).c_str(), nullptr), v) << ShortestDouble(v);
  }
}

TEST(Utf8Test, SequencesFollowRfc3629) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("plain ascii"));
  EXPECT_TRUE(IsValidUtf8("\xC2\x80\xDF\xBF\xE0\xA0\x80\xEF\xBF\xBF\xF0\x90\x80\x80\xF4\x8F\xBF\xBF"));
  for (const char* bad : {"\x80", "\xC1\xBF", "\xE0\x9F\xBF", "\xED\xA0\x80", "\xF0\x8F\xBF\xBF", "\xF4\x90\x80\x80",
                          "\xF5\x80\x80\x80", "\xFF", "\xE2\x82"}) {
    EXPECT_FALSE(IsValidUtf8(bad)) << bad;
  }
  EXPECT_EQ(FirstInvalidUtf8("ok\xC3\xA9\xFFx"), 4u);
}

}  // namespace
}  // namespace limits
