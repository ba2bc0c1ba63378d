// Nodes in a real consumer group: two nodes split the partitions and hand over; two zones
// see each other's streams; revoke/re-assign inside and outside the retention; a static
// member fenced by a second client with its instance id recovers; static membership across
// a SIGKILL, with the time to ready measured with and without it.
#include <signal.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>

#include <map>
#include <string>

#include "limits/decision/admission.h"
#include "realkafka/realkafka_fixture.h"
#include "testing/wait_for.h"

namespace limits::realkafka {
namespace {

using namespace std::chrono_literals;
using testing::WaitFor;

class GroupTest : public RealKafkaTest {
 protected:
  // Both split the partitions, every partition ready on exactly one of them.
  static bool Split(Node& a, Node& b) {
    auto pa = ReadyPartitions(a), pb = ReadyPartitions(b);
    if (pa.empty() || pb.empty() || pa.size() + pb.size() != kPartitions) return false;
    for (int32_t p : pb) {
      if (pa.count(p)) return false;
    }
    return AssignedPartitions(a) == pa && AssignedPartitions(b) == pb;
  }

  // Starts A, waits until it is ready with every partition, starts B, and waits for the split.
  // Both null when a step fails (the failure is recorded).
  std::pair<std::unique_ptr<Node>, std::unique_ptr<Node>> StartSplit(
      const std::function<void(config::Config&)>& tweak = nullptr) {
    auto a = Start("a", "zone-a", tweak);
    if (!a) return {};
    if (!WaitFor([&] { return AllReady(*a, kPartitions); }, 60s)) {
      ADD_FAILURE() << "A not ready with every partition";
      return {};
    }
    auto b = Start("b", "zone-a", tweak);
    if (!b) return {};
    if (!WaitFor([&] { return Split(*a, *b); }, 60s)) {
      ADD_FAILURE() << "A and B did not split the partitions";
      return {};
    }
    return {std::move(a), std::move(b)};
  }
};

TEST_F(GroupTest, TwoNodesSplitPartitionsAndHandOverOnStop) {
  const int64_t now = NowMs();
  for (uint64_t i = 0; i < 80; ++i) kafka().Produce(i % 2 ? "t1" : "t2", i, now - 1000);
  kafka().Flush();
  auto [a, b] = StartSplit();
  ASSERT_TRUE(a && b);
  PartitionSet of_b;
  for (int32_t p : ReadyPartitions(*b)) of_b.Add(p);
  EXPECT_EQ(Streams(*b, "t1", of_b) + Streams(*b, "t2", of_b), 20u * of_b.Count());
  for (uint64_t i = 80; i < 120; ++i) kafka().Produce(i % 2 ? "t1" : "t2", i, now);
  kafka().Flush();
  b->Stop();  // leaves the group: the coordinator rebalances at once
  ASSERT_TRUE(WaitFor([&] { return AllReady(*a, kPartitions) && Streams(*a, "t1", all_) == 60; }, 60s));
  EXPECT_EQ(Streams(*a, "t1", all_), 60u);
  EXPECT_EQ(Streams(*a, "t2", all_), 60u);
}

TEST_F(GroupTest, StreamsAcceptedInOneZoneReachTheOther) {
  auto a = Start("a", "zone-a");
  auto b = Start("b", "zone-b");
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(WaitFor([&] { return AllReady(*a, kPartitions) && AllReady(*b, kPartitions); }, 60s));
  std::vector<StreamUpdate> streams;
  for (uint64_t h = 0; h < 8; ++h) streams.push_back({.stream_hash = h, .bytes = 500, .policy = ""});
  UpdateCondResult out;
  const std::shared_ptr<const PartitionSet> serving = a->partitions().Serving();
  Admission quota(TenantLimits{}, serving->Count(), static_cast<uint32_t>(kPartitions));
  ASSERT_TRUE(a->store().UpdateCond("t", streams, quota, *serving, &out).ok());
  ASSERT_EQ(out.to_produce.size(), 8u);
  for (uint32_t i : out.to_produce) a->producer().Produce("t", streams[i].stream_hash, streams[i].bytes, "");
  ASSERT_TRUE(WaitFor([&] { return Streams(*b, "t", all_) == 8; }, 30s));
  ASSERT_TRUE(WaitFor([&] { return a->consumer().stats().discarded.load() == 8; }, 30s));
  EXPECT_EQ(b->consumer().stats().discarded.load(), 0u);
  EXPECT_EQ(a->store().UsageOf("t", all_).rate_window_bytes, 0u);
  EXPECT_EQ(b->store().UsageOf("t", all_).rate_window_bytes, 8u * 500);
}

TEST_F(GroupTest, ReassignmentInsideTheRetentionReplaysOnlyTheDelta) {
  const int64_t now = NowMs();
  for (uint64_t i = 0; i < 40; ++i) kafka().Produce("t", i, now);
  kafka().Flush();
  auto [a, b] = StartSplit();
  ASSERT_TRUE(a && b);
  const std::set<int32_t> kept = AssignedPartitions(*a);
  EXPECT_EQ(a->store().Partitions().size(), size_t{kPartitions});  // revoked data kept
  for (uint64_t i = 40; i < 60; ++i) kafka().Produce("t", i, now);
  kafka().Flush();
  b->Stop();
  ASSERT_TRUE(WaitFor([&] { return AllReady(*a, kPartitions) && Streams(*a, "t", all_) == 60; }, 60s));
  // 40 at first, the 20 new ones once each: the moved partitions resumed at their checkpoint.
  EXPECT_EQ(a->consumer().stats().fetched.load(), 60u);
  for (const PartitionInfo& info : a->partitions().Snapshot()) {
    if (kept.count(info.partition)) continue;
    EXPECT_EQ(info.replay.start_offset, 10) << "partition " << info.partition;
    EXPECT_EQ(info.replay.target_offset, 14) << "partition " << info.partition;
  }
}

TEST_F(GroupTest, ReassignmentAfterTheRetentionReplaysTheWindow) {
  const int64_t now = NowMs();
  for (uint64_t i = 0; i < 40; ++i) kafka().Produce("t", i, now);
  kafka().Flush();
  auto retention = [](config::Config& c) { c.windows.revoked_retention = 1s; };
  auto [a, b] = StartSplit(retention);
  ASSERT_TRUE(a && b);
  std::set<int32_t> moved;
  for (int32_t p = 0; p < kPartitions; ++p) {
    if (!AssignedPartitions(*a).count(p)) moved.insert(p);
  }
  ASSERT_TRUE(WaitFor(
      [&] {
        for (int32_t p : a->store().Partitions()) {
          if (moved.count(p)) return false;
        }
        return true;
      },
      30s));
  b->Stop();
  ASSERT_TRUE(WaitFor([&] { return AllReady(*a, kPartitions) && Streams(*a, "t", all_) == 40; }, 60s));
  EXPECT_EQ(a->store().Partitions().size(), size_t{kPartitions});
  for (int32_t p : moved) {
    std::optional<PartitionInfo> info = a->partitions().Get(p);
    ASSERT_TRUE(info.has_value());
    EXPECT_EQ(info->replay.start_offset, 0) << "partition " << p;
    EXPECT_EQ(info->replay.target_offset, 9) << "partition " << p;
  }
}

// A second client with the node's group.instance.id (a pod started twice, a copied config)
// takes the node's place: the coordinator fences the node's member, and librdkafka raises a
// fatal error in it (FENCED_INSTANCE_ID on its next heartbeat). The node re-creates its
// consumer, which in turn fences the intruder, and serves again. On main it answered reason 1
// for every stream from then on, and /live stayed 200.
TEST_F(GroupTest, AFencedStaticMemberRecreatesItsConsumerAndServesAgain) {
  const int64_t now = NowMs();
  for (uint64_t i = 0; i < 40; ++i) kafka().Produce("t", i, now);
  kafka().Flush();
  const config::Config c = NodeConfig("a");
  auto node = Start("a");
  ASSERT_TRUE(node);
  ASSERT_TRUE(WaitFor([&] { return AllReady(*node, kPartitions) && Streams(*node, "t", all_) == 40; }, 60s));
  const auto before = Generations(*node);

  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  for (const auto& [k, v] : std::map<std::string, std::string>{{"bootstrap.servers", Broker().bootstrap()},
                                                               {"group.id", c.kafka.consumer_group},
                                                               {"group.instance.id", c.node.instance_id},
                                                               {"partition.assignment.strategy", "cooperative-sticky"},
                                                               {"session.timeout.ms", "6000"},
                                                               {"heartbeat.interval.ms", "300"}}) {
    ASSERT_EQ(rd_kafka_conf_set(conf, k.c_str(), v.c_str(), err, sizeof err), RD_KAFKA_CONF_OK) << err;
  }
  rd_kafka_t* intruder = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err);
  ASSERT_NE(intruder, nullptr) << err;
  rd_kafka_poll_set_consumer(intruder);
  rd_kafka_topic_partition_list_t* topics = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(topics, topic_.c_str(), RD_KAFKA_PARTITION_UA);
  ASSERT_EQ(rd_kafka_subscribe(intruder, topics), RD_KAFKA_RESP_ERR_NO_ERROR);
  rd_kafka_topic_partition_list_destroy(topics);
  bool intruder_fenced = false;
  auto poll_intruder = [&] {
    while (rd_kafka_message_t* m = rd_kafka_consumer_poll(intruder, 0)) {
      intruder_fenced = intruder_fenced || m->err == RD_KAFKA_RESP_ERR__FATAL;
      rd_kafka_message_destroy(m);
    }
  };
  const auto intruded = std::chrono::steady_clock::now();
  ASSERT_TRUE(WaitFor(
      [&] {
        poll_intruder();
        return node->consumer().stats().restarts_fatal.load() >= 1;
      },
      30s));
  ASSERT_TRUE(WaitFor(
      [&] {
        poll_intruder();
        return intruder_fenced && AllReady(*node, kPartitions) && Generations(*node) != before;
      },
      60s));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - intruded).count();
  std::cout << "realkafka: fenced by a second client with its instance id, the node serves again " << seconds
            << " s later\n";
  RecordProperty("fenced_ready_s", std::to_string(seconds));
  EXPECT_EQ(node->consumer().stats().restarts_fatal.load(), 1u);
  EXPECT_EQ(Streams(*node, "t", all_), 40u);
  EXPECT_FALSE(node->consumer().Failure().has_value());
  rd_kafka_destroy(intruder);  // fatal: destroyed without closing
  for (uint64_t i = 40; i < 60; ++i) kafka().Produce("t", i, now);
  kafka().Flush();
  EXPECT_TRUE(WaitFor([&] { return Streams(*node, "t", all_) == 60; }, 30s));
}

