// Evictor: removes streams outside the active window from memory and disk on a schedule
// (windows.eviction_interval), counting evictions per tenant, and forgets the token buckets
// of tenants idle long enough for them to have refilled. Active counts never depend on it —
// a stream stops counting the second it leaves the window — it only reclaims the space.
#pragma once

#include <chrono>

#include "common/clock.h"
#include "common/periodic.h"
#include "limits/rate_limiter.h"
#include "limits/tenant_counters.h"
#include "limits/usage_store.h"

namespace limits {

class Evictor {
 public:
  // References must outlive the evictor; `rates` may be null.
  Evictor(UsageStore& store, RateLimiter* rates, const Clock& clock, std::chrono::milliseconds interval);
  void Start() { thread_.Start(interval_, [this] { EvictOnce(); }); }
  void Stop() { thread_.Stop(); }
  // One pass (the thread's work; tests call it directly).
  void EvictOnce();

  // loki_ingest_limits_stream_evictions_total{tenant}, exposed by the node's collector.
  TenantCounters& evictions() { return evictions_; }

 private:
  UsageStore& store_;
  RateLimiter* rates_;
  const Clock& clock_;
  const std::chrono::milliseconds interval_;
  TenantCounters evictions_;
  Periodic thread_;
};

}  // namespace limits
