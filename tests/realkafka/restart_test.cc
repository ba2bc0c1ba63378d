// A node's start-up on a real broker: the cold start's window start from the broker's time
// index (no binary search), restarts after SIGTERM and SIGKILL replaying only the delta, and
// retention (DeleteRecords) moving the log start past a checkpoint.
#include <signal.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "realkafka/realkafka_fixture.h"
#include "testing/wait_for.h"

namespace limits::realkafka {
namespace {

using namespace std::chrono_literals;
using testing::WaitFor;

class RestartTest : public RealKafkaTest {};

// The broker answers ListOffsets-by-time from its time index (the mock cannot): the window's
// first offset comes back at once, no single record is read to search for it, and nothing
// older than the window is fetched.
TEST_F(RestartTest, ColdStartFindsTheWindowWithTheBrokersTimeIndex) {
  const int64_t now = NowMs();
  for (int32_t p = 0; p < kPartitions; ++p) {
    for (uint64_t i = 0; i < 50; ++i) kafka().Produce("tenant-a", HashIn(p, 1000 + i), now - 3 * 3600'000 + int64_t(i));
    for (uint64_t i = 0; i < 30; ++i) kafka().Produce("tenant-a", HashIn(p, i), now - 1800'000 + int64_t(i) * 1000);
  }
  kafka().Flush();
  auto node = Start("a", "zone-a", [](config::Config& c) {
    c.windows.active = 1h;
    c.windows.wait_assign = 60s;
  });
  ASSERT_TRUE(node);
  ASSERT_TRUE(WaitFor([&] { return AllReady(*node, kPartitions); }, 60s));
  EXPECT_EQ(node->offset_source().stats().probes.load(), 0u) << "a record was read: the time look-up was not used";
  EXPECT_EQ(node->lifecycler().stats().time_index.load(), uint64_t{kPartitions});
  EXPECT_EQ(node->consumer().stats().fetched.load(), 4u * 30);
  EXPECT_EQ(node->consumer().stats().applied.load(), 4u * 30);
  EXPECT_EQ(Streams(*node, "tenant-a", all_), 4u * 30);
  for (const PartitionInfo& info : node->partitions().Snapshot()) {
    EXPECT_EQ(info.end_offset, 80) << info.partition;
    EXPECT_EQ(info.replay.start_offset, 50) << info.partition;
  }
}

TEST_F(RestartTest, GracefulRestartReplaysOnlyNewRecords) {
  const int64_t now = NowMs();
  for (uint64_t i = 0; i < 40; ++i) kafka().Produce("t", i, now - 60'000);
  kafka().Flush();
  {
    auto node = Start("a");
    ASSERT_TRUE(node);
    ASSERT_TRUE(WaitFor([&] { return AllReady(*node, kPartitions); }, 60s));
    EXPECT_EQ(Streams(*node, "t", all_), 40u);
    node->Stop();
  }
  for (uint64_t i = 40; i < 65; ++i) kafka().Produce("t", i, now);
  kafka().Flush();
  auto node = Start("a");
  ASSERT_TRUE(node);
  ASSERT_TRUE(WaitFor([&] { return AllReady(*node, kPartitions); }, 60s));
  EXPECT_EQ(node->consumer().stats().fetched.load(), 25u);  // the delta, not the window
  EXPECT_EQ(Streams(*node, "t", all_), 65u);
  EXPECT_EQ(node->offset_source().stats().probes.load(), 0u);  // the checkpoints answered
}

// SIGKILL: the checkpoints on disk decide where replay resumes. Without static membership
// the restarted process waits for the killed member's session to expire (its partitions
// stay assigned to it until then): the printed time to ready shows that cost.
TEST_F(RestartTest, RestartAfterSigkillReplaysOnlyAfterTheCheckpoint) {
  const int64_t now = NowMs();
  for (uint64_t i = 0; i < 40; ++i) kafka().Produce("t", i, now - 60'000);
  kafka().Flush();
  config::Config c = NodeConfig("killed");
  c.kafka.static_membership = false;  // the dynamic case; group_test has the static one
  {
    LimitsdProcess node(c, dir_.Sub("first.log"));
    ASSERT_TRUE(WaitFor([&] { return node.ReadyWith(kPartitions); }, 60s)) << node.Log();
    ASSERT_TRUE(WaitFor(
        [&] {
          const auto cps = CheckpointsOnDisk(c.store.path);
          size_t covered = 0;
          for (const auto& [p, next] : cps) covered += next == 10;
          return covered == kPartitions;
        },
        30s));
    node.Kill(SIGKILL);
  }
  for (uint64_t i = 40; i < 65; ++i) kafka().Produce("t", i, now);
  kafka().Flush();
  const auto restarted = std::chrono::steady_clock::now();
  LimitsdProcess node(c, dir_.Sub("second.log"));
  ASSERT_TRUE(WaitFor([&] { return node.ReadyWith(kPartitions); }, 90s)) << node.Log();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - restarted).count();
  std::cout << "realkafka: time to ready after SIGKILL, one node, no static membership, session.timeout.ms="
            << c.kafka.properties.at("session.timeout.ms") << ": " << seconds << " s\n";
  RecordProperty("ready_after_sigkill_s", std::to_string(seconds));
  const auto [planned, replayed] = node.Planned();
  EXPECT_EQ(planned, kPartitions);
  EXPECT_EQ(replayed, 25) << node.Log();  // the records after the checkpoints, not the 65 of the window
  node.Kill(SIGTERM);
}

// Retention (here DeleteRecords, as kafka-delete-records does) moves partition 0's log start
// past its checkpoint: the records between were never seen and cannot be replayed, but the
// rows the node holds are kept (issue 8 item 11) and the partition resumes at the log
// start; the other partitions resume at their checkpoints.
TEST_F(RestartTest, LogStartPastTheCheckpointKeepsTheRowsAndResumesAtTheStart) {
  const int64_t now = NowMs();
  for (int32_t p = 0; p < kPartitions; ++p) {
    for (uint64_t i = 0; i < 10; ++i) kafka().Produce("t", HashIn(p, i), now - 60'000);
  }
  kafka().Flush();
  {
    auto node = Start("a");
    ASSERT_TRUE(node);
    ASSERT_TRUE(WaitFor([&] { return AllReady(*node, kPartitions); }, 60s));
    node->Stop();
  }
  for (int32_t p = 0; p < kPartitions; ++p) {
    for (uint64_t i = 10; i < 20; ++i) kafka().Produce("t", HashIn(p, i), now);
  }
  kafka().Flush();
  ASSERT_TRUE(Broker().DeleteRecords(topic_, 0, 15).ok());
  Result<std::pair<int64_t, int64_t>> marks = Broker().Watermarks(topic_, 0);
  ASSERT_TRUE(marks.ok());
  ASSERT_EQ(marks->first, 15);
  ASSERT_EQ(marks->second, 20);

  auto node = Start("a");
  ASSERT_TRUE(node);
  ASSERT_TRUE(WaitFor([&] { return AllReady(*node, kPartitions); }, 60s));
  std::optional<PartitionInfo> p0 = node->partitions().Get(0);
  ASSERT_TRUE(p0.has_value());
  EXPECT_EQ(p0->replay.start_offset, 15);
  PartitionSet only0, others;
  only0.Add(0);
  for (int32_t p = 1; p < kPartitions; ++p) others.Add(p);
  EXPECT_EQ(Streams(*node, "t", only0), 15u);  // offsets 0-9 kept, 15-19 replayed; 10-14 are gone
  EXPECT_EQ(Streams(*node, "t", others), 3u * 20);
  EXPECT_EQ(node->consumer().stats().fetched.load(), 5u + 3 * 10);
}

}  // namespace
}  // namespace limits::realkafka
