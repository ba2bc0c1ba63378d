// Issue 26 item 5: a wrong kafka.brokers or a missing kafka.topic made a node that looked
// healthy — "joined the consumer group" logged at once, neither key named, and /ready 200
// ("no partitions assigned") after windows.wait_assign. On librdkafka's mock cluster: brokers
// down (rd_kafka_mock_broker_set_down), a topic the metadata does not list
// (rd_kafka_mock_topic_set_error; the mock would auto-create an unknown one, MOCK-KAFKA.md),
// a topic of another partition count. Creating the topic needs a real broker (the mock's
// CreateTopics times out): tests/realkafka/kafka_start_test.cc.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "common/log.h"
#include "node/node.h"
#include "testing/http_client.h"
#include "testing/node_partitions.h"
#include "testing/temp_dir.h"
#include "testing/test_kafka.h"
#include "testing/wait_for.h"

namespace limits {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using testing::AllReady;
using testing::HttpGet;
using testing::WaitFor;

constexpr int32_t kPartitions = 4;

// The node's log lines, for the duration of a test.
class LogCapture {
 public:
  LogCapture() {
    log::SetSinkForTest([this](std::string_view line) {
      std::lock_guard lock(mu_);
      lines_.emplace_back(line);
    });
  }
  ~LogCapture() { log::SetSinkForTest(nullptr); }
  std::string All() {
    std::lock_guard lock(mu_);
    std::string out;
    for (const std::string& l : lines_) out += l + "\n";
    return out;
  }
  bool Contains(const std::string& a, const std::string& b = "") {
    std::lock_guard lock(mu_);
    for (const std::string& l : lines_) {
      if (l.find(a) != std::string::npos && l.find(b) != std::string::npos) return true;
    }
    return false;
  }

 private:
  std::mutex mu_;
  std::vector<std::string> lines_;
};

// JSON escapes the quotes of a message.
std::string Json(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"') out += '\\';
    out += c;
  }
  return out;
}

class KafkaStartTest : public ::testing::Test {
 protected:
  config::Config Config() const { return kafka_.NodeConfig(dir_.Sub("a"), "zone-a", "a"); }

  // Short checks, so that the tests need not wait out production time-outs.
  static NodeOptions Options() {
    NodeOptions o;
    o.topic_check_timeout = 1s;
    o.topic_retry_interval = 200ms;
    o.topic_ok_interval = 200ms;
    return o;
  }

  std::unique_ptr<Node> Start(const config::Config& c) {
    Result<std::unique_ptr<Node>> node = Node::Start(c, Clock::System(), Options());
    EXPECT_TRUE(node.ok()) << node.status().ToString();
    return node.ok() ? std::move(*node) : nullptr;
  }

  // /ready past windows.wait_assign with nothing assigned: the partitions alone would call
  // that ready ("ready: no partitions assigned").
  testing::HttpResult ReadyAfterWaitAssign(Node& node, std::chrono::milliseconds wait_assign) {
    EXPECT_TRUE(WaitFor([&] { return node.partitions().SettledOnce(); }, wait_assign + 10s));
    EXPECT_TRUE(node.partitions().CheckReadiness().ready) << node.partitions().CheckReadiness().reason;
    return HttpGet(node.http_port(), "/ready");
  }

  testing::TempDir dir_;
  testing::TestKafka kafka_{kPartitions};
};

TEST_F(KafkaStartTest, Issue26_UnreachableBrokersAreNamedAndKeepReadyFailingUntilTheyAnswer) {
  LogCapture logs;
  rd_kafka_mock_cluster_t* mock = kafka_.mock();
  config::Config c = Config();
  // Longer than the mock takes to assign once the brokers are back (~3.5 s, up to ~10 s on a
  // loaded machine): the wait for a first assignment counts from then, so /ready must not
  // turn 200 before the partitions.
  c.windows.wait_assign = 20s;
  // Pinned before the brokers go down (MOCK-KAFKA.md).
  rd_kafka_mock_coordinator_set(mock, "group", c.kafka.consumer_group.c_str(), 1);
  for (int32_t b = 1; b <= 3; ++b) ASSERT_EQ(rd_kafka_mock_broker_set_down(mock, b), RD_KAFKA_RESP_ERR_NO_ERROR);

  auto node = Start(c);  // the node starts, and keeps trying
  ASSERT_TRUE(node);
  const std::string problem = "kafka.brokers \"" + kafka_.bootstrap() + "\" cannot be reached";
  EXPECT_TRUE(logs.Contains("\"level\":\"error\"", Json(problem))) << "the start-up check names the key and the addresses";

  const testing::HttpResult ready = ReadyAfterWaitAssign(*node, c.windows.wait_assign);
  EXPECT_EQ(ready.status, 503);
  EXPECT_THAT(ready.body, HasSubstr(problem));
  EXPECT_FALSE(logs.Contains("joined the consumer group")) << "no group was joined";
  EXPECT_TRUE(logs.Contains("subscribed; joining the consumer group"));

  for (int32_t b = 1; b <= 3; ++b) ASSERT_EQ(rd_kafka_mock_broker_set_up(mock, b), RD_KAFKA_RESP_ERR_NO_ERROR);
  std::string early;  // a 200 before every partition is ready
  EXPECT_TRUE(WaitFor(
      [&] {
        const testing::HttpResult r = HttpGet(node->http_port(), "/ready");
        const bool all_ready = AllReady(*node, kPartitions);  // after: readiness only grows here
        if (r.status == 200 && !all_ready && early.empty()) early = r.body;
        return all_ready && r.status == 200;
      },
      60s))
      << HttpGet(node->http_port(), "/ready").body;
  EXPECT_EQ(early, "") << "ready before the assignment, counting wait_assign from the start";
  EXPECT_TRUE(logs.Contains("kafka.topic is usable now")) << logs.All();
  EXPECT_TRUE(logs.Contains("joined the consumer group", "\"partitions\":4"));
}

