// PartitionLifecycler: the work around a partition changing hands that must not run on the
// rebalance callback.
//   - Each newly assigned partition gets its own look-up (assignment_lookup.h), run step by
//     step on a small pool: a partition whose broker is slow is retried with backoff from a
//     timer queue and never holds another back. Until its log bounds are known it is not
//     served; after `lookup.give_up` it is served anyway (the one place liveness beats
//     correctness: logged loudly and counted).
//   - Finished look-ups are finalised on the dispatcher thread, which alone changes partition
//     data on assignment (drop unusable data, create column families in one call, evict stale
//     streams, write the starting checkpoint), then handed to the consumer as plans.
//   - Revoked partitions past their retention (persisted, so it survives restarts) are
//     dropped, on the same thread.
// OnAssigned/OnRevoked are bounded, local and safe on the rebalance callback.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "limits/lifecycle/assignment_lookup.h"
#include "limits/lifecycle/offset_source.h"
#include "limits/lifecycle/partition_manager.h"
#include "limits/usage/usage_store.h"

namespace limits {

// librdkafka's logical "beginning of the partition".
inline constexpr int64_t kOffsetBeginning = -2;

// What the consumer does for a newly assigned partition.
struct AssignmentPlan {
  int32_t partition = -1;
  int64_t generation = 0;
  int64_t resume_offset = kOffsetBeginning;  // seek here, then resume
  int64_t end_offset = -1;                   // ready once the position reaches it; -1: unknown
  bool lookup_failed = false;                // gave up on the look-up: ready at once

  bool nothing_to_replay() const { return lookup_failed || resume_offset >= end_offset; }
};

struct LifecycleStats {
  std::atomic<uint64_t> lookups{0};        // look-ups finished (any outcome)
  std::atomic<uint64_t> give_ups{0};       // served without known offsets (lookup.give_up)
  std::atomic<uint64_t> fallbacks{0};      // window start unknown: replayed from the lower bound
  std::atomic<uint64_t> retries{0};        // failed look-up calls retried
  std::atomic<uint64_t> edge_probes{0};    // single-record reads at the log's edges
  std::atomic<uint64_t> search_probes{0};  // single-record reads of a binary search
  std::atomic<uint64_t> time_index{0};     // window starts answered by the broker's time index
  std::atomic<uint64_t> stale{0};          // look-ups of an assignment revoked meanwhile
  std::atomic<uint64_t> dropped{0};        // partitions whose data was dropped before replay
};

class PartitionLifecycler {
 public:
  struct Options {
    Windows windows;
    std::chrono::milliseconds revoked_retention{600'000};
    // How often the dispatcher looks for revoked partitions past their retention.
    std::chrono::milliseconds check_interval{1000};
    LookupOptions lookup;
    // Look-up steps in flight at once (each waits on one partition's leader).
    int lookup_threads = 8;
  };
  using PlanSink = std::function<void(std::vector<AssignmentPlan>)>;

  // All references must outlive the lifecycler.
  PartitionLifecycler(UsageStore& store, OffsetSource& offsets, PartitionManager& manager, const Clock& clock,
                      Options options);
  ~PartitionLifecycler();

  // Schedules the eviction of every partition on disk that is not yet revoked (a restart
  // does not extend anyone's retention), then starts the threads; plans go to `sink`.
  Status Start(PlanSink sink);
  // Waits for the look-up steps in flight (each bounded by its timeout), then stops.
  void Stop();

  // Rebalance callback: start the look-ups of these (partition, generation) pairs.
  void OnAssigned(std::vector<std::pair<int32_t, int64_t>> partitions);
  // Rebalance callback: persist "revoked now, evict after the retention".
  void OnRevoked(const std::vector<int32_t>& partitions);

  // Runs the look-ups of one assignment to completion on the calling thread and finalises
  // them, as the threads would (tests; the clock must move for retries to reach a give-up).
  void ProcessAssignment(const std::vector<std::pair<int32_t, int64_t>>& partitions);
  void EvictDueRevoked();

  const LifecycleStats& stats() const { return stats_; }

 private:
  struct Job {
    int32_t partition = -1;
    int64_t generation = 0;
    uint64_t batch = 0;
    AssignmentLookup lookup;
  };
  using SteadyTime = std::chrono::steady_clock::time_point;
  // One rebalance's assignment, for its summary line.
  struct Batch {
    int64_t started_ms = 0;
    size_t open = 0, replaying = 0, ready = 0, stale = 0, gave_up = 0;
    int64_t to_replay = 0;
  };

  std::unique_ptr<Job> MakeJob(int32_t partition, int64_t generation, uint64_t batch);
  void Dispatch();  // the dispatcher thread
  void Work();      // a pool thread
  // Data changes and plans for finished look-ups (dispatcher thread, or the caller of
  // ProcessAssignment).
  void Finalize(std::vector<std::unique_ptr<Job>> done);
  void CloseBatch(uint64_t batch);  // REQUIRES: mu_

  UsageStore& store_;
  OffsetSource& offsets_;
  PartitionManager& manager_;
  const Clock& clock_;
  const Options options_;
  PlanSink sink_;
  LifecycleStats stats_;
  // Once the broker's time index has answered with an offset, its "none" is believed.
  std::atomic<bool> time_index_works_{false};

  std::mutex mu_;
  std::condition_variable dispatch_cv_, work_cv_;
  std::deque<std::vector<std::pair<int32_t, int64_t>>> assigned_;  // GUARDED_BY(mu_)
  std::deque<std::unique_ptr<Job>> runnable_;                      // GUARDED_BY(mu_): for the pool
  // Retries wait on the steady clock (they pace network calls); the give-up deadline is
  // measured on the injected Clock.
  std::multimap<SteadyTime, std::unique_ptr<Job>> waiting_;        // GUARDED_BY(mu_): by due time
  std::vector<std::unique_ptr<Job>> done_;                         // GUARDED_BY(mu_): to finalise
  std::map<uint64_t, Batch> batches_;                              // GUARDED_BY(mu_)
  uint64_t next_batch_ = 1;                                        // GUARDED_BY(mu_)
  bool stop_ = false;                                              // GUARDED_BY(mu_)
  std::thread dispatcher_;
  std::vector<std::thread> pool_;
};

}  // namespace limits
