#include "limits/usage/rate_ring.h"

#include <gtest/gtest.h>

#include <vector>

namespace limits {
namespace {

constexpr uint32_t kN = 5, kBucket = 60, kRate = 300;
constexpr uint32_t kT0 = 1'700'000'040;  // a bucket start: kT0 % 60 == 0 is not required

std::vector<uint32_t> Ring() { return std::vector<uint32_t>(RateRing<uint32_t>::Words(kN), 0); }

TEST(RateRingTest, BytesInTheSameBucketAddUp) {
  auto r = Ring();
  RateRing<uint32_t>::Add(r.data(), kN, kBucket, kT0, 100);
  RateRing<uint32_t>::Add(r.data(), kN, kBucket, kT0 + 1, 50);
  RateSum s = RateRing<uint32_t>::Sum(r.data(), kN, kBucket, kRate, kT0 + 1);
  EXPECT_EQ(s.bytes, 150u);
  EXPECT_EQ(s.populated, 1u);
}

TEST(RateRingTest, OnlyBucketsInsideTheRateWindowCount) {
  auto r = Ring();
  const uint32_t start = kT0 - kT0 % kBucket;
  for (uint32_t i = 0; i < 5; ++i) RateRing<uint32_t>::Add(r.data(), kN, kBucket, start + i * kBucket, 10 * (i + 1));
  // Now inside the newest bucket: all five buckets start after now - 300.
  RateSum s = RateRing<uint32_t>::Sum(r.data(), kN, kBucket, kRate, start + 4 * kBucket + 30);
  EXPECT_EQ(s.bytes, 150u);
  EXPECT_EQ(s.populated, 5u);
  // One bucket later the oldest bucket starts exactly at now - 300: out.
  s = RateRing<uint32_t>::Sum(r.data(), kN, kBucket, kRate, start + 5 * kBucket);
  EXPECT_EQ(s.bytes, 140u);
  EXPECT_EQ(s.populated, 4u);
  // Long after, nothing.
  s = RateRing<uint32_t>::Sum(r.data(), kN, kBucket, kRate, start + 20 * kBucket);
  EXPECT_EQ(s.bytes, 0u);
}

TEST(RateRingTest, AdvancingClearsSkippedBucketsAndDropsTooOldOnes) {
  auto r = Ring();
  const uint32_t start = kT0 - kT0 % kBucket;
  RateRing<uint32_t>::Add(r.data(), kN, kBucket, start, 7);
  RateRing<uint32_t>::Add(r.data(), kN, kBucket, start + 2 * kBucket, 9);  // skips one bucket
  RateRing<uint32_t>::Add(r.data(), kN, kBucket, start + 6 * kBucket, 1);  // wraps over `start`
  RateSum s = RateRing<uint32_t>::Sum(r.data(), kN, kBucket, kRate, start + 6 * kBucket);
  EXPECT_EQ(s.bytes, 10u);  // 9 + 1; the 7 was overwritten, not summed
  RateRing<uint32_t>::Add(r.data(), kN, kBucket, start, 1000);  // older than the ring: dropped
  EXPECT_EQ(RateRing<uint32_t>::Sum(r.data(), kN, kBucket, kRate, start + 6 * kBucket).bytes, 10u);
  RateRing<uint32_t>::Add(r.data(), kN, kBucket, start + 100 * kBucket, 3);  // far ahead: fresh ring
  EXPECT_EQ(RateRing<uint32_t>::Sum(r.data(), kN, kBucket, kRate, start + 100 * kBucket).bytes, 3u);
}

// A stream's ring: its newest bucket is that of the stream's last-seen second.
TEST(BucketRingTest, LateBytesLandInTheirOwnBucket) {
  std::vector<uint32_t> r(kN, 0);
  const uint32_t start = kT0 - kT0 % kBucket;
  const uint32_t last_seen = start + 3 * kBucket + 7;
  BucketRing<uint32_t>::Add(r.data(), kN, kBucket, last_seen, last_seen, 5);
  BucketRing<uint32_t>::Add(r.data(), kN, kBucket, last_seen, start + kBucket, 6);  // out of order, in range
  BucketRing<uint32_t>::Add(r.data(), kN, kBucket, last_seen, start - 2 * kBucket, 8);  // older than the ring
  uint64_t newest_first[kN];
  EXPECT_EQ(BucketRing<uint32_t>::NewestFirst(r.data(), kN, kBucket, last_seen, newest_first), start + 3 * kBucket);
  EXPECT_EQ(std::vector<uint64_t>(newest_first, newest_first + kN), (std::vector<uint64_t>{5, 0, 6, 0, 0}));
}

TEST(BucketRingTest, ANewerLastSeenClearsTheBucketsItPasses) {
  std::vector<uint32_t> r(kN, 0);
  const uint32_t start = kT0 - kT0 % kBucket;
  for (uint32_t i = 0; i < kN; ++i) {
    BucketRing<uint32_t>::Add(r.data(), kN, kBucket, start + 4 * kBucket, start + i * kBucket, i + 1);
  }
  // Seen again two buckets later, with no bytes: the two oldest buckets leave the ring.
  const uint32_t now = start + 6 * kBucket + 59;
  BucketRing<uint32_t>::Advance(r.data(), kN, kBucket, start + 4 * kBucket, now);
  EXPECT_EQ(BucketRing<uint32_t>::Sum(r.data(), kN, kBucket, kRate, now, now).bytes, 3u + 4u + 5u);
  uint64_t out[kN];
  BucketRing<uint32_t>::NewestFirst(r.data(), kN, kBucket, now, out);
  EXPECT_EQ(std::vector<uint64_t>(out, out + kN), (std::vector<uint64_t>{0, 0, 5, 4, 3}));
  // Within the same bucket nothing moves; a ring's span or more clears it all.
  BucketRing<uint32_t>::Advance(r.data(), kN, kBucket, now - 30, now);
  EXPECT_EQ(BucketRing<uint32_t>::Sum(r.data(), kN, kBucket, kRate, now, now).bytes, 12u);
  const uint32_t later = now + kN * kBucket;
  BucketRing<uint32_t>::Advance(r.data(), kN, kBucket, now, later);
  EXPECT_EQ(BucketRing<uint32_t>::Sum(r.data(), kN, kBucket, kRate, later, later).bytes, 0u);
}

TEST(BucketRingTest, NewestFirstAndLoadRoundTrip) {
  std::vector<uint32_t> r(kN, 0);
  const uint32_t start = kT0 - kT0 % kBucket;
  for (uint32_t i = 0; i < 7; ++i) {
    if (i > 0) BucketRing<uint32_t>::Advance(r.data(), kN, kBucket, start + (i - 1) * kBucket, start + i * kBucket);
    BucketRing<uint32_t>::Add(r.data(), kN, kBucket, start + i * kBucket, start + i * kBucket, i + 1);
  }
  const uint32_t last_seen = start + 6 * kBucket + 1;
  uint64_t out[kN];
  const uint32_t newest = BucketRing<uint32_t>::NewestFirst(r.data(), kN, kBucket, last_seen, out);
  EXPECT_EQ(std::vector<uint64_t>(out, out + kN), (std::vector<uint64_t>{7, 6, 5, 4, 3}));
  std::vector<uint32_t> loaded(kN, 0);
  BucketRing<uint32_t>::Load(loaded.data(), kN, kBucket, last_seen, newest, out, kN);
  EXPECT_EQ(loaded, r);
  // A row whose listed buckets end before its last-seen bucket (seen later without bytes)
  // loads into the ring of that later second: what fell out of the ring is dropped.
  BucketRing<uint32_t>::Load(loaded.data(), kN, kBucket, last_seen + 2 * kBucket, newest, out, kN);
  uint64_t shifted[kN];
  BucketRing<uint32_t>::NewestFirst(loaded.data(), kN, kBucket, last_seen + 2 * kBucket, shifted);
  EXPECT_EQ(std::vector<uint64_t>(shifted, shifted + kN), (std::vector<uint64_t>{0, 0, 7, 6, 5}));
}

TEST(RateRingTest, StreamBucketsSaturateInsteadOfWrapping) {
  auto r = Ring();
  RateRing<uint32_t>::Add(r.data(), kN, kBucket, kT0, 4'000'000'000ull);
  RateRing<uint32_t>::Add(r.data(), kN, kBucket, kT0, 4'000'000'000ull);
  EXPECT_EQ(RateRing<uint32_t>::Sum(r.data(), kN, kBucket, kRate, kT0).bytes, UINT32_MAX);
  std::vector<uint64_t> wide(RateRing<uint64_t>::Words(kN), 0);
  RateRing<uint64_t>::Add(wide.data(), kN, kBucket, kT0, 4'000'000'000ull);
  RateRing<uint64_t>::Add(wide.data(), kN, kBucket, kT0, 4'000'000'000ull);
  EXPECT_EQ(RateRing<uint64_t>::Sum(wide.data(), kN, kBucket, kRate, kT0).bytes, 8'000'000'000ull);
}

// Issue 8, item 7: a tenant's total near 2^64 (totalSize is a uint64 on the wire) saturates.
TEST(RateRingTest, Item7_TenantTotalsSaturateNearTwoToTheSixtyFour) {
  std::vector<uint64_t> wide(RateRing<uint64_t>::Words(kN), 0);
  RateRing<uint64_t>::Add(wide.data(), kN, kBucket, kT0, UINT64_MAX - 10);
  RateRing<uint64_t>::Add(wide.data(), kN, kBucket, kT0, 100);
  EXPECT_EQ(RateRing<uint64_t>::Sum(wide.data(), kN, kBucket, kRate, kT0).bytes, UINT64_MAX);
  RateRing<uint64_t>::Add(wide.data(), kN, kBucket, kT0 - kBucket, UINT64_MAX);  // a second bucket
  EXPECT_EQ(RateRing<uint64_t>::Sum(wide.data(), kN, kBucket, kRate, kT0).bytes, UINT64_MAX);
  EXPECT_EQ(SaturatingAdd(UINT64_MAX, 1), UINT64_MAX);
  EXPECT_EQ(SaturatingAdd(2, 3), 5u);
}

}  // namespace
}  // namespace limits
