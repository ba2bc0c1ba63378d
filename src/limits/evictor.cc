#include "limits/evictor.h"

#include "common/log.h"

namespace limits {

Evictor::Evictor(UsageStore& store, RateLimiter* rates, const Clock& clock, std::chrono::milliseconds interval)
    : store_(store), rates_(rates), clock_(clock), interval_(interval) {}

void Evictor::EvictOnce() {
  const auto started = std::chrono::steady_clock::now();
  UsageStore::TenantCounts by_tenant;
  Result<uint64_t> evicted = store_.EvictExpired(&by_tenant);
  for (const auto& [tenant, n] : by_tenant) evictions_.Add(tenant, static_cast<double>(n));
  const size_t forgotten = rates_ != nullptr ? rates_->ForgetFull(clock_.NowMillis()) : 0;
  if (!evicted.ok()) {
    log::Error("evictor", "eviction failed").Kv("error", evicted.status().ToString());
    return;
  }
  log::Info("evictor", "evicted streams outside the active window")
      .Kv("streams", *evicted)
      .Kv("idle_rate_buckets_forgotten", forgotten)
      .Kv("seconds", std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
}

}  // namespace limits
