// TcpTransport: dskit's TCP transport for memberlist — every packet is a fresh connection
// (tcp_framing.h), streams are connections marked as such. One accept thread hands accepted
// connections to a few handler threads (a bounded queue: past it a connection is closed and
// counted); packets to send go through a bounded queue to a few writer threads, so a slow
// peer never blocks the caller (dropped packets are retried by the protocol, as in dskit).
// With TLS every connection starts with a handshake; one that fails (a peer without TLS, a
// certificate our CA does not verify) is closed and counted (rejected{reason="tls"}).
// Lifecycle: Start() once, Stop() once (joins every thread). Send*/Dial* are thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/result.h"
#include "ring/memberlist/connection.h"
#include "ring/memberlist/metrics.h"

namespace limits::ring::memberlist {

struct TransportOptions {
  std::string bind_addr = "0.0.0.0";
  int bind_port = 7946;  // 0: the kernel picks
  std::chrono::milliseconds packet_dial_timeout{2000};
  std::chrono::milliseconds packet_write_timeout{5000};
  // How long a peer may take to send a whole packet or one stream message.
  std::chrono::milliseconds read_timeout{10000};
  // Larger packets or streams are refused (dskit sends packets up to 10 MiB).
  size_t max_message_bytes = 64u << 20;
  int handler_threads = 4;
  int writer_threads = 3;  // dskit's max-concurrent-writes
  size_t max_pending_connections = 256;
  size_t max_pending_packets = 1024;
  // dskit's memberlist tls_enabled: every connection, both ways, is TLS. Null: plain text.
  std::shared_ptr<tls::PeerTls> tls = nullptr;
};

class TcpTransport {
 public:
  struct Handlers {
    // A packet's payload and the sender's advertised address.
    std::function<void(std::string payload, const std::string& from)> on_packet;
    // A stream, positioned after its type byte; closed when the handler returns.
    std::function<void(Connection& conn)> on_stream;
  };

  TcpTransport(TransportOptions options, Metrics& metrics);
  ~TcpTransport();
  TcpTransport(const TcpTransport&) = delete;
  TcpTransport& operator=(const TcpTransport&) = delete;

  // Binds and starts the threads. kUnavailable when the address cannot be bound.
  Status Start(Handlers handlers);
  void Stop();

  int port() const { return port_; }
  // The host:port we put in every packet (what peers answer to).
  void SetAdvertiseAddr(const std::string& host_port);

  // Queues a packet to `addr` (host:port); false (and counted) when the queue is full.
  bool SendPacket(const std::string& addr, std::string payload);
  // Opens a stream (writes the stream type byte).
  Result<std::unique_ptr<Connection>> DialStream(const std::string& addr, std::chrono::milliseconds timeout);

 private:
  void AcceptLoop();
  void HandlerLoop();
  void WriterLoop();
  void Handle(int fd, const std::string& peer);
  Status WritePacket(const std::string& addr, const std::string& payload);

  const TransportOptions options_;
  Metrics& metrics_;
  Handlers handlers_;
  int listen_fd_ = -1;
  int wake_fd_ = -1;  // eventfd: ends the accept loop
  int port_ = 0;
  std::atomic<bool> stopping_{false};

  std::mutex advertise_mu_;
  std::string advertise_;  // GUARDED_BY(advertise_mu_)

  std::mutex conn_mu_;
  std::condition_variable conn_cv_;
  std::deque<std::pair<int, std::string>> pending_conns_;  // GUARDED_BY(conn_mu_)

  std::mutex send_mu_;
  std::condition_variable send_cv_;
  std::deque<std::pair<std::string, std::string>> pending_packets_;  // GUARDED_BY(send_mu_)
  std::chrono::steady_clock::time_point drain_deadline_;             // GUARDED_BY(send_mu_)

  std::thread accept_thread_;
  std::vector<std::thread> handler_threads_;
  std::vector<std::thread> writer_threads_;
};

}  // namespace limits::ring::memberlist