// Node A (in this process) and node B (a limitsd process) split the partitions; B is
// SIGKILLed and restarted at once on the same store. Returns B's time to ready after the
// restart; `a_generations_changed` tells whether any of A's partitions was re-assigned.
class MembershipTest : public GroupTest {
 protected:
  struct Outcome {
    double seconds_to_ready = -1;
    bool a_moved = false;
    std::set<int32_t> b_before, b_after;
  };

  Outcome KillAndRestartB(bool static_membership) {
    Outcome out;
    // group.instance.id is the node's to set (node.instance_id, which is `id` here);
    // --check-config refuses it among kafka.properties.
    auto with_instance = [&](config::Config& c, const std::string& id) {
      EXPECT_EQ(c.node.instance_id, id);
      c.kafka.static_membership = static_membership;
    };
    const int64_t now = NowMs();
    for (uint64_t i = 0; i < 40; ++i) kafka().Produce("t", i, now);
    kafka().Flush();
    auto a = Start("a", "zone-a", [&](config::Config& c) { with_instance(c, "a"); });
    EXPECT_TRUE(a);
    if (!a) return out;
    config::Config cb = NodeConfig("b");
    with_instance(cb, "b");
    auto b = std::make_unique<LimitsdProcess>(cb, dir_.Sub("b1.log"));
    const bool split = WaitFor(
        [&] {
          const auto pa = ReadyPartitions(*a), pb = b->ReadyPartitions();
          return !pa.empty() && !pb.empty() && pa.size() + pb.size() == kPartitions && AssignedPartitions(*a) == pa &&
                 b->ReadyWith(pb.size());
        },
        60s);
    EXPECT_TRUE(split) << b->Log();
    if (!split) return out;
    out.b_before = b->ReadyPartitions();
    const std::map<int32_t, int64_t> a_before = Generations(*a);
    b->Kill(SIGKILL);
    const auto restarted = std::chrono::steady_clock::now();
    b = std::make_unique<LimitsdProcess>(cb, dir_.Sub("b2.log"));
    const bool ready = WaitFor(
        [&] {
          const auto pb = b->ReadyPartitions();
          return !pb.empty() && b->ReadyWith(pb.size()) && pb.size() + AssignedPartitions(*a).size() == kPartitions &&
                 AllReady(*a, AssignedPartitions(*a).size());
        },
        60s);
    EXPECT_TRUE(ready) << b->Log();
    if (!ready) return out;
    out.seconds_to_ready = std::chrono::duration<double>(std::chrono::steady_clock::now() - restarted).count();
    out.b_after = b->ReadyPartitions();
    out.a_moved = Generations(*a) != a_before;
    std::cout << "realkafka: time to ready after SIGKILL, " << (static_membership ? "static" : "dynamic")
              << " membership, session.timeout.ms=" << cb.kafka.properties.at("session.timeout.ms") << ": "
              << out.seconds_to_ready << " s; A's partitions " << (out.a_moved ? "moved" : "untouched") << "\n";
    b->Kill(SIGTERM);
    return out;
  }
};

