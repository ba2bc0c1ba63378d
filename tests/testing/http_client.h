// HttpGet: a minimal blocking HTTP/1.1 GET to 127.0.0.1 for tests (status and body).
// HttpRequest: any method, with the response's headers, giving up after `timeout`.
#pragma once

#include <chrono>
#include <string>

namespace limits::testing {

struct HttpResult {
  int status = 0;  // 0: connection failed (or timed out)
  std::string headers;  // the status line and headers, as received
  std::string body;
};

HttpResult HttpGet(int port, const std::string& path);
HttpResult HttpRequest(int port, const std::string& method, const std::string& path,
                       std::chrono::milliseconds timeout = std::chrono::seconds(30));

}  // namespace limits::testing
