// MemberBucket: this node's side of one hot (tenant, bucket) of its zone — the headroom its
// home granted, spent one place per admitted stream, and the directives and reports that keep
// the home's ledger (home_ledger.h) right: directives are applied in sequence order only (an
// older one arriving late is dropped, so the home may count it as settled once a newer one is
// acknowledged), and reports carry a counter of their own.
// Not thread-safe: the caller holds the tenant's admission stripe, so that a report's counts
// and its headroom are one snapshot.
#pragma once

#include <cstdint>
#include <vector>

#include "limits/zone/home_ledger.h"

namespace limits::zone {

class MemberBucket {
 public:
  uint64_t unused() const { return unused_; }
  uint64_t applied_home() const { return home_; }
  uint64_t applied() const { return applied_; }
  // Whether it applied a directive: the bucket is hot, and this member no longer admits on
  // its cold floors (partition_floors.h) but only with headroom.
  bool closed() const { return closed_; }

  // Takes one place of headroom for a new stream; false when none is left.
  bool TrySpend() {
    if (unused_ == 0) return false;
    --unused_;
    return true;
  }

  // Applies a directive newer than the last applied: a grant adds headroom, a return gives back
  // as much as is left of what it asks. Returns false (and changes nothing) for an older one.
  bool Apply(const Directive& d) {
    if (d.home < home_ || (d.home == home_ && d.seq <= applied_)) return false;
    home_ = d.home;
    applied_ = d.seq;
    closed_ = true;
    if (d.delta >= 0) {
      unused_ += static_cast<uint64_t>(d.delta);
    } else {
      const uint64_t back = 0 - static_cast<uint64_t>(d.delta);  // no overflow at INT64_MIN
      unused_ -= back < unused_ ? back : unused_;
    }
    return true;
  }

  // The report of this bucket, with the counts the caller took under the same lock.
  MemberReport Report(std::vector<PartitionCount> counts) {
    return MemberReport{++report_seq_, std::move(counts), unused_, home_, applied_};
  }

 private:
  uint64_t unused_ = 0;
  uint64_t home_ = 0;  // the incarnation of the home whose directive it applied last
  uint64_t applied_ = 0;
  uint64_t report_seq_ = 0;
  bool closed_ = false;
};

}  // namespace limits::zone
