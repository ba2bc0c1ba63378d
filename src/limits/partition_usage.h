// PartitionUsage: everything the node knows about one partition in memory — its tenants'
// streams, how far into the Kafka log they reach (the checkpoint to be), and the writes
// queued for the next flush. One mutex per partition: callers for different partitions
// never contend, and the flush reads a consistent (rows, checkpoint) pair under it.
#pragma once

#include <absl/container/flat_hash_map.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#include "limits/tenant_directory.h"
#include "limits/tenant_streams.h"
#include "limits/windows.h"

namespace limits {

class PartitionUsage {
 public:
  // `directory` must outlive it.
  PartitionUsage(int32_t id, const Windows& windows, TenantDirectory& directory)
      : id_(id), windows_(windows), directory_(directory) {}
  ~PartitionUsage() { Clear(); }

  int32_t id() const { return id_; }
  std::mutex& mu() { return mu_; }

  // --- REQUIRES: mu() held -------------------------------------------------------------
  // The tenant's streams here, if any (*id set when found).
  // `hint`: the tenant's id as the caller resolved it earlier (once per request), tried
  // before the node-wide directory, whose lock every request and the consumer share.
  TenantStreams* Find(std::string_view name, TenantId* id = nullptr, std::optional<TenantId> hint = std::nullopt) {
    if (hint) {
      auto it = tenants_.find(*hint);
      if (it != tenants_.end() && it->second->tenant() == name) {
        if (id) *id = *hint;
        return it->second.get();
      }
    }
    std::optional<TenantId> found = directory_.Find(name);
    if (!found) return nullptr;
    auto it = tenants_.find(*found);
    // The id may have been released and reused since the look-up: check the name.
    if (it == tenants_.end() || it->second->tenant() != name) return nullptr;
    if (id) *id = *found;
    return it->second.get();
  }
  // Start fetching what Find(name, id, hint) reads, for a caller about to look up many
  // partitions in turn: the hinted tenant's slot, then (PrefetchStreams, once that has
  // arrived) the tenant's streams object, whose name is not checked here.
  void Prefetch(TenantId hint) const { tenants_.prefetch(hint); }
  void PrefetchStreams(TenantId hint) const {
    auto it = tenants_.find(hint);
    if (it != tenants_.end()) it->second->PrefetchSelf();
  }
  // The tenant's streams here, created empty when new (taking a reference on the tenant's
  // id, released when they are erased); nullptr when the directory is full. *id is set.
  TenantStreams* FindOrCreate(std::string_view name, TenantId* id = nullptr,
                              std::optional<TenantId> hint = std::nullopt) {
    if (TenantStreams* ts = Find(name, id, hint)) return ts;
    std::optional<TenantId> acquired = directory_.Acquire(name);
    if (!acquired) return nullptr;
    if (id) *id = *acquired;
    auto& slot = tenants_[*acquired];
    if (slot) {  // created under the same id meanwhile: one reference is enough
      directory_.Release(*acquired);
      return slot.get();
    }
    slot = std::make_unique<TenantStreams>(std::string(name), windows_, directory_.Policies(*acquired));
    return slot.get();
  }
  // Erases the tenant's streams if there are none left (e.g. every new stream was rejected).
  void EraseIfEmpty(TenantId id) {
    auto it = tenants_.find(id);
    if (it == tenants_.end() || !it->second->empty() || it->second->HasPendingWrites() ||
        it->second->queued_for_flush) {
      return;
    }
    Erase(it);
  }
  template <typename Fn>  // fn(TenantId, TenantStreams&)
  void ForEachTenant(Fn fn) {
    for (auto& [id, ts] : tenants_) fn(id, *ts);
  }
  // Releases the slack that growth (a load, a replay) left in every tenant's containers.
  void ShrinkToFit() {
    for (auto& [id, ts] : tenants_) ts->ShrinkToFit();
  }

  // Queues the tenant's changed streams for the next flush.
  void QueueForFlush(TenantId tenant, TenantStreams& ts) {
    if (!ts.queued_for_flush) {
      ts.queued_for_flush = true;
      dirty_tenants_.push_back(tenant);
    }
    pending_.store(true, std::memory_order_release);
  }
  void QueueCheckpoint() {
    checkpoint_dirty_ = true;
    pending_.store(true, std::memory_order_release);
  }

  // Hands the queued writes to put/del/checkpoint and forgets them; removes tenants left
  // with nothing. put(tenant, hash, entry), del(tenant, hash), checkpoint().
  template <typename PutFn, typename DeleteFn, typename CheckpointFn>
  void DrainWrites(PutFn put, DeleteFn del, CheckpointFn checkpoint) {
    for (TenantId tenant : dirty_tenants_) {
      auto it = tenants_.find(tenant);
      if (it == tenants_.end()) continue;
      TenantStreams& ts = *it->second;
      ts.queued_for_flush = false;
      ts.DrainWrites([&](uint64_t hash, const StreamEntry& e) { put(ts, hash, e); },
                     [&](uint64_t hash) { del(ts, hash); });
      if (ts.empty()) Erase(it);
    }
    dirty_tenants_.clear();
    if (checkpoint_dirty_) checkpoint();
    checkpoint_dirty_ = false;
    pending_.store(false, std::memory_order_release);
  }

  // Forgets everything (the partition's data is being dropped).
  void Clear() {
    while (!tenants_.empty()) Erase(tenants_.begin());
    dirty_tenants_.clear();
    checkpoint_dirty_ = false;
    next_offset = 0;
    newest_record_ms = 0;
    has_checkpoint = false;
    pending_.store(false, std::memory_order_release);
  }

  size_t num_tenants() const { return tenants_.size(); }

  // The partition has a column family; rows may be written.
  bool present = false;
  // next_offset / newest_record_ms are a checkpoint (loaded, or set by Apply).
  bool has_checkpoint = false;
  // Every record below it is reflected in memory; the checkpoint once flushed.
  int64_t next_offset = 0;
  int64_t newest_record_ms = 0;
  // --------------------------------------------------------------------------------------

  // Whether DrainWrites has anything to hand out; read without the mutex by the flusher.
  bool pending() const { return pending_.load(std::memory_order_acquire); }

 private:
  using Tenants = absl::flat_hash_map<TenantId, std::unique_ptr<TenantStreams>>;
  void Erase(Tenants::iterator it) {
    const TenantId id = it->first;
    tenants_.erase(it);  // releases the policies' ids first
    directory_.Release(id);
  }

  const int32_t id_;
  const Windows windows_;
  TenantDirectory& directory_;
  std::mutex mu_;
  Tenants tenants_;
  std::vector<TenantId> dirty_tenants_;
  bool checkpoint_dirty_ = false;
  std::atomic<bool> pending_{false};
};

}  // namespace limits
