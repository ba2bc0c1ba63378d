#include "limits/decision/zone_environment.h"

#include <utility>

#include "limits/decision/admission.h"

namespace limits {
namespace {
// The bucket's limit and which policies count in it, from the tenant's limits now.
struct BucketOfKey {
  PolicyBuckets buckets;
  size_t index = PolicyBuckets::kDefaultBucket;
  uint64_t limit = 0;
};

BucketOfKey Resolve(const TenantLimits& limits, const zone::BucketKey& key) {
  BucketOfKey out;
  ForEachStreamBucket(limits, [&](std::optional<std::string_view> policy, uint64_t limit) {
    const size_t index = policy ? out.buckets.Add(std::string(*policy)) : PolicyBuckets::kDefaultBucket;
    if (policy.value_or("") == key.policy) {
      out.index = index;
      out.limit = limit;
    }
  });
  return out;
}
}  // namespace

StoreZoneEnvironment::StoreZoneEnvironment(UsageStore& store, PartitionManager& partitions, LimitsProvider& limits,
                                           MembersFn members)
    : store_(store), partitions_(partitions), limits_(limits), members_(std::move(members)) {}

uint64_t StoreZoneEnvironment::LimitOf(const zone::BucketKey& key) {
  const std::shared_ptr<const LimitsProvider::Snapshot> snapshot = limits_.Current();
  return Resolve(snapshot->For(key.tenant), key).limit;
}

std::vector<zone::PartitionCount> StoreZoneEnvironment::CountsOf(const zone::BucketKey& key) {
  const std::shared_ptr<const LimitsProvider::Snapshot> snapshot = limits_.Current();
  const BucketOfKey bucket = Resolve(snapshot->For(key.tenant), key);
  std::vector<zone::PartitionCount> out;
  for (const auto& [p, assigned_ns] : partitions_.ReadyAssignedAtNanos()) {
    const TenantUsage usage = store_.UsageOf(key.tenant, PartitionSet{p});
    uint64_t active = 0;
    for (const auto& [policy, n] : usage.active_by_policy) {
      if (bucket.buckets.BucketOf(policy) == bucket.index) active += n;
    }
    const std::optional<storage::Checkpoint> checkpoint = store_.CheckpointOf(p);
    const int64_t consumed = checkpoint ? checkpoint->next_offset : 0;
    out.push_back(zone::PartitionCount{.partition = p,
                                       .active = active,
                                       .consumed = consumed,
                                       .horizon = consumed,
                                       .admitted = 0,
                                       .generation = static_cast<uint64_t>(assigned_ns / 1'000'000),
                                       .caught_up = true});
  }
  return out;
}

}  // namespace limits
