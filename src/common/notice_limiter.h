// NoticeLimiter: lets a warning keyed by its cause be logged once a minute per key, and at
// most `max_keys` distinct keys a minute. Keys a client makes up (tenant names) then cost
// O(1) per call and bounded memory; what is not logged is still counted by the caller's
// metrics. Thread-safe.
#pragma once

#include <cstdint>
#include <limits>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_set>

namespace limits {

class NoticeLimiter {
 public:
  explicit NoticeLimiter(size_t max_keys = 256, int64_t window_ms = 60'000)
      : max_keys_(max_keys), window_ms_(window_ms) {}

  // Whether a line keyed `key` is to be logged now (and is noted as logged).
  bool Allow(std::string_view key, int64_t now_ms) {
    std::lock_guard lock(mu_);
    // A new window every minute (and when the clock went back): its keys start afresh.
    if (now_ms < window_start_ms_ || now_ms - window_start_ms_ >= window_ms_) {
      keys_.clear();
      window_start_ms_ = now_ms;
    }
    if (keys_.size() >= max_keys_) return false;
    return keys_.emplace(key).second;
  }

 private:
  const size_t max_keys_;
  const int64_t window_ms_;
  std::mutex mu_;
  std::unordered_set<std::string> keys_;  // GUARDED_BY(mu_)
  int64_t window_start_ms_ = std::numeric_limits<int64_t>::min() / 2;  // GUARDED_BY(mu_)
};

}  // namespace limits
