#include "limits/lifecycle/partition_manager.h"

#include <algorithm>

namespace limits {

PartitionManager::PartitionManager(const Clock& clock, std::chrono::milliseconds wait_assign, bool latch_readiness)
    : clock_(clock),
      started_ms_(clock.NowMillis()),
      wait_assign_ms_(wait_assign.count()),
      latch_readiness_(latch_readiness),
      serving_(std::make_shared<const PartitionSet>()) {}

int64_t PartitionManager::Assign(int32_t partition) {
  std::lock_guard lock(mu_);
  PartitionInfo& info = partitions_[partition];
  info = PartitionInfo{};
  info.partition = partition;
  info.state = PartitionState::kPending;
  info.generation = next_generation_++;
  info.assigned_at_ms = clock_.NowMillis();
  ever_assigned_ = true;
  RebuildServingLocked();
  return info.generation;
}

void PartitionManager::Revoke(int32_t partition) {
  std::lock_guard lock(mu_);
  partitions_.erase(partition);
  RebuildServingLocked();
}

void PartitionManager::StartReplay(int32_t partition, int64_t generation, int64_t start, int64_t end) {
  std::lock_guard lock(mu_);
  auto it = partitions_.find(partition);
  if (it == partitions_.end() || it->second.generation != generation) return;
  PartitionInfo& info = it->second;
  info.state = PartitionState::kReplaying;
  info.end_offset = end;
  info.replay = ReplayProgress{.start_offset = start,
                               .target_offset = end - 1,
                               .current_offset = start,
                               .started_ms = clock_.NowMillis()};
  RebuildServingLocked();
}

void PartitionManager::SetReady(int32_t partition, int64_t generation, int64_t end, bool lookup_failed) {
  std::lock_guard lock(mu_);
  auto it = partitions_.find(partition);
  if (it == partitions_.end() || it->second.generation != generation) return;
  PartitionInfo& info = it->second;
  info.state = PartitionState::kReady;
  info.end_offset = end;
  info.lookup_failed = lookup_failed;
  if (info.replay.started_ms != 0 && info.replay.finished_ms == 0) {
    info.replay.finished_ms = clock_.NowMillis();
    info.replay.current_offset = std::max(info.replay.current_offset, end);
    info.replay.eta_s = 0;
    const int64_t took_ms = info.replay.finished_ms - info.replay.started_ms;
    const int64_t records = info.replay.current_offset - info.replay.start_offset;
    if (took_ms > 0 && records > 0) {
      last_replay_rate_.store(static_cast<double>(records) * 1000.0 / static_cast<double>(took_ms),
                              std::memory_order_relaxed);
    }
  }
  RebuildServingLocked();
}

void PartitionManager::UpdateProgress(int32_t partition, int64_t next_offset) {
  std::lock_guard lock(mu_);
  auto it = partitions_.find(partition);
  if (it == partitions_.end() || it->second.state != PartitionState::kReplaying) return;
  ReplayProgress& r = it->second.replay;
  r.current_offset = std::max(r.current_offset, next_offset);
  const double elapsed_s = static_cast<double>(clock_.NowMillis() - r.started_ms) / 1000.0;
  if (elapsed_s > 0) {
    r.records_per_s = static_cast<double>(r.current_offset - r.start_offset) / elapsed_s;
    r.eta_s = r.records_per_s > 0 ? static_cast<double>(r.remaining()) / r.records_per_s : -1;
  }
}

std::optional<PartitionInfo> PartitionManager::Get(int32_t partition) const {
  std::lock_guard lock(mu_);
  auto it = partitions_.find(partition);
  if (it == partitions_.end()) return std::nullopt;
  return it->second;
}

bool PartitionManager::IsAssigned(int32_t partition) const {
  std::lock_guard lock(mu_);
  return partitions_.count(partition) > 0;
}

bool PartitionManager::IsCurrent(int32_t partition, int64_t generation) const {
  std::lock_guard lock(mu_);
  auto it = partitions_.find(partition);
  return it != partitions_.end() && it->second.generation == generation;
}

std::shared_ptr<const PartitionSet> PartitionManager::Serving() const { return serving_.load(); }

std::map<int32_t, int64_t> PartitionManager::ReadyAssignedAtNanos() const {
  std::lock_guard lock(mu_);
  std::map<int32_t, int64_t> out;
  for (const auto& [p, info] : partitions_) {
    if (info.state == PartitionState::kReady) out[p] = info.assigned_at_ms * 1'000'000;
  }
  return out;
}

std::vector<PartitionInfo> PartitionManager::Snapshot() const {
  std::lock_guard lock(mu_);
  std::vector<PartitionInfo> out;
  for (const auto& [p, info] : partitions_) out.push_back(info);
  return out;
}

Readiness PartitionManager::CheckReadiness() const {
  std::lock_guard lock(mu_);
  if (partitions_.empty()) {
    if (ever_assigned_) return {false, "no partitions assigned (the assignment was revoked or lost)"};
    const int64_t waited = clock_.NowMillis() - started_ms_;
    if (waited >= wait_assign_ms_) return {true, "ready: no partitions assigned"};
    return {false, "waiting for a partition assignment (" + std::to_string(waited / 1000) + "s of " +
                       std::to_string(wait_assign_ms_ / 1000) + "s)"};
  }
  size_t not_ready = 0;
  std::string detail;
  for (const auto& [p, info] : partitions_) {
    if (info.state == PartitionState::kReady) continue;
    if (++not_ready <= 5) {
      detail += (detail.empty() ? "" : ", ") + std::to_string(p) + " " + std::string(PartitionStateName(info.state));
      if (info.state == PartitionState::kReplaying) detail += " (" + std::to_string(info.replay.remaining()) + " left)";
    }
  }
  if (not_ready == 0) return {true, "ready: " + std::to_string(partitions_.size()) + " partitions"};
  if (latch_readiness_ && ever_ready_) {
    return {true, "ready (latched since the first ready; now " + std::to_string(not_ready) + " of " +
                      std::to_string(partitions_.size()) + " assigned partitions not ready: " + detail +
                      (not_ready > 5 ? ", ...)" : ")")};
  }
  return {false, std::to_string(not_ready) + " of " + std::to_string(partitions_.size()) +
                     " assigned partitions not ready: " + detail + (not_ready > 5 ? ", ..." : "")};
}

bool PartitionManager::SettledOnce() const {
  std::lock_guard lock(mu_);
  return ever_assigned_ || clock_.NowMillis() - started_ms_ >= wait_assign_ms_;
}

void PartitionManager::RebuildServingLocked() {
  auto serving = std::make_shared<PartitionSet>();
  for (const auto& [p, info] : partitions_) {
    if (info.state == PartitionState::kReady) serving->Add(p);
  }
  if (!partitions_.empty() && serving->Count() == partitions_.size()) ever_ready_ = true;
  serving_.store(std::move(serving));
}

}  // namespace limits
