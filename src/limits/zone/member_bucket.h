// MemberBucket: this node's side of one hot (tenant, bucket) of its zone — the headroom its
// home granted, spent one place per admitted stream, and the directives and reports that keep
// the home's ledger (home_ledger.h) right: directives are applied in sequence order only (an
// older one arriving late is dropped, so the home may count it as settled once a newer one is
// acknowledged), and reports carry a counter of their own.
// Thread-safe (a lock of its own): requests spend while exchanges apply and report. A report
// takes its headroom (Hold) before the caller counts the partitions: a stream admitted in
// between is then in both, never in neither (the home may count it twice, never grant its
// place again).
#pragma once

#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

#include "limits/zone/home_ledger.h"

namespace limits::zone {

class MemberBucket {
 public:
  MemberBucket() = default;
  // Moved only while no other thread uses either (a simulation's members, restarted).
  MemberBucket(MemberBucket&& other) noexcept { *this = std::move(other); }
  MemberBucket& operator=(MemberBucket&& other) noexcept {
    if (this == &other) return *this;
    std::scoped_lock lock(mu_, other.mu_);
    unused_ = other.unused_;
    home_ = other.home_;
    applied_ = other.applied_;
    report_seq_ = other.report_seq_;
    spent_ = other.spent_;
    closed_ = other.closed_;
    return *this;
  }

  uint64_t unused() const {
    std::lock_guard lock(mu_);
    return unused_;
  }
  uint64_t applied_home() const {
    std::lock_guard lock(mu_);
    return home_;
  }
  uint64_t applied() const {
    std::lock_guard lock(mu_);
    return applied_;
  }
  // Whether it applied a directive: the bucket is hot, and this member no longer admits on
  // its cold floors (partition_floors.h) but only with headroom.
  bool closed() const {
    std::lock_guard lock(mu_);
    return closed_;
  }

  // Takes one place of headroom for a new stream; false when none is left.
  bool TrySpend() {
    std::lock_guard lock(mu_);
    if (unused_ == 0) return false;
    --unused_;
    ++spent_;
    return true;
  }

  // Applies a directive newer than the last applied: a grant adds headroom, a return gives back
  // as much as is left of what it asks. Returns false (and changes nothing) for an older one.
  bool Apply(const Directive& d) {
    std::lock_guard lock(mu_);
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

  // Gives up all its headroom, without a directive: its home may have forgotten it (its lease
  // ran out). Its next report says 0 unused.
  void Drop() {
    std::lock_guard lock(mu_);
    unused_ = 0;
  }

  // What a report says it holds, taken before its counts.
  struct Holding {
    uint64_t unused = 0;
    uint64_t home = 0;
    uint64_t applied = 0;
    uint64_t spent = 0;  // places spent since the last report: what the member asks more by
  };
  Holding Hold() {
    std::lock_guard lock(mu_);
    Holding h{unused_, home_, applied_, spent_};
    spent_ = 0;
    return h;
  }

  // The report of this bucket: what it held (Hold), with the counts the caller took after.
  MemberReport Report(const Holding& held, std::vector<PartitionCount> counts) {
    std::lock_guard lock(mu_);
    return MemberReport{++report_seq_, std::move(counts), held.unused, held.home, held.applied};
  }
  // Holds and reports at once: for callers whose counts cannot move meanwhile.
  MemberReport Report(std::vector<PartitionCount> counts) { return Report(Hold(), std::move(counts)); }

 private:
  mutable std::mutex mu_;
  uint64_t unused_ = 0;  // GUARDED_BY(mu_)
  uint64_t home_ = 0;  // the incarnation of the home whose directive it applied last
  uint64_t applied_ = 0;
  uint64_t report_seq_ = 0;
  uint64_t spent_ = 0;
  bool closed_ = false;
};

}  // namespace limits::zone
