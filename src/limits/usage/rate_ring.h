// Bytes per rate bucket over the rate window, as fixed rings in caller-owned memory, so a
// rate costs a few words and no allocation.
//   BucketRing: n words; bucket i holds the bytes of the bucket whose start t has
//     (t / bucket_s) % n == i. Its newest bucket is that of a second the caller keeps anyway
//     (a stream's last-seen second), so a stream's ring is n words and nothing else.
//   RateRing: the same with its newest bucket start in a header word (1 + n words), for
//     totals that have no such second of their own (a tenant's).
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
class BucketRing {
 public:
  static void Clear(T* b, uint32_t n) { std::fill(b, b + n, T{0}); }

  // The newest second moves from `from_s` to `to_s`: the buckets it passes start afresh.
  static void Advance(T* b, uint32_t n, uint32_t bucket_s, uint32_t from_s, uint32_t to_s) {
    const uint64_t from = Start(from_s, bucket_s), to = Start(to_s, bucket_s);
    if (to <= from) return;
    const uint64_t steps = (to - from) / bucket_s;
    if (steps >= n) {
      Clear(b, n);
      return;
    }
    for (uint64_t i = 1; i <= steps; ++i) b[Index(from + i * bucket_s, n, bucket_s)] = 0;
  }

  // Adds `bytes` at `seen_s` <= `newest_s`; a bucket older than the ring is dropped.
  static void Add(T* b, uint32_t n, uint32_t bucket_s, uint32_t newest_s, uint32_t seen_s, uint64_t bytes) {
    const uint64_t start = Start(seen_s, bucket_s);
    if (start + uint64_t{n} * bucket_s <= Start(newest_s, bucket_s)) return;
    T& slot = b[Index(start, n, bucket_s)];
    // Saturating: a record's totalSize may be anything up to 2^64 - 1.
    const uint64_t room = std::numeric_limits<T>::max() - uint64_t{slot};
    slot = static_cast<T>(uint64_t{slot} + std::min<uint64_t>(bytes, room));
  }

  // Bytes in the buckets that start after now_s - rate_s (at most n of them).
  static RateSum Sum(const T* b, uint32_t n, uint32_t bucket_s, uint32_t rate_s, uint32_t newest_s, int64_t now_s) {
    RateSum sum;
    const auto newest = static_cast<int64_t>(Start(newest_s, bucket_s));
    const int64_t cutoff = now_s - rate_s;
    for (uint32_t i = 0; i < n; ++i) {
      const int64_t start = newest - int64_t{i} * bucket_s;
      if (start <= cutoff || start < 0) break;
      if (start > now_s) continue;
      const uint64_t bytes = b[Index(static_cast<uint64_t>(start), n, bucket_s)];
      sum.bytes = SaturatingAdd(sum.bytes, bytes);
      sum.populated += bytes > 0 ? 1 : 0;
    }
    return sum;
  }

  // Newest bucket first, into out[0..n); returns the newest bucket's start.
  static uint32_t NewestFirst(const T* b, uint32_t n, uint32_t bucket_s, uint32_t newest_s, uint64_t* out) {
    const uint64_t newest = Start(newest_s, bucket_s);
    for (uint32_t i = 0; i < n; ++i) {
      out[i] = newest < uint64_t{i} * bucket_s ? 0 : b[Index(newest - uint64_t{i} * bucket_s, n, bucket_s)];
    }
    return static_cast<uint32_t>(newest);
  }

  // Inverse of NewestFirst for a ring whose newest second is `newest_s`: buckets listed from
  // `listed_start` back, newest first. Buckets outside the ring (or after newest_s) are dropped.
  static void Load(T* b, uint32_t n, uint32_t bucket_s, uint32_t newest_s, uint32_t listed_start,
                   const uint64_t* newest_first, size_t count) {
    Clear(b, n);
    if (listed_start == 0) return;
    const uint64_t newest = Start(newest_s, bucket_s);
    const uint64_t first = Start(listed_start, bucket_s);
    for (size_t i = 0; i < count && uint64_t{i} * bucket_s <= first; ++i) {
      const uint64_t start = first - i * bucket_s;
      if (start > newest) continue;
      if (start + uint64_t{n} * bucket_s <= newest) break;
      b[Index(start, n, bucket_s)] = static_cast<T>(std::min<uint64_t>(newest_first[i], std::numeric_limits<T>::max()));
    }
  }

 private:
  static uint64_t Start(uint32_t s, uint32_t bucket_s) { return s - s % bucket_s; }
  static size_t Index(uint64_t start, uint32_t n, uint32_t bucket_s) { return (start / bucket_s) % n; }
};

// slot[0] is the newest bucket's start (0 while empty), slot[1..n] a BucketRing.
template <typename T>
class RateRing {
 public:
  static constexpr size_t Words(uint32_t n) { return 1 + n; }

  static void Clear(T* slot, uint32_t n) { std::fill(slot, slot + Words(n), T{0}); }

  // Adds `bytes` to the bucket of `seen_s`. Buckets older than the ring are dropped.
  static void Add(T* slot, uint32_t n, uint32_t bucket_s, uint32_t seen_s, uint64_t bytes) {
    const auto newest = static_cast<uint32_t>(slot[0]);
    if (newest == 0) {
      Clear(slot, n);
      slot[0] = static_cast<T>(seen_s - seen_s % bucket_s);
    } else if (seen_s > newest) {
      BucketRing<T>::Advance(slot + 1, n, bucket_s, newest, seen_s);
      slot[0] = static_cast<T>(seen_s - seen_s % bucket_s);
    }
    BucketRing<T>::Add(slot + 1, n, bucket_s, static_cast<uint32_t>(slot[0]), seen_s, bytes);
  }

  // Bytes in the buckets that start after now_s - rate_s (at most n of them).
  static RateSum Sum(const T* slot, uint32_t n, uint32_t bucket_s, uint32_t rate_s, int64_t now_s) {
    if (slot[0] == 0) return {};
    return BucketRing<T>::Sum(slot + 1, n, bucket_s, rate_s, static_cast<uint32_t>(slot[0]), now_s);
  }
};

}  // namespace limits
