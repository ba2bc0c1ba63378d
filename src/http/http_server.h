// HttpServer: one HTTP/1.1 server (civetweb) for every endpoint of the node. Routes are
// matched by exact path, or by prefix when registered with a trailing "/". Every endpoint is
// read-only: a method other than GET or HEAD is 405 (Allow: GET, HEAD) before any handler.
// The path reaches handlers percent-decoded; one with an encoded NUL, a line break or invalid
// UTF-8 is 400. Handlers run on the server's 64 worker threads, one connection each (no
// keep-alive; a client silent for 2 s is dropped); one that throws answers 500.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

struct mg_context;
struct mg_connection;
struct mg_request_info;

namespace limits::http {

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

class HttpServer {
 public:
  // `listen` is host:port as in the config ("0.0.0.0:3100", ":3100", "127.0.0.1:0").
  static Result<std::unique_ptr<HttpServer>> Start(const std::string& listen,
                                                   std::vector<std::pair<std::string, Handler>> routes);
  ~HttpServer();
  void Stop();

  int port() const { return port_; }

 private:
  HttpServer() = default;
  static int Dispatch(mg_connection* conn, void* self);
  Response Handle(const mg_request_info& info) const;
  Response Route(const Request& request) const;

  mg_context* ctx_ = nullptr;
  int port_ = 0;
  std::vector<std::pair<std::string, Handler>> routes_;
};

}  // namespace limits::http
