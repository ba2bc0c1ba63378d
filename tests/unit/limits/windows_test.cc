#include "limits/usage/windows.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <vector>

namespace limits {
namespace {

constexpr Windows kMinute{.active_s = 3600, .rate_s = 300, .bucket_s = 60, .produce_interval_s = 60};

// Never sooner than the interval (Loki's "at most once per minute"), never later than a
// quarter past it, and different from stream to stream and from one time to the next.
TEST(WindowsTest, AProduceDelayIsTheIntervalPlusUpToAQuarter) {
  std::mt19937_64 rng(3);
  std::set<uint32_t> delays;
  for (int i = 0; i < 10'000; ++i) {
    const uint32_t d = kMinute.ProduceDelay(rng(), 1'000'000'000 + static_cast<uint32_t>(i));
    EXPECT_GE(d, 60u);
    EXPECT_LE(d, 75u);
    delays.insert(d);
  }
  EXPECT_EQ(delays.size(), 16u);
  const uint64_t h = rng();
  EXPECT_EQ(kMinute.ProduceDelay(h, 1'000'000'000), kMinute.ProduceDelay(h, 1'000'000'000));
  std::set<uint32_t> of_one_stream;
  for (uint32_t t = 0; t < 1000; ++t) of_one_stream.insert(kMinute.ProduceDelay(h, 1'000'000'000 + t));
  EXPECT_EQ(of_one_stream.size(), 16u);
}

TEST(WindowsTest, AStreamIsDueWhenNeverProducedOrOnceItsDelayHasPassed) {
  const uint64_t h = 12345;
  const uint32_t at = 1'000'000'000;
  const uint32_t delay = kMinute.ProduceDelay(h, at);
  EXPECT_TRUE(kMinute.ProduceDue(h, 0, at));
  EXPECT_FALSE(kMinute.ProduceDue(h, at, at + 59));
  EXPECT_FALSE(kMinute.ProduceDue(h, at, int64_t{at} + delay - 1));
  EXPECT_TRUE(kMinute.ProduceDue(h, at, int64_t{at} + delay));
  EXPECT_TRUE(kMinute.ProduceDue(h, at, at + 75));
}

// Streams produced in the same second and pushed every second after: each is produced again
// as soon as it is due. The wave they start as breaks up: after one interval no second holds
// more than a tenth of them, and within a few every second of the interval holds some.
TEST(WindowsTest, StreamsProducedTogetherSpreadOverTheInterval) {
  std::mt19937_64 rng(5);
  std::vector<uint32_t> produced(6'000, 1'000'000'000);
  std::vector<uint64_t> hashes(produced.size());
  for (uint64_t& h : hashes) h = rng();
  auto busiest_second = [&] {
    std::map<uint32_t, size_t> n;
    for (uint32_t t : produced) ++n[t % 60];
    size_t most = 0;
    for (const auto& [second, count] : n) most = std::max(most, count);
    return std::pair{n.size(), static_cast<double>(most) / static_cast<double>(produced.size())};
  };
  auto cycle = [&] {
    for (size_t i = 0; i < produced.size(); ++i) produced[i] += kMinute.ProduceDelay(hashes[i], produced[i]);
  };
  EXPECT_EQ(busiest_second().first, 1u);
  cycle();
  EXPECT_LT(busiest_second().second, 0.1);
  for (int i = 0; i < 5; ++i) cycle();
  EXPECT_EQ(busiest_second().first, 60u);
  EXPECT_LT(busiest_second().second, 0.05);
}

}  // namespace
}  // namespace limits
