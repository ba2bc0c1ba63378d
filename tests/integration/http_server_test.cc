#include "http/http_server.h"

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <vector>

#include "testing/http_client.h"
#include "testing/wait_for.h"

namespace limits::http {
namespace {

TEST(HttpServerTest, RoutesExactAndPrefixPathsOnAKernelChosenPort) {
  auto server = HttpServer::Start(
      "127.0.0.1:0",
      {{"/ready", [](const Request&) { return Response{503, "text/plain", "not yet\n"}; }},
       {"/usage/", [](const Request& r) { return Response{200, "application/json", "{\"path\":\"" + r.path + "\"}"}; }},
       {"/boom", [](const Request&) -> Response { throw std::runtime_error("bad"); }}});
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const int port = (*server)->port();
  ASSERT_GT(port, 0);
  testing::HttpResult r = testing::HttpGet(port, "/ready");
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(r.body, "not yet\n");
  r = testing::HttpGet(port, "/usage/tenant-a?x=1");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "{\"path\":\"/usage/tenant-a\"}");
  EXPECT_EQ(testing::HttpGet(port, "/readyz").status, 404);
  r = testing::HttpGet(port, "/boom");
  EXPECT_EQ(r.status, 500);
  EXPECT_NE(r.body.find("bad"), std::string::npos);
  (*server)->Stop();
  EXPECT_EQ(testing::HttpGet(port, "/ready").status, 0);  // closed
}

TEST(HttpServerTest, AnAddressInUseIsAnError) {
  auto first = HttpServer::Start("127.0.0.1:0", {});
  ASSERT_TRUE(first.ok());
  auto second = HttpServer::Start("127.0.0.1:" + std::to_string((*first)->port()), {});
  EXPECT_FALSE(second.ok());
}

// The node's probe and scrape routes, as node.cc registers them.
std::vector<std::pair<std::string, Handler>> ProbeRoutes() {
  return {{"/ready", [](const Request&) { return Response{200, "text/plain", "ready\n"}; }},
          {"/live", [](const Request&) { return Response{200, "text/plain", "live\n"}; }},
          {"/metrics", [](const Request&) { return Response{200, "text/plain", "# metrics\n"}; }},
          {"/usage/", [](const Request& r) { return Response{200, "text/plain", r.path}; }}};
}

// A TCP connection that sends nothing: what a stuck client or a port scanner leaves open.
int IdleConnection(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd >= 0 && connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) return fd;
  if (fd >= 0) close(fd);
  return -1;
}

// Issue 8 item 18: civetweb's 8 workers each sat on an idle connection for the 10 s request
// timeout, so 8 idle sockets stalled /live for 10 s (and failed a kubelet probe).
TEST(HttpServerTest, Item18_ProbesAnswerWithFiftyIdleConnectionsOpen) {
  auto server = HttpServer::Start("127.0.0.1:0", ProbeRoutes());
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const int port = (*server)->port();
  std::vector<int> idle;
  for (int i = 0; i < 50; ++i) {
    const int fd = IdleConnection(port);
    ASSERT_GE(fd, 0);
    idle.push_back(fd);
  }
  // The probes queue behind the idle connections in the listen backlog: they are answered
  // only if a worker is free for them.
  double worst_ms = 0;
  for (const char* path : {"/live", "/ready", "/live", "/metrics", "/live"}) {
    const auto started = std::chrono::steady_clock::now();
    testing::HttpResult r = testing::HttpRequest(port, "GET", path, std::chrono::seconds(5));
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    worst_ms = std::max(worst_ms, ms);
    EXPECT_EQ(r.status, 200) << path << " after " << ms << " ms";
  }
  std::printf("item 18: 50 idle connections open, slowest of 5 probes answered in %.2f ms\n", worst_ms);
  // The target is 100 ms (printed above); the bound is looser so a loaded machine does not
  // fail it, yet below the 2 s request timeout: a server short of free workers answers a
  // probe only once an idle connection times out (the old one after 10 s), and fails here.
  EXPECT_LT(worst_ms, 1000 * testing::TimeoutMultiplier());
  for (int fd : idle) close(fd);
}

// Issue 8 item 24: /ready, /metrics and /live answered 200 to POST, DELETE, ...
TEST(HttpServerTest, Item24_MethodsOtherThanGetAndHeadAre405) {
  auto server = HttpServer::Start("127.0.0.1:0", ProbeRoutes());
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const int port = (*server)->port();
  for (const char* path : {"/ready", "/metrics", "/live", "/usage/t"}) {
    for (const char* method : {"POST", "PUT", "DELETE", "PATCH", "OPTIONS"}) {
      testing::HttpResult r = testing::HttpRequest(port, method, path);
      EXPECT_EQ(r.status, 405) << method << " " << path;
      EXPECT_THAT(r.headers, ::testing::HasSubstr("\r\nAllow: GET, HEAD")) << method << " " << path;
    }
    EXPECT_EQ(testing::HttpRequest(port, "GET", path).status, 200) << path;
    testing::HttpResult head = testing::HttpRequest(port, "HEAD", path);
    EXPECT_EQ(head.status, 200) << path;
    EXPECT_EQ(head.body, "") << path;
  }
}

// Issue 8 item 13: civetweb decoded "%00" into the path, which then ended there: a request
// for "dupt%00xyz" was answered for "dupt".
TEST(HttpServerTest, Item13_PathsAreDecodedAndANulOrInvalidUtf8Is400) {
  auto server = HttpServer::Start("127.0.0.1:0", ProbeRoutes());
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const int port = (*server)->port();
  testing::HttpResult r = testing::HttpGet(port, "/usage/dupt%00xyz");
  EXPECT_EQ(r.status, 400);
  EXPECT_THAT(r.body, ::testing::HasSubstr("NUL"));
  EXPECT_EQ(testing::HttpGet(port, "/usage/t%C3%A9n%C3%A4nt").body, "/usage/t\xC3\xA9n\xC3\xA4nt");
  EXPECT_EQ(testing::HttpGet(port, "/usage/a%20b+c").body, "/usage/a b+c");
  EXPECT_EQ(testing::HttpGet(port, "/usage/%FF").status, 400);
  EXPECT_EQ(testing::HttpGet(port, "/usage/%0d%0a").status, 400);
  EXPECT_EQ(testing::HttpGet(port, "/usage/%zz").status, 400);
  EXPECT_EQ(testing::HttpGet(port, "/usage/%4").status, 400);
  EXPECT_EQ(DecodePath("/a%2Fb").value(), "/a/b");
}

// Issue 10 item 3: ":port" (Loki's form) listens on every interface.
TEST(HttpServerTest, LokiColonPortListenAddress) {
  auto server = HttpServer::Start(":0", ProbeRoutes());
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  EXPECT_EQ(testing::HttpGet((*server)->port(), "/live").status, 200);
  EXPECT_FALSE(HttpServer::Start("nonsense", ProbeRoutes()).ok());
}

}  // namespace
}  // namespace limits::http
