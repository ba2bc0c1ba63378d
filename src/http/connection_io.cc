#include "http/connection_io.h"

#include <sys/socket.h>

#include <cerrno>

namespace limits::http {
namespace {

class PlainIo final : public ConnectionIo {
 public:
  explicit PlainIo(int fd) : fd_(fd) {}

  IoResult Read(char* buf, size_t size) override {
    for (;;) {
      const ssize_t n = recv(fd_, buf, size, 0);
      if (n > 0) return {IoStatus::kOk, static_cast<size_t>(n)};
      if (n == 0) return {IoStatus::kEof, 0};
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return {IoStatus::kWantRead, 0};
      return {IoStatus::kError, 0};
    }
  }

  IoResult Write(const char* data, size_t size) override {
    for (;;) {
      // MSG_NOSIGNAL: a client gone away is an error here, not a SIGPIPE for the process.
      const ssize_t n = send(fd_, data, size, MSG_NOSIGNAL);
      if (n >= 0) return {IoStatus::kOk, static_cast<size_t>(n)};
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return {IoStatus::kWantWrite, 0};
      return {IoStatus::kError, 0};
    }
  }

  void ShutdownWrite() override { shutdown(fd_, SHUT_WR); }

 private:
  const int fd_;
};

}  // namespace

std::unique_ptr<ConnectionIo> MakePlainIo(int fd) { return std::make_unique<PlainIo>(fd); }

}  // namespace limits::http
