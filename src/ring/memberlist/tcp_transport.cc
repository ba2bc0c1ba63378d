#include "ring/memberlist/tcp_transport.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/log.h"
#include "ring/memberlist/net_address.h"
#include "ring/memberlist/tcp_framing.h"

namespace limits::ring::memberlist {

namespace {

constexpr char kComponent[] = "memberlist";

std::string PeerName(const sockaddr_storage& ss) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (ss.ss_family == AF_INET) {
    const auto* sin = reinterpret_cast<const sockaddr_in*>(&ss);
    inet_ntop(AF_INET, &sin->sin_addr, buf, sizeof buf);
    return JoinHostPort(buf, ntohs(sin->sin_port));
  }
  const auto* sin6 = reinterpret_cast<const sockaddr_in6*>(&ss);
  inet_ntop(AF_INET6, &sin6->sin6_addr, buf, sizeof buf);
  return JoinHostPort(buf, ntohs(sin6->sin6_port));
}

}  // namespace

TcpTransport::TcpTransport(TransportOptions options, Metrics& metrics) : options_(std::move(options)), metrics_(metrics) {}

TcpTransport::~TcpTransport() { Stop(); }

Status TcpTransport::Start(Handlers handlers) {
  handlers_ = std::move(handlers);
  ASSIGN_OR_RETURN(std::string ip, IpFromString(options_.bind_addr));
  sockaddr_storage ss{};
  socklen_t len = 0;
  if (ip.size() == 4) {
    auto* sin = reinterpret_cast<sockaddr_in*>(&ss);
    sin->sin_family = AF_INET;
    sin->sin_port = htons(static_cast<uint16_t>(options_.bind_port));
    std::memcpy(&sin->sin_addr, ip.data(), 4);
    len = sizeof(sockaddr_in);
  } else {
    auto* sin6 = reinterpret_cast<sockaddr_in6*>(&ss);
    sin6->sin6_family = AF_INET6;
    sin6->sin6_port = htons(static_cast<uint16_t>(options_.bind_port));
    std::memcpy(&sin6->sin6_addr, ip.data(), 16);
    len = sizeof(sockaddr_in6);
  }
  listen_fd_ = ::socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) return Status::IOError(std::string("socket: ") + std::strerror(errno));
  const int one = 1;
  ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  const std::string where = JoinHostPort(options_.bind_addr, static_cast<uint16_t>(options_.bind_port));
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&ss), len) != 0 || ::listen(listen_fd_, 128) != 0) {
    const std::string err = std::strerror(errno);
    ::close(listen_fd_);
    listen_fd_ = -1;
    return Status::Unavailable("listen on " + where + ": " + err);
  }
  sockaddr_storage bound{};
  socklen_t blen = sizeof bound;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&bound), &blen);
  port_ = bound.ss_family == AF_INET ? ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port)
                                     : ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port);
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  accept_thread_ = std::thread([this] { AcceptLoop(); });
  for (int i = 0; i < options_.handler_threads; ++i) handler_threads_.emplace_back([this] { HandlerLoop(); });
  for (int i = 0; i < options_.writer_threads; ++i) writer_threads_.emplace_back([this] { WriterLoop(); });
  return Status::OK();
}

void TcpTransport::Stop() {
  if (stopping_) return;
  {
    std::lock_guard<std::mutex> lock(send_mu_);
    drain_deadline_ = std::chrono::steady_clock::now() + options_.packet_dial_timeout;
  }
  stopping_ = true;
  if (wake_fd_ >= 0) {
    const uint64_t one = 1;
    [[maybe_unused]] ssize_t n = ::write(wake_fd_, &one, sizeof one);
  }
  conn_cv_.notify_all();
  send_cv_.notify_all();
  if (accept_thread_.joinable()) accept_thread_.join();
  for (auto& t : handler_threads_) t.join();
  for (auto& t : writer_threads_) t.join();
  handler_threads_.clear();
  writer_threads_.clear();
  for (auto& [fd, peer] : pending_conns_) ::close(fd);
  pending_conns_.clear();
  if (listen_fd_ >= 0) ::close(listen_fd_);
  if (wake_fd_ >= 0) ::close(wake_fd_);
  listen_fd_ = wake_fd_ = -1;
}

void TcpTransport::SetAdvertiseAddr(const std::string& host_port) {
  std::lock_guard<std::mutex> lock(advertise_mu_);
  advertise_ = host_port;
}

void TcpTransport::AcceptLoop() {
  while (!stopping_) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    const int rc = ::poll(fds, 2, 1000);
    if (rc < 0 && errno != EINTR) {
      log::Error(kComponent, "poll on the gossip listener failed").Kv("error", std::strerror(errno));
      return;
    }
    if (stopping_) return;
    if (rc <= 0 || !(fds[0].revents & POLLIN)) continue;
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    const int fd = ::accept4(listen_fd_, reinterpret_cast<sockaddr*>(&ss), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) continue;  // EMFILE, ECONNABORTED...: the peer retries
    std::lock_guard<std::mutex> lock(conn_mu_);
    if (pending_conns_.size() >= options_.max_pending_connections) {
      ::close(fd);
      metrics_.Rejected("overload");
      continue;
    }
    pending_conns_.emplace_back(fd, PeerName(ss));
    conn_cv_.notify_one();
  }
}

