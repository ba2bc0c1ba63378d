// HomeLedger: the home node's account of one hot (tenant, bucket) of a zone — where each of the
// bucket's L places is. A place is either counted in a partition (an active stream, as the
// partition's owner last reported it) or held by a member as headroom it may spend without
// asking. The ledger grants only what neither holds, so a zone whose members spend only
// granted headroom never holds more than L (ARCHITECTURE.md, "Exact limits across a zone").
//
// Messages may arrive late, twice or never: a report older than one already applied is
// ignored; a grant is held for its member until a report acknowledges its sequence number
// (members apply directives in sequence order and drop older ones, so an acknowledged grant
// that was lost on the way is never applied later); a partition that changes owner counts the
// larger of its reports for the handover grace.
// Pure: no clock and no threads (times are passed in); the caller serialises calls.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace limits::zone {

// One partition's active streams of the bucket, as a member counted them.
struct PartitionCount {
  int32_t partition = 0;
  uint64_t active = 0;
};

// What a member tells the home about one bucket, taken atomically with its admissions.
struct MemberReport {
  uint64_t seq = 0;  // the member's own counter: a report not newer than the last applied is ignored
  // Every partition it serves, and every partition it served whose data it still holds (after
  // a revocation the new owner may not have reported yet).
  std::vector<PartitionCount> counts;
  uint64_t unused = 0;          // headroom it holds, every directive up to applied_directive applied
  uint64_t applied_directive = 0;  // the newest directive it has applied (older ones it drops)
};

// What the home tells a member: change your headroom by `delta` (a grant when positive, a
// return when negative). A member applies it only when `seq` is newer than the last it applied.
struct Directive {
  int64_t delta = 0;
  uint64_t seq = 0;
};

class HomeLedger {
 public:
  HomeLedger(uint64_t limit, int64_t handover_grace_ms);

  uint64_t limit() const { return limit_; }
  void SetLimit(uint64_t limit) { limit_ = limit; }

  // Applies a member's report, received at now_ms. Returns false when it was older than one
  // already applied (and so ignored).
  bool Apply(std::string_view member, const MemberReport& report, int64_t now_ms);

  // Active streams of the bucket over every partition (the larger report during a handover).
  uint64_t Counted(int64_t now_ms) const;
  // Headroom members hold: what they last reported unused, plus grants not yet acknowledged.
  uint64_t Held() const;
  // Places nobody counts or holds: L - Counted - Held (negative when the zone is over L, for
  // example after streams arrived from another zone).
  int64_t Free(int64_t now_ms) const;

  // Grants up to `want` free places to `member` (delta 0 when none is free). Every directive,
  // even an empty one, carries a new sequence number.
  Directive Grant(std::string_view member, uint64_t want, int64_t now_ms);
  // Asks `member` to give back `places` of the headroom it last reported (at most that). The
  // places stay held until a report acknowledges the directive.
  Directive Return(std::string_view member, uint64_t places);
  // What the member last reported unused (0 for one never heard of).
  uint64_t ReportedUnused(std::string_view member) const;

  // A member that is gone (left the ring, or dead with its partitions owned by others): its
  // headroom and unacknowledged grants are free again. Its partition counts stay until newer
  // owners report them.
  void Forget(std::string_view member);

 private:
  struct Member {
    uint64_t last_report = 0;
    bool reported = false;
    uint64_t unused = 0;
    uint64_t applied = 0;
    std::vector<Directive> in_flight;  // grants with seq > applied
  };
  struct Reading {
    std::string member;
    uint64_t active = 0;
    int64_t at_ms = 0;
  };

  uint64_t EffectiveCount(const std::vector<Reading>& readings, int64_t now_ms) const;
  Member& MemberOf(std::string_view member);

  uint64_t limit_;
  int64_t grace_ms_;
  uint64_t next_seq_ = 0;
  std::map<std::string, Member, std::less<>> members_;
  std::map<int32_t, std::vector<Reading>> partitions_;
};

}  // namespace limits::zone
