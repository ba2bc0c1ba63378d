// HomeLedger: the home node's account of one hot (tenant, bucket) of a zone — where each of the
// bucket's L places is. A place is either counted in a partition (an active stream, as the
// partition's owners reported it) or held by a member as headroom it may spend without
// asking. The ledger grants only what neither holds, so a zone whose members spend only
// granted headroom never holds more than L (ARCHITECTURE.md, "Exact limits across a zone").
//
// Messages may arrive late, twice or never: a report older than one already applied is
// ignored; a grant is held for its member until a report acknowledges its sequence number
// (members apply directives in sequence order and drop older ones, so an acknowledged grant
// that was lost on the way is never applied later).
// A partition that changes owner keeps every owner's reading until another has consumed past
// its history; while the new owner lags behind, the partition counts the old owner's reading
// plus the streams the new owner admitted since (its own count lacks the records it has not
// replayed yet).
// A forgotten member stays forgotten: its late reports are ignored (a restarted node reports
// under a new incarnation).
// Pure: no clock and no threads (times are passed in); the caller serialises calls.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "limits/zone/partition_floors.h"

namespace limits::zone {

// One partition's active streams of the bucket, as a member counted them.
struct PartitionCount {
  int32_t partition = 0;
  // Active streams in the records it consumed, plus those it admitted itself.
  uint64_t active = 0;
  // It consumed every record before this offset.
  int64_t consumed = 0;
  // Every record its count holds lies before this offset: consumed, or past it when its own
  // admissions were produced beyond what it consumed (INT64_MAX while one is not yet
  // acknowledged by the broker, so not yet placed).
  int64_t horizon = 0;
  // Streams it admitted into the partition since it took it over (kept as they were once it
  // no longer owns it).
  uint64_t admitted = 0;
  // The consumer group's generation in which it took the partition over, and whether it has
  // since replayed up to the end offset it snapshotted then: a later owner that has caught up
  // holds every record of the earlier ones.
  uint64_t generation = 0;
  bool caught_up = false;
};

// What a member tells the home about one bucket, taken atomically with its admissions.
struct MemberReport {
  uint64_t seq = 0;  // the member's own counter: a report not newer than the last applied is ignored
  // Every partition it serves, and, in its first report after a revocation at least, every
  // partition it no longer serves (their final counts: what it admitted there since its last
  // report is no longer in its headroom).
  std::vector<PartitionCount> counts;
  uint64_t unused = 0;  // headroom it holds, every directive up to the one below applied
  // The newest directive it has applied (older ones it drops): its home's incarnation, and its
  // number there.
  uint64_t applied_home = 0;
  uint64_t applied_directive = 0;
};

// What the home tells a member: change your headroom by `delta` (a grant when positive, a
// return when negative). A member applies it only when it is newer than the last it applied:
// from a later incarnation of the home (a restarted home numbers from 1 again), or a higher
// `seq` from the same one.
struct Directive {
  int64_t delta = 0;
  uint64_t seq = 0;
  uint64_t home = 0;  // the home's incarnation: it only grows, over restarts and hand-overs
};

// The incarnation a home takes when it starts on a bucket: its clock's milliseconds, so that
// a restart or a move to another node numbers above the earlier home without any stored
// counter; and above every incarnation members were seen to apply, for a node whose clock is
// behind the earlier home's (members drop an older home's directives: it could never learn).
// The low 16 bits are the node's `tiebreak` (IncarnationTiebreak): two nodes that start homes
// of one bucket in the same millisecond (their ring views differ) number apart, unless their
// ids' 16-bit hashes collide.
inline constexpr int kIncarnationTiebreakBits = 16;
inline uint64_t NextIncarnation(uint64_t now_ms, uint64_t highest_seen, uint16_t tiebreak = 0) {
  const uint64_t at_now = (now_ms << kIncarnationTiebreakBits) | tiebreak;
  if (at_now > highest_seen) return at_now;
  return (((highest_seen >> kIncarnationTiebreakBits) + 1) << kIncarnationTiebreakBits) | tiebreak;
}

class HomeLedger {
 public:
  // `incarnation`: this home's, above every earlier home's of the bucket. `num_partitions`: the
  // topic's; with `rotation`, they place the bucket's cold floors (partition_floors.h).
  HomeLedger(uint64_t limit, uint64_t incarnation, int32_t num_partitions = 0, uint64_t rotation = 0);

  uint64_t limit() const { return limit_; }
  uint64_t incarnation() const { return incarnation_; }
  void SetLimit(uint64_t limit);

  // Applies a member's report. Returns false when it was ignored: older than one already
  // applied, from a forgotten member, or with a count or headroom above 2^40 (no zone holds
  // that many streams; refused so that sums never wrap).
  bool Apply(std::string_view member, const MemberReport& report);

  // Active streams of the bucket over every partition; while the cold rooms are open, each
  // partition counts at least its floor (StartClosing).
  uint64_t Counted() const;
  // Headroom members hold: what they last reported unused, plus grants not yet acknowledged.
  uint64_t Held() const;
  // Places nobody counts or holds: L - Counted - Held (negative when the zone is over L, for
  // example after streams arrived from another zone).
  int64_t Free() const;

