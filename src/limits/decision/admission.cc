#include "limits/decision/admission.h"

namespace limits {

uint64_t PoolShare(uint64_t global_limit, uint32_t pool_partitions, uint32_t num_partitions) {
  if (global_limit == kUnlimited || num_partitions == 0) return kUnlimited;
  // ceil(limit * pool / P) without overflow: split limit into q * P + r.
  const uint64_t q = global_limit / num_partitions, r = global_limit % num_partitions;
  const uint64_t tail = (r * pool_partitions + num_partitions - 1) / num_partitions;  // r, pool < 2^32
  if (pool_partitions != 0 && q > (UINT64_MAX - tail) / pool_partitions) return UINT64_MAX;
  const uint64_t share = q * pool_partitions + tail;
  return share == 0 ? 1 : share;
}

Admission::Admission(const TenantLimits& limits, uint32_t pool_partitions, uint32_t num_partitions) {
  ForEachStreamBucket(limits, [&](std::optional<std::string_view> policy, uint64_t limit) {
    if (policy) buckets_.Add(std::string(*policy));
    caps_.push_back(PoolShare(limit, pool_partitions, num_partitions));
  });
  used_.assign(caps_.size(), 0);
}

void Admission::CountPartition(int32_t /*partition*/, TenantStreams& ts, int64_t cutoff_s) {
  ts.ForEachPolicy(cutoff_s, [&](std::string_view policy, uint32_t active) { used_[BucketOf(policy)] += active; });
}

bool Admission::TryAdmit(size_t bucket, int32_t /*partition*/) {
  if (!Limited(bucket)) return true;
  if (used_[bucket] >= caps_[bucket]) return false;
  ++used_[bucket];
  return true;
}

}  // namespace limits
