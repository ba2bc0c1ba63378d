// PartitionManager: the assignment as the node serves it — each assigned partition's state
// (pending / replaying / ready), when it was assigned, its end-offset snapshot and replay
// progress — and the node's readiness. Written by the consumer thread (which owns the
// assignment), read by everyone (serving, /ready, /partitions, metrics).
// Thread-safe; Serving() takes no mutex (an atomic snapshot), so requests never contend.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "limits/lifecycle/partition_state.h"
#include "limits/usage/partition_set.h"

namespace limits {

struct ReplayProgress {
  int64_t start_offset = -1;    // first offset replayed
  int64_t target_offset = -1;   // end - 1 at assignment: ready once it is applied
  int64_t current_offset = -1;  // next offset to process
  int64_t started_ms = 0;
  int64_t finished_ms = 0;      // 0 while replaying
  double records_per_s = 0;
  double eta_s = -1;            // -1: unknown

  int64_t remaining() const {
    return target_offset < 0 || current_offset < 0 ? 0 : std::max<int64_t>(0, target_offset + 1 - current_offset);
  }
};

struct PartitionInfo {
  int32_t partition = -1;
  PartitionState state = PartitionState::kPending;
  int64_t generation = 0;
  int64_t assigned_at_ms = 0;
  int64_t end_offset = -1;  // snapshot at assignment; -1 unknown
  bool lookup_failed = false;
  ReplayProgress replay;
};

struct Readiness {
  bool ready = false;
  std::string reason;  // why not (or "ready: ...")
};

class PartitionManager {
 public:
  // latch_readiness: once every assigned partition has been ready, later rebalances do not
  // make the node unready (Loki's semantics: a rebalance never takes a whole zone out of its
  // Service at once) — unless nothing at all is assigned any more.
  PartitionManager(const Clock& clock, std::chrono::milliseconds wait_assign, bool latch_readiness = false);

  // --- consumer thread -----------------------------------------------------------------
  // A new assignment: pending, with a fresh generation (returned) that tells late lifecycle
  // results for an earlier assignment of the same partition apart.
  int64_t Assign(int32_t partition);
  void Revoke(int32_t partition);
  // The offsets are known: replay [start, target] (target = end - 1).
  void StartReplay(int32_t partition, int64_t generation, int64_t start, int64_t end);
  void SetReady(int32_t partition, int64_t generation, int64_t end, bool lookup_failed);
  void UpdateProgress(int32_t partition, int64_t next_offset);

  // --- anyone --------------------------------------------------------------------------
  std::optional<PartitionInfo> Get(int32_t partition) const;
  bool IsAssigned(int32_t partition) const;
  bool IsCurrent(int32_t partition, int64_t generation) const;
  // Ready partitions: the only ones served.
  std::shared_ptr<const PartitionSet> Serving() const;
  // Ready partitions -> assignment time (unix ns), for GetAssignedPartitions.
  std::map<int32_t, int64_t> ReadyAssignedAtNanos() const;
  std::vector<PartitionInfo> Snapshot() const;
  // Ready when every assigned partition is. With nothing assigned: ready once wait_assign
  // has passed, but only if no partition was ever assigned (a node whose assignment was lost
  // or revoked is not ready until it gets partitions again). With latch_readiness, a node
  // that has been ready stays ready while it holds partitions (the reason says "latched").
  Readiness CheckReadiness() const;

  // Records/s of the most recently finished replay; 0 before any (for ETAs).
  double LastReplayRate() const { return last_replay_rate_.load(std::memory_order_relaxed); }
  // Whether any assignment happened, or wait_assign passed since start.
  bool SettledOnce() const;

 private:
  void RebuildServingLocked();  // REQUIRES: mu_

  const Clock& clock_;
  const int64_t started_ms_;
  const int64_t wait_assign_ms_;
  const bool latch_readiness_;
  mutable std::mutex mu_;
  std::map<int32_t, PartitionInfo> partitions_;  // GUARDED_BY(mu_)
  // Read on every request without mu_: replaced whole, under mu_, when a state changes.
  std::atomic<std::shared_ptr<const PartitionSet>> serving_;
  std::atomic<double> last_replay_rate_{0};
  int64_t next_generation_ = 1;                  // GUARDED_BY(mu_)
  bool ever_assigned_ = false;                   // GUARDED_BY(mu_)
  bool ever_ready_ = false;                      // every assigned partition was ready once; GUARDED_BY(mu_)
};

}  // namespace limits
