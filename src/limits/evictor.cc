#include "limits/evictor.h"

#include <prometheus/counter.h>
#include <prometheus/family.h>

#include "common/log.h"

namespace limits {

Evictor::Evictor(UsageStore& store, std::chrono::milliseconds interval, prometheus::Registry& registry)
    : store_(store),
      interval_(interval),
      evictions_(prometheus::BuildCounter()
                     .Name("loki_ingest_limits_stream_evictions_total")
                     .Help("The total number of streams evicted due to age per tenant. This is not a global total, "
                           "as tenants can be sharded over multiple pods.")
                     .Register(registry)) {}

void Evictor::EvictOnce() {
  const auto started = std::chrono::steady_clock::now();
  UsageStore::TenantCounts by_tenant;
  Result<uint64_t> evicted = store_.EvictExpired(&by_tenant);
  for (const auto& [tenant, n] : by_tenant) evictions_.Add(tenant, static_cast<double>(n));
  if (!evicted.ok()) {
    log::Error("evictor", "eviction failed").Kv("error", evicted.status().ToString());
    return;
  }
  log::Info("evictor", "evicted streams outside the active window")
      .Kv("streams", *evicted)
      .Kv("seconds", std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
}

}  // namespace limits
