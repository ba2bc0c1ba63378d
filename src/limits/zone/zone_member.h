// ZoneMember: this node's side of its zone's buckets — which are hot here (a MemberBucket each,
// made by the first directive of the bucket's home), and whether a bucket may be admitted cold.
// A bucket is admitted cold only under a lease from its home: an exchange with that home, begun
// at most `lease_ms` ago, whose answer listed the home's hot buckets without this one. A node
// that just started holds no lease: a bucket may be hot with all of its headroom held by other
// members, so it admits nothing on it until it hears from the home (fail closed). A home waits
// on every live member before it gives up the cold floors, and a member that stopped hearing
// from it stops admitting cold within the lease (ARCHITECTURE.md, "Exact limits across a zone").
// Pure: times are passed in. Not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "limits/zone/bucket_key.h"
#include "limits/zone/member_bucket.h"
#include "limits/zone/zone_quota.h"

namespace limits::zone {

class ZoneMember {
 public:
  explicit ZoneMember(int64_t lease_ms) : lease_ms_(lease_ms) {}

  // An exchange with `home` that began at `sent_ms` was answered, listing every bucket hot at
  // that home (its roster). An answer to an earlier exchange than one already heard changes
  // nothing.
  void Heard(std::string_view home, std::vector<BucketKey> roster, int64_t sent_ms);

  // The bucket's state for a request at `now_ms`: hot once a directive made it so here; else
  // cold on its floors (of `limit` over `partitions`) while the lease of its `home` holds and
  // the home does not list it as hot; else unknown.
  ZoneBucket StateOf(const BucketKey& key, std::string_view home, uint64_t limit, int32_t partitions,
                     int64_t now_ms);

  // Applies a directive of the bucket's home (the first makes the bucket hot here). False when
  // it was older than the last applied.
  bool Apply(const BucketKey& key, const Directive& d);
  // The bucket's headroom here; null while it is not hot here.
  MemberBucket* Find(const BucketKey& key);

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
