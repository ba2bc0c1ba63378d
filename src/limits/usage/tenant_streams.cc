#include "limits/usage/tenant_streams.h"

#include <algorithm>

#include "common/status.h"

namespace limits {

TenantStreams::TenantStreams(std::string tenant, const Windows& windows, TenantShared& shared)
    : tenant_(std::move(tenant)),
      windows_(windows),
      n_(windows.num_buckets()),
      shared_(shared),
      tenant_rate_(RateRing<uint64_t>::Words(windows.num_buckets()), 0) {}

TenantStreams::~TenantStreams() {
  for (const Group& g : groups_) shared_.policies().Release(g.id);
  shared_.ReturnRateKeys(static_cast<uint32_t>(rate_keys_.size()));
}

std::optional<PolicyId> TenantStreams::Policy(std::string_view name, bool reserved) {
  for (const Group& g : groups_) {
    if (g.name == name) return g.id;
  }
  std::optional<uint32_t> id = shared_.policies().Acquire(name, reserved);
  if (!id) return std::nullopt;
  groups_.push_back(Group{.id = static_cast<PolicyId>(*id), .name = std::string(name), .streams = 0, .counter = {}});
  return groups_.back().id;
}

std::string_view TenantStreams::PolicyName(PolicyId id) const {
  for (const Group& g : groups_) {
    if (g.id == id) return g.name;
  }
  return {};
}

void TenantStreams::ReleaseEmptyGroups() {
  for (auto it = groups_.begin(); it != groups_.end();) {
    if (it->streams > 0) {
      ++it;
      continue;
    }
    shared_.policies().Release(it->id);
    it = groups_.erase(it);
  }
}

StreamEntry* TenantStreams::Find(uint64_t hash) {
  auto it = streams_.find(hash);
  return it == streams_.end() ? nullptr : &it->second;
}

const StreamEntry* TenantStreams::Find(uint64_t hash) const {
  auto it = streams_.find(hash);
  return it == streams_.end() ? nullptr : &it->second;
}

TenantStreams::Group& TenantStreams::GroupOf(PolicyId policy) {
  for (Group& g : groups_) {
    if (g.id == policy) return g;
  }
  // Ids come from Policy(), whose group lives while a stream uses it.
  LIMITS_CHECK(false, "no group for policy id " + std::to_string(policy) + " of tenant " + tenant_);
  return groups_.front();
}

uint32_t TenantStreams::ActiveOf(std::string_view policy, int64_t cutoff_s) {
  for (Group& g : groups_) {
    if (g.name == policy) return Active(g, cutoff_s);
  }
  return 0;
}

uint32_t TenantStreams::Active(Group& g, int64_t cutoff_s) {
  return g.counter.Active(cutoff_s, [&](uint32_t minute_start_s, auto&& fn) {
    for (const auto& [hash, e] : streams_) {
      if (e.policy == g.id && e.last_seen_s - minute_start_s < 60) fn(e.last_seen_s);
    }
  });
}

uint32_t TenantStreams::AllocRateSlot() {
  if (!free_rate_slots_.empty()) {
    const uint32_t slot = free_rate_slots_.back();
    free_rate_slots_.pop_back();
    BucketRing<uint32_t>::Clear(RateSlot(slot), n_);
    return slot;
  }
  if (rate_slab_.size() + n_ > rate_slab_.capacity()) {
    // By a quarter, not doubled: the slab is a third of a big tenant's memory, and a replay
    // grows it from nothing; doubling left it half empty on average, and briefly three
    // times its size while copying. From 4 rings, not 64: a tenant-partition of one stream
    // (a flood of new tenants makes nothing else) held 1.3 KB of slab.
    rate_slab_.reserve(rate_slab_.capacity() + rate_slab_.capacity() / 4 + size_t{4} * n_);
  }
  const auto slot = static_cast<uint32_t>(rate_slab_.size() / n_);
  rate_slab_.resize(rate_slab_.size() + n_, 0);
  return slot;
}

StreamEntry& TenantStreams::Observe(uint64_t hash, PolicyId policy, uint32_t seen_s, uint64_t bytes, bool persist) {
  auto [it, created] = streams_.try_emplace(hash);
  StreamEntry& e = it->second;
  if (created) {
    e.last_seen_s = seen_s;
    e.policy = policy;
    e.rate_slot = AllocRateSlot();
    Group& g = GroupOf(policy);
    g.counter.Add(seen_s);
    ++g.streams;
  } else if (seen_s >= e.last_seen_s) {
    // The newest observation decides the policy. An expired stream's old second is below
    // its counter's horizon, so Remove() is a no-op and Add() counts it afresh.
    if (policy != e.policy) {
      Group& old = GroupOf(e.policy);
      old.counter.Remove(e.last_seen_s);
      --old.streams;
      Group& now = GroupOf(policy);
      now.counter.Add(seen_s);
      ++now.streams;
      e.policy = policy;
    } else {
      GroupOf(policy).counter.Move(e.last_seen_s, seen_s);
    }
    BucketRing<uint32_t>::Advance(RateSlot(e.rate_slot), n_, windows_.bucket_s, e.last_seen_s, seen_s);
    e.last_seen_s = seen_s;
  }
  if (bytes > 0) {
    BucketRing<uint32_t>::Add(RateSlot(e.rate_slot), n_, windows_.bucket_s, e.last_seen_s, seen_s, bytes);
    RateRing<uint64_t>::Add(tenant_rate_.data(), n_, windows_.bucket_s, seen_s, bytes);
  }
  if (persist) MarkDirty(hash, e);
  else if (!e.dirty) e.stale_row = 1;
  return e;
}

void TenantStreams::Restore(uint64_t hash, PolicyId policy, uint32_t last_seen_s, uint32_t last_produced_s,
                            uint32_t newest_bucket_s, const uint64_t* rate_newest_first, size_t rate_count) {
  auto [it, created] = streams_.try_emplace(hash);
  StreamEntry& e = it->second;
  if (!created) {  // a duplicate row cannot happen; stay exact anyway
    Group& old = GroupOf(e.policy);
    old.counter.Remove(e.last_seen_s);
    --old.streams;
  } else {
    e.rate_slot = AllocRateSlot();
  }
  e.last_seen_s = last_seen_s;
  e.last_produced_s = last_produced_s;
  e.policy = policy;
  Group& g = GroupOf(policy);
  g.counter.Add(last_seen_s);
  ++g.streams;
  BucketRing<uint32_t>::Load(RateSlot(e.rate_slot), n_, windows_.bucket_s, last_seen_s, newest_bucket_s,
                             rate_newest_first, rate_count);
  // The tenant total is rebuilt from the streams' rings.
  for (size_t i = 0; i < rate_count && i < n_ && uint64_t{i} * windows_.bucket_s <= newest_bucket_s; ++i) {
    if (rate_newest_first[i] == 0) continue;
    const auto start = static_cast<uint32_t>(newest_bucket_s - i * windows_.bucket_s);
    RateRing<uint64_t>::Add(tenant_rate_.data(), n_, windows_.bucket_s, start, rate_newest_first[i]);
  }
}

void TenantStreams::SetLastProduced(StreamEntry& e, uint64_t hash, uint32_t now_s) {
  e.last_produced_s = now_s;
  MarkDirty(hash, e);
}

size_t TenantStreams::EvictBefore(int64_t cutoff_s) {
  size_t evicted = 0;
  for (auto it = streams_.begin(); it != streams_.end();) {
    const StreamEntry& e = it->second;
    if (static_cast<int64_t>(e.last_seen_s) >= cutoff_s) {
      ++it;
      continue;
    }
    Group& g = GroupOf(e.policy);
    g.counter.Remove(e.last_seen_s);
    --g.streams;
    free_rate_slots_.push_back(e.rate_slot);
    deleted_.push_back(it->first);
    streams_.erase(it++);
    ++evicted;
  }
  // Keep the counters consistent with the streams that remain.
  for (Group& g : groups_) Active(g, cutoff_s);
  ReleaseEmptyGroups();
  // Rate keys live as long as their rate window; the cutoff's "now" is cutoff + active.
  const int64_t rate_cutoff = cutoff_s + windows_.active_s - windows_.rate_s;
  for (auto it = rate_keys_.begin(); it != rate_keys_.end();) {
    if (static_cast<int64_t>(it->second.last_s) >= rate_cutoff) {
      ++it;
      continue;
    }
    free_rate_slots_.push_back(it->second.rate_slot);
    rate_keys_.erase(it++);
    shared_.ReturnRateKeys(1);
  }
  if (empty()) {
    rate_slab_.clear();
    rate_slab_.shrink_to_fit();
    free_rate_slots_.clear();
    free_rate_slots_.shrink_to_fit();
  }
  return evicted;
}

RateSum TenantStreams::ObserveRateKey(uint64_t hash, uint32_t now_s, uint64_t bytes, bool* kept) {
  if (kept != nullptr) *kept = true;
  auto found = rate_keys_.find(hash);
  if (found == rate_keys_.end() && !shared_.TakeRateKey()) {
    // Over a bound: this call's bytes are its whole window; nothing is kept.
    if (kept != nullptr) *kept = false;
    return RateSum{.bytes = bytes, .populated = bytes > 0 ? 1u : 0u};
  }
  auto [it, created] = found != rate_keys_.end() ? std::pair(found, false) : rate_keys_.try_emplace(hash);
  RateKey& k = it->second;
  if (created) {
    k.rate_slot = AllocRateSlot();
    k.last_s = now_s;
  } else if (now_s > k.last_s) {
    BucketRing<uint32_t>::Advance(RateSlot(k.rate_slot), n_, windows_.bucket_s, k.last_s, now_s);
    k.last_s = now_s;
  }
  if (bytes > 0) {
    BucketRing<uint32_t>::Add(RateSlot(k.rate_slot), n_, windows_.bucket_s, k.last_s, now_s, bytes);
    RateRing<uint64_t>::Add(tenant_rate_.data(), n_, windows_.bucket_s, now_s, bytes);
  }
  return BucketRing<uint32_t>::Sum(RateSlot(k.rate_slot), n_, windows_.bucket_s, windows_.rate_s, k.last_s, now_s);
}

RateSum TenantStreams::StreamRate(const StreamEntry& e, int64_t now_s) const {
  return BucketRing<uint32_t>::Sum(RateSlot(e.rate_slot), n_, windows_.bucket_s, windows_.rate_s, e.last_seen_s,
                                   now_s);
}

RateSum TenantStreams::TenantRate(int64_t now_s) const {
  return RateRing<uint64_t>::Sum(tenant_rate_.data(), n_, windows_.bucket_s, windows_.rate_s, now_s);
}

uint32_t TenantStreams::RateNewestFirst(const StreamEntry& e, uint64_t* out) const {
  return BucketRing<uint32_t>::NewestFirst(RateSlot(e.rate_slot), n_, windows_.bucket_s, e.last_seen_s, out);
}

}  // namespace limits
