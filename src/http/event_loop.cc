#include "http/event_loop.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

#include "common/log.h"
#include "http/request_head.h"

namespace limits::http {
namespace {

constexpr uint64_t kListenerId = 0;
constexpr uint64_t kWakeId = 1;
constexpr uint64_t kFirstConnectionId = 2;

constexpr int kMaxEvents = 256;
// Accepted per wake-up, so a burst of connections cannot starve the reads of those open.
constexpr int kAcceptBatch = 64;
// Reads per wake-up of a closing connection, and what it may send in all before it is cut off.
constexpr int kDrainReads = 16;
constexpr size_t kMaxDrainBytes = 1 << 20;
// Out of file descriptors with nothing to close: how long the listener is left alone, rather
// than spinning on a socket that stays readable.
constexpr std::chrono::milliseconds kAcceptPause{100};

constexpr uint32_t kReadable = EPOLLIN | EPOLLRDHUP;

const char* Reason(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    default: return "";
  }
}

}  // namespace

std::string SerializeResponse(const Response& response, bool with_body) {
  std::string out;
  out.reserve(160 + response.content_type.size() + (with_body ? response.body.size() : 0));
  out.append("HTTP/1.1 ").append(std::to_string(response.status)).append(" ").append(Reason(response.status));
  out.append("\r\nContent-Type: ").append(response.content_type);
  out.append("\r\nContent-Length: ").append(std::to_string(response.body.size()));
  out.append("\r\nCache-Control: no-store\r\n");
  if (response.status == 405) out.append("Allow: GET, HEAD\r\n");  // every endpoint is read-only
  out.append("Connection: close\r\n\r\n");
  if (with_body) out.append(response.body);
  return out;
}

Result<std::unique_ptr<EventLoop>> EventLoop::Start(int listen_fd, const HttpServerOptions& options,
                                                    HttpServerStats& stats, HeadHandler on_head) {
  auto loop = std::unique_ptr<EventLoop>(new EventLoop(listen_fd, options, stats, std::move(on_head)));
  loop->epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  loop->wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (loop->epoll_fd_ < 0 || loop->wake_fd_ < 0) return Status::IOError(std::string("http: ") + strerror(errno));
  epoll_event listener{};
  listener.events = EPOLLIN;
  listener.data.u64 = kListenerId;
  epoll_event wake{};
  wake.events = EPOLLIN;
  wake.data.u64 = kWakeId;
  if (epoll_ctl(loop->epoll_fd_, EPOLL_CTL_ADD, listen_fd, &listener) != 0 ||
      epoll_ctl(loop->epoll_fd_, EPOLL_CTL_ADD, loop->wake_fd_, &wake) != 0) {
    return Status::IOError(std::string("http: epoll: ") + strerror(errno));
  }
  loop->thread_ = std::thread([l = loop.get()] { l->Run(); });
  return loop;
}

EventLoop::EventLoop(int listen_fd, const HttpServerOptions& options, HttpServerStats& stats, HeadHandler on_head)
    : options_(options),
      stats_(stats),
      on_head_(std::move(on_head)),
      listen_fd_(listen_fd),
      next_id_(kFirstConnectionId),
      pool_(TaskPool::Options{.threads = options.worker_threads,
                              .max_queued = options.max_queued,
                              .max_queued_bytes = SIZE_MAX,
                              .run_queued_on_stop = false,  // their connections are being closed
                              .name = "http-worker"}) {}

EventLoop::~EventLoop() { Stop(); }

void EventLoop::Stop() {
  std::lock_guard lock(stop_mu_);
  if (stopped_) return;
  stopped_ = true;
  stopping_.store(true);
  if (wake_fd_ >= 0) {
    const uint64_t one = 1;
    [[maybe_unused]] ssize_t n = write(wake_fd_, &one, sizeof one);
  }
  if (thread_.joinable()) thread_.join();  // the loop closed every connection on its way out
  if (listen_fd_ >= 0) close(listen_fd_);
  // Workers still running a handler finish it; what they complete finds no connection. The
  // wake-up descriptor stays open until they have.
  pool_.Stop();
  if (wake_fd_ >= 0) close(wake_fd_);
  if (epoll_fd_ >= 0) close(epoll_fd_);
  listen_fd_ = wake_fd_ = epoll_fd_ = -1;
}