TEST_F(KafkaStartTest, Issue26_AMissingTopicIsNamedAndKeepsReadyFailingUntilItAppears) {
  LogCapture logs;
  // The metadata answers UNKNOWN_TOPIC_OR_PART for it, as a real broker does for a topic that
  // does not exist.
  rd_kafka_mock_topic_set_error(kafka_.mock(), testing::kTopic, RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART);
  auto node = Start(Config());
  ASSERT_TRUE(node);
  const std::string problem = "kafka.topic \"" + std::string(testing::kTopic) + "\" does not exist on kafka.brokers \"" +
                              kafka_.bootstrap() + "\"";
  EXPECT_TRUE(logs.Contains("\"level\":\"error\"", Json(problem)));

  const testing::HttpResult ready = ReadyAfterWaitAssign(*node, Config().windows.wait_assign);
  EXPECT_EQ(ready.status, 503);
  EXPECT_THAT(ready.body, HasSubstr(problem));
  EXPECT_THAT(ready.body, HasSubstr("create it with 4 partitions (kafka.num_partitions) and cleanup.policy=delete, or "
                                    "set kafka.create_topic = true"));

  // The topic appears: the background check sees it, the consumer is assigned its partitions.
  rd_kafka_mock_topic_set_error(kafka_.mock(), testing::kTopic, RD_KAFKA_RESP_ERR_NO_ERROR);
  EXPECT_TRUE(WaitFor(
      [&] { return AllReady(*node, kPartitions) && HttpGet(node->http_port(), "/ready").status == 200; }, 60s))
      << HttpGet(node->http_port(), "/ready").body;
  EXPECT_TRUE(logs.Contains("kafka.topic is usable now", "\"partitions\":4"));
}

// Found later (deleted, or recreated with another partition count), it fails /ready too —
// however long the node has been ready: latch_readiness covers rebalances, not a topic gone.
TEST_F(KafkaStartTest, Issue26_ATopicThatDisappearsLaterFailsReady) {
  auto node = Start(Config());
  ASSERT_TRUE(node);
  ASSERT_TRUE(WaitFor([&] { return HttpGet(node->http_port(), "/ready").status == 200; }, 30s));
  rd_kafka_mock_topic_set_error(kafka_.mock(), testing::kTopic, RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART);
  EXPECT_TRUE(WaitFor(
      [&] {
        const testing::HttpResult r = HttpGet(node->http_port(), "/ready");
        return r.status == 503 && r.body.find("does not exist") != std::string::npos;
      },
      10s));
  rd_kafka_mock_topic_set_error(kafka_.mock(), testing::kTopic, RD_KAFKA_RESP_ERR_NO_ERROR);
  EXPECT_TRUE(WaitFor([&] { return HttpGet(node->http_port(), "/ready").status == 200; }, 60s))
      << HttpGet(node->http_port(), "/ready").body;
}

// A topic of another partition count: stream_hash % kafka.num_partitions would name
// partitions the topic does not have (or leave some unserved). Refused before the store is
// opened, naming both counts.
TEST_F(KafkaStartTest, Issue26_ATopicWithAnotherPartitionCountIsRefusedAtStart) {
  config::Config c = Config();
  c.kafka.num_partitions = 8;
  Result<std::unique_ptr<Node>> node = Node::Start(c, Clock::System(), Options());
  ASSERT_FALSE(node.ok());
  EXPECT_EQ(node.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(node.status().message(), HasSubstr("kafka.topic \"" + std::string(testing::kTopic) +
                                                 "\" has 4 partitions on kafka.brokers \"" + kafka_.bootstrap() +
                                                 "\", but kafka.num_partitions is 8"));
  EXPECT_FALSE(std::filesystem::exists(c.store.path)) << "the store was opened";
}

}  // namespace
}  // namespace limits
