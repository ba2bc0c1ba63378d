#include "ring/memberlist/connection.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/err.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "ring/memberlist/net_address.h"

namespace limits::ring::memberlist {

namespace {

int RemainingMs(Connection::Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Connection::Clock::now());
  if (left.count() <= 0) return 0;
  return left.count() > 1'000'000 ? 1'000'000 : static_cast<int>(left.count());
}

// Waits for `events` on fd until the deadline; false on timeout.
Result<bool> WaitFd(int fd, short events, Connection::Clock::time_point deadline) {
  while (true) {
    pollfd p{fd, events, 0};
    const int ms = RemainingMs(deadline);
    const int rc = ::poll(&p, 1, ms);
    if (rc > 0) return true;
    if (rc == 0) return false;
    if (errno != EINTR) return Status::IOError(std::string("poll: ") + std::strerror(errno));
  }
}

}  // namespace

Connection::Connection(int fd, std::string peer, size_t max_read_bytes)
    : fd_(fd), peer_(std::move(peer)), max_read_bytes_(max_read_bytes), deadline_(Clock::now() + std::chrono::seconds(10)) {}

Connection::~Connection() {
  if (ssl_ != nullptr) {
    SSL_shutdown(ssl_);  // close_notify, once, without waiting for the peer's
    SSL_free(ssl_);
  }
  if (fd_ >= 0) ::close(fd_);
}

Result<bool> Connection::WaitTls(int ssl_error) {
  if (ssl_error == SSL_ERROR_WANT_READ) return WaitFd(fd_, POLLIN, deadline_);
  if (ssl_error == SSL_ERROR_WANT_WRITE) return WaitFd(fd_, POLLOUT, deadline_);
  return Status::Unavailable("TLS with " + peer_ + ": unexpected state " + std::to_string(ssl_error));
}

Status Connection::StartTls(tls::PeerTls& tls, bool server) {
  ASSIGN_OR_RETURN(ssl_, tls.NewConnection(fd_, server, peer_));
  while (true) {
    ERR_clear_error();
    const int rc = SSL_do_handshake(ssl_);
    if (rc == 1) return Status::OK();
    const int err = SSL_get_error(ssl_, rc);
    if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
      ASSIGN_OR_RETURN(bool ready, WaitTls(err));
      if (!ready) return Status::Unavailable("TLS handshake with " + peer_ + ": timed out");
      continue;
    }
    std::string why;
    if (const long v = SSL_get_verify_result(ssl_); v != X509_V_OK) why = X509_verify_cert_error_string(v);
    char buf[256];
    if (const unsigned long e = ERR_get_error(); e != 0 && why.empty()) why = ERR_error_string(e, buf);
    if (why.empty()) why = "the peer closed the connection (no TLS?)";
    ERR_clear_error();
    return Status::Unavailable("TLS handshake with " + peer_ + ": " + why);
  }
}

Result<std::unique_ptr<Connection>> Connection::Dial(const std::string& addr, std::chrono::milliseconds timeout,
                                                     size_t max_read_bytes) {
  ASSIGN_OR_RETURN(HostPort hp, SplitHostPort(addr));
  ASSIGN_OR_RETURN(std::string ip, IpFromString(hp.host));
  sockaddr_storage ss{};
  socklen_t len = 0;
  if (ip.size() == 4) {
    auto* sin = reinterpret_cast<sockaddr_in*>(&ss);
    sin->sin_family = AF_INET;
    sin->sin_port = htons(hp.port);
    std::memcpy(&sin->sin_addr, ip.data(), 4);
    len = sizeof(sockaddr_in);
  } else {
    auto* sin6 = reinterpret_cast<sockaddr_in6*>(&ss);
    sin6->sin6_family = AF_INET6;
    sin6->sin6_port = htons(hp.port);
    std::memcpy(&sin6->sin6_addr, ip.data(), 16);
    len = sizeof(sockaddr_in6);
  }
  const int fd = ::socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::IOError(std::string("socket: ") + std::strerror(errno));
  auto conn = std::make_unique<Connection>(fd, addr, max_read_bytes);
  conn->SetTimeout(timeout);
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0) {
    if (errno != EINPROGRESS) return Status::Unavailable("dial " + addr + ": " + std::strerror(errno));
    ASSIGN_OR_RETURN(bool ready, WaitFd(fd, POLLOUT, conn->deadline_));
    if (!ready) return Status::Unavailable("dial " + addr + ": timed out");
    int err = 0;
    socklen_t elen = sizeof err;
    ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen);
    if (err != 0) return Status::Unavailable("dial " + addr + ": " + std::strerror(err));
  }
  return conn;
}

