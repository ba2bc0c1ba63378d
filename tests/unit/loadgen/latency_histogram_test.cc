#include "loadgen/latency_histogram.h"

#include <gtest/gtest.h>

#include <random>
#include <thread>
#include <vector>

namespace limits::loadgen {
namespace {

TEST(LatencyHistogramTest, BucketsAreExactBelow32AndWithin1Of32Above) {
  for (uint64_t v = 0; v < 32; ++v) {
    EXPECT_EQ(LatencyHistogram::BucketOf(v), v);
    EXPECT_EQ(LatencyHistogram::UpperBound(v), v);
  }
  std::mt19937_64 rng(3);
  for (int i = 0; i < 100'000; ++i) {
    const uint64_t v = rng() >> (rng() % 64);
    const size_t b = LatencyHistogram::BucketOf(v);
    ASSERT_LT(b, LatencyHistogram::kBuckets);
    const uint64_t upper = LatencyHistogram::UpperBound(b);
    const uint64_t lower = b == 0 ? 0 : LatencyHistogram::UpperBound(b - 1) + 1;
    ASSERT_LE(lower, v);
    ASSERT_GE(upper, v);
    if (v >= 32) {
      ASSERT_LE(static_cast<double>(upper - lower + 1) / static_cast<double>(lower), 1.0 / 32 + 1e-12);
    }
  }
  EXPECT_EQ(LatencyHistogram::BucketOf(UINT64_MAX), LatencyHistogram::kBuckets - 1);
  EXPECT_EQ(LatencyHistogram::UpperBound(LatencyHistogram::kBuckets - 1), UINT64_MAX);
}

TEST(LatencyHistogramTest, NearestRankPercentiles) {
  LatencyHistogram h;
  EXPECT_EQ(h.Percentile(0.5), 0u);
  for (uint64_t v = 1; v <= 10; ++v) h.Record(v);  // exact buckets
  EXPECT_EQ(h.count(), 10u);
  EXPECT_EQ(h.Percentile(0.5), 5u);
  EXPECT_EQ(h.Percentile(0.51), 6u);
  EXPECT_EQ(h.Percentile(0.99), 10u);
  EXPECT_EQ(h.Percentile(1), 10u);
  EXPECT_EQ(h.Percentile(0), 1u);
  EXPECT_EQ(h.max(), 10u);
}

TEST(LatencyHistogramTest, PercentilesOfAWideDistributionWithin1Of32) {
  LatencyHistogram h;
  std::vector<uint64_t> values;
  for (uint64_t v = 100; v <= 100'000; v += 7) values.push_back(v);
  for (uint64_t v : values) h.Record(v);
  for (double p : {0.5, 0.9, 0.99, 0.999}) {
    const uint64_t exact = values[static_cast<size_t>(std::ceil(p * values.size())) - 1];
    const uint64_t got = h.Percentile(p);
    EXPECT_GE(got, exact) << p;  // a bucket's upper bound...
    EXPECT_LE(static_cast<double>(got), exact * (1 + 1.0 / 32)) << p;  // ...a bucket away at most
  }
  EXPECT_EQ(h.Percentile(1), values.back());  // capped at the largest sample
}

TEST(LatencyHistogramTest, DrainMovesEverythingIntoTheTotal) {
  LatencyHistogram interval, total;
  for (uint64_t v : {5, 500, 50'000}) interval.Record(v);
  interval.DrainInto(total);
  EXPECT_EQ(interval.count(), 0u);
  EXPECT_EQ(interval.Percentile(0.5), 0u);
  EXPECT_EQ(interval.max(), 0u);
  interval.Record(7);
  interval.DrainInto(total);
  EXPECT_EQ(total.count(), 4u);
  EXPECT_EQ(total.max(), 50'000u);
  EXPECT_EQ(total.Percentile(0.25), 5u);
  EXPECT_EQ(total.Percentile(0.5), 7u);
}

TEST(LatencyHistogramTest, ConcurrentRecordsAndDrainsLoseNothing) {
  LatencyHistogram live, total;
  constexpr int kThreads = 4, kPerThread = 50'000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) live.Record(static_cast<uint64_t>(t * 1000 + i % 1000));
    });
  }
  for (int i = 0; i < 100; ++i) live.DrainInto(total);
  for (auto& th : threads) th.join();
  live.DrainInto(total);
  EXPECT_EQ(total.count(), static_cast<uint64_t>(kThreads * kPerThread));
  EXPECT_EQ(total.max(), 3999u);
}

}  // namespace
}  // namespace limits::loadgen
