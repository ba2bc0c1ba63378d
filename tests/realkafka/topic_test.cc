// Topics a real broker can have and the mock cannot: a transactional producer's commit
// markers at the end of the partitions, and a compacted topic (refused at start-up).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <librdkafka/rdkafkacpp.h>

#include "kafka/record_codec.h"
#include "realkafka/realkafka_fixture.h"
#include "testing/subprocess.h"
#include "testing/wait_for.h"

namespace limits::realkafka {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using testing::WaitFor;

class TransactionTest : public RealKafkaTest {
 protected:
  // `per_partition` records to every partition in one committed transaction: each partition
  // then ends with a commit marker (a control record no consumer ever receives).
  void ProduceCommitted(uint64_t per_partition, uint64_t first) {
    std::unique_ptr<RdKafka::Conf> conf(RdKafka::Conf::create(RdKafka::Conf::CONF_GLOBAL));
    std::string err;
    ASSERT_EQ(conf->set("bootstrap.servers", Broker().bootstrap(), err), RdKafka::Conf::CONF_OK);
    ASSERT_EQ(conf->set("transactional.id", topic_ + "-tx", err), RdKafka::Conf::CONF_OK);
    std::unique_ptr<RdKafka::Producer> producer(RdKafka::Producer::create(conf.get(), err));
    ASSERT_TRUE(producer) << err;
    std::unique_ptr<RdKafka::Error> e(producer->init_transactions(30'000));
    ASSERT_FALSE(e) << e->str();
    e.reset(producer->begin_transaction());
    ASSERT_FALSE(e) << e->str();
    const int64_t now = NowMs();
    for (int32_t p = 0; p < kPartitions; ++p) {
      for (uint64_t i = first; i < first + per_partition; ++i) {
        const std::string value = kafka::EncodeRecordValue("zone-x", "t", HashIn(p, i), 100, "");
        ASSERT_EQ(producer->produce(topic_, p, RdKafka::Producer::RK_MSG_COPY, const_cast<char*>(value.data()),
                                    value.size(), "t", 1, now, nullptr, nullptr),
                  RdKafka::ERR_NO_ERROR);
      }
    }
    e.reset(producer->commit_transaction(30'000));
    ASSERT_FALSE(e) << e->str();
  }
};

// Here end - 1 is the commit marker, which is never delivered as a record: a partition
// declared ready only once the record at end - 1 is applied would replay forever (issue 8
// item 10). The consumer is ready when its position reaches the end offset instead.
TEST_F(TransactionTest, CommitMarkersAtTheEndDoNotLeaveReplayUnfinished) {
  ProduceCommitted(10, 0);
  // The coordinator writes the markers after the commit returns; until then the end offset
  // a read_committed client sees (the last stable offset) stays at the transaction's start.
  for (int32_t p = 0; p < kPartitions; ++p) {
    ASSERT_TRUE(WaitFor(
        [&] {
          Result<std::pair<int64_t, int64_t>> marks = Broker().Watermarks(topic_, p);
          return marks.ok() && marks->second == 11;  // 10 records and the commit marker
        },
        30s))
        << "partition " << p;
  }
  auto node = Start("a");
  ASSERT_TRUE(node);
  const bool ready = WaitFor([&] { return AllReady(*node, kPartitions); }, 30s);
  std::string states;
  for (const PartitionInfo& info : node->partitions().Snapshot()) {
    states += " p" + std::to_string(info.partition) + "=" + std::string(PartitionStateName(info.state)) +
              " at " + std::to_string(info.replay.current_offset) + "/target " + std::to_string(info.replay.target_offset);
  }
  EXPECT_TRUE(ready) << "still replaying (the commit marker at end - 1 never arrives):" << states;
  EXPECT_EQ(Streams(*node, "t", all_), 4u * 10);
  // Once ready, later transactions are applied too.
  ProduceCommitted(5, 10);
  EXPECT_TRUE(WaitFor([&] { return Streams(*node, "t", all_) == 4u * 15; }, 30s));
}

class CompactedTopicTest : public RealKafkaTest {
 protected:
  CompactedTopicTest() { topic_configs_ = {{"cleanup.policy", "compact"}}; }
};

// Records are keyed by tenant: compaction keeps one per tenant, so a replay would lose
// streams. The node refuses the topic before it opens its store or joins the group.
TEST_F(CompactedTopicTest, NodeRefusesACompactedTopic) {
  const config::Config c = NodeConfig("a");
  Result<std::unique_ptr<Node>> node = Node::Start(c);
  ASSERT_FALSE(node.ok());
  EXPECT_EQ(node.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(node.status().message(), HasSubstr("cleanup.policy=compact"));
  EXPECT_THAT(node.status().message(), HasSubstr(topic_));

  // The binary: exit 1, and the log line says why.
  testing::RunResult r = testing::RunProgram({LIMITSD, "--set", "kafka.brokers=" + c.kafka.brokers, "--set",
                                              "kafka.topic=" + c.kafka.topic, "--set",
                                              "kafka.num_partitions=" + std::to_string(kPartitions), "--set",
                                              "store.path=" + c.store.path, "--set", "server.http_listen=127.0.0.1:0",
                                              "--set", "server.grpc_listen=127.0.0.1:0"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("cleanup.policy=compact"));
  EXPECT_THAT(r.err, HasSubstr("start failed"));
}

}  // namespace
}  // namespace limits::realkafka
