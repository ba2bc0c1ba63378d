#include "limits/tenant_streams.h"

#include <algorithm>

namespace limits {

TenantStreams::TenantStreams(std::string tenant, const Windows& windows)
    : tenant_(std::move(tenant)),
      windows_(windows),
      n_(windows.num_buckets()),
      tenant_rate_(RateRing<uint64_t>::Words(windows.num_buckets()), 0) {}

StreamEntry* TenantStreams::Find(uint64_t hash) {
  auto it = streams_.find(hash);
  return it == streams_.end() ? nullptr : &it->second;
}

const StreamEntry* TenantStreams::Find(uint64_t hash) const {
  auto it = streams_.find(hash);
  return it == streams_.end() ? nullptr : &it->second;
}

ActiveCounter& TenantStreams::Group(PolicyId policy) {
  for (auto& [p, counter] : groups_) {
    if (p == policy) return counter;
  }
  groups_.emplace_back(policy, ActiveCounter());
  return groups_.back().second;
}

uint32_t TenantStreams::ActiveOf(PolicyId policy, int64_t cutoff_s) {
  for (auto& [p, counter] : groups_) {
    if (p == policy) return counter.Active(cutoff_s);
  }
  return 0;
}

uint32_t TenantStreams::AllocRateSlot() {
  if (!free_rate_slots_.empty()) {
    const uint32_t slot = free_rate_slots_.back();
    free_rate_slots_.pop_back();
    RateRing<uint32_t>::Clear(RateSlot(slot), n_);
    return slot;
  }
  const size_t words = RateRing<uint32_t>::Words(n_);
  const auto slot = static_cast<uint32_t>(rate_slab_.size() / words);
  rate_slab_.resize(rate_slab_.size() + words, 0);
  return slot;
}

StreamEntry& TenantStreams::Observe(uint64_t hash, PolicyId policy, uint32_t seen_s, uint64_t bytes) {
  auto [it, created] = streams_.try_emplace(hash);
  StreamEntry& e = it->second;
  if (created) {
    e.last_seen_s = seen_s;
    e.policy = policy;
    e.rate_slot = AllocRateSlot();
    Group(policy).Add(seen_s);
  } else if (seen_s >= e.last_seen_s) {
    // The newest observation decides the policy. An expired stream's old second is below
    // its counter's horizon, so Remove() is a no-op and Add() counts it afresh.
    if (policy != e.policy) {
      Group(e.policy).Remove(e.last_seen_s);
      Group(policy).Add(seen_s);
      e.policy = policy;
    } else {
      Group(policy).Move(e.last_seen_s, seen_s);
    }
    e.last_seen_s = seen_s;
  }
  if (bytes > 0) {
    RateRing<uint32_t>::Add(RateSlot(e.rate_slot), n_, windows_.bucket_s, seen_s, bytes);
    RateRing<uint64_t>::Add(tenant_rate_.data(), n_, windows_.bucket_s, seen_s, bytes);
  }
  MarkDirty(hash, e);
  return e;
}

void TenantStreams::Restore(uint64_t hash, PolicyId policy, uint32_t last_seen_s, uint32_t last_produced_s,
                            uint32_t newest_bucket_s, const uint64_t* rate_newest_first, size_t rate_count) {
  auto [it, created] = streams_.try_emplace(hash);
  StreamEntry& e = it->second;
  if (!created) Group(e.policy).Remove(e.last_seen_s);  // a duplicate row cannot happen; stay exact anyway
  else e.rate_slot = AllocRateSlot();
  e.last_seen_s = last_seen_s;
  e.last_produced_s = last_produced_s;
  e.policy = policy;
  Group(policy).Add(last_seen_s);
  uint32_t* slot = RateSlot(e.rate_slot);
  RateRing<uint32_t>::Load(slot, n_, windows_.bucket_s, newest_bucket_s, rate_newest_first, rate_count);
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
    Group(e.policy).Remove(e.last_seen_s);
    free_rate_slots_.push_back(e.rate_slot);
    deleted_.push_back(it->first);
    streams_.erase(it++);
    ++evicted;
  }
  // Keep the counters consistent with the streams that remain.
  for (auto& [policy, counter] : groups_) counter.Active(cutoff_s);
  if (streams_.empty()) {
    rate_slab_.clear();
    rate_slab_.shrink_to_fit();
    free_rate_slots_.clear();
    free_rate_slots_.shrink_to_fit();
    groups_.clear();
  }
  return evicted;
}

RateSum TenantStreams::StreamRate(const StreamEntry& e, int64_t now_s) const {
  return RateRing<uint32_t>::Sum(RateSlot(e.rate_slot), n_, windows_.bucket_s, windows_.rate_s, now_s);
}

RateSum TenantStreams::TenantRate(int64_t now_s) const {
  return RateRing<uint64_t>::Sum(tenant_rate_.data(), n_, windows_.bucket_s, windows_.rate_s, now_s);
}

uint32_t TenantStreams::RateNewestFirst(const StreamEntry& e, uint64_t* out) const {
  return RateRing<uint32_t>::NewestFirst(RateSlot(e.rate_slot), n_, windows_.bucket_s, out);
}

}  // namespace limits
