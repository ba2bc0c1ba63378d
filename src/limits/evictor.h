// Evictor: removes streams outside the active window from memory and disk on a schedule
// (windows.eviction_interval). Active counts never depend on it — a stream stops counting
// the second it leaves the window — it only reclaims the space.
#pragma once

#include <chrono>

#include <prometheus/registry.h>

#include "common/periodic.h"
#include "limits/tenant_counters.h"
#include "limits/usage_store.h"

namespace limits {

class Evictor {
 public:
  // `registry` gets loki_ingest_limits_stream_evictions_total{tenant}.
  Evictor(UsageStore& store, std::chrono::milliseconds interval, prometheus::Registry& registry);
  void Start() { thread_.Start(interval_, [this] { EvictOnce(); }); }
  void Stop() { thread_.Stop(); }
  // One pass (the thread's work; tests call it directly).
  void EvictOnce();

 private:
  UsageStore& store_;
  const std::chrono::milliseconds interval_;
  TenantCounters evictions_;
  Periodic thread_;
};

}  // namespace limits
