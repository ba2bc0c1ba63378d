// Periodic: runs a function every `interval` on its own thread until stopped; Trigger()
// runs it early (without waiting). Stop() wakes the thread at once (no waiting out the
// interval) and joins it. Not restartable.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace limits {

class Periodic {
 public:
  Periodic() = default;
  ~Periodic() { Stop(); }
  Periodic(const Periodic&) = delete;
  Periodic& operator=(const Periodic&) = delete;

  void Start(std::chrono::milliseconds interval, std::function<void()> fn) {
    thread_ = std::thread([this, interval, fn = std::move(fn)] {
      std::unique_lock lock(mu_);
      for (;;) {
        cv_.wait_for(lock, interval, [this] { return stop_ || triggered_; });  // or the interval passed
        if (stop_) break;
        triggered_ = false;
        lock.unlock();
        fn();
        lock.lock();
      }
    });
  }

  // Runs the function as soon as the thread is free (several triggers meanwhile run it once).
  void Trigger() {
    {
      std::lock_guard lock(mu_);
      triggered_ = true;
    }
    cv_.notify_all();
  }

  void Stop() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;       // GUARDED_BY(mu_)
  bool triggered_ = false;  // GUARDED_BY(mu_)
  std::thread thread_;
};

}  // namespace limits
