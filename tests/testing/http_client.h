// HttpGet: a minimal blocking HTTP/1.1 GET to 127.0.0.1 for tests (status and body).
#pragma once

#include <string>

namespace limits::testing {

struct HttpResult {
  int status = 0;  // 0: connection failed
  std::string body;
};

HttpResult HttpGet(int port, const std::string& path);

}  // namespace limits::testing
