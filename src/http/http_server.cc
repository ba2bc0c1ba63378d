#include "http/http_server.h"

#include <civetweb.h>

#include <mutex>

#include "common/log.h"

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

// civetweb wants "0.0.0.0:3100", "127.0.0.1:0" or "[::1]:0"; ours is the same but
// "localhost:3100" must become an address.
std::string CivetPorts(const std::string& listen) {
  const size_t colon = listen.rfind(':');
  std::string host = listen.substr(0, colon), port = listen.substr(colon + 1);
  if (host == "localhost") host = "127.0.0.1";
  if (host.empty()) return port;
  return host + ":" + port;
}

}  // namespace

Result<std::unique_ptr<HttpServer>> HttpServer::Start(const std::string& listen,
                                                      std::vector<std::pair<std::string, Handler>> routes) {
  static std::once_flag init;
  std::call_once(init, [] { mg_init_library(0); });
  auto server = std::unique_ptr<HttpServer>(new HttpServer());
  server->routes_ = std::move(routes);
  const std::string ports = CivetPorts(listen);
  const char* options[] = {"listening_ports", ports.c_str(), "num_threads", "8", "request_timeout_ms", "10000",
                           nullptr};
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

int HttpServer::Dispatch(mg_connection* conn, void* self) {
  const mg_request_info* info = mg_get_request_info(conn);
  Request request{info->request_method ? info->request_method : "",
                  info->local_uri ? info->local_uri : "",
                  info->query_string ? info->query_string : ""};
  Response response;
  try {
    response = static_cast<HttpServer*>(self)->Route(request);
  } catch (const std::exception& e) {
    response = {500, "text/plain; charset=utf-8", std::string("internal error: ") + e.what() + "\n"};
  } catch (...) {
    response = {500, "text/plain; charset=utf-8", "internal error\n"};
  }
  mg_printf(conn,
            "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nCache-Control: no-store\r\n"
            "Connection: close\r\n\r\n",
            response.status, Reason(response.status), response.content_type.c_str(), response.body.size());
  if (request.method != "HEAD") mg_write(conn, response.body.data(), response.body.size());
  return response.status;
}

}  // namespace limits::http
