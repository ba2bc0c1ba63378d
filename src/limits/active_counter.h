// ActiveCounter: how many streams of one group (tenant, partition, policy) were last seen
// within the active window, exact to the second, without scanning the streams.
//
// Streams are counted by their last-seen second. Asking for the count at a cutoff forgets
// the seconds below it, so each second is forgotten once (amortised O(1)); every other
// operation is a B-tree step over at most active-window-in-seconds keys, independent of the
// number of streams. The cutoff is expected to move forward (it comes from a clock).
// Not thread-safe: the owning partition's mutex guards it.
#pragma once

#include <absl/container/btree_map.h>

#include <cstdint>

namespace limits {

class ActiveCounter {
 public:
  // A stream is now last seen at `seen_s`. Ignored when that is already below the horizon.
  void Add(uint32_t seen_s) {
    if (seen_s < horizon_) return;
    ++by_second_[seen_s];
    ++active_;
  }

  // A stream is no longer last seen at `seen_s` (it moved or was removed).
  void Remove(uint32_t seen_s) {
    if (seen_s < horizon_) return;  // already forgotten by Active()
    auto it = by_second_.find(seen_s);
    if (it == by_second_.end()) return;  // never counted: nothing to undo
    if (--it->second == 0) by_second_.erase(it);
    --active_;
  }

  void Move(uint32_t from_s, uint32_t to_s) {
    if (from_s == to_s) return;
    Remove(from_s);
    Add(to_s);
  }

  // Streams last seen at or after `cutoff_s`.
  uint32_t Active(int64_t cutoff_s) {
    if (cutoff_s > static_cast<int64_t>(horizon_)) {
      horizon_ = static_cast<uint32_t>(cutoff_s);
      while (!by_second_.empty() && by_second_.begin()->first < horizon_) {
        active_ -= by_second_.begin()->second;
        by_second_.erase(by_second_.begin());
      }
    }
    return active_;
  }

  // Everything below it is forgotten.
  uint32_t horizon() const { return horizon_; }
  bool empty() const { return active_ == 0; }

 private:
  absl::btree_map<uint32_t, uint32_t> by_second_;  // last-seen second -> streams
  uint32_t horizon_ = 0;
  uint32_t active_ = 0;  // sum of by_second_
};

}  // namespace limits
