// EventLoop: HttpServer's connections — one thread with epoll over non-blocking sockets, which
// accepts, reads request heads, hands each complete head to the server (HeadHandler), runs
// what the server defers on a TaskPool, and writes every response back. It owns the bounds
// of HttpServerOptions (head size, request and write deadlines, the connection cap, the worker
// queue); the server owns HTTP's meaning (routes, methods, paths). Internal to limits::http.
//
// A connection goes reading -> (handling on a worker) -> writing -> closing (the response is
// out and the write side shut; what the client still sends is drained until it closes) and is
// then closed. Reading, writing and closing run against a deadline; handling has none (a
// worker's queue is bounded instead, and a client that hangs up meanwhile is closed at once).
//
// Lifecycle: Start() takes the listening socket and serves on its own thread; Stop() closes
// the listener and every connection, drops queued work, waits for running handlers and joins
// (idempotent; the destructor calls it). Only Stop() may be called from another thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/result.h"
#include "http/connection_io.h"
#include "http/http_server.h"
#include "common/task_pool.h"

namespace limits::http {

// The bytes of a response: status line, Content-Type, Content-Length, Cache-Control: no-store,
// Allow on a 405, Connection: close, then the body unless `with_body` is false (HEAD).
std::string SerializeResponse(const Response& response, bool with_body);

// What the server makes of a complete request head.
struct Dispatch {
  std::string response;               // the response's bytes, when it is answered at once
  std::function<std::string()> work;  // else: run on a worker thread; returns the bytes
  bool head_only = false;             // a HEAD request (the loop's own 503 then has no body)
};

// Called on the loop thread with the head (request line through the empty line).
using HeadHandler = std::function<Dispatch(std::string_view head)>;

class EventLoop {
 public:
  // Serves `listen_fd` (a non-blocking listening socket, owned from here on).
  static Result<std::unique_ptr<EventLoop>> Start(int listen_fd, const HttpServerOptions& options,
                                                  HttpServerStats& stats, HeadHandler on_head);
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  void Stop();

 private:
  using Clock = std::chrono::steady_clock;
  enum class State { kReading, kHandling, kWriting, kClosing };
  struct Connection {
    uint64_t id = 0;  // never reused (file descriptors are): the epoll key and the workers' handle
    int fd = -1;
    std::unique_ptr<ConnectionIo> io;
    State state = State::kReading;
    uint32_t events = 0;              // the epoll interest registered now
    Clock::time_point deadline{};     // in deadlines_ unless handling
    std::string in;                   // the request head so far
    std::string out;                  // the response
    size_t written = 0;               // of `out`
    size_t drained = 0;               // bytes read and dropped while closing
  };

  EventLoop(int listen_fd, const HttpServerOptions& options, HttpServerStats& stats, HeadHandler on_head);
  void Run();
  void Accept();
  void OnEvent(Connection& c, uint32_t events);
  void ReadHead(Connection& c);
  void OnHead(Connection& c, size_t head_size);
  void Respond(Connection& c, std::string response);
  void WriteOut(Connection& c);
  void Drain(Connection& c);
  void TakeCompletions();
  void ExpireDeadlines();
  // Closes the stalest connection not waiting for a handler; false when there is none.
  bool MakeRoom();
  void PauseAccepting();
  void Close(Connection& c);  // destroys `c`
  void Want(Connection& c, uint32_t events);
  void SetDeadline(Connection& c, Clock::time_point deadline);
  void ClearDeadline(Connection& c);
  int WaitMillis() const;
  // From a worker thread: `id`'s response is ready.
  void Complete(uint64_t id, std::string response);

  const HttpServerOptions options_;
  HttpServerStats& stats_;
  const HeadHandler on_head_;
  int listen_fd_ = -1;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;  // an eventfd: Stop() and the workers wake the loop with it
  std::atomic<bool> stopping_{false};

  // Loop thread only.
  std::unordered_map<uint64_t, std::unique_ptr<Connection>> conns_;
  std::set<std::pair<Clock::time_point, uint64_t>> deadlines_;  // soonest first
  uint64_t next_id_;
  bool accept_paused_ = false;
  Clock::time_point accept_resume_{};
  Clock::time_point fd_warned_{};

  std::mutex done_mu_;
  std::vector<std::pair<uint64_t, std::string>> done_;  // GUARDED_BY(done_mu_)

  TaskPool pool_;
  std::thread thread_;
  std::mutex stop_mu_;
  bool stopped_ = false;  // GUARDED_BY(stop_mu_)
};

}  // namespace limits::http
