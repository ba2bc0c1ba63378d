// ZoneQuota: the BucketQuota of a node whose zone shares its tenants' stream limits
// (ARCHITECTURE.md, "Exact limits across a zone"). Each limited bucket is, on this node:
// - cold: a stream of partition p is admitted while the bucket's active streams in p are below
//   p's floor (partition_floors.h), with no message. A count that reaches p's trigger, or a
//   stream that finds no room, asks for the turn to hot (Triggered).
// - hot: a stream takes one place of the headroom the bucket's home granted (member_bucket.h).
// - unknown: this node has not heard from the bucket's home since it started, so it cannot
//   tell whether the bucket is hot (other nodes may then hold all of its headroom): nothing is
//   admitted.
// One per UpdateCond call: the caller resolves each bucket's state, and holds the tenant's
// admission stripe, under which a hot bucket's headroom is spent. Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "limits/usage/bucket_quota.h"
#include "limits/usage/policy_buckets.h"
#include "limits/usage/tenant_streams.h"
#include "limits/zone/member_bucket.h"
#include "limits/zone/partition_floors.h"

namespace limits::zone {

// One bucket's state on this node, for one request.
struct ZoneBucket {
  enum class Mode : uint8_t { kUnlimited, kUnknown, kCold, kHot };
  Mode mode = Mode::kUnlimited;
  PartitionFloors floors;          // kCold
  MemberBucket* member = nullptr;  // kHot; the caller's, spent under the tenant's stripe
};

class ZoneQuota final : public BucketQuota {
 public:
  // `states[b]` is bucket b's state (one per bucket of `buckets`).
  ZoneQuota(PolicyBuckets buckets, std::vector<ZoneBucket> states);

  size_t BucketOf(std::string_view policy) const override { return buckets_.BucketOf(policy); }
  bool OwnBucket(std::string_view policy) const override {
    return BucketOf(policy) != PolicyBuckets::kDefaultBucket;
  }
  bool Limited(size_t bucket) const override { return states_[bucket].mode != ZoneBucket::Mode::kUnlimited; }

  void CountPartition(int32_t partition, TenantStreams& ts, int64_t cutoff_s) override;
  bool TryAdmit(size_t bucket, int32_t partition) override;
  void Release(size_t bucket, int32_t partition) override;

  // The cold buckets this request asks to turn hot, ascending.
  const std::vector<size_t>& Triggered() const { return triggered_; }

 private:
  uint64_t* CountOf(size_t bucket, int32_t partition);
  void Trigger(size_t bucket);

  PolicyBuckets buckets_;
  std::vector<ZoneBucket> states_;
  std::vector<std::vector<uint64_t>> counts_;  // cold buckets: active streams by partition
  std::vector<size_t> triggered_;
};

}  // namespace limits::zone
