// RateLedger: how a home shares the rate buckets it homes among the members of its zone — each
// member refills its token bucket at a share of the tenant's rate (millionths of it), weighted
// by the demand it reported, so that a tenant whose pushes land on one node gets its whole rate
// there. The shares its members refill at never sum past the whole rate:
//   - a member refills at the share its home last gave it, 0 before the first, and keeps it
//     while the home is out of reach (rate_shares.h);
//   - so a member's share counts at the larger of what it was last given and what it reported
//     applying (a lowered share counts in full until the member says it applies it), until the
//     member holds none, or is out of the ring and silent past its lease;
//   - a bucket new here (a new tenant, a moved bucket, a restarted home) raises no share until
//     every ring member has exchanged with this home since: what an earlier home gave is
//     learnt from the members' reports of what they apply.
// Targets: below the rate, a member gets its demand and an equal part of what nobody asks for
// (a part for each ring member: a member that starts asking finds room at once); above it, its
// part of the rate in proportion to its demand. It gets its target when the others' shares
// leave room for it, else what they leave: shares move over a round or two, which the whole
// burst every member keeps covers. Pure: times are passed in.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "limits/zone/exchange.h"

namespace limits::zone {

class RateLedger {
 public:
  explicit RateLedger(int64_t lease_ms) : lease_ms_(lease_ms) {}

  // Whether every ring member has exchanged with this home since `since_ms`.
  using HeardAllSince = std::function<bool(int64_t since_ms)>;

  // `member`'s rate reports of buckets homed here, answered with its shares. `ring_size`: the
  // zone's members as the ring lists them.
  std::vector<RateShare> Answer(const std::string& member, const std::vector<RateReport>& reports, size_t ring_size,
                                const HeardAllSince& heard_all_since, int64_t now_ms);

  // Forgets members that hold no share and ask for none, members the ring no longer lists once
  // silent past their lease, and buckets the ring moved elsewhere (`homed_here` false) or left
  // with no member.
  void Tick(const std::vector<std::string>& members, const std::function<bool(const BucketKey&)>& homed_here,
            int64_t now_ms);

  // What the bucket's members may refill at, in all (millionths); nullopt when no member
  // reported it here.
  std::optional<uint64_t> Held(const BucketKey& key) const;

 private:
  struct Holder {
    uint64_t demand = 0, applied = 0, given = 0;
    int64_t heard_ms = 0;
  };
  struct Bucket {
    int64_t started_ms = 0;
    bool learnt = false;
    std::map<std::string, Holder> holders;
  };
  static uint64_t HeldBy(const Holder& h) { return h.given > h.applied ? h.given : h.applied; }
  static uint64_t Target(const Bucket& b, const std::string& member, size_t ring_size);

  const int64_t lease_ms_;
  std::map<BucketKey, Bucket> buckets_;
};

}  // namespace limits::zone
