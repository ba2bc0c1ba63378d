// Evictor: removes streams outside the active window from memory and disk on a schedule
// (windows.eviction_interval). Active counts never depend on it — a stream stops counting
// the second it leaves the window — it only reclaims the space.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "limits/usage_store.h"

namespace limits {

class Evictor {
 public:
  Evictor(UsageStore& store, std::chrono::milliseconds interval) : store_(store), interval_(interval) {}
  ~Evictor() { Stop(); }

  void Start();
  void Stop();
  // One pass (the thread's work; tests call it directly).
  void EvictOnce();

 private:
  UsageStore& store_;
  const std::chrono::milliseconds interval_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;  // GUARDED_BY(mu_)
  std::thread thread_;
};

}  // namespace limits