TEST_F(MembershipTest, StaticMemberRestartedAfterSigkillGetsItsPartitionsBackAndNothingElseMoves) {
  const Outcome o = KillAndRestartB(true);
  ASSERT_GE(o.seconds_to_ready, 0);
  RecordProperty("ready_after_sigkill_static_s", std::to_string(o.seconds_to_ready));
  EXPECT_EQ(o.b_after, o.b_before);
  EXPECT_FALSE(o.a_moved) << "a static member's restart rebalanced the other node";
  // Well within the session timeout: the coordinator handed the assignment back, it did
  // not wait for the killed member to expire.
  EXPECT_LT(o.seconds_to_ready, 6.0);
}

// The same without group.instance.id: B's restart joins as a new member and the group waits
// for the killed member's session to expire. Measured for comparison; the assertion is only
// that B gets partitions back (which ones the assignor decides).
TEST_F(MembershipTest, DynamicMemberRestartedAfterSigkillWaitsForTheSessionTimeout) {
  const Outcome o = KillAndRestartB(false);
  ASSERT_GE(o.seconds_to_ready, 0);
  RecordProperty("ready_after_sigkill_dynamic_s", std::to_string(o.seconds_to_ready));
  EXPECT_FALSE(o.b_after.empty());
}

}  // namespace
}  // namespace limits::realkafka
