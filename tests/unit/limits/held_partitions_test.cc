#include "limits/held_partitions.h"

#include <gtest/gtest.h>

#include <memory>
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
  HeldPartitions held(3);
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
    HeldPartitions mine(3);
    mine.Lock(*partitions_[1]);
    std::thread other([&] {
      HeldPartitions theirs(3);
      EXPECT_FALSE(theirs.TryLockUntil(*partitions_[1], Steady::now()));
      EXPECT_FALSE(theirs.holds(1));
      EXPECT_EQ(theirs.size(), 0u);
    });
    other.join();
  }
  EXPECT_TRUE(FreeForOthers(1));
}

}  // namespace
}  // namespace limits
