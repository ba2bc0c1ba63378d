// TenantDirectory: the node's tenants, each with an id (held by every partition that has
// streams of it, and reused once none does — so tenants that come and go are forgotten) and
// its own table of ingestion-policy ids, bounded per tenant: one tenant with ever new
// policies can exhaust only its own table, never another tenant's.
// Thread-safe.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>

#include "limits/name_table.h"

namespace limits {

using TenantId = uint32_t;

class TenantDirectory {
 public:
  TenantDirectory(uint32_t max_tenants, uint32_t max_policies_per_tenant)
      : tenants_(max_tenants), max_policies_(max_policies_per_tenant) {}

  // One more reference to the tenant's id (adding the tenant when new); nullopt when full.
  std::optional<TenantId> Acquire(std::string_view tenant) {
    std::optional<uint32_t> id = tenants_.Acquire(tenant);
    if (!id) return std::nullopt;
    std::lock_guard lock(mu_);
    while (policies_.size() <= *id) {
      // "" (no policy) holds a place of its own for good: a stream can always be counted.
      policies_.push_back(std::make_unique<NameTable>(max_policies_ + 1));
      policies_.back()->Acquire("");
    }
    return *id;
  }
  // The last reference gone, the tenant is forgotten (its policy table holds only "" by
  // then: every other policy id is held by a group of one of its partitions' streams).
  void Release(TenantId id) { tenants_.Release(id); }
  // The id of a known tenant. It may be released and reused meanwhile: a caller checks the
  // tenant's name on whatever it finds under the id.
  std::optional<TenantId> Find(std::string_view tenant) const { return tenants_.Find(tenant); }
  // REQUIRES: a reference to `id` held. The table lives as long as the directory.
  NameTable& Policies(TenantId id) {
    std::lock_guard lock(mu_);
    return *policies_.at(id);
  }
  size_t size() const { return tenants_.size(); }
  uint32_t max_policies_per_tenant() const { return max_policies_; }

 private:
  NameTable tenants_;
  const uint32_t max_policies_;
  std::mutex mu_;
  std::deque<std::unique_ptr<NameTable>> policies_;  // GUARDED_BY(mu_); by tenant id
};

}  // namespace limits
