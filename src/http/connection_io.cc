#include "http/connection_io.h"

#include <openssl/err.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>

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

class TlsIo final : public ConnectionIo {
 public:
  TlsIo(int fd, SSL* ssl) : fd_(fd), ssl_(ssl) {}
  ~TlsIo() override { SSL_free(ssl_); }

  IoResult Read(char* buf, size_t size) override {
    ERR_clear_error();
    const int n = SSL_read(ssl_, buf, static_cast<int>(std::min<size_t>(size, INT32_MAX)));
    if (n > 0) return {IoStatus::kOk, static_cast<size_t>(n)};
    switch (SSL_get_error(ssl_, n)) {
      case SSL_ERROR_WANT_READ: return {IoStatus::kWantRead, 0};
      case SSL_ERROR_WANT_WRITE: return {IoStatus::kWantWrite, 0};
      case SSL_ERROR_ZERO_RETURN: return {IoStatus::kEof, 0};  // close_notify
      default:
        // A failed handshake (no TLS, a refused certificate) or an EOF without close_notify.
        ERR_clear_error();
        return {IoStatus::kError, 0};
    }
  }

  IoResult Write(const char* data, size_t size) override {
    if (size == 0) return {IoStatus::kOk, 0};
    ERR_clear_error();
    const int n = SSL_write(ssl_, data, static_cast<int>(std::min<size_t>(size, INT32_MAX)));
    if (n > 0) return {IoStatus::kOk, static_cast<size_t>(n)};
    switch (SSL_get_error(ssl_, n)) {
      case SSL_ERROR_WANT_READ: return {IoStatus::kWantRead, 0};
      case SSL_ERROR_WANT_WRITE: return {IoStatus::kWantWrite, 0};
      default: ERR_clear_error(); return {IoStatus::kError, 0};
    }
  }

  void ShutdownWrite() override {
    SSL_shutdown(ssl_);  // close_notify; the client's is read (or not) while draining
    shutdown(fd_, SHUT_WR);
  }

 private:
  const int fd_;
  SSL* const ssl_;
};

}  // namespace

std::unique_ptr<ConnectionIo> MakePlainIo(int fd) { return std::make_unique<PlainIo>(fd); }
std::unique_ptr<ConnectionIo> MakeTlsIo(int fd, SSL* ssl) { return std::make_unique<TlsIo>(fd, ssl); }

}  // namespace limits::http
