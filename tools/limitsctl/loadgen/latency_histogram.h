// LatencyHistogram: latencies in microseconds counted in log-linear buckets — exact below
// 32 µs, then 32 buckets per power of two (a bucket spans at most 1/32 of its lower bound) —
// so per-second and whole-run percentiles cost a fixed 2k counters however many samples.
// Record() and DrainInto() are thread-safe and lock-free (relaxed atomics): a sample recorded
// during a drain lands in this interval or the next, never in neither.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace limits::loadgen {

class LatencyHistogram {
 public:
  static constexpr int kSubBits = 5;  // 32 buckets per power of two
  static constexpr size_t kBuckets = (64 - kSubBits + 1) << kSubBits;

  void Record(uint64_t micros);
  // Moves every count of this histogram into `total` (this one ends empty).
  void DrainInto(LatencyHistogram& total);
  void Clear();

  uint64_t count() const { return count_.load(std::memory_order_relaxed); }
  uint64_t max() const { return max_.load(std::memory_order_relaxed); }
  // The nearest-rank percentile (p in 0..1): the smallest bucket value v with at least
  // ceil(p·count) samples <= v, reported as the bucket's upper bound (capped at the largest
  // sample). 0 when empty.
  uint64_t Percentile(double p) const;

  static size_t BucketOf(uint64_t micros);
  static uint64_t UpperBound(size_t bucket);  // the largest value BucketOf maps to `bucket`

 private:
  std::array<std::atomic<uint64_t>, kBuckets> buckets_{};
  std::atomic<uint64_t> count_{0};
  std::atomic<uint64_t> max_{0};
};

}  // namespace limits::loadgen
