#include "rpc/handler_pool.h"

namespace limits::rpc {

HandlerPool::HandlerPool(Options options) : options_(options) {
  threads_.reserve(options_.threads);
  for (size_t i = 0; i < options_.threads; ++i) threads_.emplace_back([this] { Work(); });
}

HandlerPool::~HandlerPool() { Stop(); }

bool HandlerPool::TrySubmit(size_t bytes, std::function<void()> task) {
  {
    std::lock_guard lock(mu_);
    if (stopping_ || queue_.size() >= options_.max_queued) return false;
    // One request larger than the byte budget still runs when nothing else waits.
    if (!queue_.empty() && queued_bytes_ + bytes > options_.max_queued_bytes) return false;
    queue_.push_back({bytes, std::move(task)});
    queued_bytes_ += bytes;
  }
  cv_.notify_one();
  return true;
}

void HandlerPool::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
}

size_t HandlerPool::queued() const {
  std::lock_guard lock(mu_);
  return queue_.size();
}

void HandlerPool::Work() {
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and nothing left to run
    Task task = std::move(queue_.front());
    queue_.pop_front();
    queued_bytes_ -= task.bytes;
    lock.unlock();
    task.run();
    lock.lock();
  }
}

}  // namespace limits::rpc
