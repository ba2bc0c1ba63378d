// ZoneMember: this node's side of its zone's buckets — which are hot here (a MemberBucket each,
// made by the first directive of the bucket's home), and whether a bucket may be admitted cold:
// only under a lease from its home, an exchange with that home begun at most `lease_ms` ago.
// A node that just started holds no lease: a bucket may be hot with all of its headroom held
// by other members, so it admits nothing on it until it hears from the home (fail closed).
// A bucket its home lists as hot stays cold here until the home's directive: the home counts
// this member's floors until then, or sends the directive in the same answer (zone_home.h).
// A member that stops hearing from a home stops admitting cold within the lease.
// Pure: times are passed in. Not thread-safe, but for the MemberBuckets it hands out (their own
// lock).
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "limits/zone/bucket_key.h"
#include "limits/zone/exchange.h"
#include "limits/zone/member_bucket.h"
#include "limits/zone/zone_quota.h"

namespace limits::zone {

class ZoneMember {
 public:
  explicit ZoneMember(int64_t lease_ms) : lease_ms_(lease_ms) {}

  // An exchange with `home` that began at `sent_ms` was answered, listing every bucket hot at
  // that home (its roster). An answer to an earlier exchange than one already heard changes
  // nothing but its directives (apply them too).
  void Heard(std::string_view home, std::vector<BucketKey> roster, int64_t sent_ms);
  // The buckets `home` lists as hot that are not hot here yet: the next exchange reports them
  // (their counts give the home this member's room left on its floors).
  std::vector<BucketKey> Pending(std::string_view home) const;

  // The bucket's state for a request at `now_ms`, while the lease of its `home` holds: hot
  // once a directive made it so here, else cold on its floors (of `limit` over `partitions`).
  // Without the lease it is unknown, and a hot bucket drops its headroom: a home forgets a
  // member silent past its lease, and what it held is free again there.
  ZoneBucket StateOf(const BucketKey& key, std::string_view home, uint64_t limit, int32_t partitions,
                     int64_t now_ms);

  // Applies a directive of the bucket's home (the first makes the bucket hot here). False when
  // it was older than the last applied.
  bool Apply(const BucketKey& key, const Directive& d);
  // The bucket's headroom here; null while it is not hot here.
  MemberBucket* Find(const BucketKey& key);

  // This member's report of the bucket, with the counts of the partitions it serves: of a hot
  // bucket, of one its home lists (Pending), or of a cold one asking to turn hot (`trigger`).
  // Its reports are numbered in one sequence from the first, cold or hot: the home ignores one
  // not newer than the last it applied.
  BucketReport ReportOf(const BucketKey& key, std::vector<PartitionCount> counts, uint64_t want, bool trigger);
  // The bucket a report is taken of (made if it has none yet; never removed, so the reference
  // stays good): the caller holds it (MemberBucket::Hold), counts, then reports.
  MemberBucket& Reporting(const BucketKey& key) { return buckets_[key]; }
  // Buckets it holds headroom for: each is reported at every exchange with its home.
  std::vector<BucketKey> Hot() const;

 private:
  struct Lease {
    int64_t sent_ms = 0;
    std::set<BucketKey> hot;
  };

  const int64_t lease_ms_;
  std::map<std::string, Lease, std::less<>> leases_;  // by home
  std::map<BucketKey, MemberBucket> buckets_;
};

}  // namespace limits::zone
