// TenantStreams: one tenant's streams in one partition — the unit of counting, eviction and
// flushing. Holds each stream's compact state, a group per ingestion policy present (its
// ActiveCounter and stream count; the policy's id comes from the tenant's table, shared by
// its partitions in TenantShared, and is released when the group empties), the streams' rate
// rings (one slab, no per-stream allocation), the tenant's rate total, its rate keys (bounded
// through TenantShared), and the streams changed since the last flush.
// Not thread-safe: the owning PartitionUsage's mutex guards it.
#pragma once

#include <absl/container/flat_hash_map.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "limits/usage/active_counter.h"
#include "limits/usage/rate_ring.h"
#include "limits/usage/tenant_directory.h"
#include "limits/usage/windows.h"

namespace limits {

using TenantId = uint32_t;
using PolicyId = uint16_t;

// 16 bytes per stream, plus its rate ring in the slab (a BucketRing whose newest bucket is
// that of last_seen_s).
struct StreamEntry {
  uint32_t last_seen_s = 0;
  uint32_t last_produced_s = 0;  // 0: not produced by this node
  uint32_t rate_slot = 0;        // index of its ring in TenantStreams' slab
  PolicyId policy = 0;
  uint8_t dirty = 0;             // changed since the last flush
  uint8_t stale_row = 0;         // refreshed in memory only since its row was last queued
};
static_assert(sizeof(StreamEntry) == 16);

class TenantStreams {
 public:
  // `shared` (the tenant's policy ids and rate-key count) must outlive it.
  TenantStreams(std::string tenant, const Windows& windows, TenantShared& shared);
  ~TenantStreams();
  TenantStreams(const TenantStreams&) = delete;
  TenantStreams& operator=(const TenantStreams&) = delete;

  const std::string& tenant() const { return tenant_; }
  size_t size() const { return streams_.size(); }
  // No streams and no rate keys: nothing to keep.
  bool empty() const { return streams_.empty() && rate_keys_.empty(); }

  // The id of ingestion policy `name` ("" = none) for Observe/Restore, taking a new one from
  // the tenant's table when the policy is new here; nullopt when the tenant already uses as
  // many policies as its table holds — unless `reserved` (a policy with a limit of its own,
  // which must always be told apart). An id no stream ends up using is released at the next
  // DrainWrites or EvictBefore.
  std::optional<PolicyId> Policy(std::string_view name, bool reserved = false);
  std::string_view PolicyName(PolicyId id) const;

  StreamEntry* Find(uint64_t hash);
  // Starts fetching the memory a look-up of `hash` will touch.
  void Prefetch(uint64_t hash) const { streams_.prefetch(hash); }
  const StreamEntry* Find(uint64_t hash) const;
  // Starts fetching its own fields that any look-up reads first (the name, the streams
  // table's header), and its policy groups, which counting reads.
  void PrefetchSelf() const {
    __builtin_prefetch(this);
    __builtin_prefetch(&streams_);
  }
  void PrefetchGroups() const {
    if (!groups_.empty()) __builtin_prefetch(groups_.data());
  }

  // The stream was seen at `seen_s` under `policy` (from Policy()) with `bytes` more. Creates
  // it when unknown (or revives it when expired), keeps the newest last-seen time, and marks
  // it for the next flush unless `persist` is false: a refresh that may wait for the stream's
  // next marked change or QueueStaleRows(). `seen_s` must be inside the active window.
  StreamEntry& Observe(uint64_t hash, PolicyId policy, uint32_t seen_s, uint64_t bytes, bool persist = true);

  // Restores a stream from its row on disk; not marked for flushing.
  void Restore(uint64_t hash, PolicyId policy, uint32_t last_seen_s, uint32_t last_produced_s,
               uint32_t newest_bucket_s, const uint64_t* rate_newest_first, size_t rate_count);

  void SetLastProduced(StreamEntry& e, uint64_t hash, uint32_t now_s);

  // Active streams of one policy / of each policy present, at `cutoff_s`.
  uint32_t ActiveOf(std::string_view policy, int64_t cutoff_s);
  template <typename Fn>  // fn(std::string_view policy, uint32_t active)
  void ForEachPolicy(int64_t cutoff_s, Fn fn) {
    for (Group& g : groups_) fn(std::string_view(g.name), Active(g, cutoff_s));
  }
  // Policies this tenant uses here (groups held).
  size_t num_policies() const { return groups_.size(); }
  // Streams per policy regardless of the window (including expired, not yet evicted).
  template <typename Fn>  // fn(hash, const StreamEntry&)
  void ForEachStream(Fn fn) const {
    for (const auto& [hash, e] : streams_) fn(hash, e);
  }

  // Removes streams last seen before `cutoff_s`, queueing their deletion; returns how many.
  size_t EvictBefore(int64_t cutoff_s);

