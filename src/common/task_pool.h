// TaskPool: threads of our own and the bounded FIFO their tasks wait in, for work that must
// not run where it arrives — gRPC's callback threads must not block (IngestLimits handlers
// may wait for a partition's mutex), the HTTP event loop must not run a slow handler. A task
// that finds the queue full (max_queued tasks, or max_queued_bytes of them) is refused at
// once, so the caller answers "busy" instead of queueing without end.
// Thread-safe. Stop() either runs what is queued (requests already accepted) or drops it
// (their connections are going), then joins.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace limits {

class TaskPool {
 public:
  struct Options {
    size_t threads = 32;
    size_t max_queued = 4096;             // tasks waiting for a thread
    size_t max_queued_bytes = 256 << 20;  // the bytes they hold (what the caller says each holds)
    bool run_queued_on_stop = true;       // false: Stop() drops what waits
    std::string name = "pool";            // the threads' name (at most 15 bytes show)
  };

  explicit TaskPool(Options options);
  ~TaskPool();
  TaskPool(const TaskPool&) = delete;
  TaskPool& operator=(const TaskPool&) = delete;

  // Queues `task` (holding `bytes`); false when the queue is full or the pool stopped. A task
  // above the byte budget still gets in when nothing else waits.
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
  std::deque<Task> queue_;   // GUARDED_BY(mu_)
  size_t queued_bytes_ = 0;  // GUARDED_BY(mu_)
  bool stopping_ = false;    // GUARDED_BY(mu_)
  size_t idle_ = 0;          // GUARDED_BY(mu_): threads waiting for a task
  std::vector<std::thread> threads_;
};

}  // namespace limits
