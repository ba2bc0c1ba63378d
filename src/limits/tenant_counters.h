// TenantCounters: one Prometheus counter per tenant, found without taking the family's
// mutex on every request (prometheus-cpp's Family::Add locks): a striped cache of the
// counter pointers, which the family keeps alive for the registry's lifetime.
#pragma once

#include <absl/container/flat_hash_map.h>
#include <absl/strings/string_view.h>
#include <absl/hash/hash.h>
#include <prometheus/counter.h>
#include <prometheus/family.h>

#include <mutex>
#include <string>
#include <string_view>

namespace limits {

class TenantCounters {
 public:
  explicit TenantCounters(prometheus::Family<prometheus::Counter>& family) : family_(family) {}

  void Add(std::string_view tenant, double value) {
    if (value <= 0) return;
    Get(tenant).Increment(value);
  }

  prometheus::Counter& Get(std::string_view tenant) {
    Stripe& s = stripes_[absl::Hash<std::string_view>{}(tenant) % kStripes];
    std::lock_guard lock(s.mu);
    auto it = s.counters.find(absl::string_view(tenant.data(), tenant.size()));
    if (it == s.counters.end()) {
      it = s.counters.emplace(std::string(tenant), &family_.Add({{"tenant", std::string(tenant)}})).first;
    }
    return *it->second;
  }

 private:
  static constexpr size_t kStripes = 32;
  struct alignas(64) Stripe {
    std::mutex mu;
    absl::flat_hash_map<std::string, prometheus::Counter*> counters;  // GUARDED_BY(mu)
  };
  prometheus::Family<prometheus::Counter>& family_;
  Stripe stripes_[kStripes];
};

}  // namespace limits