void EventLoop::Run() {
  pthread_setname_np(pthread_self(), "http-loop");
  epoll_event events[kMaxEvents];
  while (!stopping_.load()) {
    const int n = epoll_wait(epoll_fd_, events, kMaxEvents, WaitMillis());
    if (n < 0 && errno != EINTR) {
      log::Error("http", "epoll_wait failed; the server stops answering").Kv("error", strerror(errno));
      break;
    }
    for (int i = 0; i < n; ++i) {
      const uint64_t id = events[i].data.u64;
      if (id == kListenerId) {
        Accept();
      } else if (id == kWakeId) {
        uint64_t count = 0;
        [[maybe_unused]] ssize_t r = read(wake_fd_, &count, sizeof count);
      } else if (auto it = conns_.find(id); it != conns_.end()) {
        OnEvent(*it->second, events[i].events);  // not found: closed earlier in this batch
      }
    }
    TakeCompletions();
    if (accept_paused_ && Clock::now() >= accept_resume_) {
      epoll_event listener{};
      listener.events = EPOLLIN;
      listener.data.u64 = kListenerId;
      epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, listen_fd_, &listener);
      accept_paused_ = false;
    }
    ExpireDeadlines();
  }
  while (!conns_.empty()) Close(*conns_.begin()->second);
}

int EventLoop::WaitMillis() const {
  Clock::time_point next = Clock::time_point::max();
  if (!deadlines_.empty()) next = deadlines_.begin()->first;
  if (accept_paused_) next = std::min(next, accept_resume_);
  if (next == Clock::time_point::max()) return -1;
  const auto wait = std::chrono::ceil<std::chrono::milliseconds>(next - Clock::now()).count();
  return static_cast<int>(std::clamp<int64_t>(wait, 0, INT_MAX));
}

void EventLoop::Accept() {
  for (int i = 0; i < kAcceptBatch; ++i) {
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        // Out of descriptors (or memory): a stale connection gives its descriptor to the
        // new one, else the listener waits a moment (the kernel keeps the backlog).
        if (MakeRoom()) continue;
        PauseAccepting();
      }
      return;  // EAGAIN: accepted everything
    }
    stats_.accepted.fetch_add(1, std::memory_order_relaxed);
    if (conns_.size() >= options_.max_connections && !MakeRoom()) {
      stats_.refused.fetch_add(1, std::memory_order_relaxed);  // counted before the client can see it
      close(fd);
      log::Debug("http", "connection refused: every connection waits for a handler")
          .Kv("max_connections", options_.max_connections);
      continue;
    }
    // Each response goes out in one write followed by the FIN: nothing to gain from Nagle.
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    auto conn = std::make_unique<Connection>();
    conn->id = next_id_++;
    conn->fd = fd;
    if (options_.tls) {
      Result<SSL*> ssl = options_.tls->NewConnection(fd);
      if (!ssl.ok()) {
        close(fd);
        log::Warn("http", "TLS connection not set up").Kv("error", ssl.status().message());
        continue;
      }
      conn->io = MakeTlsIo(fd, *ssl);
    } else {
      conn->io = MakePlainIo(fd);
    }
    conn->events = kReadable;
    epoll_event ev{};
    ev.events = kReadable;
    ev.data.u64 = conn->id;
    if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0) {
      close(fd);
      continue;
    }
    Connection& c = *conn;
    conns_.emplace(c.id, std::move(conn));
    stats_.open.fetch_add(1, std::memory_order_relaxed);
    SetDeadline(c, Clock::now() + options_.request_timeout);
  }
}

