#include "limits/usage/held_partitions.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>
#include <thread>

namespace limits {
namespace {

using Steady = std::chrono::steady_clock;

class HeldPartitionsTest : public ::testing::Test {
 protected:
  HeldPartitionsTest() {
    for (int32_t p = 0; p < 3; ++p) partitions_.push_back(std::make_unique<PartitionUsage>(p, windows_, directory_));
  }
  // Whether another thread could take partition p now.
  bool FreeForOthers(int32_t p) {
    bool free = false;
    std::thread t([&] {
      free = partitions_[static_cast<size_t>(p)]->mu().try_lock();
      if (free) partitions_[static_cast<size_t>(p)]->mu().unlock();
    });
    t.join();
    return free;
  }

  Windows windows_;
  TenantDirectory directory_{16, 4};
  std::vector<std::unique_ptr<PartitionUsage>> partitions_;
};

TEST_F(HeldPartitionsTest, HoldsWhatItTookUntilReleasedTogether) {
  HeldPartitions held(3, 0);
  held.Lock(*partitions_[0]);
  ASSERT_TRUE(held.TryLockUntil(*partitions_[2], Steady::time_point{}));
  EXPECT_TRUE(held.holds(0));
  EXPECT_FALSE(held.holds(1));
  EXPECT_TRUE(held.holds(2));
  EXPECT_EQ(held.size(), 2u);
  EXPECT_FALSE(FreeForOthers(0));
  EXPECT_TRUE(FreeForOthers(1));
  held.ReleaseAll();
  EXPECT_FALSE(held.holds(0));
  EXPECT_EQ(held.size(), 0u);
  EXPECT_TRUE(FreeForOthers(0));
  EXPECT_TRUE(FreeForOthers(2));
}

TEST_F(HeldPartitionsTest, ABusyPartitionIsNotTakenAndTheDestructorReleases) {
  {
    HeldPartitions mine(3, 0);
    mine.Lock(*partitions_[1]);
    std::thread other([&] {
      HeldPartitions theirs(3, 0);
      EXPECT_FALSE(theirs.TryLockUntil(*partitions_[1], Steady::now()));
      EXPECT_FALSE(theirs.holds(1));
      EXPECT_EQ(theirs.size(), 0u);
    });
    other.join();
  }
  EXPECT_TRUE(FreeForOthers(1));
}

// Requests of tenants on different stripes hold the same partitions at once; one on the same
// stripe, or a whole-partition holder (the consumer, flusher, evictor), waits.
TEST_F(HeldPartitionsTest, AnotherStripeIsFreeButTheSameStripeAndTheWholePartitionAreNot) {
  HeldPartitions mine(3, 2);
  mine.Lock(*partitions_[0]);
  mine.Lock(*partitions_[1]);
  std::thread other([&] {
    HeldPartitions other_stripe(3, 5);
    EXPECT_TRUE(other_stripe.TryLockUntil(*partitions_[1], Steady::time_point{}));
    HeldPartitions same_stripe(3, 2);
    EXPECT_FALSE(same_stripe.TryLockUntil(*partitions_[1], Steady::time_point{}));
    EXPECT_TRUE(same_stripe.TryLockUntil(*partitions_[2], Steady::time_point{}));
  });
  other.join();
  EXPECT_FALSE(FreeForOthers(1));  // every stripe, as the consumer takes it
  EXPECT_TRUE(FreeForOthers(2));
  mine.ReleaseAll();
  EXPECT_TRUE(FreeForOthers(1));
}

// A tenant's partition stripe is its admission stripe (64 by the same hash) modulo the
// partition's stripes, and the names a node sees spread over all of them.
TEST(TenantKeyTest, StripeFollowsTheNameAndSpreads) {
  std::vector<int> seen(StripedMutex::kStripes, 0);
  for (int t = 0; t < 200; ++t) {
    const std::string name = "tenant-" + std::to_string(t);
    const TenantKey key(name);
    EXPECT_EQ(key.hash, absl::Hash<std::string_view>{}(name));
    EXPECT_EQ(key.stripe, key.hash % 64 % StripedMutex::kStripes);
    EXPECT_EQ(key.stripe, TenantKey(name, TenantId{7}).stripe);
    ++seen[key.stripe];
  }
  for (int n : seen) EXPECT_GT(n, 0);
}

}  // namespace
}  // namespace limits
