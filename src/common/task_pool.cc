#include "common/task_pool.h"

#include <pthread.h>

namespace limits {

TaskPool::TaskPool(Options options) : options_(std::move(options)) {
  threads_.reserve(options_.threads);
  for (size_t i = 0; i < options_.threads; ++i) threads_.emplace_back([this] { Work(); });
}

TaskPool::~TaskPool() { Stop(); }

bool TaskPool::TrySubmit(size_t bytes, std::function<void()> task) {
  {
    std::lock_guard lock(mu_);
    // Idle threads take a task each at once: only what is left over waits.
    if (stopping_ || queue_.size() >= options_.max_queued + idle_) return false;
    if (!queue_.empty() && queued_bytes_ + bytes > options_.max_queued_bytes) return false;
    queue_.push_back({bytes, std::move(task)});
    queued_bytes_ += bytes;
  }
  cv_.notify_one();
  return true;
}

void TaskPool::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    if (!options_.run_queued_on_stop) {
      queue_.clear();
      queued_bytes_ = 0;
    }
  }
  cv_.notify_all();
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
}

size_t TaskPool::queued() const {
  std::lock_guard lock(mu_);
  return queue_.size();
}

void TaskPool::Work() {
  pthread_setname_np(pthread_self(), options_.name.substr(0, 15).c_str());
  std::unique_lock lock(mu_);
  for (;;) {
    ++idle_;
    cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    --idle_;
    if (queue_.empty()) return;  // stopping, and nothing left to run
    Task task = std::move(queue_.front());
    queue_.pop_front();
    queued_bytes_ -= task.bytes;
    lock.unlock();
    task.run();
    lock.lock();
  }
}

}  // namespace limits
