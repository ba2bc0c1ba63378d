// ZoneHome: the buckets this node is home of — a ledger each while the bucket is hot — and
// the leases it gave its members. It answers each member's exchange: it applies the member's
// reports; makes a ledger when a cold bucket asks to turn hot (closing the floors) or when a
// member holds headroom of a bucket it has no ledger of (it restarted, or the bucket moved
// here: learning); and grants.
// A member admits a bucket cold while it holds a lease from its home, unless it holds headroom
// for it (zone_member.h). So a closing ledger waits on every member whose lease has not run
// out (a member this process never answered counts as answered when it started: an earlier
// process may have answered it just before), and on every member it answers meanwhile; and
// any other ledger answers a member that did not report its bucket with a directive, which
// makes the bucket hot there before the member admits again.
// A process that starts knows no hot bucket. Members report every bucket they hold headroom
// for at every exchange, so it makes no closing ledger until every member the ring lists has
// exchanged with it: a bucket none of them holds headroom for is cold everywhere
// A home the ring no longer names steps down: it drops the bucket's ledger and answers it as
// a bucket it does not know; the members' headroom is learnt by the home the ring names
// (ARCHITECTURE.md, "Exact limits across a zone").
// Headroom policy: a member gets what it asks for, at most half of a fair share of what is free
// (so that little is stranded with members that stop needing it near the limit), plus, in the
// first directive of a turn to hot, the room it had left on its floors. One out of headroom
// when nothing is free makes the others give back half of what they hold (recalls); with
// nothing to recall either, it is told the bucket is full.
// Rate buckets are shared by demand, each member's share a flow it refills at (rate_ledger.h).
// Pure: times are passed in. Not thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "limits/zone/exchange.h"
#include "limits/zone/home_ledger.h"
#include "limits/zone/rate_ledger.h"

namespace limits::zone {

class ZoneHome {
 public:
  // A bucket's limit, as this node's configuration says.
  using LimitOf = std::function<uint64_t(const BucketKey&)>;
  // Whether the ring, as this node sees it now, names this node the bucket's home (HomeOf).
  using HomedHere = std::function<bool(const BucketKey&)>;

  // `tiebreak`: this node's IncarnationTiebreak, the low bits of its homes' incarnations.
  ZoneHome(int32_t num_partitions, int64_t lease_ms, LimitOf limit_of, HomedHere homed_here, int64_t started_ms,
           uint16_t tiebreak = 0);

  // `members`: the zone's live members, as the ring says. `now_ms` times leases (a steady
  // clock's); `wall_ms`, the wall clock's now (unix ms), numbers new ledgers, which homes on
  // other nodes compare (tests pass one clock for both).
  ExchangeAnswer Answer(const ExchangeRequest& request, const std::vector<std::string>& members, int64_t now_ms,
                        std::optional<int64_t> wall_ms = std::nullopt);

  // `member`'s reports in answer to this home's Direct (a recall sent at once): applied to the
  // buckets' ledgers, so that the returns they acknowledge are free at once. Nothing is
  // granted, and nothing else changes (its lease is timed by its own exchanges).
  void Acknowledge(const std::string& member, const std::vector<BucketReport>& reports);

  // A ring member listed as `placeholder` until heard from is named `name`: ledgers waiting
  // on the one wait on the other.
  void Renamed(std::string_view placeholder, std::string_view name);

  // Whether every member the ring lists has exchanged with this process (then for good).
  bool Learnt(const std::vector<std::string>& members);

  // Stops waiting on members whose lease ran out, and forgets those the ring no longer lists
  // once their partitions have caught-up later owners.
  void Tick(const std::vector<std::string>& members, int64_t now_ms);

  // Buckets `request` asks places of that it cannot grant now: turning hot with a partition
  // not counted yet, or short of what is asked while what the other members hold is not
  // known (HomeLedger::Unsettled). Their reports, asked for at once, count the partitions,
  // free places or let them be recalled.
  std::vector<BucketKey> Starved(const ExchangeRequest& request) const;

  // For a report request to `member` (Direct) about `keys`: the first directive of each bucket
  // whose rooms are open and that grants now, where `member` has had none — its room left on
  // its floors, as its next exchange would bring. Applied with the request, its answer both
  // closes the member's floors and reports it, so an asker waiting on the rooms to close does
  // not wait for every member's next two rounds.
  std::vector<BucketDirective> RoomDirectives(const std::vector<BucketKey>& keys, const std::string& member);

  // For `request`'s urgent asks once `answer` is made and the calls it needed are done (the
  // others' reports, the returns it recalled, acknowledged): a grant of what its streams still
  // wait for beyond what `answer` granted, of what those calls freed — given now, in the same
  // exchange, rather than at the asker's next ask, by which time another asker may have taken
  // them. With the rooms open, a first directive carries the asker's room as Answer's does.
  std::vector<BucketDirective> GrantWaiting(const ExchangeRequest& request, const ExchangeAnswer& answer);

  // Buckets turning hot whose partitions are not all counted yet: nothing is granted until the
  // members serving them report (the agent asks them at once, DirectRequest::reports).
  std::vector<BucketKey> Uncounted() const;

  const HomeLedger* LedgerOf(const BucketKey& key) const;
  // The shares of a rate bucket homed here that its members may refill at, in all (millionths
  // of its rate); nullopt when no member reported it here.
  std::optional<uint64_t> RateHeld(const BucketKey& key) const { return rates_.Held(key); }

 private:
  // The ring's members, then every other member this process answered.
  std::vector<std::string> Known(const std::vector<std::string>& members) const;
  std::vector<std::string> MayAdmitCold(const std::vector<std::string>& members, int64_t now_ms) const;
  bool Leased(const std::string& member, int64_t now_ms) const;
  // No grant unacknowledged (the asker's included) and nothing held unused by the others: with
  // nothing free after the asker's grant, the zone is at the bucket's limit, and only expiring
  // streams free places (ExchangeAnswer::full).
  static bool Settled(const HomeLedger& ledger, const std::string& asker);
  HomeLedger& Start(const BucketKey& key, uint64_t seen_incarnation, bool closing,
                    const std::vector<std::string>& members, int64_t now_ms, int64_t wall_ms);

  const int32_t num_partitions_;
  const int64_t lease_ms_;
  const LimitOf limit_of_;
  const HomedHere homed_here_;
  const int64_t started_ms_;
  const uint16_t tiebreak_;
  uint64_t last_incarnation_ = 0;  // the newest ledger's: a ledger started again numbers above
  std::map<BucketKey, HomeLedger> ledgers_;
  std::map<std::string, int64_t> answered_;  // member -> when its last exchange was answered
  bool learnt_ = false;
  RateLedger rates_;  // the rate buckets' shares
};

}  // namespace limits::zone
