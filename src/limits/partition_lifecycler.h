// PartitionLifecycler: the work around a partition changing hands that must not run on the
// rebalance callback. One worker thread, so every change to a partition's data (drop, evict,
// cancel eviction) happens in one order:
//   - for newly assigned partitions, all at once: look up start / end / window-start offsets,
//     drop data whose checkpoint is unusable, evict stale streams, and hand the consumer a plan
//     (where to resume; replay up to the end offset seen now, or ready at once);
//   - revoked partitions past their retention (persisted, so it survives restarts) are dropped.
// OnAssigned/OnRevoked are bounded, local and safe on the rebalance callback.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "limits/offset_source.h"
#include "limits/partition_manager.h"
#include "limits/usage_store.h"

namespace limits {

// librdkafka's logical "beginning of the partition".
inline constexpr int64_t kOffsetBeginning = -2;

// What the consumer does for a newly assigned partition.
struct AssignmentPlan {
  int32_t partition = -1;
  int64_t generation = 0;
  int64_t resume_offset = kOffsetBeginning;  // seek here, then resume
  int64_t end_offset = -1;                   // replay up to end - 1; -1: unknown (look-up failed)
  bool lookup_failed = false;

  bool nothing_to_replay() const { return lookup_failed || resume_offset >= end_offset; }
};

class PartitionLifecycler {
 public:
  struct Options {
    Windows windows;
    std::chrono::milliseconds revoked_retention{600'000};
    // How often the worker looks for revoked partitions past their retention.
    std::chrono::milliseconds check_interval{1000};
  };
  using PlanSink = std::function<void(std::vector<AssignmentPlan>)>;

  // All references must outlive the lifecycler.
  PartitionLifecycler(UsageStore& store, OffsetSource& offsets, PartitionManager& manager, const Clock& clock,
                      Options options);
  ~PartitionLifecycler();

  // Schedules the eviction of every partition on disk that is not yet revoked (a restart
  // does not extend anyone's retention), then starts the worker; plans go to `sink`.
  Status Start(PlanSink sink);
  void Stop();

  // Rebalance callback: queue the look-ups of these (partition, generation) pairs.
  void OnAssigned(std::vector<std::pair<int32_t, int64_t>> partitions);
  // Rebalance callback: persist "revoked now, evict after the retention".
  void OnRevoked(const std::vector<int32_t>& partitions);

  // One pass of each job, as the worker runs them (tests call them directly).
  void ProcessAssignment(const std::vector<std::pair<int32_t, int64_t>>& partitions);
  void EvictDueRevoked();

 private:
  void Run();

  UsageStore& store_;
  OffsetSource& offsets_;
  PartitionManager& manager_;
  const Clock& clock_;
  const Options options_;
  PlanSink sink_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::vector<std::pair<int32_t, int64_t>>> queue_;  // GUARDED_BY(mu_)
  bool stop_ = false;                                            // GUARDED_BY(mu_)
  std::thread worker_;
};

}  // namespace limits
