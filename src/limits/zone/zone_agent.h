// ZoneAgent: this node's part in its zone's sharing of stream limits (ARCHITECTURE.md, "Exact
// limits across a zone") — the member that admits against its buckets' states and exchanges
// with their homes, and the home of the buckets the ring gives it (ZoneHome, ZoneMember).
//   Round()   once a second (the node's thread): an exchange with every member of the ring as
//             a home — the reports of the buckets it keeps, and of those asking to turn hot —
//             which renews this member's lease there; then the home's housekeeping (Tick).
//   States()  for a request: each limited bucket's state (ZoneQuota's input).
//   Acquire() for a request whose hot bucket ran out: one synchronous exchange with its home.
//   RateShareOf() for a request: the share of a rate bucket's rate to refill at (no call).
//   Exchange / Direct: the Zone service's calls (ZoneHandler), as a home and as a member.
// A home's recalls go out at once (Direct), before it answers the member that asked; their
// acknowledgements free the places, and the asker asks again. So does a turn to hot a member
// asks for: the home has the others report the bucket at once, so that its next exchange
// finds every partition counted and brings its first directive.
// Names: a member exchanges as its ring id and when its process started ("id@started_ms"), so
// a restarted node is a new member (its predecessor's headroom stays held until Kafka's
// takeover makes it forgettable). A home lists a ring member it has not heard from yet as
// "id@?" and renames it once heard. A bucket's home is chosen over ring ids (HomeOf).
// Thread-safe. Lock order: the member's lock, then a MemberBucket's (spent under the store's
// locks by requests); the home's lock is taken alone. No lock is held across a call to a peer.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/clock.h"
#include "limits/zone/ask_stripes.h"
#include "limits/zone/exchange.h"
#include "limits/zone/zone_home.h"
#include "limits/zone/rate_shares.h"
#include "limits/zone/zone_member.h"
#include "limits/zone/zone_quota.h"

namespace limits::zone {

struct ZonePeer {
  std::string id;       // ring id: what homes are chosen over
  std::string address;  // its gRPC listener, host:port
};

// What the agent needs of its node. Thread-safe.
class ZoneEnvironment {
 public:
  virtual ~ZoneEnvironment() = default;
  // The zone's live members as the ring lists them, this node among them.
  virtual std::vector<ZonePeer> Members() = 0;
  // The bucket's limit from this node's limits (0: none).
  virtual uint64_t LimitOf(const BucketKey& key) = 0;
  // The bucket's active streams in each partition this node serves (and final counts of
  // those it stopped serving since its last report), with their offsets (home_ledger.h).
  virtual std::vector<PartitionCount> CountsOf(const BucketKey& key) = 0;
};

class ZoneAgent final : public ZoneHandler {
 public:
  struct Options {
    ZonePeer self;
    int32_t num_partitions = 64;
    int64_t lease_ms = 60'000;
    // What a report tops its headroom up to: four times what it spent since its last report,
    // and at least this.
    uint64_t min_want = 4;
    // After a request's call to a home failed, requests do not call it again for this long
    // (a paused or partitioned home costs one call timeout per interval, not one per request);
    // nor, for a bucket, after its home said the zone is full. The node passes its exchange
    // interval.
    int64_t silent_hold_ms = 1'000;
    // A request's calls to peers end within this in all, and by its caller's deadline leaving
    // it a quarter of its time to answer (CallsDeadline). The node passes its call timeout.
    int64_t request_budget_ms = 2'000;
  };

  // `env`, `transport` and `clock` must outlive the agent.
  ZoneAgent(Options options, ZoneEnvironment& env, ZoneTransport& transport, const Clock& clock);

  // --- as a member ---
  // The state of each (bucket, limit) for a request now. The hot ones point at this agent's
  // MemberBuckets, which live as long as it does.
  std::vector<ZoneBucket> States(const std::vector<std::pair<BucketKey, uint64_t>>& buckets);
  // Buckets a request found cold and full enough to turn hot: reported with a trigger in the
  // next round, which `wake` (when set) is asked to bring forward.
  void AskToTurnHot(const std::vector<BucketKey>& keys);
  void SetWake(std::function<void()> wake) { wake_ = std::move(wake); }
  // Whether requests admit against the zone now: not while a live node of the zone does not
  // share its limits (no `[zone]`, or another zone protocol: a rollout), since no ledger can
  // count that node's partitions; requests then admit on static shares, as that node does.
  // The agent's rounds go on meanwhile, asking for no headroom. Set from the ring's reads
  // (NodeZone). Either way it drops the headroom of its hot buckets: static shares admit
  // without spending it, so what the home granted before no longer fits under the limit with
  // what they admitted, and it would be spent on top of them once the zone is shared again.
  void SetShared(bool shared);
  bool Shared() const { return shared_.load(std::memory_order_relaxed); }
  // When a request whose caller waits until `caller` must have ended its calls to peers: the
  // calls below start only before it and end by it (a call left unfinished fails closed).
  Deadline CallsDeadline(Deadline caller) const;
  // A hot bucket that ran out while `need` streams wait: one exchange with its home asking for
  // them (urgent; what the home recalls from others for them comes in its answer), and a
  // second when that fell short. True when it holds headroom.
  bool Acquire(const BucketKey& key, uint64_t need, Deadline deadline);
  // Whether the bucket's home said, within the last silent_hold_ms, that the zone is settled at
  // its limit (ExchangeAnswer::full): Acquire would change nothing, so requests refuse at once.
  bool KnownFull(const BucketKey& key);
  // A cold bucket whose floor is full for a stream: asks its home to turn it hot now (the
  // home has the other members report it at once, then gives this member its first
  // directive; once more when a report did not come), and Acquires when that brought
  // nothing. True when the bucket is hot here with headroom.
  bool TurnHot(const BucketKey& key, uint64_t need, Deadline deadline);
  // A bucket unknown here (no lease from its home yet): one exchange with the home for the
  // lease. True when the bucket is no longer unknown.
  bool Refresh(const BucketKey& key, Deadline deadline);

