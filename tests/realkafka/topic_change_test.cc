// Issue 24 item 6: kafka.topic changed while the consumer group and instance id stay. A real
// coordinator hands a static member that rejoins (a new member id, same group.instance.id)
// the assignment it cached — the OLD topic's partitions — without a rebalance; on main the
// node took them as its own and sat "replaying" at offset 0, answering reason 1 for every
// stream. The mock has no such cache, so this runs on Apache Kafka.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <librdkafka/rdkafkacpp.h>

#include <algorithm>

#include "limits/decision/reason.h"
#include "realkafka/realkafka_fixture.h"
#include "testing/wait_for.h"

namespace limits::realkafka {
namespace {

using namespace std::chrono_literals;
using testing::WaitFor;

class TopicChangeTest : public RealKafkaTest {
 protected:
  // The group's committed offsets of `topic` (OffsetFetch from a client that never joins).
  std::map<int32_t, int64_t> Committed(const std::string& group, const std::string& topic) {
    std::unique_ptr<RdKafka::Conf> conf(RdKafka::Conf::create(RdKafka::Conf::CONF_GLOBAL));
    std::string err;
    conf->set("bootstrap.servers", Broker().bootstrap(), err);
    conf->set("group.id", group, err);
    std::unique_ptr<RdKafka::KafkaConsumer> c(RdKafka::KafkaConsumer::create(conf.get(), err));
    std::map<int32_t, int64_t> out;
    if (!c) return out;
    std::vector<RdKafka::TopicPartition*> tps;
    for (int32_t p = 0; p < kPartitions; ++p) tps.push_back(RdKafka::TopicPartition::create(topic, p));
    if (c->committed(tps, 10'000) == RdKafka::ERR_NO_ERROR) {
      for (RdKafka::TopicPartition* tp : tps) out[tp->partition()] = tp->offset();
    }
    for (RdKafka::TopicPartition* tp : tps) delete tp;
    c->close();
    return out;
  }

  // Every stream hash 0..n-1 of `tenant` is checked; true when none answers reason 1. (It
  // admits streams not known yet, and produces due ones: it changes what it looks at.)
  static bool Served(Node& node, const std::string& tenant, uint64_t n) {
    std::vector<StreamUpdate> streams;
    for (uint64_t i = 0; i < n; ++i) streams.push_back({.stream_hash = i, .bytes = 1, .policy = ""});
    std::vector<Rejection> rejected;
    if (!node.checker().ExceedsLimits(tenant, streams, &rejected).ok()) return false;
    for (const Rejection& r : rejected) {
      if (r.reason == kReasonFailed) return false;
    }
    return true;
  }
};

// A node on topic A (group G, instance a) is stopped and started again at once on topic B
// with the same G and instance id, on the same store. It is handed A's partitions, takes none
// of them, re-subscribes, and serves B's partitions with B's data; A's committed offsets are
// never touched and none of A's records is consumed.
TEST_F(TopicChangeTest, AStaticMemberMovedToAnotherTopicServesItAndNeverTouchesTheOld) {
  const std::string topic_b = topic_ + "-b";
  ASSERT_TRUE(Broker().CreateTopic(topic_b, kPartitions).ok());
  testing::TestKafka kafka_b(Broker().bootstrap(), topic_b, kPartitions);
  const int64_t now = NowMs();
  for (uint64_t i = 0; i < 40; ++i) kafka().Produce("on-a", i, now);  // offsets 0-9 of each partition of A
  kafka().Flush();
  for (uint64_t i = 0; i < 80; ++i) kafka_b.Produce("on-b", i, now);  // offsets 0-19 of each partition of B
  kafka_b.Flush();
  const config::Config on_a = NodeConfig("a");
  ASSERT_TRUE(on_a.kafka.static_membership);
  {
    auto node = Start("a");
    ASSERT_TRUE(node);
    ASSERT_TRUE(WaitFor([&] { return AllReady(*node, kPartitions) && Streams(*node, "on-a", all_) == 40; }, 60s));
    // The checkpoints are committed to the group (every flush interval) before the stop.
    ASSERT_TRUE(WaitFor(
        [&] {
          const auto c = Committed(on_a.kafka.consumer_group, topic_);
          return c.size() == kPartitions && std::all_of(c.begin(), c.end(), [](const auto& e) { return e.second == 10; });
        },
        30s));
    node->Stop();
  }
  for (uint64_t i = 40; i < 80; ++i) kafka().Produce("on-a", i, now);  // A goes on; never read by the node on B
  kafka().Flush();

  const auto restarted = std::chrono::steady_clock::now();
  auto node = Start("a", "zone-a", [&](config::Config& c) { c.kafka.topic = topic_b; });
  ASSERT_TRUE(node);
  const bool ready = WaitFor([&] { return AllReady(*node, kPartitions) && Streams(*node, "on-b", all_) == 80; }, 60s);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - restarted).count();
  std::string states;
  for (const PartitionInfo& info : node->partitions().Snapshot()) {
    states += " p" + std::to_string(info.partition) + "=" + std::string(PartitionStateName(info.state));
  }
  ASSERT_TRUE(ready) << "on B: " << Streams(*node, "on-b", all_) << " streams; partitions" << states;
  std::cout << "realkafka: topic changed, same group and instance id: B's partitions served " << seconds
            << " s after the restart\n";
  RecordProperty("topic_change_ready_s", std::to_string(seconds));
  EXPECT_LT(seconds, 30.0);
  const kafka::ConsumerStats& st = node->consumer().stats();
  // The coordinator did hand over A's partitions (what this test is about)...
  EXPECT_EQ(st.foreign_partitions.load(), uint64_t{kPartitions});
  EXPECT_EQ(st.restarts_foreign_topic.load(), 1u);
  // ...and none was consumed: only B's 80 records were taken in, A's data is gone with its
  // topic, and A's committed offsets are where the node on A left them.
  EXPECT_EQ(st.foreign_records.load(), 0u);
  EXPECT_EQ(st.fetched.load(), 80u);
  EXPECT_EQ(Streams(*node, "on-a", all_), 0u);
  const auto committed_a = Committed(on_a.kafka.consumer_group, topic_);
  for (int32_t p = 0; p < kPartitions; ++p) EXPECT_EQ(committed_a.at(p), 10) << "partition " << p << " of A";
  EXPECT_FALSE(node->consumer().Failure().has_value());
  // Every stream answers (ExceedsLimits also refreshes them, and produces: checked last).
  EXPECT_TRUE(Served(*node, "on-b", 80));
}

}  // namespace
}  // namespace limits::realkafka
