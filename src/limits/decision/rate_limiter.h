// RateLimiter: per-tenant token buckets for the ingestion rate (bytes/s) and burst (bytes).
// A node refills at its share of the tenant's rate — without a zone rate * (partitions it
// serves / all partitions), the same share as its stream limit; in a zone the share its home
// gives it by demand (zone/rate_shares.h) — and holds the whole burst, which (as in Loki) must
// be at least the largest push. Striped by tenant: no global lock.
#pragma once

#include <absl/container/flat_hash_map.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

namespace limits {

class RateLimiter {
 public:
  // Takes `bytes` from the tenant's bucket if it holds them (refilling at `rate` bytes/s up
  // to `burst`, a full bucket to start with). A rate of 0 refills nothing (a node whose zone
  // share is 0 keeps its burst only); an unlimited tenant is not drawn from at all.
  bool TryTake(std::string_view tenant, double bytes, double rate, double burst, int64_t now_ms);
  // Returns bytes taken for a request that was then not ingested (up to the burst).
  void Refund(std::string_view tenant, double bytes, double burst);
  // Forgets the buckets that are full again by `now_ms` (a bucket starts full: forgetting
  // one changes nothing); returns how many.
  size_t ForgetFull(int64_t now_ms);
  size_t size();

 private:
  struct Bucket {
    double tokens = 0;
    int64_t updated_ms = 0;
    int64_t full_at_ms = 0;  // when refilling makes it full, at the rate last used
  };
  static constexpr size_t kStripes = 64;
  struct alignas(64) Stripe {
    std::mutex mu;
    absl::flat_hash_map<std::string, Bucket> buckets;  // GUARDED_BY(mu)
  };
  Stripe& StripeOf(std::string_view tenant);
  Stripe stripes_[kStripes];
};

}  // namespace limits
