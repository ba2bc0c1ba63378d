#include "testing/http_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstdlib>

namespace limits::testing {

HttpResult HttpGet(int port, const std::string& path) { return HttpRequest(port, "GET", path); }

HttpResult HttpRequest(int port, const std::string& method, const std::string& path, std::chrono::milliseconds timeout) {
  HttpResult result;
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return result;
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(timeout.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>(timeout.count() % 1000 * 1000);
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return result;
  }
  const std::string request = method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n"
                              "Connection: close\r\n\r\n";
  if (write(fd, request.data(), request.size()) != static_cast<ssize_t>(request.size())) {
    close(fd);
    return result;
  }
  std::string response;
  char buf[8192];
  ssize_t n = 0;
  while ((n = read(fd, buf, sizeof buf)) > 0) response.append(buf, static_cast<size_t>(n));
  close(fd);
  if (n < 0) return result;  // timed out
  const size_t space = response.find(' ');
  const size_t body = response.find("\r\n\r\n");
  if (space == std::string::npos || body == std::string::npos) return result;
  result.status = std::atoi(response.c_str() + space + 1);
  result.headers = response.substr(0, body);
  result.body = response.substr(body + 4);
  return result;
}

}  // namespace limits::testing
