#include "loadgen/pacer.h"

#include <gtest/gtest.h>

#include <random>

namespace limits::loadgen {
namespace {

using namespace std::chrono_literals;
const Pacer::Clock::time_point kStart = Pacer::Clock::time_point() + 1000s;

TEST(PacerTest, OperationKIsDueAtKOverRate) {
  const Pacer p(100, kStart);
  EXPECT_EQ(p.DueAt(0), kStart);
  EXPECT_EQ(p.DueAt(1), kStart + 10ms);
  EXPECT_EQ(p.DueAt(100), kStart + 1s);
  EXPECT_EQ(p.DueAt(250), kStart + 2500ms);
}

TEST(PacerTest, DueByCountsTheOperationsWhoseTimeHasCome) {
  const Pacer p(100, kStart);
  EXPECT_EQ(p.DueBy(kStart - 1ns), 0u);
  EXPECT_EQ(p.DueBy(kStart), 1u);  // the first goes at once
  EXPECT_EQ(p.DueBy(kStart + 10ms - 1ns), 1u);
  EXPECT_EQ(p.DueBy(kStart + 10ms), 2u);
  EXPECT_EQ(p.DueBy(kStart + 1s), 101u);
  EXPECT_EQ(p.DueBy(kStart + 60s), 6001u);
}

TEST(PacerTest, RatesBelowOnePerSecondAndNonIntegerRates) {
  const Pacer slow(0.5, kStart);
  EXPECT_EQ(slow.DueAt(1), kStart + 2s);
  EXPECT_EQ(slow.DueBy(kStart + 1999ms), 1u);
  EXPECT_EQ(slow.DueBy(kStart + 2s), 2u);
  const Pacer odd(3, kStart);  // 1/3 s is not a whole number of nanoseconds: rounded up
  EXPECT_EQ(odd.DueAt(1), kStart + 333'333'334ns);
  EXPECT_EQ(odd.DueAt(3), kStart + 1s);
  EXPECT_EQ(odd.DueBy(kStart + 333'333'333ns), 1u);
  EXPECT_EQ(odd.DueBy(kStart + 333'333'334ns), 2u);
}

// DueBy and DueAt never disagree, at any rate and time: DueAt(DueBy(t) - 1) <= t < DueAt(DueBy(t)).
TEST(PacerTest, DueByAndDueAtAgreeEverywhere) {
  std::mt19937_64 rng(7);
  for (double rate : {1.0, 7.0, 100.0, 999.9, 12'345.678, 1e6, 3e7}) {
    const Pacer p(rate, kStart);
    for (int i = 0; i < 2000; ++i) {
      const auto t = kStart + std::chrono::nanoseconds(rng() % 3'600'000'000'000ULL);
      const uint64_t n = p.DueBy(t);
      ASSERT_GE(n, 1u);
      EXPECT_LE(p.DueAt(n - 1), t) << rate;
      EXPECT_GT(p.DueAt(n), t) << rate;
    }
    // ...and right on each operation's own time.
    for (uint64_t k : {1ULL, 2ULL, 999ULL, 123'456ULL}) EXPECT_EQ(p.DueBy(p.DueAt(k)), k + 1) << rate;
  }
}

TEST(PacerTest, UnpacedHasEverythingDueFromTheStart) {
  const Pacer p(0, kStart);
  EXPECT_FALSE(p.paced());
  EXPECT_EQ(p.DueAt(1'000'000), kStart);
  EXPECT_EQ(p.DueBy(kStart), UINT64_MAX);
  EXPECT_EQ(p.DueBy(kStart - 1ns), 0u);
}

}  // namespace
}  // namespace limits::loadgen
