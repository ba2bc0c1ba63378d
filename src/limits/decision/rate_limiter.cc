#include "limits/decision/rate_limiter.h"

#include <absl/hash/hash.h>
#include <absl/strings/string_view.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace limits {

RateLimiter::Stripe& RateLimiter::StripeOf(std::string_view tenant) {
  return stripes_[absl::Hash<std::string_view>{}(tenant) % kStripes];
}

bool RateLimiter::TryTake(std::string_view tenant, double bytes, double rate, double burst, int64_t now_ms) {
  rate = std::max(rate, 0.0);
  Stripe& s = StripeOf(tenant);
  std::lock_guard lock(s.mu);
  auto [it, created] = s.buckets.try_emplace(std::string(tenant));
  Bucket& b = it->second;
  if (created) {
    b.tokens = burst;
  } else if (now_ms > b.updated_ms) {
    b.tokens = std::min(burst, b.tokens + rate * static_cast<double>(now_ms - b.updated_ms) / 1000.0);
  }
  b.tokens = std::min(b.tokens, burst);  // the burst may have been lowered by a reload
  b.updated_ms = std::max(b.updated_ms, now_ms);
  const bool taken = bytes <= b.tokens;
  if (taken) b.tokens -= bytes;
  if (b.tokens >= burst) {
    b.full_at_ms = b.updated_ms;
  } else if (rate > 0) {
    // Capped at a day: a rate so low that it refills later is as good as never.
    b.full_at_ms = b.updated_ms + static_cast<int64_t>(std::min(std::ceil((burst - b.tokens) * 1000.0 / rate), 8.64e7));
  } else {
    b.full_at_ms = std::numeric_limits<int64_t>::max();  // no refill: kept until a rate refills it
  }
  return taken;
}

size_t RateLimiter::ForgetFull(int64_t now_ms) {
  size_t forgotten = 0;
  for (Stripe& s : stripes_) {
    std::lock_guard lock(s.mu);
    forgotten += absl::erase_if(s.buckets, [&](const auto& e) { return e.second.full_at_ms <= now_ms; });
  }
  return forgotten;
}

size_t RateLimiter::size() {
  size_t n = 0;
  for (Stripe& s : stripes_) {
    std::lock_guard lock(s.mu);
    n += s.buckets.size();
  }
  return n;
}

void RateLimiter::Refund(std::string_view tenant, double bytes, double burst) {
  Stripe& s = StripeOf(tenant);
  std::lock_guard lock(s.mu);
  auto it = s.buckets.find(absl::string_view(tenant.data(), tenant.size()));
  if (it != s.buckets.end()) it->second.tokens = std::min(burst, it->second.tokens + bytes);
}

}  // namespace limits
