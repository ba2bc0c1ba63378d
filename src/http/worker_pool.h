// WorkerPool: the threads HttpServer runs its non-probe handlers on (/metrics, the usage and
// partitions documents), so a slow handler never holds the event loop. The FIFO is bounded:
// TryPost says at once when it is full, and the server answers 503 rather than queueing
// without end. Thread-safe; Stop() drops what is queued, waits for what runs, and joins.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace limits::http {

class WorkerPool {
 public:
  WorkerPool(size_t threads, size_t max_queued);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Queues `task`; false when max_queued tasks already wait for a busy worker, or the pool
  // is stopping.
  bool TryPost(std::function<void()> task);
  void Stop();

 private:
  void Work();

  const size_t max_queued_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;  // GUARDED_BY(mu_)
  size_t idle_ = 0;                          // GUARDED_BY(mu_): workers waiting for a task
  bool stopping_ = false;                    // GUARDED_BY(mu_)
  std::vector<std::thread> threads_;
};

}  // namespace limits::http
