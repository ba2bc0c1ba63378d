// ActiveCounter: how many streams of one group (tenant, partition, policy) were last seen
// within the active window, exact to the second, without scanning the streams per question.
//
// Streams are counted by the minute of their last-seen second, except in the minute the
// cutoff is in (the boundary minute), where they are counted by second: only there does the
// second decide whether a stream is active. When the cutoff moves into a new minute, that
// minute's streams are counted again by second, from the group's streams (a scan the owner
// provides: once per group per minute, and only when the minute holds streams). Everything
// below the cutoff is forgotten once. A group thus keeps at most (window / 60 + 60) counts,
// where one count per distinct second cost ~12 B per stream of a 90-minute spread.
// The cutoff is expected to move forward (it comes from a clock).
// Not thread-safe: the owning partition's mutex guards it.
#pragma once

#include <absl/container/btree_map.h>

#include <algorithm>
#include <cstdint>
#include <limits>

namespace limits {

class ActiveCounter {
 public:
  // A stream is now last seen at `seen_s`. Ignored when that is already below the horizon.
  void Add(uint32_t seen_s) {
    if (seen_s < horizon_) return;
    ++counts_[KeyOf(seen_s)];
    ++active_;
  }

  // A stream is no longer last seen at `seen_s` (it moved or was removed). Every Remove must
  // undo an Add of the same second (or fall below the horizon like it).
  void Remove(uint32_t seen_s) {
    if (seen_s < horizon_) return;  // already forgotten by Active()
    auto it = counts_.find(KeyOf(seen_s));
    if (it == counts_.end()) return;  // never counted: nothing to undo
    if (--it->second == 0) counts_.erase(it);
    --active_;
  }

  void Move(uint32_t from_s, uint32_t to_s) {
    if (from_s == to_s) return;
    // A refresh mostly stays in its count (a later minute's): then nothing changes, and the
    // tree, a cache miss per group on the request path, is not read at all.
    if (from_s >= horizon_ && to_s >= horizon_ && KeyOf(from_s) == KeyOf(to_s)) return;
    Remove(from_s);
    Add(to_s);
  }

  // Streams last seen at or after `cutoff_s`. `scan(minute_start_s, fn)` must call
  // fn(last_seen_s) for every stream of the group last seen in [minute_start_s, +60).
  template <typename Scan>
  uint32_t Active(int64_t cutoff_s, Scan&& scan) {
    if (cutoff_s <= static_cast<int64_t>(horizon_)) return active_;
    const auto cutoff = static_cast<uint32_t>(std::min<int64_t>(cutoff_s, std::numeric_limits<uint32_t>::max()));
    const uint64_t minute = cutoff / 60;
    const bool same_minute = minute == horizon_ / 60;
    horizon_ = cutoff;
    if (same_minute) {
      ForgetBelow(SecondKey(cutoff));
      return active_;
    }
    ForgetBelow(minute * kKeysPerMinute);
    auto it = counts_.find(MinuteKey(minute));
    if (it == counts_.end()) return active_;
    active_ -= it->second;
    counts_.erase(it);
    scan(static_cast<uint32_t>(minute * 60), [&](uint32_t seen_s) {
      if (seen_s < cutoff || seen_s / 60 != minute) return;
      ++counts_[SecondKey(seen_s)];
      ++active_;
    });
    return active_;
  }

  // Everything below it is forgotten.
  uint32_t horizon() const { return horizon_; }
  bool empty() const { return active_ == 0; }
  // Counts held (for tests and memory accounting).
  size_t keys() const { return counts_.size(); }

 private:
  // Keys sort by time: minute * 64 + second-of-minute for the boundary minute's seconds,
  // minute * 64 + 63 for a later minute's streams.
  static constexpr uint64_t kKeysPerMinute = 64;
  static uint64_t SecondKey(uint32_t s) { return uint64_t{s / 60} * kKeysPerMinute + s % 60; }
  static uint64_t MinuteKey(uint64_t minute) { return minute * kKeysPerMinute + kKeysPerMinute - 1; }
  uint64_t KeyOf(uint32_t s) const { return s / 60 == horizon_ / 60 ? SecondKey(s) : MinuteKey(s / 60); }

  void ForgetBelow(uint64_t key) {
    while (!counts_.empty() && counts_.begin()->first < key) {
      active_ -= counts_.begin()->second;
      counts_.erase(counts_.begin());
    }
  }

  absl::btree_map<uint64_t, uint32_t> counts_;
  uint32_t horizon_ = 0;
  uint32_t active_ = 0;  // sum of counts_
};

}  // namespace limits
