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
  // How long after a stream was produced (at `produced_s`) it is due again: the interval plus
  // up to a quarter of it, drawn anew each time from the stream's hash and that second.
  // Streams produced together (a partition's after its assignment, a client's whole pool)
  // would otherwise come due together every interval for as long as they are pushed; with a
  // random quarter each time they spread over the interval within a few of them.
  uint32_t ProduceDelay(uint64_t stream_hash, uint32_t produced_s) const {
    uint64_t x = stream_hash ^ (uint64_t{produced_s} * 0x9e3779b97f4a7c15);  // a 64-bit finaliser
    x = (x ^ (x >> 33)) * 0xff51afd7ed558ccd;
    x = (x ^ (x >> 33)) * 0xc4ceb9fe1a85ec53;
    x ^= x >> 33;
    return produce_interval_s + static_cast<uint32_t>(x % (produce_interval_s / 4 + 1));
  }
  // Whether a stream produced at `produced_s` (0: never by this node) is due again at now_s.
  bool ProduceDue(uint64_t stream_hash, uint32_t produced_s, int64_t now_s) const {
    if (produced_s == 0) return true;
    const int64_t since = now_s - produced_s;
    // Most refreshes come within the interval: only those past it draw their delay.
    return since >= produce_interval_s && since >= ProduceDelay(stream_hash, produced_s);
  }
  // The oldest last-seen time that is still active at now_s.
  int64_t ActiveCutoff(int64_t now_s) const { return now_s - active_s; }
};

}  // namespace limits