Status Connection::WriteAll(std::string_view data) {
  while (ssl_ != nullptr && !data.empty()) {
    ERR_clear_error();
    const int n = SSL_write(ssl_, data.data(), static_cast<int>(std::min<size_t>(data.size(), 1 << 30)));
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    const int err = SSL_get_error(ssl_, n);
    if (err != SSL_ERROR_WANT_READ && err != SSL_ERROR_WANT_WRITE) {
      return Status::Unavailable("TLS write to " + peer_ + ": error " + std::to_string(err));
    }
    ASSIGN_OR_RETURN(bool ready, WaitTls(err));
    if (!ready) return Status::Unavailable("write to " + peer_ + ": timed out");
  }
  while (!data.empty()) {
    const ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      ASSIGN_OR_RETURN(bool ready, WaitFd(fd_, POLLOUT, deadline_));
      if (!ready) return Status::Unavailable("write to " + peer_ + ": timed out");
      continue;
    }
    return Status::Unavailable("write to " + peer_ + ": " + std::strerror(errno));
  }
  return Status::OK();
}

Result<size_t> Connection::ReadSome() {
  char tmp[64 * 1024];
  while (true) {
    ssize_t n = 0;
    if (ssl_ != nullptr) {
      ERR_clear_error();
      n = SSL_read(ssl_, tmp, sizeof tmp);
      if (n <= 0) {
        const int err = SSL_get_error(ssl_, static_cast<int>(n));
        // close_notify, or a peer that closed without one (Go's packets may): the end.
        if (err == SSL_ERROR_ZERO_RETURN || (err == SSL_ERROR_SYSCALL && ERR_peek_error() == 0 && errno == 0)) {
          return size_t{0};
        }
        if (err != SSL_ERROR_WANT_READ && err != SSL_ERROR_WANT_WRITE) {
          if (err == SSL_ERROR_SSL) {
            // OpenSSL 3 reports an EOF without close_notify as an error: the end too.
            const unsigned long e = ERR_peek_error();
            if (ERR_GET_REASON(e) == SSL_R_UNEXPECTED_EOF_WHILE_READING) {
              ERR_clear_error();
              return size_t{0};
            }
          }
          ERR_clear_error();
          return Status::Unavailable("TLS read from " + peer_ + ": error " + std::to_string(err));
        }
        ASSIGN_OR_RETURN(bool ready, WaitTls(err));
        if (!ready) return Status::Unavailable("read from " + peer_ + ": timed out");
        continue;
      }
    } else {
      n = ::recv(fd_, tmp, sizeof tmp, 0);
    }
    if (n > 0) {
      total_read_ += static_cast<uint64_t>(n);
      if (total_read_ > max_read_bytes_) {
        return Status::Corruption("connection from " + peer_ + " sent more than " + std::to_string(max_read_bytes_) +
                                  " bytes");
      }
      buf_.append(tmp, static_cast<size_t>(n));
      return static_cast<size_t>(n);
    }
    if (n == 0) return size_t{0};
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      ASSIGN_OR_RETURN(bool ready, WaitFd(fd_, POLLIN, deadline_));
      if (!ready) return Status::Unavailable("read from " + peer_ + ": timed out");
      continue;
    }
    return Status::Unavailable("read from " + peer_ + ": " + std::strerror(errno));
  }
}

Result<std::string_view> Connection::Take(size_t n) {
  if (n > max_read_bytes_) {
    return Status::Corruption("connection from " + peer_ + ": " + std::to_string(n) + " bytes announced");
  }
  while (buf_.size() - pos_ < n) {
    ASSIGN_OR_RETURN(size_t got, ReadSome());
    if (got == 0) return Status::Corruption("connection from " + peer_ + " closed mid-message");
  }
  taken_.assign(buf_, pos_, n);
  pos_ += n;
  if (pos_ > 64 * 1024 && pos_ * 2 > buf_.size()) {
    buf_.erase(0, pos_);
    pos_ = 0;
  }
  return std::string_view(taken_);
}

Result<std::string> Connection::ReadToEnd() {
  while (true) {
    ASSIGN_OR_RETURN(size_t got, ReadSome());
    if (got == 0) break;
  }
  std::string out = buf_.substr(pos_);
  buf_.clear();
  pos_ = 0;
  return out;
}

void Connection::CloseWrite() {
  if (ssl_ != nullptr) SSL_shutdown(ssl_);  // close_notify: the peer's TLS reads its end
  ::shutdown(fd_, SHUT_WR);
}

}  // namespace limits::ring::memberlist
