// PartitionUsage: everything the node knows about one partition in memory — its tenants'
// streams, how far into the Kafka log they reach (the checkpoint to be), and the writes
// queued for the next flush. Callers for different partitions never contend. The mutex is
// striped by tenant: a request holds only its tenant's stripe of each partition it reads, so
// requests of different tenants do not wait for each other (a request holds ~50 partitions
// for its whole check); the consumer, flusher, evictor and queries take every stripe, and the
// flush reads a consistent (rows, checkpoint) pair under them.
#pragma once

#include <absl/container/flat_hash_map.h>
#include <absl/hash/hash.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <vector>

#include "limits/usage/tenant_directory.h"
#include "limits/usage/tenant_streams.h"
#include "limits/usage/windows.h"

namespace limits {

// A partition's mutex in stripes. lock()/unlock()/try_lock() take or release every stripe
// (a Lockable: std::lock_guard works); stripe(s) is one. Stripes are always taken in
// ascending order, so whole-partition holders and one-stripe holders cannot deadlock.
class StripedMutex {
 public:
  static constexpr size_t kStripes = 8;
  void lock() {
    for (Stripe& s : stripes_) s.mu.lock();
  }
  bool try_lock() {
    for (size_t i = 0; i < kStripes; ++i) {
      if (stripes_[i].mu.try_lock()) continue;
      while (i > 0) stripes_[--i].mu.unlock();
      return false;
    }
    return true;
  }
  void unlock() {
    for (size_t i = kStripes; i > 0; --i) stripes_[i - 1].mu.unlock();
  }
  std::mutex& stripe(size_t s) { return stripes_[s].mu; }

 private:
  struct alignas(64) Stripe {  // a line each: two stripes' holders do not share a cache line
    std::mutex mu;
  };
  std::array<Stripe, kStripes> stripes_;
};

// A tenant as a partition looks it up: its name, its stripe, and (when the caller resolved it
// earlier, once per request) its id, tried before the node-wide directory, whose lock every
// request and the consumer share.
struct TenantKey {
  static size_t HashOf(std::string_view name) { return absl::Hash<std::string_view>{}(name); }
  static size_t StripeOf(std::string_view name) { return HashOf(name) % StripedMutex::kStripes; }
  TenantKey(std::string_view name, std::optional<TenantId> hint = std::nullopt)
      : name(name), hash(HashOf(name)), stripe(hash % StripedMutex::kStripes), hint(hint) {}
  std::string_view name;
  // Also picks the tenant's admission stripe (UsageStore's, a multiple of kStripes), so
  // requests serialised by admission never meet on a partition stripe.
  size_t hash;
  size_t stripe;
  std::optional<TenantId> hint;
};

class PartitionUsage {
 public:
  // `directory` must outlive it.
  PartitionUsage(int32_t id, const Windows& windows, TenantDirectory& directory)
      : id_(id), windows_(windows), directory_(directory) {}
  ~PartitionUsage() { Clear(); }

  int32_t id() const { return id_; }
  StripedMutex& mu() { return mu_; }

  // --- REQUIRES: the tenant's stripe of mu() held (or all of it) -----------------------
  // The tenant's streams here, if any (*id set when found).
  TenantStreams* Find(const TenantKey& key, TenantId* id = nullptr) {
    const Tenants& tenants = tenants_[key.stripe];
    if (key.hint) {
      auto it = tenants.find(*key.hint);
      if (it != tenants.end() && it->second->tenant() == key.name) {
        if (id) *id = *key.hint;
        return it->second.get();
      }
    }
    std::optional<TenantId> found = directory_.Find(key.name);
    if (!found) return nullptr;
    auto it = tenants.find(*found);
    // The id may have been released and reused since the look-up: check the name.
    if (it == tenants.end() || it->second->tenant() != key.name) return nullptr;
    if (id) *id = *found;
    return it->second.get();
  }
  TenantStreams* Find(std::string_view name, TenantId* id = nullptr) { return Find(TenantKey(name), id); }
  // Start fetching what Find(key) reads, for a caller about to look up many partitions in
  // turn: the hinted tenant's slot, then (PrefetchStreams, once that has arrived) the
  // tenant's streams object, whose name is not checked here. REQUIRES: key.hint.
  void Prefetch(const TenantKey& key) const { tenants_[key.stripe].prefetch(*key.hint); }
  void PrefetchStreams(const TenantKey& key) const {
    const Tenants& tenants = tenants_[key.stripe];
    auto it = tenants.find(*key.hint);
    if (it != tenants.end()) it->second->PrefetchSelf();
  }
  // The tenant's streams here, created empty when new (taking a reference on the tenant's
  // id, released when they are erased); nullptr when the directory is full. *id is set.
  TenantStreams* FindOrCreate(const TenantKey& key, TenantId* id = nullptr) {
    if (TenantStreams* ts = Find(key, id)) return ts;
    std::optional<TenantId> acquired = directory_.Acquire(key.name);
    if (!acquired) return nullptr;
    if (id) *id = *acquired;
    auto& slot = tenants_[key.stripe][*acquired];
    if (slot) {  // created under the same id meanwhile: one reference is enough
      directory_.Release(*acquired);
      return slot.get();
    }
    slot = std::make_unique<TenantStreams>(std::string(key.name), windows_, directory_.Shared(*acquired));
    return slot.get();
  }
  TenantStreams* FindOrCreate(std::string_view name, TenantId* id = nullptr) { return FindOrCreate(TenantKey(name), id); }
  // Erases the tenant's streams if there are none left (e.g. every new stream was rejected).
  void EraseIfEmpty(const TenantKey& key, TenantId id) {
    Tenants& tenants = tenants_[key.stripe];
    auto it = tenants.find(id);
    if (it == tenants.end() || !it->second->empty() || it->second->HasPendingWrites() ||
        it->second->queued_for_flush) {
      return;
    }
    Erase(tenants, it);
  }
  // Queues the tenant's changed streams for the next flush.
  void QueueForFlush(TenantId tenant, TenantStreams& ts) {
    if (!ts.queued_for_flush) {
      ts.queued_for_flush = true;
      dirty_tenants_[TenantKey::StripeOf(ts.tenant())].push_back(tenant);
    }
    pending_.store(true, std::memory_order_release);
  }

