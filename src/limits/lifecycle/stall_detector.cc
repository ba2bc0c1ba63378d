#include "limits/lifecycle/stall_detector.h"

#include <algorithm>

namespace limits {

StallDetector::StallDetector(OffsetSource& offsets, const Clock& clock, Options options)
    : offsets_(offsets), clock_(clock), options_(options) {}

void StallDetector::Report(const std::vector<ConsumedPosition>& positions) {
  const int64_t now = clock_.NowMillis();
  std::lock_guard lock(mu_);
  std::map<int32_t, Tracked> next;
  for (const ConsumedPosition& p : positions) {
    auto it = tracked_.find(p.partition);
    if (it != tracked_.end() && it->second.generation == p.generation && it->second.offset == p.offset) {
      next.emplace(p.partition, it->second);
    } else {
      next.emplace(p.partition, Tracked{.generation = p.generation, .offset = p.offset, .since_ms = now});
    }
  }
  tracked_.swap(next);
}

void StallDetector::Reset() {
  std::lock_guard lock(mu_);
  tracked_.clear();
}

StallCheck StallDetector::Check() {
  struct Candidate {
    int32_t partition;
    Tracked at;
  };
  std::vector<Candidate> candidates;
  {
    const int64_t now = clock_.NowMillis();
    std::lock_guard lock(mu_);
    for (const auto& [p, t] : tracked_) {
      if (now - t.since_ms >= options_.timeout.count()) candidates.push_back({p, t});
    }
  }
  std::stable_sort(candidates.begin(), candidates.end(),
            [](const Candidate& a, const Candidate& b) { return a.at.since_ms < b.at.since_ms; });
  StallCheck out;
  for (const Candidate& c : candidates) {
    ++out.looked_up;
    Result<LogBounds> bounds = offsets_.Bounds(c.partition, options_.lookup_timeout);
    if (!bounds.ok()) {
      // The broker does not answer: an outage, which a new consumer would not end. The round
      // ends (the other candidates are most likely behind the same broker, and each failure
      // costs a timeout); this one is re-armed, so with one leader down the next rounds look
      // at the partitions of the others first.
      out.outage = true;
      out.outage_error = bounds.status().ToString();
      std::lock_guard lock(mu_);
      auto it = tracked_.find(c.partition);
      if (it != tracked_.end() && it->second.generation == c.at.generation) it->second.since_ms = clock_.NowMillis();
      break;
    }
    const int64_t now = clock_.NowMillis();
    std::lock_guard lock(mu_);
    auto it = tracked_.find(c.partition);
    // Moved (or re-assigned) during the look-up: progress after all.
    if (it == tracked_.end() || it->second.generation != c.at.generation || it->second.offset != c.at.offset) continue;
    // Nothing consumed yet reads from the log start; a position below it (retention deleted
    // what it pointed at) has nothing to read below the start either.
    const int64_t from = std::max(c.at.offset, bounds->start);
    Tracked& t = it->second;
    if (bounds->end <= from) {
      t.since_ms = now;  // idle at the end: re-armed
      t.behind_ms = 0;
    } else if (t.behind_ms == 0) {
      t.behind_ms = now;  // behind: a stall if still here `confirm` from now
    } else if (now - t.behind_ms >= options_.confirm.count()) {
      out.stalled.push_back(
          {.partition = c.partition, .position = c.at.offset, .end = bounds->end, .idle_ms = now - c.at.since_ms});
      t.since_ms = now;  // reported once per timeout
      t.behind_ms = 0;
    }
  }
  return out;
}

}  // namespace limits
