#include "loadgen/latency_histogram.h"

#include <bit>
#include <cmath>

namespace limits::loadgen {
namespace {

constexpr uint64_t kSub = uint64_t{1} << LatencyHistogram::kSubBits;

void StoreMax(std::atomic<uint64_t>& max, uint64_t v) {
  uint64_t seen = max.load(std::memory_order_relaxed);
  while (v > seen && !max.compare_exchange_weak(seen, v, std::memory_order_relaxed)) {
  }
}

}  // namespace

size_t LatencyHistogram::BucketOf(uint64_t micros) {
  if (micros < kSub) return static_cast<size_t>(micros);
  const int e = 63 - std::countl_zero(micros);  // >= kSubBits
  const uint64_t sub = (micros >> (e - kSubBits)) & (kSub - 1);
  return static_cast<size_t>(static_cast<uint64_t>(e - kSubBits + 1) * kSub + sub);
}

uint64_t LatencyHistogram::UpperBound(size_t bucket) {
  if (bucket < kSub) return bucket;
  const int e = static_cast<int>(bucket / kSub) + kSubBits - 1;
  const uint64_t sub = bucket % kSub;
  const uint64_t width = uint64_t{1} << (e - kSubBits);
  return ((kSub + sub) << (e - kSubBits)) + (width - 1);
}

void LatencyHistogram::Record(uint64_t micros) {
  buckets_[BucketOf(micros)].fetch_add(1, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
  StoreMax(max_, micros);
}

void LatencyHistogram::DrainInto(LatencyHistogram& total) {
  uint64_t moved = 0;
  for (size_t i = 0; i < kBuckets; ++i) {
    const uint64_t n = buckets_[i].exchange(0, std::memory_order_relaxed);
    if (n == 0) continue;
    total.buckets_[i].fetch_add(n, std::memory_order_relaxed);
    moved += n;
  }
  count_.fetch_sub(moved, std::memory_order_relaxed);
  total.count_.fetch_add(moved, std::memory_order_relaxed);
  StoreMax(total.max_, max_.exchange(0, std::memory_order_relaxed));
}

void LatencyHistogram::Clear() {
  for (auto& b : buckets_) b.store(0, std::memory_order_relaxed);
  count_.store(0, std::memory_order_relaxed);
  max_.store(0, std::memory_order_relaxed);
}

uint64_t LatencyHistogram::Percentile(double p) const {
  uint64_t n = 0;
  for (const auto& b : buckets_) n += b.load(std::memory_order_relaxed);
  if (n == 0) return 0;
  const auto rank = std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(p * static_cast<double>(n))));
  uint64_t seen = 0;
  for (size_t i = 0; i < kBuckets; ++i) {
    seen += buckets_[i].load(std::memory_order_relaxed);
    if (seen < rank) continue;
    // Capped at the largest sample, unless a concurrent Record() has not published it yet.
    const uint64_t lower = i == 0 ? 0 : UpperBound(i - 1) + 1;
    const uint64_t m = max();
    return m >= lower ? std::min(UpperBound(i), m) : UpperBound(i);
  }
  return max();
}

}  // namespace limits::loadgen
