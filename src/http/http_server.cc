#include "http/http_server.h"

#include <civetweb.h>

#include <mutex>

#include "common/listen_address.h"
#include "common/log.h"
#include "common/utf8.h"

namespace limits::http {
namespace {

const char* Reason(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    default: return "";
  }
}

// Every endpoint is read-only.
constexpr char kAllowed[] = "GET, HEAD";

// A worker thread serves one connection at a time, and a connection that sends nothing holds
// its worker until the request timeout: enough workers that idle or slow clients cannot take
// them all from the probes, and a timeout short enough that they give them back soon.
// Keep-alive is off (every response closes), so an idle keep-alive connection holds nothing.
constexpr char kWorkerThreads[] = "64";
constexpr char kRequestTimeoutMs[] = "2000";

// civetweb wants "3100" (every interface), "127.0.0.1:0" or "[::1]:0" (IPv6 only in builds
// with it; Debian 12's has none); host names other than localhost are not resolved.
Result<std::string> CivetPorts(const std::string& listen) {
  ASSIGN_OR_RETURN(ListenAddress a, ParseListenAddress(listen));
  const std::string port = std::to_string(a.port);
  if (a.host.empty() || a.host == "0.0.0.0") return port;
  if (a.host == "localhost") return "127.0.0.1:" + port;
  if (a.host.find(':') != std::string::npos) {
    if (mg_check_feature(8) == 0) {
      return Status::InvalidArgument("http: " + listen + ": this civetweb build has no IPv6; use :" + port +
                                     " or an IPv4 address");
    }
    return "[" + a.host + "]:" + port;
  }
  return a.host + ":" + port;
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
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


Result<std::unique_ptr<HttpServer>> HttpServer::Start(const std::string& listen,
                                                      std::vector<std::pair<std::string, Handler>> routes) {
  static std::once_flag init;
  std::call_once(init, [] { mg_init_library(0); });
  auto server = std::unique_ptr<HttpServer>(new HttpServer());
  server->routes_ = std::move(routes);
  ASSIGN_OR_RETURN(const std::string ports, CivetPorts(listen));
  // decode_url=no: civetweb's decoding stops a path at an encoded NUL; DecodePath refuses it.
  const char* options[] = {"listening_ports", ports.c_str(),     "num_threads",       kWorkerThreads,
                           "request_timeout_ms", kRequestTimeoutMs, "enable_keep_alive", "no",
                           "decode_url",         "no",              nullptr};
  mg_callbacks callbacks{};
  callbacks.log_message = [](const mg_connection*, const char* message) {
    log::Warn("http", message);
    return 1;
  };
  server->ctx_ = mg_start(&callbacks, nullptr, options);
  if (server->ctx_ == nullptr) return Status::Unavailable("http: cannot listen on " + listen);
  mg_set_request_handler(server->ctx_, "/", &HttpServer::Dispatch, server.get());
  mg_server_port bound[4] = {};
  if (mg_get_server_ports(server->ctx_, 4, bound) > 0) server->port_ = bound[0].port;
  log::Info("http", "listening").Kv("address", listen).Kv("port", server->port_);
  return server;
}

HttpServer::~HttpServer() { Stop(); }

void HttpServer::Stop() {
  if (ctx_ != nullptr) {
    mg_stop(ctx_);
    ctx_ = nullptr;
  }
}

Response HttpServer::Route(const Request& request) const {
  const std::pair<std::string, Handler>* best = nullptr;
  for (const auto& route : routes_) {
    const std::string& pattern = route.first;
    const bool prefix = pattern.size() > 1 && pattern.back() == '/';
    const bool match = prefix ? request.path.rfind(pattern, 0) == 0 : request.path == pattern;
    if (match && (best == nullptr || pattern.size() > best->first.size())) best = &route;
  }
  if (best == nullptr) return {404, "text/plain; charset=utf-8", "not found: " + request.path + "\n"};
  return best->second(request);
}

Response HttpServer::Handle(const mg_request_info& info) const {
  Request request{info.request_method ? info.request_method : "", "", info.query_string ? info.query_string : ""};
  if (request.method != "GET" && request.method != "HEAD") {
    return {405, "text/plain; charset=utf-8", "method " + request.method + " not allowed; use GET or HEAD\n"};
  }
  // local_uri: dot segments removed, percent-encoding left to us (decode_url=no).
  Result<std::string> path = DecodePath(info.local_uri ? info.local_uri : "");
  if (!path.ok()) return {400, "text/plain; charset=utf-8", "bad request: " + path.status().message() + "\n"};
  request.path = std::move(*path);
  try {
    return Route(request);
  } catch (const std::exception& e) {
    return {500, "text/plain; charset=utf-8", std::string("internal error: ") + e.what() + "\n"};
  } catch (...) {
    return {500, "text/plain; charset=utf-8", "internal error\n"};
  }
}

int HttpServer::Dispatch(mg_connection* conn, void* self) {
  const mg_request_info* info = mg_get_request_info(conn);
  const Response response = static_cast<HttpServer*>(self)->Handle(*info);
  const std::string method = info->request_method ? info->request_method : "";
  mg_printf(conn,
            "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nCache-Control: no-store\r\n"
            "%sConnection: close\r\n\r\n",
            response.status, Reason(response.status), response.content_type.c_str(), response.body.size(),
            response.status == 405 ? (std::string("Allow: ") + kAllowed + "\r\n").c_str() : "");
  if (method != "HEAD") mg_write(conn, response.body.data(), response.body.size());
  return response.status;
}

}  // namespace limits::http
