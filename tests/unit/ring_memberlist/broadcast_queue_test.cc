#include "ring/memberlist/broadcast_queue.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace limits::ring::memberlist {
namespace {

using ::testing::ElementsAre;

TEST(BroadcastQueueTest, RetransmitLimitGrowsWithTheCluster) {
  EXPECT_EQ(BroadcastQueue::RetransmitLimit(4, 1), 4);
  EXPECT_EQ(BroadcastQueue::RetransmitLimit(4, 9), 4);
  EXPECT_EQ(BroadcastQueue::RetransmitLimit(4, 10), 8);
  EXPECT_EQ(BroadcastQueue::RetransmitLimit(4, 100), 12);
}

TEST(BroadcastQueueTest, EachMessageGoesOutUpToTheLimitThenLeaves) {
  BroadcastQueue q(1);
  const uint64_t id = q.Queue("k", {"a"}, 1, "m1");
  EXPECT_TRUE(q.Pending(id));
  EXPECT_THAT(q.Take(2, 1000, 3), ElementsAre("m1"));  // limit 1 for 3 nodes
  EXPECT_FALSE(q.Pending(id));
  EXPECT_TRUE(q.Take(2, 1000, 3).empty());
}

TEST(BroadcastQueueTest, TheLeastSentGoFirstWithinTheBudget) {
  BroadcastQueue q(4);
  q.Queue("k1", {"a"}, 1, std::string(10, 'a'));
  q.Take(0, 100, 1);  // 'a' sent once
  q.Queue("k2", {"b"}, 1, std::string(10, 'b'));
  q.Queue("k3", {"c"}, 1, std::string(50, 'c'));
  const auto out = q.Take(2, 20, 1);  // room for one 12-byte message, not two, nor one of 52
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0][0], 'b');
}

TEST(BroadcastQueueTest, ANewerCoveringMessageSupersedesQueuedOnes) {
  BroadcastQueue q(4);
  const uint64_t old_a = q.Queue("ring", {"a"}, 1, "old-a");
  const uint64_t old_ab = q.Queue("ring", {"a", "b"}, 2, "old-ab");
  const uint64_t other_key = q.Queue("other", {"a"}, 1, "other");
  const uint64_t newer = q.Queue("ring", {"b", "a"}, 3, "new-ab");
  EXPECT_FALSE(q.Pending(old_a));
  EXPECT_FALSE(q.Pending(old_ab));
  EXPECT_TRUE(q.Pending(other_key));
  EXPECT_TRUE(q.Pending(newer));
  // Covering less, or being older, supersedes nothing.
  q.Queue("ring", {"a"}, 4, "only-a");
  EXPECT_TRUE(q.Pending(newer));
  const uint64_t stale = q.Queue("other", {"a"}, 0, "stale");
  EXPECT_TRUE(q.Pending(other_key));
  EXPECT_TRUE(q.Pending(stale));
  EXPECT_EQ(q.size(), 4u);
}

}  // namespace
}  // namespace limits::ring::memberlist