  // Grants up to `want` free places to `member` (delta 0 when none is free, or while it is
  // learning). Every directive, even an empty one, carries a new sequence number.
  Directive Grant(std::string_view member, uint64_t want);
  // Asks `member` to give back `places` of the headroom it last reported (at most that). The
  // places stay held until a report acknowledges the directive.
  Directive Return(std::string_view member, uint64_t places);
  // What the member last reported unused (0 for one never heard of).
  uint64_t ReportedUnused(std::string_view member) const;
  // Every member it knows of (not forgotten), in name order.
  std::vector<std::string> Members() const;
  // The highest incarnation of another home a member reported applying after this one's, 0
  // when none: a home the ring still names must start again above it (NextIncarnation), as
  // its members drop its directives; one it no longer names steps down.
  uint64_t Superseded() const { return superseded_; }

  // How a ledger starts when the bucket has none: both wait on `members` (the zone's live ones,
  // as the ring says) to report after applying one of its directives, and on each partition to
  // be counted by its newest owner, caught up. A member that applied a directive for the
  // bucket no longer admits on its cold floors, and then nothing it admitted is missing from
  // the counts.
  // - A bucket turning hot (it was cold: nobody holds headroom for it) closes its rooms: the
  //   ledger grants as soon as every partition is counted, and counts each partition at least
  //   at its floor meanwhile, since members not yet told may still fill their floors.
  void StartClosing(std::vector<std::string> members);
  // - A home that starts on a bucket that was hot (the node restarted, or the bucket was
  //   re-homed) learns: it knows none of the members' headroom, nor what a member that died
  //   before it started admitted since its last report, so it grants nothing until it has
  //   learnt. Waiting on the members also drops the earlier home's directives still on the way.
  void StartLearning(std::vector<std::string> members);
  // A closing ledger stops waiting on a member whose lease from this home ran out: it no longer
  // admits cold (zone_member.h). A learning one does not: the member may hold headroom.
  void Excuse(std::string_view member);
  // A closing ledger also waits on `member`, heard from after it started: until the member
  // applies one of its directives, it may admit cold.
  void AwaitAlso(std::string_view member);
  // A member it waits on turned out to be named `to`: it was listed as `from`, a name that
  // stood for a ring member not heard from yet. It waits on `to` instead.
  void Replace(std::string_view from, std::string_view to);
  bool Learning() const { return waiting_ && !closing_; }
  // Whether it grants at all now: not while learning, nor while its rooms are open and some
  // partition is not yet counted by its newest owner, caught up.
  bool CanGrant() const { return !Learning() && (!RoomsOpen() || AllCounted()); }
  bool RoomsOpen() const { return waiting_ && closing_; }
  // The room left on the floors of the partitions whose newest owner is `member`: what it may
  // still admit cold, and so the least a first grant should give it for the turn to hot to
  // reject nothing.
  uint64_t Rooms(std::string_view member) const;
  // Whether what the others hold is not known yet: its rooms are open, or a member other than
  // `member` has a grant it has not acknowledged. Their reports would tell (and close the
  // rooms, and let their unused headroom be recalled).
  bool Unsettled(std::string_view member) const;
  // Whether `member` has a grant it has not acknowledged (on its way, or lost on the way: a
  // later directive it applies settles it).
  bool AwaitsAcknowledgement(std::string_view member) const;
  // Whether it sent `member` a directive (the first to a member carries its rooms).
  bool Directed(std::string_view member) const;
  // Whether `member`'s next directive is its first of a turn to hot, which carries its Rooms.
  bool OwesRooms(std::string_view member) const { return RoomsOpen() && !Directed(member); }

  // Whether a member that is gone (its node left the ring or died) may be forgotten: every
  // partition it ever counted has a later owner that has caught up. Until then its headroom
  // stands: what it admitted after its last report may be in no count yet.
  bool Forgettable(std::string_view member) const;
  // Whether it forgot `member` (its reports are ignored for good).
  bool Forgotten(std::string_view member) const { return forgotten_.contains(member); }
  // Forgets a gone member: its headroom and unacknowledged grants are free again, its late
  // reports are ignored, and a ledger starting no longer waits on it. Only when Forgettable.
  void Forget(std::string_view member);

 private:
  struct Member {
    uint64_t last_report = 0;
    bool reported = false;
    uint64_t unused = 0;
    uint64_t applied = 0;
    std::vector<Directive> in_flight;  // grants with seq > applied
    std::map<int32_t, uint64_t> generations;  // every partition it counted: its newest generation
    bool knows_us = false;  // it reported after applying a directive of this incarnation
    bool directed = false;  // it was sent a directive of this incarnation
  };
  struct Reading {
    std::string member;
    PartitionCount count;
  };

  static uint64_t PartitionTotal(const std::vector<Reading>& readings);
  // The reading of the partition's newest owner; null when nobody reported it.
  const Reading* Newest(int32_t partition) const;
  // Every partition counted by its newest owner, caught up.
  bool AllCounted() const;
  Member& MemberOf(std::string_view member);
  void Start(std::vector<std::string> members, bool closing);
  void StopWaitingIfDone();

  uint64_t limit_;
  uint64_t incarnation_;
  uint64_t rotation_;
  PartitionFloors floors_;
  uint64_t next_seq_ = 0;
  std::map<std::string, Member, std::less<>> members_;
  std::set<std::string, std::less<>> forgotten_;
  std::vector<std::string> waiting_on_;  // members to report under this incarnation
  uint64_t superseded_ = 0;
  bool waiting_ = false;
  bool closing_ = false;
  std::map<int32_t, std::vector<Reading>> partitions_;
};

}  // namespace limits::zone