  // The share of a rate bucket's rate (0 to 1) this node refills at now, for a request that
  // asks `bytes` of it: they count towards its demand, which rounds report to the bucket's
  // home (rate_shares.h). `rate`: the bucket's rate here (bytes/s, > 0). Never calls a peer.
  double RateShareOf(const BucketKey& key, double rate, double bytes);

  // One round: an exchange with every home, then the home's housekeeping.
  void Round();

  // --- the Zone service's calls ---
  Result<ExchangeAnswer> Exchange(const ExchangeRequest& request, Deadline deadline) override;
  Result<std::vector<BucketReport>> Direct(const DirectRequest& request) override;

  // One bucket as this node sees it, for the usage document and the rejection log: its home,
  // its state here, this member's headroom, and the zone-wide ledger when homed here.
  struct BucketView {
    std::string home;      // the ring id of its home ("" with no members)
    const char* state = "unlimited";  // unlimited, unknown (no lease), cold, hot
    std::optional<uint64_t> headroom;  // hot here: places this member holds
    uint64_t floor_room = 0;           // cold here: the sum of its floors (the cold share of L)
  };
  BucketView Describe(const BucketKey& key, uint64_t limit);

  // What a home's ledger holds, for the usage endpoint and tests; null when not homed here.
  struct LedgerView {
    uint64_t limit = 0, counted = 0, held = 0;
    int64_t free = 0;
    bool learning = false, rooms_open = false;
  };
  std::optional<LedgerView> LedgerOf(const BucketKey& key);
  // This member's headroom in a hot bucket; nullopt while it is not hot here.
  std::optional<uint64_t> HeadroomOf(const BucketKey& key);

  // One rate bucket as this node sees it: its home, the share it refills at (nullopt when no
  // request asked it here lately), and, homed here, the shares its members may refill at in
  // all (fractions of the rate).
  struct RateView {
    std::string home;
    std::optional<double> share;
    std::optional<double> zone_held;
  };
  RateView DescribeRate(const BucketKey& key);

 private:
  // The report of one bucket: headroom held first, then the counts (member_bucket.h).
  BucketReport ReportOf(const BucketKey& key, bool trigger);
  // One exchange with `home` about `keys`; applies the answer. `need`: streams wait for that
  // many places (urgent for what the bucket does not hold). The call's error when it failed.
  Status ExchangeWith(const ZonePeer& home, const std::vector<BucketKey>& keys, const std::set<BucketKey>& triggers,
                      uint64_t need, Deadline deadline, std::vector<RateReport> rates = {});
  // A home's Direct to one member, known to it by `name`.
  struct Directed {
    ZonePeer peer;
    std::string name;
    DirectRequest request;
  };
  // As a home: sends them all at once (in process to this node) and applies the
  // acknowledgements of those that answered.
  void DirectMembers(const std::vector<Directed>& sends, Deadline deadline);
  // The bucket's headroom here; null while it is not hot here.
  MemberBucket* HotBucket(const BucketKey& key);
  // The bucket's home, unless a request's call to it failed within the last silent_hold_ms.
  std::optional<ZonePeer> HomePeerOf(const BucketKey& key);
  // ExchangeWith for a request's call, unless its deadline has passed: notes a failure for
  // HomePeerOf.
  bool CallFor(const ZonePeer& home, const std::vector<BucketKey>& keys, const std::set<BucketKey>& triggers,
               uint64_t need, Deadline deadline);
  // As a home: sends the recalls (Direct) and applies their acknowledgements.
  void SendRecalls(const std::vector<Recall>& recalls, const std::vector<ZonePeer>& peers, Deadline deadline);
  // As a home: has every member but `asker` report `keys` now (Direct), and applies them.
  void AskForReports(const std::vector<BucketKey>& keys, const std::string& asker, const std::vector<ZonePeer>& peers,
                     Deadline deadline);
  static std::vector<std::string> IdsOf(const std::vector<ZonePeer>& peers);
  // The ring's members as this home knows them: each one's name, or its placeholder.
  std::vector<std::string> NamesOf(const std::vector<ZonePeer>& peers) const;  // REQUIRES(home_mu_)
  // Notes the name `member` exchanged under (renaming its placeholder).
  void Heard(const std::string& member);  // REQUIRES(home_mu_)

  const Options options_;
  const std::string name_;  // options_.self.id@started_ms
  ZoneEnvironment& env_;
  ZoneTransport& transport_;
  const Clock& clock_;
  std::function<void()> wake_;
  std::atomic<bool> shared_{true};

  std::mutex member_mu_;
  ZoneMember member_;              // GUARDED_BY(member_mu_)
  std::set<BucketKey> triggered_;  // GUARDED_BY(member_mu_)
  std::map<std::string, int64_t> silent_until_;  // GUARDED_BY(member_mu_): a home's call failed, until
  std::map<BucketKey, int64_t> full_until_;      // GUARDED_BY(member_mu_): the home said full, until

  RateShares rates_;  // its own lock, taken alone

  AskStripes asks_;  // turns of the urgent asks homed here
  std::mutex home_mu_;
  ZoneHome home_;  // GUARDED_BY(home_mu_)
  std::vector<std::string> ring_ids_;  // GUARDED_BY(home_mu_): as of the last round, for HomedHere
  std::map<std::string, std::string> names_;  // GUARDED_BY(home_mu_): ring id -> name last heard
};

}  // namespace limits::zone
