// Evictor: removes streams outside the active window from memory and disk on a schedule
// (windows.eviction_interval). Active counts never depend on it — a stream stops counting
// the second it leaves the window — it only reclaims the space.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include <prometheus/registry.h>

#include "limits/tenant_counters.h"
#include "limits/usage_store.h"

namespace limits {

class Evictor {
 public:
  // `registry` gets loki_ingest_limits_stream_evictions_total{tenant}.
  Evictor(UsageStore& store, std::chrono::milliseconds interval, prometheus::Registry& registry);
  ~Evictor() { Stop(); }

  void Start();
  void Stop();
  // One pass (the thread's work; tests call it directly).
  void EvictOnce();

 private:
  UsageStore& store_;
  const std::chrono::milliseconds interval_;
  TenantCounters evictions_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;  // GUARDED_BY(mu_)
  std::thread thread_;
};

}  // namespace limits
