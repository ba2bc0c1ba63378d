#include "http/http_server.h"

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <memory>
#include <mutex>
#include <thread>
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
  // A server that gives each connection a thread answers the probes only if one is free.
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
  // fail it, yet below any request timeout: a server short of free threads answers a probe
  // only once an idle connection times out (civetweb after 10 s), and fails here.
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

// --- issue 24 item 7: the event loop ---------------------------------------------------------

using Clock = std::chrono::steady_clock;

double MillisSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

std::chrono::milliseconds Scaled(std::chrono::milliseconds d) {
  return std::chrono::milliseconds(static_cast<int64_t>(d.count() * testing::TimeoutMultiplier()));
}

// A client socket that misbehaves on purpose: sends what it is told, when it is told, and
// reads only when asked.
class Client {
 public:
  // Connects to the loopback address of `family`; `rcvbuf` > 0 shrinks the receive buffer
  // first (a client that does not read then stalls the server's writes sooner).
  explicit Client(int port, int family = AF_INET, int rcvbuf = 0) {
    fd_ = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) return;
    if (rcvbuf > 0) setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    int rc = -1;
    if (family == AF_INET6) {
      sockaddr_in6 addr{};
      addr.sin6_family = AF_INET6;
      addr.sin6_port = htons(static_cast<uint16_t>(port));
      addr.sin6_addr = in6addr_loopback;
      rc = connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    } else {
      sockaddr_in addr{};
      addr.sin_family = AF_INET;
      addr.sin_port = htons(static_cast<uint16_t>(port));
      addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      rc = connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    }
    if (rc != 0) {
      close(fd_);
      fd_ = -1;
    }
  }
  ~Client() {
    if (fd_ >= 0) close(fd_);
  }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  bool ok() const { return fd_ >= 0; }

  bool Send(std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      bytes.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }

  struct Received {
    std::string bytes;
    bool closed = false;  // the server closed (or reset) the connection
  };
  // Reads until the server closes the connection or `timeout` (scaled) passes.
  Received ReadUntilClosed(std::chrono::milliseconds timeout) {
    Received r;
    const Clock::time_point deadline = Clock::now() + Scaled(timeout);
    char buf[65536];
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) return r;
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(left)) <= 0) continue;
      const ssize_t n = recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) {
        r.closed = true;
        return r;
      }
      r.bytes.append(buf, static_cast<size_t>(n));
    }
  }

  // True when the server has closed the connection already (no waiting, nothing read).
  bool ClosedByServer() const {
    pollfd p{fd_, POLLIN, 0};
    char c;
    return poll(&p, 1, 0) == 1 && recv(fd_, &c, 1, MSG_PEEK) <= 0;
  }

 private:
  int fd_ = -1;
};

// One whole exchange on a fresh connection: the raw response.
std::string Exchange(int port, std::string_view request) {
  Client c(port);
  if (!c.ok() || !c.Send(request)) return "";
  return c.ReadUntilClosed(std::chrono::seconds(10)).bytes;
}

int StatusOf(const std::string& response) {
  return response.rfind("HTTP/1.1 ", 0) == 0 ? std::atoi(response.c_str() + 9) : 0;
}

// Enough descriptors for the floods below (both ends of each connection live in this process).
void RaiseFileLimit() {
  rlimit r{};
  if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max) {
    r.rlim_cur = r.rlim_max;
    setrlimit(RLIMIT_NOFILE, &r);
  }
}