void TcpTransport::HandlerLoop() {
  while (true) {
    std::pair<int, std::string> item;
    {
      std::unique_lock<std::mutex> lock(conn_mu_);
      conn_cv_.wait(lock, [&] { return stopping_ || !pending_conns_.empty(); });
      if (stopping_) return;
      item = std::move(pending_conns_.front());
      pending_conns_.pop_front();
    }
    try {
      Handle(item.first, item.second);
    } catch (const std::exception& e) {
      log::Error(kComponent, "gossip connection handler failed").Kv("peer", item.second).Kv("error", e.what());
    }
  }
}

void TcpTransport::Handle(int fd, const std::string& peer) {
  Connection conn(fd, peer, options_.max_message_bytes);
  conn.SetTimeout(options_.read_timeout);
  auto count_bytes = [&] { metrics_.bytes_in.Increment(static_cast<double>(conn.bytes_read())); };
  if (options_.tls) {
    if (Status s = conn.StartTls(*options_.tls, /*server=*/true); !s.ok()) {
      metrics_.Rejected("tls");
      log::Debug(kComponent, "gossip connection refused").Kv("peer", peer).Kv("error", s.message());
      count_bytes();
      return;
    }
  }
  Result<std::string_view> type = conn.Take(1);
  if (!type.ok()) {
    metrics_.Rejected(type.status().code() == StatusCode::kUnavailable ? "timeout" : "short");
    count_bytes();
    return;
  }
  const auto t = static_cast<uint8_t>((*type)[0]);
  if (t == kFrameStream) {
    metrics_.streams_in.Increment();
    handlers_.on_stream(conn);
    count_bytes();
    return;
  }
  if (t != kFramePacket) {
    metrics_.Rejected("bad_frame_type");
    log::Debug(kComponent, "unknown gossip connection type").Kv("peer", peer).Kv("type", static_cast<int>(t));
    count_bytes();
    return;
  }
  Result<std::string> rest = conn.ReadToEnd();
  count_bytes();
  if (!rest.ok()) {
    const StatusCode c = rest.status().code();
    metrics_.Rejected(c == StatusCode::kCorruption ? "oversized" : "timeout");
    log::Debug(kComponent, "gossip packet not read").Kv("peer", peer).Kv("error", rest.status().ToString());
    return;
  }
  Result<PacketFrame> frame = DecodePacketFrame(*rest);
  if (!frame.ok()) {
    metrics_.Rejected(frame.status().message().find("digest mismatch") != std::string::npos ? "digest" : "short");
    log::Debug(kComponent, "gossip packet refused").Kv("peer", peer).Kv("error", frame.status().ToString());
    return;
  }
  metrics_.packets_in.Increment();
  handlers_.on_packet(std::move(frame->payload), frame->from.empty() ? peer : frame->from);
}

bool TcpTransport::SendPacket(const std::string& addr, std::string payload) {
  if (stopping_) return false;
  std::lock_guard<std::mutex> lock(send_mu_);
  if (pending_packets_.size() >= options_.max_pending_packets) {
    metrics_.packets_dropped.Increment();
    return false;
  }
  pending_packets_.emplace_back(addr, std::move(payload));
  send_cv_.notify_one();
  return true;
}

void TcpTransport::WriterLoop() {
  while (true) {
    std::pair<std::string, std::string> item;
    {
      std::unique_lock<std::mutex> lock(send_mu_);
      send_cv_.wait(lock, [&] { return stopping_ || !pending_packets_.empty(); });
      if (pending_packets_.empty()) return;  // stopping with nothing left
      // Stopping: what was queued (our leave) still goes out, but not past the drain deadline.
      if (stopping_ && std::chrono::steady_clock::now() > drain_deadline_) {
        metrics_.packets_dropped.Increment(static_cast<double>(pending_packets_.size()));
        pending_packets_.clear();
        return;
      }
      item = std::move(pending_packets_.front());
      pending_packets_.pop_front();
    }
    Status s = WritePacket(item.first, item.second);
    if (!s.ok()) {
      metrics_.packets_dropped.Increment();
      log::Debug(kComponent, "gossip packet not sent").Kv("addr", item.first).Kv("error", s.ToString());
    }
  }
}

Status TcpTransport::WritePacket(const std::string& addr, const std::string& payload) {
  std::string from;
  {
    std::lock_guard<std::mutex> lock(advertise_mu_);
    from = advertise_;
  }
  const std::string frame = EncodePacketFrame(from, payload);
  ASSIGN_OR_RETURN(auto conn, Connection::Dial(addr, options_.packet_dial_timeout, options_.max_message_bytes));
  conn->SetTimeout(options_.packet_write_timeout);
  if (options_.tls) RETURN_IF_ERROR(conn->StartTls(*options_.tls, /*server=*/false));
  RETURN_IF_ERROR(conn->WriteAll(frame));
  if (options_.tls) {
    // Over TLS, end with close_notify and wait for the peer's close: closing with its TLS
    // data unread would reset the connection, which can cost the peer the packet.
    conn->CloseWrite();
    (void)conn->ReadToEnd();
  }
  metrics_.packets_out.Increment();
  metrics_.bytes_out.Increment(static_cast<double>(frame.size()));
  return Status::OK();
}

Result<std::unique_ptr<Connection>> TcpTransport::DialStream(const std::string& addr,
                                                             std::chrono::milliseconds timeout) {
  metrics_.streams_out.Increment();
  ASSIGN_OR_RETURN(auto conn, Connection::Dial(addr, timeout, options_.max_message_bytes));
  if (options_.tls) RETURN_IF_ERROR(conn->StartTls(*options_.tls, /*server=*/false));
  const char type = static_cast<char>(kFrameStream);
  RETURN_IF_ERROR(conn->WriteAll(std::string_view(&type, 1)));
  return conn;
}

}  // namespace limits::ring::memberlist