  // Rates of hashes that are not streams (UpdateRates callers send segmentation keys, as
  // Loki's store answers them): records `bytes` at now_s and returns the key's rate window.
  // In memory only, never counted by limits, forgotten once its buckets leave the rate
  // window (EvictBefore). Its bytes count in the tenant's rate. A new key over the tenant's
  // or the node's bound (TenantShared) is answered with this call's bytes alone and not kept
  // (*kept false).
  RateSum ObserveRateKey(uint64_t hash, uint32_t now_s, uint64_t bytes, bool* kept = nullptr);
  size_t rate_keys() const { return rate_keys_.size(); }

  // Bytes over the rate window of one stream, and of the whole tenant in this partition.
  RateSum StreamRate(const StreamEntry& e, int64_t now_s) const;
  RateSum TenantRate(int64_t now_s) const;
  // The stream's ring, newest bucket first (n = windows.num_buckets()); returns its start.
  uint32_t RateNewestFirst(const StreamEntry& e, uint64_t* out) const;

  // Releases the slack that growth left in its containers (after a load from disk).
  void ShrinkToFit() {
    streams_.rehash(0);
    rate_slab_.shrink_to_fit();
    free_rate_slots_.shrink_to_fit();
    dirty_.shrink_to_fit();
    deleted_.shrink_to_fit();
  }

  // Queues the streams refreshed without being marked (Observe's `persist`) for the next
  // flush; whether there were any. A scan of the tenant's streams: for stops, not per request.
  bool QueueStaleRows() {
    bool any = false;
    for (auto& [hash, e] : streams_) {
      if (!e.stale_row) continue;
      e.stale_row = 0;
      MarkDirty(hash, e);
      any = true;
    }
    return any;
  }

  // Writes queued since the last drain: deletions first, then the changed streams.
  bool HasPendingWrites() const { return dirty_scan_ || !dirty_.empty() || !deleted_.empty(); }
  template <typename PutFn, typename DeleteFn>  // put(hash, const StreamEntry&), del(hash)
  void DrainWrites(PutFn put, DeleteFn del) {
    for (uint64_t hash : deleted_) del(hash);
    auto write = [&](uint64_t hash, StreamEntry& e) {
      e.dirty = 0;
      e.stale_row = 0;  // the row written is the stream as it is now
      put(hash, e);
    };
    if (dirty_scan_) {
      for (auto& [hash, e] : streams_) {
        if (e.dirty) write(hash, e);
      }
    } else {
      for (uint64_t hash : dirty_) {
        auto it = streams_.find(hash);
        if (it != streams_.end() && it->second.dirty) write(hash, it->second);
      }
    }
    deleted_.clear();
    dirty_.clear();
    dirty_scan_ = false;
    ReleaseEmptyGroups();
  }

  // Whether the partition's dirty list already holds this tenant.
  bool queued_for_flush = false;

 private:
  struct Group {
    PolicyId id = 0;
    std::string name;
    uint32_t streams = 0;  // streams of this policy held (expired ones included)
    ActiveCounter counter;
  };
  Group& GroupOf(PolicyId policy);
  // The group's active streams at `cutoff_s` (its counter, which may ask for a minute's streams).
  uint32_t Active(Group& g, int64_t cutoff_s);
  void ReleaseEmptyGroups();
  uint32_t AllocRateSlot();
  uint32_t* RateSlot(uint32_t slot) { return rate_slab_.data() + size_t{slot} * n_; }
  const uint32_t* RateSlot(uint32_t slot) const { return rate_slab_.data() + size_t{slot} * n_; }
  void MarkDirty(uint64_t hash, StreamEntry& e) {
    if (e.dirty) return;
    e.dirty = 1;
    if (dirty_scan_) return;
    // Past an eighth of the streams (a replay marks every one), the dirty bits alone tell the
    // drain what to write: a list would hold 8 B per stream until the flush, ~12 MiB at 1 M
    // streams in a cold replay.
    if (dirty_.size() >= kMinDirtyList && dirty_.size() >= streams_.size() / 8) {
      dirty_scan_ = true;
      std::vector<uint64_t>().swap(dirty_);
      return;
    }
    dirty_.push_back(hash);
  }
  static constexpr size_t kMinDirtyList = 64;

  const std::string tenant_;
  const Windows windows_;
  const uint32_t n_;  // rate buckets
  TenantShared& shared_;
  absl::flat_hash_map<uint64_t, StreamEntry> streams_;
  std::vector<Group> groups_;  // a tenant uses few policies
  struct RateKey {
    uint32_t last_s = 0;  // last update: the newest second of its ring
    uint32_t rate_slot = 0;
  };
  absl::flat_hash_map<uint64_t, RateKey> rate_keys_;
  std::vector<uint32_t> rate_slab_;
  std::vector<uint32_t> free_rate_slots_;
  std::vector<uint64_t> tenant_rate_;  // RateRing<uint64_t> of the whole tenant
  std::vector<uint64_t> dirty_;        // streams changed since the last drain
  bool dirty_scan_ = false;            // too many for dirty_: the drain scans for dirty bits
  std::vector<uint64_t> deleted_;      // streams evicted since the last drain
};

}  // namespace limits
