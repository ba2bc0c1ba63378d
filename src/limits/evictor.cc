#include "limits/evictor.h"

#include "common/log.h"

namespace limits {

void Evictor::Start() {
  thread_ = std::thread([this] {
    std::unique_lock lock(mu_);
    while (!cv_.wait_for(lock, interval_, [this] { return stop_; })) {
      lock.unlock();
      EvictOnce();
      lock.lock();
    }
  });
}

void Evictor::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Evictor::EvictOnce() {
  const auto started = std::chrono::steady_clock::now();
  Result<uint64_t> evicted = store_.EvictExpired();
  if (!evicted.ok()) {
    log::Error("evictor", "eviction failed").Kv("error", evicted.status().ToString());
    return;
  }
  log::Info("evictor", "evicted streams outside the active window")
      .Kv("streams", *evicted)
      .Kv("seconds", std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
}

}  // namespace limits
