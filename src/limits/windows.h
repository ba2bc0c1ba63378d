// The time windows of the usage store, in whole seconds (the store's time unit).
#pragma once

#include <cstdint>

namespace limits {

struct Windows {
  // A stream last seen before now - active_s is inactive: it does not count, and is evicted.
  uint32_t active_s = 7200;
  // Rates are averaged over the last rate_s, kept in buckets of bucket_s (rate_s % bucket_s == 0).
  uint32_t rate_s = 300;
  uint32_t bucket_s = 60;
  // An accepted stream is due to be produced at most once per this interval.
  uint32_t produce_interval_s = 60;

  uint32_t num_buckets() const { return rate_s / bucket_s; }
  // The oldest last-seen time that is still active at now_s.
  int64_t ActiveCutoff(int64_t now_s) const { return now_s - active_s; }
};

}  // namespace limits
