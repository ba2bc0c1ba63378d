// Connection: one TCP connection of the gossip transport, with a deadline for every read and
// write (a peer that stops talking never holds a thread), a cap on the bytes it may send us,
// and a buffered reader usable as a msgpack ByteSource; over TLS after StartTls. Owns the
// socket. Not thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "common/result.h"
#include "ring/memberlist/msgpack.h"
#include "tls/peer_tls.h"

namespace limits::ring::memberlist {

class Connection : public ByteSource {
 public:
  using Clock = std::chrono::steady_clock;

  Connection(int fd, std::string peer, size_t max_read_bytes);
  ~Connection() override;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Connects to host:port (numeric host) within `timeout`.
  static Result<std::unique_ptr<Connection>> Dial(const std::string& addr, std::chrono::milliseconds timeout,
                                                  size_t max_read_bytes);

  void SetDeadline(Clock::time_point deadline) { deadline_ = deadline; }
  void SetTimeout(std::chrono::milliseconds t) { deadline_ = Clock::now() + t; }

  // The TLS handshake, as the accepting or the dialling side, within the deadline; every read
  // and write after it goes through TLS. kUnavailable when it fails (a peer without TLS, a
  // certificate that does not verify).
  Status StartTls(tls::PeerTls& tls, bool server);

  Status WriteAll(std::string_view data);
  // ByteSource: exactly n bytes (kCorruption if the peer closes first, kUnavailable on the
  // deadline or a socket error, kCorruption past max_read_bytes).
  Result<std::string_view> Take(size_t n) override;
  // Everything until the peer closes; kCorruption past max_read_bytes.
  Result<std::string> ReadToEnd();
  // Half-closes our side (the peer reads EOF).
  void CloseWrite();

  const std::string& peer() const { return peer_; }
  uint64_t bytes_read() const { return total_read_; }

 private:
  // Reads what is available (waiting until the deadline); 0 at EOF.
  Result<size_t> ReadSome();

  // Waits until the socket can do what the last TLS call asked for; false on the deadline.
  Result<bool> WaitTls(int ssl_error);

  int fd_;
  SSL* ssl_ = nullptr;
  std::string peer_;
  size_t max_read_bytes_;
  Clock::time_point deadline_;
  std::string buf_;
  size_t pos_ = 0;
  uint64_t total_read_ = 0;
  std::string taken_;  // backs the view Take() returns
};

}  // namespace limits::ring::memberlist