  // --- REQUIRES: all of mu() held ------------------------------------------------------
  template <typename Fn>  // fn(TenantId, TenantStreams&)
  void ForEachTenant(Fn fn) {
    for (Tenants& tenants : tenants_) {
      for (auto& [id, ts] : tenants) fn(id, *ts);
    }
  }
  // Releases the slack that growth (a load, a replay) left in every tenant's containers.
  void ShrinkToFit() {
    ForEachTenant([](TenantId, TenantStreams& ts) { ts.ShrinkToFit(); });
  }
  void QueueCheckpoint() {
    checkpoint_dirty_ = true;
    pending_.store(true, std::memory_order_release);
  }

  // Hands the queued writes to put/del/checkpoint and forgets them; removes tenants left
  // with nothing. put(tenant, hash, entry), del(tenant, hash), checkpoint().
  template <typename PutFn, typename DeleteFn, typename CheckpointFn>
  void DrainWrites(PutFn put, DeleteFn del, CheckpointFn checkpoint) {
    for (size_t s = 0; s < StripedMutex::kStripes; ++s) {
      Tenants& tenants = tenants_[s];
      for (TenantId tenant : dirty_tenants_[s]) {
        auto it = tenants.find(tenant);
        if (it == tenants.end()) continue;
        TenantStreams& ts = *it->second;
        ts.queued_for_flush = false;
        ts.DrainWrites([&](uint64_t hash, const StreamEntry& e) { put(ts, hash, e); },
                       [&](uint64_t hash) { del(ts, hash); });
        if (ts.empty()) Erase(tenants, it);
      }
      dirty_tenants_[s].clear();
    }
    if (checkpoint_dirty_) checkpoint();
    checkpoint_dirty_ = false;
    pending_.store(false, std::memory_order_release);
  }

  // Forgets everything (the partition's data is being dropped).
  void Clear() {
    for (size_t s = 0; s < StripedMutex::kStripes; ++s) {
      while (!tenants_[s].empty()) Erase(tenants_[s], tenants_[s].begin());
      dirty_tenants_[s].clear();
    }
    checkpoint_dirty_ = false;
    next_offset = 0;
    newest_record_ms = 0;
    has_checkpoint = false;
    pending_.store(false, std::memory_order_release);
  }

  size_t num_tenants() const {
    size_t n = 0;
    for (const Tenants& tenants : tenants_) n += tenants.size();
    return n;
  }

  // The partition has a column family; rows may be written. Set under one stripe (a
  // request's) too, then with presence_mu() held; cleared only with all of mu() held.
  std::atomic<bool> present{false};
  std::mutex& presence_mu() { return presence_mu_; }
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
  void Erase(Tenants& tenants, Tenants::iterator it) {
    const TenantId id = it->first;
    tenants.erase(it);  // releases the policies' ids first
    directory_.Release(id);
  }

  const int32_t id_;
  const Windows windows_;
  TenantDirectory& directory_;
  StripedMutex mu_;
  std::mutex presence_mu_;
  std::array<Tenants, StripedMutex::kStripes> tenants_;               // by stripe
  std::array<std::vector<TenantId>, StripedMutex::kStripes> dirty_tenants_;  // by stripe
  bool checkpoint_dirty_ = false;
  std::atomic<bool> pending_{false};
};

}  // namespace limits
