// TenantDirectory: the node's tenants, each with an id (held by every partition that has
// streams of it, and reused once none does — so tenants that come and go are forgotten) and
// what its partitions share (TenantShared): its table of ingestion-policy ids, bounded per
// tenant, so one tenant with ever new policies can exhaust only its own table; and its count
// of rate keys, bounded per tenant and per node (RateKeyBudget).
// The directory itself is bounded (max_tenants): a client that sends ever new tenants cannot
// make the node hold more. What is over a bound is answered, not stored; refusals are counted.
// Thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>

#include "limits/usage/name_table.h"

namespace limits {

using TenantId = uint32_t;

// Ingestion-policy ids of one tenant are 16 bits in a stream's entry.
inline constexpr uint32_t kMaxPolicyIds = 65536;

// The node's rate keys (UpdateRates' hashes that are not streams: Loki's callers send
// segmentation keys), bounded per tenant and in all. Thread-safe.
class RateKeyBudget {
 public:
  RateKeyBudget(uint32_t per_tenant, uint64_t per_node) : per_tenant_(per_tenant), per_node_(per_node) {}

  // One more rate key of a tenant whose count is `tenant_keys`; false (counted) when the
  // tenant or the node holds as many as it may.
  bool Take(std::atomic<uint32_t>& tenant_keys) {
    if (tenant_keys.fetch_add(1, std::memory_order_relaxed) >= per_tenant_) {
      tenant_keys.fetch_sub(1, std::memory_order_relaxed);
      refused_tenant_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    if (held_.fetch_add(1, std::memory_order_relaxed) >= per_node_) {
      held_.fetch_sub(1, std::memory_order_relaxed);
      tenant_keys.fetch_sub(1, std::memory_order_relaxed);
      refused_node_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    return true;
  }
  void Return(std::atomic<uint32_t>& tenant_keys, uint32_t n) {
    tenant_keys.fetch_sub(n, std::memory_order_relaxed);
    held_.fetch_sub(n, std::memory_order_relaxed);
  }

  uint64_t held() const { return held_.load(std::memory_order_relaxed); }
  uint64_t refused_tenant() const { return refused_tenant_.load(std::memory_order_relaxed); }
  uint64_t refused_node() const { return refused_node_.load(std::memory_order_relaxed); }
  uint32_t per_tenant() const { return per_tenant_; }
  uint64_t per_node() const { return per_node_; }

 private:
  const uint32_t per_tenant_;
  const uint64_t per_node_;
  std::atomic<uint64_t> held_{0};
  std::atomic<uint64_t> refused_tenant_{0}, refused_node_{0};
};

// What the TenantStreams of one tenant (one per partition) share.
class TenantShared {
 public:
  // `max_policies` names besides "" (which holds a place of its own for good: a stream can
  // always be counted); names reserved for policies with a limit of their own may go past it.
  // `budget` must outlive it; nullptr: rate keys unbounded.
  explicit TenantShared(uint32_t max_policies, RateKeyBudget* budget = nullptr)
      : policies_(max_policies + 1, kMaxPolicyIds), budget_(budget) {
    policies_.Acquire("");
  }

  NameTable& policies() { return policies_; }
  // A place for one more rate key of this tenant; false when over a bound.
  bool TakeRateKey() {
    if (budget_ != nullptr) return budget_->Take(rate_keys_);
    rate_keys_.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  void ReturnRateKeys(uint32_t n) {
    if (n == 0) return;
    if (budget_ != nullptr) budget_->Return(rate_keys_, n);
    else rate_keys_.fetch_sub(n, std::memory_order_relaxed);
  }
  uint32_t rate_keys() const { return rate_keys_.load(std::memory_order_relaxed); }

 private:
  NameTable policies_;
  RateKeyBudget* const budget_;
  std::atomic<uint32_t> rate_keys_{0};
};

struct TenantBounds {
  uint32_t max_tenants = 100'000;
  uint32_t max_policies_per_tenant = 1000;
  uint32_t max_rate_keys_per_tenant = 10'000;
  uint64_t max_rate_keys = 1'000'000;
};

class TenantDirectory {
 public:
  explicit TenantDirectory(const TenantBounds& bounds)
      : tenants_(bounds.max_tenants),
        max_policies_(bounds.max_policies_per_tenant),
        rate_keys_(bounds.max_rate_keys_per_tenant, bounds.max_rate_keys) {}
  TenantDirectory(uint32_t max_tenants, uint32_t max_policies_per_tenant)
      : TenantDirectory(TenantBounds{.max_tenants = max_tenants, .max_policies_per_tenant = max_policies_per_tenant}) {}

  // One more reference to the tenant's id (adding the tenant when new); nullopt (counted)
  // when the directory holds max_tenants others.
  std::optional<TenantId> Acquire(std::string_view tenant) {
    std::optional<uint32_t> id = tenants_.Acquire(tenant);
    if (!id) {
      refused_tenants_.fetch_add(1, std::memory_order_relaxed);
      return std::nullopt;
    }
    std::lock_guard lock(mu_);
    while (shared_.size() <= *id) shared_.push_back(std::make_unique<TenantShared>(max_policies_, &rate_keys_));
    return *id;
  }
  // The last reference gone, the tenant is forgotten (its policy table holds only "" by
  // then: every other policy id is held by a group of one of its partitions' streams; and
  // its rate keys were returned with its partitions' TenantStreams).
  void Release(TenantId id) { tenants_.Release(id); }
  // The id of a known tenant. It may be released and reused meanwhile: a caller checks the
  // tenant's name on whatever it finds under the id.
  std::optional<TenantId> Find(std::string_view tenant) const { return tenants_.Find(tenant); }
  // REQUIRES: a reference to `id` held. The object lives as long as the directory.
  TenantShared& Shared(TenantId id) {
    std::lock_guard lock(mu_);
    return *shared_.at(id);
  }
  size_t size() const { return tenants_.size(); }
  uint32_t max_tenants() const { return tenants_.capacity(); }
  uint32_t max_policies_per_tenant() const { return max_policies_; }
  // New tenants refused because the directory was full.
  uint64_t refused_tenants() const { return refused_tenants_.load(std::memory_order_relaxed); }
  const RateKeyBudget& rate_keys() const { return rate_keys_; }

 private:
  NameTable tenants_;
  const uint32_t max_policies_;
  RateKeyBudget rate_keys_;
  std::atomic<uint64_t> refused_tenants_{0};
  std::mutex mu_;
  std::deque<std::unique_ptr<TenantShared>> shared_;  // GUARDED_BY(mu_); by tenant id
};

}  // namespace limits
