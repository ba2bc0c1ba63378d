// StallDetector: finds assigned partitions whose consumption makes no progress while the
// broker answers and has records beyond the consumed position — a stuck consumer, which the
// consumer recovers from by re-creating its client (kafka/consumer.h).
//   Report  (consumer thread, cheap, no network) the partitions being consumed (replaying or
//           ready) and how far each got; a partition whose position or generation changed
//           is re-armed, one no longer listed is forgotten.
//   Check   (a thread of its own: it waits on the network) for each partition idle for the
//           timeout, the log end from the offset source. End at the position: idle, re-armed
//           (one look-up per partition per timeout). End beyond it: the records may have
//           arrived a moment ago and be on their way, so it is stalled only if a look-up at
//           least `confirm` later finds the position still where it was. A
//           look-up that fails is an outage, not a stall — restarting the consumer would not
//           help: the round ends there (the broker is not answering; that partition is
//           looked up again a timeout later).
// Thread-safe. The offset source must be safe to call from the checker's thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "common/clock.h"
#include "limits/lifecycle/offset_source.h"

namespace limits {

struct ConsumedPosition {
  int32_t partition = -1;
  int64_t generation = 0;
  int64_t offset = -1;  // next offset to consume; -1 while unknown (reading from the log start)
};

struct Stall {
  int32_t partition = -1;
  int64_t position = -1;  // as reported (-1: nothing consumed yet)
  int64_t end = -1;       // the log end the broker answered
  int64_t idle_ms = 0;    // how long the position had not moved (or since it was last looked up)
};

struct StallCheck {
  std::vector<Stall> stalled;
  size_t looked_up = 0;     // look-ups made this round
  bool outage = false;      // a look-up failed: the broker is not answering
  std::string outage_error;
};

class StallDetector {
 public:
  struct Options {
    // A partition whose position has not moved for this long is looked up.
    std::chrono::milliseconds timeout{60'000};
    // A position seen behind the log end is a stall when it still has not moved this much
    // later (records that had just arrived are consumed meanwhile).
    std::chrono::milliseconds confirm{15'000};
    // Each look-up's timeout.
    std::chrono::milliseconds lookup_timeout{5'000};
  };

  // `offsets` and `clock` must outlive the detector.
  StallDetector(OffsetSource& offsets, const Clock& clock, Options options);

  // Consumer thread: every partition being consumed. Those not listed are forgotten.
  void Report(const std::vector<ConsumedPosition>& positions);
  // Forgets every partition (a new consumer client starts over).
  void Reset();
  // Checker thread: looks up the partitions idle for the timeout (longest idle first).
  StallCheck Check();

  const Options& options() const { return options_; }

 private:
  struct Tracked {
    int64_t generation = 0;
    int64_t offset = -1;
    int64_t since_ms = 0;   // when the position last moved (or was last looked up idle)
    int64_t behind_ms = 0;  // when a look-up first found the log end beyond it; 0: not yet
  };

  OffsetSource& offsets_;
  const Clock& clock_;
  const Options options_;
  std::mutex mu_;
  std::map<int32_t, Tracked> tracked_;  // GUARDED_BY(mu_)
};

}  // namespace limits
