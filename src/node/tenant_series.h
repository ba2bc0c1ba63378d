// TenantSeries: the per-tenant metrics, computed at scrape — Loki's streams / active streams
// (over the partitions this node serves), ingested bytes and evictions, and ours for streams
// held of partitions it does not serve (retained after a revocation, pending, replaying).
// At most `max_series` tenants get series of their own, those with the most streams; the
// rest are summed under tenant="other" (whose counters may go down as tenants move in and
// out of the top, which Prometheus reads as a reset). A tenant's counters are forgotten one
// scrape after it has no stream left on the node, so its last increments are still seen.
// Thread-safe.
#pragma once

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "limits/lifecycle/partition_manager.h"
#include "limits/usage/tenant_counters.h"
#include "limits/usage/usage_store.h"

namespace limits {

class TenantSeries final : public prometheus::Collectable {
 public:
  // All references must outlive it.
  TenantSeries(UsageStore& store, PartitionManager& partitions, TenantCounters& ingested_bytes,
               TenantCounters& evictions, size_t max_series);
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  UsageStore& store_;
  PartitionManager& partitions_;
  TenantCounters& ingested_bytes_;
  TenantCounters& evictions_;
  const size_t max_series_;
  mutable std::mutex mu_;
  mutable std::set<std::string> absent_once_;  // GUARDED_BY(mu_): no streams at the last scrape
};

}  // namespace limits
