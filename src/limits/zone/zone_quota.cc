#include "limits/zone/zone_quota.h"

#include <algorithm>
#include <utility>

namespace limits::zone {

ZoneQuota::ZoneQuota(PolicyBuckets buckets, std::vector<ZoneBucket> states)
    : buckets_(std::move(buckets)), states_(std::move(states)) {
  states_.resize(buckets_.size());  // a bucket without a state has no limit here
  counts_.resize(states_.size());
  for (size_t b = 0; b < states_.size(); ++b) {
    if (states_[b].mode == ZoneBucket::Mode::kCold) {
      counts_[b].assign(static_cast<size_t>(states_[b].floors.partitions()), 0);
    }
  }
}

uint64_t* ZoneQuota::CountOf(size_t bucket, int32_t partition) {
  std::vector<uint64_t>& counts = counts_[bucket];
  if (partition < 0 || static_cast<size_t>(partition) >= counts.size()) return nullptr;
  return &counts[static_cast<size_t>(partition)];
}

void ZoneQuota::Trigger(size_t bucket) {
  auto it = std::lower_bound(triggered_.begin(), triggered_.end(), bucket);
  if (it == triggered_.end() || *it != bucket) triggered_.insert(it, bucket);
}

void ZoneQuota::CountPartition(int32_t partition, TenantStreams& ts, int64_t cutoff_s) {
  ts.ForEachPolicy(cutoff_s, [&](std::string_view policy, uint32_t active) {
    const size_t b = BucketOf(policy);
    if (states_[b].mode != ZoneBucket::Mode::kCold) return;
    if (uint64_t* count = CountOf(b, partition)) *count += active;
  });
}

bool ZoneQuota::TryAdmit(size_t bucket, int32_t partition) {
  ZoneBucket& state = states_[bucket];
  switch (state.mode) {
    case ZoneBucket::Mode::kUnlimited:
      return true;
    case ZoneBucket::Mode::kUnknown:
      return false;
    case ZoneBucket::Mode::kHot:
      return state.member != nullptr && state.member->TrySpend();
    case ZoneBucket::Mode::kCold:
      break;
  }
  uint64_t* count = CountOf(bucket, partition);
  if (count == nullptr || *count >= state.floors.Of(partition)) {
    Trigger(bucket);
    return false;
  }
  ++*count;
  if (*count >= state.floors.Trigger(partition)) Trigger(bucket);
  return true;
}

void ZoneQuota::Release(size_t bucket, int32_t partition) {
  // A hot bucket's place goes back through the counts the member reports, not into its
  // headroom: the home decides who holds it next.
  if (states_[bucket].mode != ZoneBucket::Mode::kCold) return;
  if (uint64_t* count = CountOf(bucket, partition); count != nullptr && *count > 0) --*count;
}

}  // namespace limits::zone
