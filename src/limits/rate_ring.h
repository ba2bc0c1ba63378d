// RateRing: bytes per rate bucket over the rate window, as a fixed ring in caller-owned
// memory, so a stream's rate costs (1 + buckets) words and no allocation.
//   slot[0]       start (unix s) of the newest bucket; 0 while empty
//   slot[1 + i]   bytes of the bucket whose start t has (t / bucket_s) % n == i
// T is uint32_t for streams (saturating) and uint64_t for tenant totals.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>

namespace limits {

inline uint64_t SaturatingAdd(uint64_t a, uint64_t b) {
  return a > std::numeric_limits<uint64_t>::max() - b ? std::numeric_limits<uint64_t>::max() : a + b;
}

struct RateSum {
  uint64_t bytes = 0;
  uint32_t populated = 0;  // buckets inside the window with bytes > 0
};

template <typename T>
class RateRing {
 public:
  static constexpr size_t Words(uint32_t n) { return 1 + n; }

  static void Clear(T* slot, uint32_t n) { std::fill(slot, slot + Words(n), T{0}); }

  // Adds `bytes` to the bucket of `seen_s`. Buckets older than the ring are dropped.
  static void Add(T* slot, uint32_t n, uint32_t bucket_s, uint32_t seen_s, uint64_t bytes) {
    const uint64_t start = seen_s - seen_s % bucket_s;
    const uint64_t newest = slot[0];
    const uint64_t span = uint64_t{n} * bucket_s;
    if (newest == 0 || start >= newest + span) {
      Clear(slot, n);
      slot[0] = static_cast<T>(start);
    } else if (start > newest) {
      const uint64_t steps = (start - newest) / bucket_s;  // < n here
      for (uint64_t i = 1; i <= steps; ++i) slot[1 + Index(newest + i * bucket_s, n, bucket_s)] = 0;
      slot[0] = static_cast<T>(start);
    } else if (start + span <= newest) {
      return;  // older than anything the ring holds
    }
    T& b = slot[1 + Index(start, n, bucket_s)];
    // Saturating: a record's totalSize may be anything up to 2^64 - 1.
    const uint64_t room = std::numeric_limits<T>::max() - uint64_t{b};
    b = static_cast<T>(uint64_t{b} + std::min<uint64_t>(bytes, room));
  }

  // Bytes in the buckets that start after now_s - rate_s (at most n of them).
  static RateSum Sum(const T* slot, uint32_t n, uint32_t bucket_s, uint32_t rate_s, int64_t now_s) {
    RateSum sum;
    const int64_t newest = static_cast<int64_t>(slot[0]);
    if (newest == 0) return sum;
    const int64_t cutoff = now_s - rate_s;
    for (uint32_t i = 0; i < n; ++i) {
      const int64_t start = newest - int64_t{i} * bucket_s;
      if (start <= cutoff) break;
      if (start > now_s) continue;
      const uint64_t b = slot[1 + Index(static_cast<uint64_t>(start), n, bucket_s)];
      sum.bytes = SaturatingAdd(sum.bytes, b);
      sum.populated += b > 0 ? 1 : 0;
    }
    return sum;
  }

  // Newest bucket first, into out[0..n); returns the newest start.
  static uint32_t NewestFirst(const T* slot, uint32_t n, uint32_t bucket_s, uint64_t* out) {
    const uint64_t newest = slot[0];
    for (uint32_t i = 0; i < n; ++i) {
      out[i] = (newest == 0 || newest < uint64_t{i} * bucket_s) ? 0 : slot[1 + Index(newest - uint64_t{i} * bucket_s, n, bucket_s)];
    }
    return static_cast<uint32_t>(newest);
  }

  // Inverse of NewestFirst (loading a row); extra buckets beyond n are dropped.
  static void Load(T* slot, uint32_t n, uint32_t bucket_s, uint32_t newest_start, const uint64_t* newest_first,
                   size_t count) {
    Clear(slot, n);
    if (newest_start == 0 || count == 0) return;
    slot[0] = static_cast<T>(newest_start);
    for (size_t i = 0; i < count && i < n && uint64_t{i} * bucket_s <= newest_start; ++i) {
      slot[1 + Index(newest_start - i * bucket_s, n, bucket_s)] =
          static_cast<T>(std::min<uint64_t>(newest_first[i], std::numeric_limits<T>::max()));
    }
  }

 private:
  static size_t Index(uint64_t start, uint32_t n, uint32_t bucket_s) { return (start / bucket_s) % n; }
};

}  // namespace limits
