// How a tenant's global stream limit maps onto what one node may admit.
//
// A node serves a pool of k of the topic's P partitions. It admits a new stream of a tenant
// while the tenant's active streams in that policy bucket, summed over the pool, are below
//     cap = ceil(limit * k / P)
// - Never 0 for a limit > 0: a limit below the partition count still admits streams
//   (Loki's per-partition limit / P with integer division turns it into "unlimited").
// - Pooling over the node's partitions, not per partition, absorbs hash skew: a tenant is
//   rejected when its streams on this node reach the node's share, not when one unlucky
//   partition fills up. A node that serves every partition enforces the limit exactly.
// - Across n nodes the caps sum to at most limit + n - 1 (rounding up), so a tenant can
//   exceed its limit by at most n - 1 streams; under skew across nodes it is rejected early
//   on the node holding more than its share of the tenant's streams.
// Buckets: a stream whose ingestion policy has a stream limit of its own (Loki's
// PolicyMaxGlobalStreamsPerUser: policy_override_limits.<policy>.max_global_streams_per_user,
// or the tenant's with inherit_limits) counts only in that policy's bucket; all other streams
// count in the default bucket. A known stream
// that changes bucket (its policy changed) is admitted into its new bucket like a new stream,
// and leaves a place in its old one.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "limits/decision/tenant_limits.h"
#include "limits/usage/bucket_quota.h"
#include "limits/usage/policy_buckets.h"
#include "limits/usage/tenant_streams.h"

namespace limits {

inline constexpr uint64_t kUnlimited = 0;

// The tenant's stream buckets in the order PolicyBuckets numbers them: fn(nullopt, its own
// limit), then fn(policy, limit) for each policy with a stream limit of its own (Loki's
// PolicyMaxGlobalStreamsPerUser: its own, or the tenant's with inherit_limits).
template <typename Fn>
void ForEachStreamBucket(const TenantLimits& limits, Fn&& fn) {
  fn(std::optional<std::string_view>(), limits.max_global_streams_per_user);
  for (const auto& [name, policy] : limits.policy_override_limits) {
    // A policy with only a rate of its own counts in the tenant's bucket.
    if (const std::optional<uint64_t> limit = limits.PolicyMaxStreams(name)) {
      fn(std::optional<std::string_view>(name), *limit);
    }
  }
}

// ceil(limit * pool / partitions); kUnlimited stays unlimited.
uint64_t PoolShare(uint64_t global_limit, uint32_t pool_partitions, uint32_t num_partitions);

// One request's admission state for one tenant: the cap of each bucket and, once counted,
// how many streams each bucket holds in the pool. The BucketQuota UsageStore::UpdateCond
// admits against; LimitsChecker builds one per call (per slice of a large request). Not
// thread-safe.
class Admission final : public BucketQuota {
 public:
  static constexpr size_t kDefaultBucket = PolicyBuckets::kDefaultBucket;

  Admission(const TenantLimits& limits, uint32_t pool_partitions, uint32_t num_partitions);

  // The bucket a stream of ingestion policy `policy` ("" = none) counts in.
  size_t BucketOf(std::string_view policy) const override { return buckets_.BucketOf(policy); }
  // Whether the policy has a bucket of its own (its name must then always be told apart).
  bool OwnBucket(std::string_view policy) const override { return BucketOf(policy) != kDefaultBucket; }
  bool Limited(size_t bucket) const override { return caps_[bucket] != kUnlimited; }
  uint64_t Cap(size_t bucket) const { return caps_[bucket]; }

  // Adds the active streams of one partition's tenant to the buckets' usage (the pool's
  // share has no per-partition part).
  void CountPartition(int32_t partition, TenantStreams& ts, int64_t cutoff_s) override;

  // Takes one place in the bucket if there is one.
  bool TryAdmit(size_t bucket, int32_t partition) override;
  // Gives back the place of a counted stream that left the bucket.
  void Release(size_t bucket, int32_t /*partition*/) override {
    if (used_[bucket] > 0) --used_[bucket];
  }

 private:
  PolicyBuckets buckets_;
  std::vector<uint64_t> caps_;
  std::vector<uint64_t> used_;
};

}  // namespace limits
