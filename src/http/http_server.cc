#include "http/http_server.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/listen_address.h"
#include "common/log.h"
#include "common/utf8.h"
#include "http/event_loop.h"
#include "http/request_head.h"

namespace limits::http {
namespace {

constexpr char kText[] = "text/plain; charset=utf-8";

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The socket address of a listen address: an IPv4 or IPv6 literal, "" for every IPv4
// interface (as ":3100" always meant; "[::]:3100" takes IPv6 too), "localhost" as 127.0.0.1,
// else the first address the name resolves to.
Result<sockaddr_storage> SocketAddress(const ListenAddress& a, socklen_t* len) {
  sockaddr_storage ss{};
  auto* v4 = reinterpret_cast<sockaddr_in*>(&ss);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&ss);
  const std::string host = a.host.empty() ? "0.0.0.0" : a.host == "localhost" ? "127.0.0.1" : a.host;
  if (inet_pton(AF_INET, host.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<uint16_t>(a.port));
    *len = sizeof *v4;
    return ss;
  }
  if (inet_pton(AF_INET6, host.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<uint16_t>(a.port));
    *len = sizeof *v6;
    return ss;
  }
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(a.port);
  if (int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &found); rc != 0 || found == nullptr) {
    return Status::InvalidArgument("cannot resolve " + host + ": " + gai_strerror(rc));
  }
  std::memcpy(&ss, found->ai_addr, found->ai_addrlen);
  *len = found->ai_addrlen;
  freeaddrinfo(found);
  return ss;
}

// A non-blocking listening socket, bound.
Result<int> Listen(const std::string& listen) {
  Result<ListenAddress> a = ParseListenAddress(listen);
  if (!a.ok()) return a.status().Prefixed("http");
  socklen_t len = 0;
  Result<sockaddr_storage> addr = SocketAddress(*a, &len);
  if (!addr.ok()) return addr.status().Prefixed("http: " + listen);
  const int fd = socket(addr->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::Unavailable("http: cannot listen on " + listen + ": " + strerror(errno));
  // A restart may bind while the last run's connections sit in TIME_WAIT; a port another
  // socket listens on is still refused.
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(fd, reinterpret_cast<const sockaddr*>(&*addr), len) != 0 || ::listen(fd, SOMAXCONN) != 0) {
    const int err = errno;
    close(fd);
    return Status::Unavailable("http: cannot listen on " + listen + ": " + strerror(err));
  }
  return fd;
}

}  // namespace

Result<std::string> DecodePath(std::string_view raw) {
  std::string out;
  out.reserve(raw.size());
  for (size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] != '%') {
      out.push_back(raw[i]);
      continue;
    }
    const int hi = i + 2 < raw.size() ? HexDigit(raw[i + 1]) : -1;
    const int lo = hi >= 0 ? HexDigit(raw[i + 2]) : -1;
    if (lo < 0) return Status::InvalidArgument("invalid percent-encoding in the path");
    out.push_back(static_cast<char>(hi * 16 + lo));
    i += 2;
  }
  // A NUL would cut the path short wherever it meets a C string ("dupt%00xyz" -> "dupt").
  if (out.find('\0') != std::string::npos) return Status::InvalidArgument("the path contains a NUL byte");
  if (out.find_first_of("\r\n") != std::string::npos) return Status::InvalidArgument("the path contains a line break");
  if (!IsValidUtf8(out)) return Status::InvalidArgument("the path is not valid UTF-8");
  return out;
}

HttpServer::HttpServer() = default;

HttpServer::~HttpServer() { Stop(); }

Result<std::unique_ptr<HttpServer>> HttpServer::Start(const std::string& listen,
                                                      std::vector<std::pair<std::string, Handler>> routes,
                                                      HttpServerOptions options) {
  if (options.worker_threads == 0 || options.max_connections == 0 || options.max_head_bytes == 0) {
    return Status::InvalidArgument("http: worker_threads, max_connections and max_head_bytes must be positive");
  }
  auto server = std::unique_ptr<HttpServer>(new HttpServer());
  for (auto& [pattern, handler] : routes) server->routes_.push_back({pattern, std::move(handler), false});
  for (const std::string& probe : options.probes) {
    auto it = std::find_if(server->routes_.begin(), server->routes_.end(),
                           [&](const Route& r) { return r.pattern == probe; });
    if (it == server->routes_.end()) return Status::InvalidArgument("http: probe " + probe + " is not a route");
    it->probe = true;
  }
  ASSIGN_OR_RETURN(const int fd, Listen(listen));
  sockaddr_storage bound{};
  socklen_t len = sizeof bound;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len) == 0) {
    server->port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                                      : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  }
  HttpServer* self = server.get();
  const std::string log_component = options.log_component;
  ASSIGN_OR_RETURN(server->loop_,
                   EventLoop::Start(fd, options, server->stats_, [self](std::string_view head) { return self->OnHead(head); }));
  log::Info(log_component, "listening").Kv("address", listen).Kv("port", server->port_);
  return server;
}

void HttpServer::Stop() {
  if (loop_) loop_->Stop();
}

const HttpServer::Route* HttpServer::Find(const std::string& path) const {
  const Route* best = nullptr;
  for (const Route& route : routes_) {
    const std::string& pattern = route.pattern;
    const bool prefix = pattern.size() > 1 && pattern.back() == '/';
    const bool match = prefix ? path.rfind(pattern, 0) == 0 : path == pattern;
    if (match && (best == nullptr || pattern.size() > best->pattern.size())) best = &route;
  }
  return best;
}

namespace {

Response Invoke(const Handler& handler, const Request& request) {
  try {
    return handler(request);
  } catch (const std::exception& e) {
    log::Warn("http", "handler failed").Kv("path", request.path).Kv("error", e.what());
    return {500, kText, std::string("internal error: ") + e.what() + "\n"};
  } catch (...) {
    log::Warn("http", "handler failed").Kv("path", request.path);
    return {500, kText, "internal error\n"};
  }
}

Dispatch Now(const Response& response, bool head_only) {
  return {SerializeResponse(response, !head_only), nullptr, head_only};
}

}  // namespace

Dispatch HttpServer::OnHead(std::string_view head) {
  Result<RequestLine> line = ParseRequestHead(head);
  if (!line.ok()) {
    stats_.bad_requests.fetch_add(1, std::memory_order_relaxed);
    return Now({400, kText, "bad request: " + line.status().message() + "\n"}, false);
  }
  const bool head_only = line->method == "HEAD";
  if (line->method != "GET" && !head_only) {
    return Now({405, kText, "method " + line->method + " not allowed; use GET or HEAD\n"}, false);
  }
  Result<Target> target = SplitTarget(line->target);
  Result<std::string> path = target.ok() ? DecodePath(target->path) : Result<std::string>(target.status());
  if (!path.ok()) {
    stats_.bad_requests.fetch_add(1, std::memory_order_relaxed);
    return Now({400, kText, "bad request: " + path.status().message() + "\n"}, head_only);
  }
  Request request{std::move(line->method), std::move(*path), std::move(target->query)};
  const Route* route = Find(request.path);
  if (route == nullptr) return Now({404, kText, "not found: " + request.path + "\n"}, head_only);
  if (route->probe) return Now(Invoke(route->handler, request), head_only);
  return {{},
          [route, request = std::move(request), head_only]() -> std::string {
            try {
              return SerializeResponse(Invoke(route->handler, request), !head_only);
            } catch (...) {  // out of memory for the response: nothing may escape a worker
              return SerializeResponse({500, kText, "internal error\n"}, !head_only);
            }
          },
          head_only};
}

}  // namespace limits::http
