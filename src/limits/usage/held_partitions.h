// HeldPartitions: the partition mutexes one request holds at once — its tenant's stripe of
// each — released together. UpdateCond is the only code that holds more than one partition's
// mutex; it takes them with Lock in ascending partition order, or with TryLockUntil in any
// order, so two requests cannot deadlock each other, and every other holder of a partition's
// mutex (all its stripes, in ascending order) holds no other.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include "common/try_lock_until.h"
#include "limits/usage/partition_usage.h"

namespace limits {

class HeldPartitions {
 public:
  HeldPartitions(int32_t num_partitions, size_t stripe)
      : stripe_(stripe), held_(static_cast<size_t>(num_partitions), false) {}
  ~HeldPartitions() { ReleaseAll(); }
  HeldPartitions(const HeldPartitions&) = delete;
  HeldPartitions& operator=(const HeldPartitions&) = delete;

  bool holds(int32_t partition) const { return held_[static_cast<size_t>(partition)]; }
  size_t size() const { return locked_.size(); }

  // Blocks until held. Callers lock in ascending partition order (after ReleaseAll, anew).
  void Lock(PartitionUsage& pu) {
    pu.mu().stripe(stripe_).lock();
    Note(pu);
  }
  // Holds it if it is free before `deadline` (spinning meanwhile, never sleeping).
  bool TryLockUntil(PartitionUsage& pu, std::chrono::steady_clock::time_point deadline) {
    if (!limits::TryLockUntil(pu.mu().stripe(stripe_), deadline)) return false;
    Note(pu);
    return true;
  }
  void ReleaseAll() {
    for (PartitionUsage* pu : locked_) {
      held_[static_cast<size_t>(pu->id())] = false;
      pu->mu().stripe(stripe_).unlock();
    }
    locked_.clear();
  }

 private:
  void Note(PartitionUsage& pu) {
    held_[static_cast<size_t>(pu.id())] = true;
    locked_.push_back(&pu);
  }

  const size_t stripe_;
  std::vector<bool> held_;
  std::vector<PartitionUsage*> locked_;
};

}  // namespace limits
