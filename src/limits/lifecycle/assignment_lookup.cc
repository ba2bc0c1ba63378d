#include "limits/lifecycle/assignment_lookup.h"

#include <algorithm>

namespace limits {
namespace {

std::chrono::milliseconds Doubled(std::chrono::milliseconds base, int times, std::chrono::milliseconds max) {
  std::chrono::milliseconds d = base;
  for (int i = 0; i < times && d < max; ++i) d *= 2;
  return std::min(d, max);
}

}  // namespace

const char* ResumeSourceName(ResumeSource s) {
  switch (s) {
    case ResumeSource::kCaughtUp: return "caught_up";
    case ResumeSource::kCheckpoint: return "checkpoint";
    case ResumeSource::kTimeIndex: return "time_index";
    case ResumeSource::kLowProbe: return "low_probe";
    case ResumeSource::kLogEnd: return "log_end";
    case ResumeSource::kSearch: return "search";
    case ResumeSource::kFallback: return "fallback";
    case ResumeSource::kGaveUp: return "gave_up";
  }
  return "unknown";
}

AssignmentLookup::AssignmentLookup(Input input, LookupOptions options)
    : input_(std::move(input)), options_(options) {}

AssignmentLookup::Next AssignmentLookup::Step(OffsetSource& source, int64_t now_ms) {
  switch (phase_) {
    case Phase::kBounds: return StepBounds(source, now_ms);
    case Phase::kTimeIndex: return StepTimeIndex(source);
    case Phase::kLowProbe:
    case Phase::kLastProbe:
    case Phase::kSearch: return StepProbe(source);
    case Phase::kDone: break;
  }
  return {Next::kDone};
}

AssignmentLookup::Next AssignmentLookup::Retry(int attempt) {
  ++result_.retries;
  return {Next::kRetryAfter, Doubled(options_.backoff, attempt - 1, options_.max_backoff)};
}

AssignmentLookup::Next AssignmentLookup::StepBounds(OffsetSource& source, int64_t now_ms) {
  const std::chrono::milliseconds timeout = Doubled(options_.timeout, attempt_, options_.max_timeout);
  Result<LogBounds> b = source.Bounds(input_.partition, timeout);
  if (b.ok() && (b->start < 0 || b->end < b->start)) {
    b = Status::Unavailable("implausible log bounds: start " + std::to_string(b->start) + ", end " +
                            std::to_string(b->end));
  }
  if (!b.ok()) {
    result_.last_error = b.status().ToString();
    if (now_ms - input_.started_ms >= options_.give_up.count()) {
      // Liveness wins: serve at once and replay from the checkpoint in the background.
      const std::optional<storage::Checkpoint>& cp = input_.checkpoint;
      phase_ = Phase::kDone;
      result_.source = ResumeSource::kGaveUp;
      result_.resume_offset = cp ? cp->next_offset : -2;  // -2: the log's beginning
      result_.end_offset = -1;
      return {Next::kDone};
    }
    return Retry(++attempt_);
  }
  result_.bounds = *b;
  result_.end_offset = b->end;
  attempt_ = 0;
  return Decide();
}

AssignmentLookup::Next AssignmentLookup::Decide() {
  const LogBounds& b = result_.bounds;
  std::optional<storage::Checkpoint> cp = input_.checkpoint;
  if (cp && cp->next_offset > b.end) {
    // The log was recreated or truncated below what we applied: nothing maps any more.
    result_.drop_data = true;
    result_.drop_reason = "checkpoint beyond the log end";
    cp.reset();
  } else if (!cp && input_.has_data) {
    result_.drop_data = true;
    result_.drop_reason = "no checkpoint";
  }
  if (cp && cp->next_offset < b.start) result_.checkpoint_below_start = true;
  lo_ = cp ? std::max(cp->next_offset, b.start) : b.start;
  if (lo_ >= b.end) return Finish(b.end, ResumeSource::kCaughtUp);
  // Timestamps are non-decreasing within a partition (produce time): when the newest record
  // the checkpoint covers is inside the window, so is everything after it.
  if (cp && cp->newest_record_ms >= input_.cutoff_ms) return Finish(lo_, ResumeSource::kCheckpoint);
  phase_ = Phase::kTimeIndex;
  return {Next::kContinue};
}

AssignmentLookup::Next AssignmentLookup::StepTimeIndex(OffsetSource& source) {
  Result<std::optional<int64_t>> r = source.OffsetForTime(input_.partition, input_.cutoff_ms,
                                                             Doubled(options_.timeout, attempt_, options_.max_timeout));
  if (!r.ok()) {
    result_.last_error = r.status().ToString();
    if (++attempt_ < options_.window_attempts) return Retry(attempt_);
    attempt_ = 0;  // the time index is an optimisation: probe instead
    phase_ = Phase::kLowProbe;
    return {Next::kContinue};
  }
  if (r->has_value()) {
    time_index_answered_ = true;
    return Finish(std::clamp(**r, lo_, result_.bounds.end), ResumeSource::kTimeIndex);
  }
  if (input_.trust_time_index_none) return Finish(result_.bounds.end, ResumeSource::kLogEnd);
  attempt_ = 0;
  phase_ = Phase::kLowProbe;
  return {Next::kContinue};
}

AssignmentLookup::Next AssignmentLookup::StepProbe(OffsetSource& source) {
  const int64_t end = result_.bounds.end;
  const int64_t at = phase_ == Phase::kLowProbe ? lo_ : phase_ == Phase::kLastProbe ? end - 1 : lo_ + (hi_ - lo_) / 2;
  Result<Probe> r = source.ProbeAt(input_.partition, at, Doubled(options_.probe_timeout, attempt_, options_.max_timeout));
  if (!r.ok()) return WindowFailure(r.status());
  attempt_ = 0;
  (phase_ == Phase::kSearch ? result_.search_probes : result_.edge_probes) += 1;
  const bool found = r->kind == Probe::Kind::kRecord;
  const bool inside = found && r->timestamp_ms >= input_.cutoff_ms;
  switch (phase_) {
    case Phase::kLowProbe:
      // Nothing readable from lo_ on (only control records): replaying passes over them.
      if (!found || inside) return Finish(lo_, ResumeSource::kLowProbe);
      lo_ = r->offset;
      phase_ = Phase::kLastProbe;
      return {Next::kContinue};
    case Phase::kLastProbe:
      // Only control records at the end: whether the last record is inside is unknown.
      if (!found) return Finish(lo_, ResumeSource::kFallback);
      if (!inside) return Finish(end, ResumeSource::kLogEnd);
      hi_ = r->offset;
      if (hi_ - lo_ <= 1) return Finish(hi_, ResumeSource::kSearch);
      phase_ = Phase::kSearch;
      return {Next::kContinue};
    default:
      // Invariants: the record at lo_ is older than the window; the first record at or after
      // hi_ is inside it. No record lies in [at, r->offset), so resuming at `at` reads
      // r->offset first.
      if (!found || inside) hi_ = at;
      else lo_ = std::min(r->offset, hi_ - 1);  // min: timestamps out of order
      if (hi_ - lo_ <= 1) return Finish(hi_, ResumeSource::kSearch);
      return {Next::kContinue};
  }
}

AssignmentLookup::Next AssignmentLookup::WindowFailure(const Status& s) {
  result_.last_error = s.ToString();
  if (++attempt_ < options_.window_attempts) return Retry(attempt_);
  // Every record below lo_ is older than the window: replaying from it is exact, only slower.
  return Finish(lo_, ResumeSource::kFallback);
}

AssignmentLookup::Next AssignmentLookup::Finish(int64_t resume, ResumeSource source) {
  phase_ = Phase::kDone;
  result_.resume_offset = resume;
  result_.source = source;
  return {Next::kDone};
}

}  // namespace limits
