#include "limits/zone/zone_member.h"

#include <utility>

namespace limits::zone {

void ZoneMember::Heard(std::string_view home, std::vector<BucketKey> roster, int64_t sent_ms) {
  auto it = leases_.find(home);
  if (it == leases_.end()) it = leases_.emplace(std::string(home), Lease{}).first;
  Lease& lease = it->second;
  if (sent_ms < lease.sent_ms) return;  // a late answer: the newer one stands
  lease.sent_ms = sent_ms;
  lease.hot = std::set<BucketKey>(std::make_move_iterator(roster.begin()), std::make_move_iterator(roster.end()));
}

ZoneBucket ZoneMember::StateOf(const BucketKey& key, std::string_view home, uint64_t limit, int32_t partitions,
                               int64_t now_ms) {
  auto it = leases_.find(home);
  // Timed from when the exchange began: whatever turned hot at the home after that, the home
  // waits on this member for (it is live), and no longer than the lease.
  const bool leased = it != leases_.end() && now_ms - it->second.sent_ms <= lease_ms_;
  if (MemberBucket* b = Find(key)) {
    if (leased) return ZoneBucket{ZoneBucket::Mode::kHot, {}, b};
    // Silent past the lease (partitioned, or a process that was paused): the home may have
    // forgotten this member and freed what it held, so it holds nothing any more.
    b->Drop();
    return ZoneBucket{ZoneBucket::Mode::kUnknown, {}, nullptr};
  }
  if (!leased) return ZoneBucket{ZoneBucket::Mode::kUnknown, {}, nullptr};
  return ZoneBucket{ZoneBucket::Mode::kCold, PartitionFloors(limit, partitions, HashOf(key)), nullptr};
}

std::vector<BucketKey> ZoneMember::Pending(std::string_view home) const {
  std::vector<BucketKey> out;
  auto it = leases_.find(home);
  if (it == leases_.end()) return out;
  for (const BucketKey& key : it->second.hot) {
    auto b = buckets_.find(key);
    if (b == buckets_.end() || !b->second.closed()) out.push_back(key);
  }
  return out;
}

bool ZoneMember::Apply(const BucketKey& key, const Directive& d) { return buckets_[key].Apply(d); }

MemberBucket* ZoneMember::Find(const BucketKey& key) {
  auto it = buckets_.find(key);
  // A bucket that only reported (cold) has no headroom yet: it is hot from its first directive.
  return it == buckets_.end() || !it->second.closed() ? nullptr : &it->second;
}

std::vector<BucketKey> ZoneMember::Hot() const {
  std::vector<BucketKey> out;
  for (const auto& [key, bucket] : buckets_) {
    if (bucket.closed()) out.push_back(key);
  }
  return out;
}

BucketReport ZoneMember::ReportOf(const BucketKey& key, std::vector<PartitionCount> counts, uint64_t want,
                                  bool trigger) {
  MemberBucket& b = buckets_[key];
  return BucketReport{key, b.Report(std::move(counts)), want, trigger};
}

}  // namespace limits::zone
