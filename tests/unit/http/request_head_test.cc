#include "http/request_head.h"

#include <gtest/gtest.h>

#include <string>

namespace limits::http {
namespace {

TEST(RequestHeadTest, FindsTheEndOfAHeadAcrossCalls) {
  EXPECT_EQ(FindHeadEnd("GET / HTTP/1.1\r\nHost: a\r\n\r\nbody"), 27u);
  EXPECT_EQ(FindHeadEnd("GET / HTTP/1.1\nHost: a\n\nbody"), 24u);  // bare LFs
  EXPECT_EQ(FindHeadEnd("GET / HTTP/1.1\r\nHost: a\r\n"), 0u);
  // A terminator split between two reads is found by the second, scanning only the new bytes.
  const std::string head = "GET / HTTP/1.1\r\n\r\n";
  for (size_t split = 0; split < head.size(); ++split) {
    EXPECT_EQ(FindHeadEnd(head.substr(0, split)), 0u) << split;
    EXPECT_EQ(FindHeadEnd(head, split), head.size()) << split;
  }
}

TEST(RequestHeadTest, ParsesTheRequestLineAndChecksHeaders) {
  Result<RequestLine> r = ParseRequestHead("GET /live?x=1 HTTP/1.1\r\nHost: a\r\nX-Empty:\r\n\r\n");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->method, "GET");
  EXPECT_EQ(r->target, "/live?x=1");
  EXPECT_TRUE(ParseRequestHead("HEAD / HTTP/1.0\n\n").ok());
  EXPECT_TRUE(ParseRequestHead("BREW / HTTP/1.1\r\n\r\n").ok());  // the method is the server's call
  for (const char* bad : {"GET /\r\n\r\n", "GET  / HTTP/1.1\r\n\r\n", "GET / HTTP/1.1 x\r\n\r\n",
                          "GET / HTTP/2.0\r\n\r\n", "GET / http/1.1\r\n\r\n", "G@T / HTTP/1.1\r\n\r\n",
                          "GET /a\x01 HTTP/1.1\r\n\r\n", "GET / HTTP/1.1\r\nNoColon\r\n\r\n",
                          "GET / HTTP/1.1\r\nHost : a\r\n\r\n", "GET / HTTP/1.1\r\nA: b\r\n c\r\n\r\n",
                          "GET / HTTP/1.1\r\nA: b\rc\r\n\r\n", "\r\n\r\n"}) {
    EXPECT_FALSE(ParseRequestHead(bad).ok()) << bad;
  }
  EXPECT_FALSE(ParseRequestHead(std::string("GET / HTTP/1.1\r\nA: \0\r\n\r\n", 24)).ok());
}

TEST(RequestHeadTest, SplitsOriginAndAbsoluteFormTargets) {
  Result<Target> t = SplitTarget("/usage/a%20b?x=1&y=%zz");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->path, "/usage/a%20b");
  EXPECT_EQ(t->query, "x=1&y=%zz");
  t = SplitTarget("http://127.0.0.1:3100/live?q");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->path, "/live");
  EXPECT_EQ(t->query, "q");
  EXPECT_EQ(SplitTarget("HTTPS://host").value().path, "/");
  EXPECT_EQ(SplitTarget("http://host?x").value().query, "x");
  EXPECT_EQ(SplitTarget("/live#frag").value().path, "/live");
  for (const char* bad : {"*", "host:443", "live", "ftp://host/live"}) EXPECT_FALSE(SplitTarget(bad).ok()) << bad;
}

TEST(RequestHeadTest, RemovesDotSegmentsEncodedOrNot) {
  EXPECT_EQ(RemoveDotSegments("/a/b/c/./../../g"), "/a/g");
  EXPECT_EQ(RemoveDotSegments("/../live"), "/live");
  EXPECT_EQ(RemoveDotSegments("/../../.."), "/");
  EXPECT_EQ(RemoveDotSegments("/usage/a/.."), "/usage/");
  EXPECT_EQ(RemoveDotSegments("/usage/."), "/usage/");
  EXPECT_EQ(RemoveDotSegments("/usage/%2e%2E/live"), "/live");
  EXPECT_EQ(RemoveDotSegments("/usage/..a/.b"), "/usage/..a/.b");
  EXPECT_EQ(RemoveDotSegments("//x"), "//x");
  EXPECT_EQ(RemoveDotSegments("/"), "/");
}

}  // namespace
}  // namespace limits::http