void EventLoop::PauseAccepting() {
  epoll_event none{};
  none.data.u64 = kListenerId;
  epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, listen_fd_, &none);
  accept_paused_ = true;
  const Clock::time_point now = Clock::now();
  accept_resume_ = now + kAcceptPause;
  if (now - fd_warned_ >= std::chrono::minutes(1)) {
    fd_warned_ = now;
    log::Warn("http", "out of file descriptors; not accepting for a moment")
        .Kv("error", strerror(errno))
        .Kv("open", conns_.size());
  }
}

bool EventLoop::MakeRoom() {
  // Soonest deadline first: among those still sending their request, the oldest; among
  // those being written to, the one waiting longest.
  Connection* reading = nullptr;
  Connection* writing = nullptr;
  Connection* victim = nullptr;
  for (const auto& [deadline, id] : deadlines_) {
    Connection& c = *conns_.at(id);
    if (c.state == State::kClosing) {
      victim = &c;  // answered already: only its close is left
      break;
    }
    if (c.state == State::kReading && reading == nullptr) reading = &c;
    if (c.state == State::kWriting && writing == nullptr) writing = &c;
  }
  if (victim == nullptr) victim = reading != nullptr ? reading : writing;
  if (victim == nullptr) return false;
  stats_.evicted.fetch_add(1, std::memory_order_relaxed);
  log::Debug("http", "connection closed to make room")
      .Kv("state", victim->state == State::kClosing ? "closing" : victim->state == State::kReading ? "reading" : "writing")
      .Kv("open", conns_.size());
  Close(*victim);
  return true;
}

void EventLoop::OnEvent(Connection& c, uint32_t events) {
  switch (c.state) {
    case State::kReading: return ReadHead(c);
    case State::kHandling:
      // Nothing is asked of the socket meanwhile, so this is a hang-up or an error: the
      // client is gone, and its response will find no connection.
      if (events & (EPOLLHUP | EPOLLERR)) Close(c);
      return;
    case State::kWriting: return WriteOut(c);
    case State::kClosing: return Drain(c);
  }
}

void EventLoop::ReadHead(Connection& c) {
  char buf[4096];
  for (;;) {
    // One byte past the cap tells a head too large from one that just fits.
    const size_t room = options_.max_head_bytes + 1 - c.in.size();
    const IoResult r = c.io->Read(buf, std::min(room, sizeof buf));
    switch (r.status) {
      case IoStatus::kOk: {
        const size_t searched = c.in.size();
        c.in.append(buf, r.bytes);
        const size_t end = FindHeadEnd(c.in, searched);
        if (end != 0 && end <= options_.max_head_bytes) return OnHead(c, end);
        if (c.in.size() > options_.max_head_bytes) {
          stats_.heads_too_large.fetch_add(1, std::memory_order_relaxed);
          std::string().swap(c.in);
          return Respond(c, SerializeResponse({431, "text/plain; charset=utf-8",
                                               "request head larger than " +
                                                   std::to_string(options_.max_head_bytes) + " bytes\n"},
                                              true));
        }
        break;
      }
      case IoStatus::kWantRead: return Want(c, kReadable);
      case IoStatus::kWantWrite: return Want(c, EPOLLOUT);
      case IoStatus::kEof:  // gone before its request was complete
      case IoStatus::kError: return Close(c);
    }
  }
}

void EventLoop::OnHead(Connection& c, size_t head_size) {
  stats_.requests.fetch_add(1, std::memory_order_relaxed);
  ClearDeadline(c);
  Dispatch d = on_head_(std::string_view(c.in).substr(0, head_size));
  std::string().swap(c.in);  // anything past the head (a body) is never read: it is drained
  if (!d.work) return Respond(c, std::move(d.response));
  c.state = State::kHandling;
  Want(c, 0);
  const uint64_t id = c.id;
  if (pool_.TrySubmit(0, [this, id, work = std::move(d.work)] { Complete(id, work()); })) return;
  stats_.busy.fetch_add(1, std::memory_order_relaxed);
  Respond(c, SerializeResponse({503, "text/plain; charset=utf-8",
                                "busy: " + std::to_string(options_.max_queued) + " requests wait already; try again\n"},
                               !d.head_only));
}

