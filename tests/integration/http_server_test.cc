#include "http/http_server.h"

#include <gtest/gtest.h>

#include "testing/http_client.h"

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

}  // namespace
}  // namespace limits::http
