// TenantCounters: a per-tenant running total (bytes ingested, streams evicted), striped by
// tenant so requests never share a lock. Exposed at scrape by the node's collector, which
// caps the series per tenant and forgets tenants the node no longer holds streams of.
// Thread-safe.
#pragma once

#include <absl/container/flat_hash_map.h>
#include <absl/hash/hash.h>
#include <absl/strings/string_view.h>

#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace limits {

class TenantCounters {
 public:
  void Add(std::string_view tenant, double value) {
    if (value <= 0) return;
    Stripe& s = StripeOf(tenant);
    std::lock_guard lock(s.mu);
    auto it = s.totals.find(absl::string_view(tenant.data(), tenant.size()));
    if (it == s.totals.end()) it = s.totals.emplace(std::string(tenant), 0.0).first;
    it->second += value;
  }

  double Value(std::string_view tenant) const {
    const Stripe& s = StripeOf(tenant);
    std::lock_guard lock(s.mu);
    auto it = s.totals.find(absl::string_view(tenant.data(), tenant.size()));
    return it == s.totals.end() ? 0 : it->second;
  }

  std::vector<std::pair<std::string, double>> Snapshot() const {
    std::vector<std::pair<std::string, double>> out;
    for (const Stripe& s : stripes_) {
      std::lock_guard lock(s.mu);
      for (const auto& [tenant, v] : s.totals) out.emplace_back(tenant, v);
    }
    return out;
  }

  // Forgets every tenant `keep` says no to (their series end).
  void Retain(const std::function<bool(const std::string&)>& keep) {
    for (Stripe& s : stripes_) {
      std::lock_guard lock(s.mu);
      absl::erase_if(s.totals, [&](const auto& e) { return !keep(e.first); });
    }
  }

 private:
  static constexpr size_t kStripes = 32;
  struct alignas(64) Stripe {
    mutable std::mutex mu;
    absl::flat_hash_map<std::string, double> totals;  // GUARDED_BY(mu)
  };
  Stripe& StripeOf(std::string_view tenant) { return stripes_[absl::Hash<std::string_view>{}(tenant) % kStripes]; }
  const Stripe& StripeOf(std::string_view tenant) const {
    return stripes_[absl::Hash<std::string_view>{}(tenant) % kStripes];
  }
  Stripe stripes_[kStripes];
};

}  // namespace limits