void EventLoop::Respond(Connection& c, std::string response) {
  c.state = State::kWriting;
  c.out = std::move(response);
  c.written = 0;
  SetDeadline(c, Clock::now() + options_.write_timeout);
  WriteOut(c);
}

void EventLoop::WriteOut(Connection& c) {
  while (c.written < c.out.size()) {
    const IoResult r = c.io->Write(c.out.data() + c.written, c.out.size() - c.written);
    switch (r.status) {
      case IoStatus::kOk: c.written += r.bytes; break;
      case IoStatus::kWantWrite: return Want(c, EPOLLOUT);
      case IoStatus::kWantRead: return Want(c, kReadable);
      case IoStatus::kEof:
      case IoStatus::kError: return Close(c);
    }
  }
  std::string().swap(c.out);
  // Closing now would reset the connection if the client sent more than its head (a body,
  // the rest of an oversized head), and a reset can destroy the response before the client
  // reads it: shut the write side and drain until the client closes (or the deadline).
  c.io->ShutdownWrite();
  c.state = State::kClosing;
  Want(c, kReadable);
}

void EventLoop::Drain(Connection& c) {
  char buf[4096];
  for (int i = 0; i < kDrainReads; ++i) {
    const IoResult r = c.io->Read(buf, sizeof buf);
    switch (r.status) {
      case IoStatus::kOk:
        c.drained += r.bytes;
        if (c.drained > kMaxDrainBytes) return Close(c);
        break;
      case IoStatus::kWantRead: return Want(c, kReadable);
      case IoStatus::kWantWrite: return Want(c, EPOLLOUT);
      case IoStatus::kEof:
      case IoStatus::kError: return Close(c);
    }
  }
}

void EventLoop::Complete(uint64_t id, std::string response) {
  bool wake = false;
  {
    std::lock_guard lock(done_mu_);
    wake = done_.empty();  // otherwise a wake-up is pending already
    done_.emplace_back(id, std::move(response));
  }
  if (wake) {
    const uint64_t one = 1;
    [[maybe_unused]] ssize_t n = write(wake_fd_, &one, sizeof one);
  }
}

void EventLoop::TakeCompletions() {
  std::vector<std::pair<uint64_t, std::string>> done;
  {
    std::lock_guard lock(done_mu_);
    done.swap(done_);
  }
  for (auto& [id, response] : done) {
    auto it = conns_.find(id);
    if (it != conns_.end() && it->second->state == State::kHandling) Respond(*it->second, std::move(response));
  }
}

void EventLoop::ExpireDeadlines() {
  const Clock::time_point now = Clock::now();
  while (!deadlines_.empty() && deadlines_.begin()->first <= now) {
    Connection& c = *conns_.at(deadlines_.begin()->second);
    if (c.state == State::kReading) {
      stats_.request_timeouts.fetch_add(1, std::memory_order_relaxed);
      log::Debug("http", "request timed out").Kv("received_bytes", c.in.size());
    } else if (c.state == State::kWriting) {
      stats_.write_timeouts.fetch_add(1, std::memory_order_relaxed);
      log::Debug("http", "response write timed out").Kv("written_bytes", c.written).Kv("bytes", c.out.size());
    }
    Close(c);
  }
}

void EventLoop::Close(Connection& c) {
  ClearDeadline(c);
  stats_.open.fetch_sub(1, std::memory_order_relaxed);
  close(c.fd);  // also leaves the epoll set
  conns_.erase(c.id);
}

void EventLoop::Want(Connection& c, uint32_t events) {
  if (c.events == events) return;
  epoll_event ev{};
  ev.events = events;
  ev.data.u64 = c.id;
  epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, c.fd, &ev);
  c.events = events;
}

void EventLoop::SetDeadline(Connection& c, Clock::time_point deadline) {
  ClearDeadline(c);
  c.deadline = deadline;
  deadlines_.emplace(deadline, c.id);
}

void EventLoop::ClearDeadline(Connection& c) {
  if (c.deadline == Clock::time_point{}) return;
  deadlines_.erase({c.deadline, c.id});
  c.deadline = Clock::time_point{};
}

}  // namespace limits::http
