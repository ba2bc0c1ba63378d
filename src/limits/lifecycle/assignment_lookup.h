// AssignmentLookup: the offset look-ups of one newly assigned partition, as a resumable state
// machine. Each Step() makes at most one network call and says what to do next, so the
// lifecycler runs steps on a pool and parks a partition whose broker is slow in a timer
// queue rather than on a thread: a slow partition never holds the others back.
//
// The look-ups, cheapest first — a warm restart needs only the log bounds:
//   bounds        log start and end (retried with backoff and a growing timeout until the
//                 give-up deadline; until then the partition is not served)
//   checkpoint    a usable checkpoint whose newest record is inside the window: resume there
//   time index    the broker's ListOffsets by time (real Kafka); its "none" is verified
//   low probe     the first record at max(checkpoint, log start): inside the window -> resume
//   last probe    the record at end - 1: outside the window -> nothing to replay
//   search        only when the window starts somewhere inside: a binary search over
//                 single-record probes
// When a window-start step keeps failing, the partition replays from max(checkpoint, log
// start) — correct, only slower — rather than serving without its data.
// Not thread-safe: one step at a time (the lifecycler's job lock).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "limits/lifecycle/offset_source.h"
#include "storage/checkpoint.h"

namespace limits {

struct LookupOptions {
  // Timeout of the first bounds request; doubles per failed attempt up to the maximum.
  std::chrono::milliseconds timeout{5'000};
  std::chrono::milliseconds max_timeout{30'000};
  // Wait before the first retry; doubles per failed attempt up to the maximum.
  std::chrono::milliseconds backoff{200};
  std::chrono::milliseconds max_backoff{5'000};
  // Failed attempts of one window-start step before replaying from the lower bound instead;
  // each attempt's timeout doubles too (a slow leader answers the second or third).
  int window_attempts = 3;
  std::chrono::milliseconds probe_timeout{5'000};
  // After this long without the log bounds, serve anyway (lookup_failed): liveness wins.
  std::chrono::milliseconds give_up{120'000};
};

// How the resume offset was found (for logs, metrics and tests).
enum class ResumeSource : uint8_t {
  kCaughtUp,    // the checkpoint is at the log end
  kCheckpoint,  // the checkpoint's newest record is inside the window
  kTimeIndex,   // the broker's time index
  kLowProbe,    // the record at max(checkpoint, log start) is inside the window
  kLogEnd,      // the newest record is outside the window: nothing to replay
  kSearch,      // binary search
  kFallback,    // a window-start step failed: replay from max(checkpoint, log start)
  kGaveUp,      // the bounds never came: served at once from the checkpoint (or the beginning)
};
const char* ResumeSourceName(ResumeSource s);

struct LookupResult {
  int64_t resume_offset = -1;
  int64_t end_offset = -1;  // -1 when the look-up gave up
  LogBounds bounds;
  ResumeSource source = ResumeSource::kFallback;
  // The data on disk cannot be continued (no checkpoint, or one beyond the log end): drop it
  // before replaying. `drop_reason` says why.
  bool drop_data = false;
  std::string drop_reason;
  // The checkpoint is below the log start: retention deleted records this node never saw.
  // The rows are kept (replay cannot rebuild them) and the partition resumes at the start.
  bool checkpoint_below_start = false;
  std::string last_error;  // of the last failed call, if any
  int edge_probes = 0;     // low/last probes
  int search_probes = 0;   // binary-search probes
  int retries = 0;         // failed calls retried
};

class AssignmentLookup {
 public:
  struct Input {
    int32_t partition = -1;
    std::optional<storage::Checkpoint> checkpoint;
    bool has_data = false;      // a column family exists for it
    int64_t cutoff_ms = 0;      // window start: records before it are inactive
    int64_t started_ms = 0;     // when the partition was assigned (give-up deadline base)
    // The broker's time index has answered with an offset before: its "none" can be trusted.
    bool trust_time_index_none = false;
  };

  struct Next {
    enum Kind : uint8_t { kContinue, kRetryAfter, kDone } kind = kContinue;
    std::chrono::milliseconds delay{0};
  };

  AssignmentLookup(Input input, LookupOptions options);

  // One step; `now_ms` on the clock the give-up deadline is measured with.
  Next Step(OffsetSource& source, int64_t now_ms);

  const LookupResult& result() const { return result_; }
  const Input& input() const { return input_; }
  // Whether the broker's time index answered with an offset (not "none").
  bool time_index_answered() const { return time_index_answered_; }

 private:
  enum class Phase : uint8_t { kBounds, kTimeIndex, kLowProbe, kLastProbe, kSearch, kDone };

  Next StepBounds(OffsetSource& source, int64_t now_ms);
  Next StepTimeIndex(OffsetSource& source);
  Next StepProbe(OffsetSource& source);
  // After the bounds: decide from the checkpoint, or go on to the window start.
  Next Decide();
  Next Finish(int64_t resume, ResumeSource source);
  // A failed window-start call: retry, or give up on the window and replay from `lo_`.
  Next WindowFailure(const Status& s);
  Next Retry(int attempt);

  const Input input_;
  const LookupOptions options_;
  Phase phase_ = Phase::kBounds;
  LookupResult result_;
  int attempt_ = 0;   // failed attempts of the current step
  int64_t lo_ = 0;    // a record at or below lo_ is older than the window (or lo_ is the lower bound)
  int64_t hi_ = 0;    // the first in-window record is at or below hi_ (search)
  bool time_index_answered_ = false;
};

}  // namespace limits
