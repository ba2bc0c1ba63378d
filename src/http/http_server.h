// HttpServer: the node's one HTTP/1.1 server, for every endpoint (/live, /ready, /metrics, the
// usage and partitions documents). One event-loop thread (epoll, non-blocking sockets) accepts
// connections and reads their requests, so a slow or silent client costs a socket and a small
// buffer, never a thread: each must send its whole request head within request_timeout, at
// most max_head_bytes of it (else 431), and at most max_connections are open (past it the
// stalest connection that is not being answered is closed to make room). Probe routes are
// answered on the loop itself as soon as their request is complete; every other route runs on
// a small worker pool with a bounded queue (full: 503), so a slow /metrics never delays a
// probe. Responses are written back by the loop without blocking, within write_timeout.
//
// Routes are matched by exact path, or by prefix when registered with a trailing "/" (the
// longest match wins). Every endpoint is read-only: a method other than GET or HEAD is 405
// (Allow: GET, HEAD) before any handler. The path reaches handlers with dot segments removed
// and percent-decoded; one with an encoded NUL, a line break or invalid UTF-8 is 400. No
// keep-alive: every response closes its connection. A request body is never read (it is
// drained while the connection closes). A handler that throws answers 500.
//
// Lifecycle: Start() binds and serves; Stop() (idempotent, also the destructor's) closes the
// listener and every connection, waits for running handlers and joins the threads.
// Thread-safety: handlers of non-probe routes run concurrently on the worker threads; probe
// handlers run on the loop thread and must not block. stats() may be read from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"
#include "tls/listener_tls.h"

namespace limits::http {

class EventLoop;
struct Dispatch;

struct Request {
  std::string method;
  std::string path;   // decoded, without the query
  std::string query;  // raw, without "?"
};

struct Response {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

using Handler = std::function<Response(const Request&)>;

// A raw request path, percent-decoded; InvalidArgument for a bad escape, a NUL or line break,
// or bytes that are not UTF-8.
Result<std::string> DecodePath(std::string_view raw);

struct HttpServerOptions {
  // Route patterns, as registered, whose handlers run on the event-loop thread: cheap,
  // memory-only handlers that never block (Kubernetes' probes: /live, /ready). They are
  // answered however busy the worker pool is.
  std::vector<std::string> probes;
  // The request line and headers; a longer head is answered 431 and closed.
  size_t max_head_bytes = 16 * 1024;
  // From accept to the end of the request head; a client slower than this is closed unanswered.
  std::chrono::milliseconds request_timeout{5000};
  // From the response being ready to the connection's close: writing it to a client that
  // does not read, and draining what the client still sends.
  std::chrono::milliseconds write_timeout{10000};
  // Open connections. A new one past it closes the stalest connection not being answered
  // (one already answered and closing, else the oldest still sending its request, else the
  // oldest being written to); when every connection waits for a handler, the new one is closed.
  size_t max_connections = 1024;
  // Threads running the non-probe handlers, and requests that may wait for one (past it: 503).
  size_t worker_threads = 4;
  size_t max_queued = 64;
  // TLS on every connection (the handshake inside request_timeout); null: plain text.
  std::shared_ptr<tls::ListenerTls> tls = nullptr;
  // The component of the server's "listening" log line: tells a node's listeners apart.
  std::string log_component = "http";
};

// What the server counted, for the node to expose; relaxed atomics, read from any thread.
struct HttpServerStats {
  std::atomic<uint64_t> accepted{0};
  std::atomic<int64_t> open{0};                // connections open now
  std::atomic<uint64_t> requests{0};           // complete request heads
  std::atomic<uint64_t> request_timeouts{0};   // closed: no complete head within request_timeout
  std::atomic<uint64_t> write_timeouts{0};     // closed: response not taken within write_timeout
  std::atomic<uint64_t> heads_too_large{0};    // answered 431
  std::atomic<uint64_t> bad_requests{0};       // answered 400 (malformed head or path)
  std::atomic<uint64_t> busy{0};               // answered 503: the worker queue was full
  std::atomic<uint64_t> evicted{0};            // closed to make room for a new connection
  std::atomic<uint64_t> refused{0};            // new connections closed at the cap
};

class HttpServer {
 public:
  // `listen` is host:port as in the config ("0.0.0.0:3100", ":3100", "127.0.0.1:0",
  // "localhost:3100", "[::1]:0"); port 0 lets the kernel choose (see port()).
  static Result<std::unique_ptr<HttpServer>> Start(const std::string& listen,
                                                   std::vector<std::pair<std::string, Handler>> routes,
                                                   HttpServerOptions options = {});
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  void Stop();

  int port() const { return port_; }
  const HttpServerStats& stats() const { return stats_; }

 private:
  struct Route {
    std::string pattern;
    Handler handler;
    bool probe = false;
  };

  HttpServer();
  // On the loop thread: a complete request head's response, or the work to produce it.
  Dispatch OnHead(std::string_view head);
  // The route for a decoded path, or nullptr.
  const Route* Find(const std::string& path) const;

  std::vector<Route> routes_;
  HttpServerStats stats_;
  int port_ = 0;
  std::unique_ptr<EventLoop> loop_;
};

}  // namespace limits::http
