#include "limits/lifecycle/evictor.h"

#include <utility>

#include "common/log.h"

namespace limits {

Evictor::Evictor(UsageStore& store, std::vector<IdleSweep> sweeps, const Clock& clock,
                 std::chrono::milliseconds interval)
    : store_(store), sweeps_(std::move(sweeps)), clock_(clock), interval_(interval) {}

void Evictor::EvictOnce() {
  const auto started = std::chrono::steady_clock::now();
  UsageStore::TenantCounts by_tenant;
  Result<uint64_t> evicted = store_.EvictExpired(&by_tenant);
  for (const auto& [tenant, n] : by_tenant) evictions_.Add(tenant, static_cast<double>(n));
  std::vector<size_t> forgotten;
  forgotten.reserve(sweeps_.size());
  for (const IdleSweep& sweep : sweeps_) forgotten.push_back(sweep.forget(clock_.NowMillis()));
  if (!evicted.ok()) {
    log::Error("evictor", "eviction failed").Kv("error", evicted.status().ToString());
    return;
  }
  log::Line line = log::Info("evictor", "evicted streams outside the active window");
  line.Kv("streams", *evicted);
  for (size_t i = 0; i < sweeps_.size(); ++i) line.Kv(sweeps_[i].what, forgotten[i]);
  line.Kv("seconds", std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
}

}  // namespace limits
