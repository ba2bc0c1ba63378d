#include "common/listen_address.h"

#include <gtest/gtest.h>

namespace limits {
namespace {

// Issue 10 item 3: Loki's ":9095" (every interface) is a listen address too.
TEST(ListenAddressTest, LokiColonPortFormMeansEveryInterface) {
  Result<ListenAddress> a = ParseListenAddress(":9095");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->host, "");
  EXPECT_EQ(a->port, 9095);
  EXPECT_TRUE(a->wildcard());
  EXPECT_TRUE(ParseListenAddress("0.0.0.0:3100")->wildcard());
  EXPECT_TRUE(ParseListenAddress("[::]:3100")->wildcard());
  EXPECT_EQ(ParseListenAddress("[::1]:0")->host, "::1");
  EXPECT_EQ(ParseListenAddress("localhost:1")->host, "localhost");
  EXPECT_FALSE(ParseListenAddress("127.0.0.1:0")->wildcard());
  for (const char* bad : {"9095", ":", "h:", "h:65536", "h:-1", "::1:80", "[::1]", "[]:80", "h:80x", ""}) {
    EXPECT_FALSE(ParseListenAddress(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace limits