// A gate handlers wait at until the test opens it; counts who arrived.
class Gate {
 public:
  void Wait() {
    std::unique_lock lock(mu_);
    ++arrived_;
    cv_.wait(lock, [this] { return open_; });
  }
  void Open() {
    std::lock_guard lock(mu_);
    open_ = true;
    cv_.notify_all();
  }
  int arrived() {
    std::lock_guard lock(mu_);
    return arrived_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
  int arrived_ = 0;
};

HttpServerOptions NodeOptions() {
  HttpServerOptions o;
  o.probes = {"/live", "/ready"};  // as node.cc registers them
  return o;
}

// Issue 24 item 7: with civetweb's 64 workers each held by a half-sent request until its
// 2 s timeout, 286 such clients made /live take 4.99 s (the kubelet gives up after 1 s). Here
// 300 half-sent requests, 300 idle connections and clients trickling a byte every 100 ms
// cost the server sockets, not threads.
TEST(HttpServerTest, Issue24_ProbesAnswerUnderAFloodOfSlowAndHalfSentClients) {
  RaiseFileLimit();
  auto server = HttpServer::Start("127.0.0.1:0", ProbeRoutes(), NodeOptions());
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const int port = (*server)->port();
  std::vector<std::unique_ptr<Client>> flood;
  for (int i = 0; i < 300; ++i) {
    flood.push_back(std::make_unique<Client>(port));
    ASSERT_TRUE(flood.back()->ok());
    ASSERT_TRUE(flood.back()->Send("GET /metr"));
  }
  for (int i = 0; i < 300; ++i) {
    flood.push_back(std::make_unique<Client>(port));
    ASSERT_TRUE(flood.back()->ok());
  }
  // Load, not synchronisation: five clients sending a request head a byte every 100 ms.
  std::vector<std::jthread> tricklers;
  for (int i = 0; i < 5; ++i) {
    tricklers.emplace_back([port](std::stop_token stop) {
      Client c(port);
      const std::string head = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + std::string(10000, 'a');
      for (char byte : head) {
        if (stop.stop_requested() || !c.Send(std::string_view(&byte, 1))) return;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    });
  }
  ASSERT_TRUE(testing::WaitFor([&] { return (*server)->stats().open.load() >= 605; }, std::chrono::seconds(10)))
      << (*server)->stats().open.load() << " connections open";
  std::vector<double> ms;
  for (int i = 0; i < 10; ++i) {
    const char* path = i % 2 == 0 ? "/live" : "/ready";
    const auto started = Clock::now();
    testing::HttpResult r = testing::HttpRequest(port, "GET", path, std::chrono::seconds(10));
    ms.push_back(MillisSince(started));
    EXPECT_EQ(r.status, 200) << path << " after " << ms.back() << " ms";
  }
  const auto started = Clock::now();
  EXPECT_EQ(testing::HttpGet(port, "/metrics").status, 200);
  const double metrics_ms = MillisSince(started);
  std::sort(ms.begin(), ms.end());
  std::printf("issue 24: 300 half-sent + 300 idle + 5 trickling clients: 10 probes, median %.2f ms, slowest %.2f ms "
              "(target 100 ms); /metrics %.2f ms\n",
              ms[ms.size() / 2], ms.back(), metrics_ms);
  // The target is 100 ms (printed); the bound is the kubelet's 1 s timeout, which the old
  // server missed by 4 s. The flood is all still there: nothing was closed to answer.
  EXPECT_LT(ms.back(), 1000 * testing::TimeoutMultiplier());
  EXPECT_EQ((*server)->stats().evicted.load(), 0u);
}

// A handler that takes long (a /metrics over many tenants) holds a worker, never the loop:
// with every worker blocked and the queue full, the probes still answer at once, and what
// does not fit in the queue is answered 503 rather than left waiting.
TEST(HttpServerTest, Issue24_SlowHandlersDoNotDelayProbes) {
  Gate gate;
  auto routes = ProbeRoutes();
  routes.push_back({"/slow", [&gate](const Request&) {
                      gate.Wait();
                      return Response{200, "text/plain", "slow\n"};
                    }});
  HttpServerOptions options = NodeOptions();  // 4 workers, 64 queued
  auto server = HttpServer::Start("127.0.0.1:0", std::move(routes), options);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const int port = (*server)->port();
  // 70 requests: as many as civetweb had workers and more. The first 4 block the workers,
  // then 64 wait in the queue and 2 find it full.
  std::vector<std::unique_ptr<Client>> slow;
  for (int i = 0; i < 70; ++i) {
    if (i == 4) {
      ASSERT_TRUE(testing::WaitFor([&] { return gate.arrived() == 4; }, std::chrono::seconds(10)));
    }
    slow.push_back(std::make_unique<Client>(port));
    ASSERT_TRUE(slow.back()->ok());
    ASSERT_TRUE(slow.back()->Send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n"));
  }
  ASSERT_TRUE(testing::WaitFor([&] { return (*server)->stats().requests.load() == 70; }, std::chrono::seconds(10)));
  double worst_ms = 0;
  for (const char* path : {"/live", "/ready", "/live", "/ready"}) {
    const auto started = Clock::now();
    testing::HttpResult r = testing::HttpRequest(port, "GET", path, std::chrono::seconds(10));
    worst_ms = std::max(worst_ms, MillisSince(started));
    EXPECT_EQ(r.status, 200) << path;
  }
  std::printf("issue 24: 4 workers blocked, 64 requests queued: slowest of 4 probes %.2f ms\n", worst_ms);
  EXPECT_LT(worst_ms, 1000 * testing::TimeoutMultiplier());
  EXPECT_EQ(gate.arrived(), 4);
  // Another pooled route finds the queue full as well.
  EXPECT_EQ(testing::HttpGet(port, "/metrics").status, 503);
  EXPECT_EQ((*server)->stats().busy.load(), 3u);
  gate.Open();
  int ok = 0, busy = 0;
  for (auto& c : slow) {
    const Client::Received r = c->ReadUntilClosed(std::chrono::seconds(10));
    EXPECT_TRUE(r.closed);
    ok += StatusOf(r.bytes) == 200;
    busy += StatusOf(r.bytes) == 503;
  }
  EXPECT_EQ(ok, 68);
  EXPECT_EQ(busy, 2);
}

TEST(HttpServerTest, Issue24_AHeadOverTheCapIs431) {
  auto server = HttpServer::Start("127.0.0.1:0", ProbeRoutes(), NodeOptions());  // 16 KiB
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const int port = (*server)->port();
  const std::string big = Exchange(port, "GET /live HTTP/1.1\r\nX-Big: " + std::string(20000, 'a') + "\r\n\r\n");
  EXPECT_EQ(StatusOf(big), 431) << big.substr(0, 200);
  EXPECT_EQ((*server)->stats().heads_too_large.load(), 1u);
  // Just under the cap is fine.
  const std::string fits = Exchange(port, "GET /live HTTP/1.1\r\nX-Big: " + std::string(16000, 'a') + "\r\n\r\n");
  EXPECT_EQ(StatusOf(fits), 200) << fits.substr(0, 200);
}

TEST(HttpServerTest, Issue24_AClientSilentPastTheRequestTimeoutIsClosed) {
  HttpServerOptions options = NodeOptions();
  options.request_timeout = std::chrono::milliseconds(300);
  auto server = HttpServer::Start("127.0.0.1:0", ProbeRoutes(), options);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const int port = (*server)->port();
  const auto started = Clock::now();
  Client idle(port);
  Client half(port);
  ASSERT_TRUE(idle.ok() && half.ok());
  ASSERT_TRUE(half.Send("GET /live HTTP/1.1\r\nHost:"));
  const Client::Received a = idle.ReadUntilClosed(std::chrono::seconds(10));
  const Client::Received b = half.ReadUntilClosed(std::chrono::seconds(10));
  const double ms = MillisSince(started);
  EXPECT_TRUE(a.closed);
  EXPECT_TRUE(b.closed);
  EXPECT_EQ(a.bytes + b.bytes, "");  // closed unanswered
  EXPECT_GE(ms, 250);                // not before the deadline (a little slack for clock reads)
  EXPECT_EQ((*server)->stats().request_timeouts.load(), 2u);
  std::printf("issue 24: silent clients closed after %.0f ms (request timeout 300 ms)\n", ms);
  EXPECT_EQ(testing::HttpGet(port, "/live").status, 200);
}

// A client that asks for a large response and never reads it: the loop writes what the
// socket takes and serves everyone else meanwhile; the client is closed at write_timeout.
TEST(HttpServerTest, Issue24_AClientThatNeverReadsDoesNotBlockOthers) {
  const std::string body(8 << 20, 'x');
  auto routes = ProbeRoutes();
  routes.push_back({"/big", [&body](const Request&) { return Response{200, "text/plain", body}; }});
  HttpServerOptions options = NodeOptions();
  options.write_timeout = Scaled(std::chrono::milliseconds(1000));
  auto server = HttpServer::Start("127.0.0.1:0", std::move(routes), options);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const int port = (*server)->port();
  Client stuck(port, AF_INET, 4096);
  ASSERT_TRUE(stuck.ok());
  ASSERT_TRUE(stuck.Send("GET /big HTTP/1.1\r\nHost: x\r\n\r\n"));
  EXPECT_EQ(testing::HttpGet(port, "/live").status, 200);
  testing::HttpResult big = testing::HttpGet(port, "/big");
  EXPECT_EQ(big.status, 200);
  EXPECT_EQ(big.body.size(), body.size());
  ASSERT_TRUE(testing::WaitFor([&] { return (*server)->stats().write_timeouts.load() == 1; }, std::chrono::seconds(10)));
  const Client::Received r = stuck.ReadUntilClosed(std::chrono::seconds(10));
  EXPECT_TRUE(r.closed);
  EXPECT_LT(r.bytes.size(), body.size());
  EXPECT_TRUE(testing::WaitFor([&] { return (*server)->stats().open.load() == 0; }, std::chrono::seconds(10)));
}

// Past max_connections a new connection closes the stalest one still sending its request;
// when every connection waits for a handler there is nothing to close and the new one is
// refused (with the defaults that cannot happen: 4 + 64 handled requests against 1024).
TEST(HttpServerTest, Issue24_PastTheConnectionCapTheOldestHalfSentIsClosed) {
  HttpServerOptions options = NodeOptions();
  options.max_connections = 16;
  auto server = HttpServer::Start("127.0.0.1:0", ProbeRoutes(), options);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const int port = (*server)->port();
  std::vector<std::unique_ptr<Client>> idle;
  for (int i = 0; i < 16; ++i) {
    idle.push_back(std::make_unique<Client>(port));
    ASSERT_TRUE(idle.back()->ok());
    // One at a time, so the server's order of accepting them is the order here.
    ASSERT_TRUE(testing::WaitFor([&] { return (*server)->stats().open.load() == i + 1; }, std::chrono::seconds(10)));
  }
  EXPECT_EQ(testing::HttpGet(port, "/live").status, 200);
  EXPECT_TRUE(idle[0]->ReadUntilClosed(std::chrono::seconds(10)).closed);
  EXPECT_EQ((*server)->stats().evicted.load(), 1u);
  for (size_t i = 1; i < idle.size(); ++i) EXPECT_FALSE(idle[i]->ClosedByServer()) << i;
}

TEST(HttpServerTest, Issue24_PastTheConnectionCapWithEveryConnectionHandledNewOnesAreRefused) {
  Gate gate;
  auto routes = ProbeRoutes();
  routes.push_back({"/slow", [&gate](const Request&) {
                      gate.Wait();
                      return Response{200, "text/plain", "slow\n"};
                    }});
  HttpServerOptions options = NodeOptions();
  options.max_connections = 2;
  options.worker_threads = 1;
  options.max_queued = 1;
  auto server = HttpServer::Start("127.0.0.1:0", std::move(routes), options);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const int port = (*server)->port();
  Client first(port), second(port);
  ASSERT_TRUE(first.Send("GET /slow HTTP/1.1\r\n\r\n"));
  ASSERT_TRUE(testing::WaitFor([&] { return gate.arrived() == 1; }, std::chrono::seconds(10)));
  ASSERT_TRUE(second.Send("GET /slow HTTP/1.1\r\n\r\n"));
  ASSERT_TRUE(testing::WaitFor([&] { return (*server)->stats().requests.load() == 2; }, std::chrono::seconds(10)));
  Client third(port);
  ASSERT_TRUE(third.ok());  // the kernel accepts; the server closes it
  third.Send("GET /live HTTP/1.1\r\n\r\n");
  const Client::Received refused = third.ReadUntilClosed(std::chrono::seconds(10));
  EXPECT_TRUE(refused.closed);
  EXPECT_EQ(refused.bytes, "");
  EXPECT_EQ((*server)->stats().refused.load(), 1u);
  gate.Open();
  EXPECT_EQ(StatusOf(first.ReadUntilClosed(std::chrono::seconds(10)).bytes), 200);
  EXPECT_EQ(StatusOf(second.ReadUntilClosed(std::chrono::seconds(10)).bytes), 200);
}

TEST(HttpServerTest, Issue24_StopClosesEveryConnectionAndIsIdempotent) {
  auto server = HttpServer::Start("127.0.0.1:0", ProbeRoutes(), NodeOptions());
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const int port = (*server)->port();
  std::vector<std::unique_ptr<Client>> clients;
  for (int i = 0; i < 100; ++i) {
    clients.push_back(std::make_unique<Client>(port));
    ASSERT_TRUE(clients.back()->ok());
    if (i % 2 == 0) {
      ASSERT_TRUE(clients.back()->Send("GET /li"));
    }
  }
  ASSERT_TRUE(testing::WaitFor([&] { return (*server)->stats().open.load() == 100; }, std::chrono::seconds(10)));
  const auto started = Clock::now();
  (*server)->Stop();
  const double ms = MillisSince(started);
  EXPECT_LT(ms, 1000 * testing::TimeoutMultiplier());
  for (auto& c : clients) EXPECT_TRUE(c->ReadUntilClosed(std::chrono::seconds(10)).closed);
  EXPECT_EQ((*server)->stats().open.load(), 0);
  (*server)->Stop();
  EXPECT_EQ(testing::HttpGet(port, "/live").status, 0);
}

TEST(HttpServerTest, Issue24_Ipv6AndLocalhostListenAddresses) {
  auto v6 = HttpServer::Start("[::1]:0", ProbeRoutes(), NodeOptions());
  ASSERT_TRUE(v6.ok()) << v6.status().ToString();
  Client c((*v6)->port(), AF_INET6);
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(c.Send("GET /live HTTP/1.1\r\nHost: [::1]\r\n\r\n"));
  EXPECT_EQ(StatusOf(c.ReadUntilClosed(std::chrono::seconds(10)).bytes), 200);
  auto local = HttpServer::Start("localhost:0", ProbeRoutes(), NodeOptions());
  ASSERT_TRUE(local.ok()) << local.status().ToString();
  EXPECT_EQ(testing::HttpGet((*local)->port(), "/live").status, 200);
  EXPECT_FALSE(HttpServer::Start("127.0.0.1:0", ProbeRoutes(), HttpServerOptions{.probes = {"/nope"}}).ok());
}

TEST(HttpServerTest, Issue24_RequestForms) {
  auto server = HttpServer::Start("127.0.0.1:0", ProbeRoutes(), NodeOptions());
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const int port = (*server)->port();
  // Absolute form, HTTP/1.0, bare LFs, a body (drained, never read).
  EXPECT_EQ(StatusOf(Exchange(port, "GET http://127.0.0.1/live HTTP/1.1\r\n\r\n")), 200);
  EXPECT_EQ(StatusOf(Exchange(port, "GET /live HTTP/1.0\r\n\r\n")), 200);
  EXPECT_EQ(StatusOf(Exchange(port, "GET /live HTTP/1.1\n\n")), 200);
  const std::string with_body = Exchange(port, "GET /live HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello");
  EXPECT_EQ(StatusOf(with_body), 200);
  EXPECT_THAT(with_body, ::testing::EndsWith("\r\n\r\nlive\n"));
  EXPECT_THAT(with_body, ::testing::HasSubstr("\r\nContent-Length: 5\r\n"));
  EXPECT_THAT(with_body, ::testing::HasSubstr("\r\nCache-Control: no-store\r\n"));
  EXPECT_THAT(with_body, ::testing::HasSubstr("\r\nConnection: close\r\n"));
  // Dot segments go before routing, encoded or not; they cannot climb above the root.
  EXPECT_EQ(testing::HttpGet(port, "/usage/a/../b").body, "/usage/b");
  EXPECT_EQ(testing::HttpGet(port, "/../live").status, 200);
  EXPECT_EQ(testing::HttpGet(port, "/usage/%2e%2e/live").status, 200);
  EXPECT_EQ(testing::HttpGet(port, "/usage/..%2Flive").body, "/usage/../live");  // a tenant name
  // Malformed heads.
  EXPECT_EQ(StatusOf(Exchange(port, "HELLO\r\n\r\n")), 400);
  EXPECT_EQ(StatusOf(Exchange(port, "GET /live HTTP/2.0\r\n\r\n")), 400);
  EXPECT_EQ(StatusOf(Exchange(port, "GET /live HTTP/1.1\r\nNoColon\r\n\r\n")), 400);
  EXPECT_EQ(StatusOf(Exchange(port, "GET * HTTP/1.1\r\n\r\n")), 400);
  EXPECT_EQ(StatusOf(Exchange(port, "OPTIONS * HTTP/1.1\r\n\r\n")), 405);
  const std::string head = Exchange(port, "HEAD /nope HTTP/1.1\r\n\r\n");
  EXPECT_EQ(StatusOf(head), 404);
  EXPECT_THAT(head, ::testing::EndsWith("\r\n\r\n"));  // no body
}

}  // namespace
}  // namespace limits::http
