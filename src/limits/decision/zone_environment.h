// StoreZoneEnvironment: what a node's ZoneAgent learns from the node itself — each bucket's
// limit from the tenant's limits, and its counts from the store over the partitions this node
// serves (zone/zone_agent.h). The ring's members come from the caller (the node reads the
// ring). Thread-safe.
//
// A served partition has replayed up to the end offset it snapshotted at assignment (only
// ready partitions are served), so every count is caught up, and nothing is admitted into a
// partition before then. Its generation is the time of the assignment (unix ms): librdkafka
// does not expose the group's generation, and the time of a later assignment is later on any
// node whose clock is within a rebalance of the others'.
// Not reported yet (ARCHITECTURE.md): a count's horizon beyond what it consumed (its own
// admissions produced but not yet consumed are in its count, which is enough while it owns
// the partition), and final counts of a partition just revoked (the next owner's count holds
// them once it is ready).
#pragma once

#include <functional>
#include <vector>

#include "limits/decision/limits_provider.h"
#include "limits/lifecycle/partition_manager.h"
#include "limits/usage/usage_store.h"
#include "limits/zone/zone_agent.h"

namespace limits {

class StoreZoneEnvironment final : public zone::ZoneEnvironment {
 public:
  using MembersFn = std::function<std::vector<zone::ZonePeer>()>;
  // All references must outlive it.
  StoreZoneEnvironment(UsageStore& store, PartitionManager& partitions, LimitsProvider& limits, MembersFn members);

  std::vector<zone::ZonePeer> Members() override { return members_(); }
  uint64_t LimitOf(const zone::BucketKey& key) override;
  std::vector<zone::PartitionCount> CountsOf(const zone::BucketKey& key) override;

 private:
  UsageStore& store_;
  PartitionManager& partitions_;
  LimitsProvider& limits_;
  const MembersFn members_;
};

}  // namespace limits
