// HandlerPool: the threads IngestLimits calls run on, and the bounded FIFO they wait in.
// gRPC's callback API hands each call over on one of its own few threads, which must not
// block; our handlers may wait (a partition's mutex while the consumer applies a batch to it,
// a tenant's admission stripe), so they run here instead. A call that
// finds the queue full (max_queued calls, or max_queued_bytes of requests) is refused at
// once: the caller answers RESOURCE_EXHAUSTED. Thread-safe; Stop() runs what is queued, then
// joins (call it after the gRPC server has shut down).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace limits::rpc {

class HandlerPool {
 public:
  struct Options {
    size_t threads = 32;
    size_t max_queued = 4096;             // calls waiting for a thread
    size_t max_queued_bytes = 256 << 20;  // their requests' bytes
  };

  explicit HandlerPool(Options options);
  ~HandlerPool();
  HandlerPool(const HandlerPool&) = delete;
  HandlerPool& operator=(const HandlerPool&) = delete;

  // Queues `task` (whose request holds `bytes`); false when the queue is full or stopped.
  bool TrySubmit(size_t bytes, std::function<void()> task);
  void Stop();

  size_t queued() const;

 private:
  struct Task {
    size_t bytes;
    std::function<void()> run;
  };
  void Work();

  const Options options_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Task> queue_;    // GUARDED_BY(mu_)
  size_t queued_bytes_ = 0;   // GUARDED_BY(mu_)
  bool stopping_ = false;     // GUARDED_BY(mu_)
  std::vector<std::thread> threads_;
};

}  // namespace limits::rpc
