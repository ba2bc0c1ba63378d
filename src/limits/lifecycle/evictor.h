// Evictor: removes streams outside the active window from memory and disk on a schedule
// (windows.eviction_interval), counting evictions per tenant, and on the same pass runs the
// idle sweeps it was given (the node's: forgetting the token buckets of tenants idle long
// enough for them to have refilled). Active counts never depend on it — a stream stops
// counting the second it leaves the window — it only reclaims the space.
// Start/Stop from one thread; EvictOnce runs on the evictor's thread (or a test's).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/periodic.h"
#include "limits/usage/tenant_counters.h"
#include "limits/usage/usage_store.h"

namespace limits {

// Something besides the store that holds state for idle keys and forgets it when asked. The
// evictor knows it only by this, so whoever owns that state (the serving side's RateLimiter)
// stays out of the evictor's includes: the node wires it in.
struct IdleSweep {
  std::string what;  // the pass's log key for how many it forgot, e.g. "idle_rate_buckets_forgotten"
  std::function<size_t(int64_t now_ms)> forget;  // forgets what is idle at now_ms; returns how many
};

class Evictor {
 public:
  // References (and whatever the sweeps refer to) must outlive the evictor.
  Evictor(UsageStore& store, std::vector<IdleSweep> sweeps, const Clock& clock, std::chrono::milliseconds interval);
  void Start() { thread_.Start(interval_, [this] { EvictOnce(); }); }
  void Stop() { thread_.Stop(); }
  // One pass (the thread's work; tests call it directly).
  void EvictOnce();

  // loki_ingest_limits_stream_evictions_total{tenant}, exposed by the node's collector.
  TenantCounters& evictions() { return evictions_; }

 private:
  UsageStore& store_;
  const std::vector<IdleSweep> sweeps_;
  const Clock& clock_;
  const std::chrono::milliseconds interval_;
  TenantCounters evictions_;
  Periodic thread_;
};

}  // namespace limits
