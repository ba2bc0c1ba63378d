// Issue 26 item 5 on a real broker, which (as kafka-dev.sh configures it) never auto-creates a
// topic: a missing kafka.topic keeps /ready at 503 naming it until the topic is created, and
// kafka.create_topic creates it with the node's partition count and cleanup.policy=delete
// (the mock cluster's CreateTopics times out, MOCK-KAFKA.md).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <iostream>
#include <mutex>
#include <thread>

#include "common/log.h"
#include "realkafka/realkafka_fixture.h"
#include "testing/http_client.h"
#include "testing/subprocess.h"
#include "testing/wait_for.h"

namespace limits::realkafka {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using testing::HttpGet;
using testing::WaitFor;

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
  size_t Count(const std::string& a) {
    std::lock_guard lock(mu_);
    size_t n = 0;
    for (const std::string& l : lines_) n += l.find(a) != std::string::npos ? 1 : 0;
    return n;
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

std::string Json(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"') out += '\\';
    out += c;
  }
  return out;
}

double SecondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

class MissingTopicTest : public RealKafkaTest {
 protected:
  MissingTopicTest() { create_topic_ = false; }

  std::unique_ptr<Node> StartNode(const std::string& name, const std::function<void(config::Config&)>& tweak = nullptr) {
    config::Config c = NodeConfig(name);
    if (tweak) tweak(c);
    NodeOptions o;
    o.topic_check_timeout = 2s;
    o.topic_retry_interval = 200ms;
    Result<std::unique_ptr<Node>> node = Node::Start(c, Clock::System(), o);
    EXPECT_TRUE(node.ok()) << node.status().ToString();
    return node.ok() ? std::move(*node) : nullptr;
  }

  void ProduceEach(uint64_t per_partition) {
    for (int32_t p = 0; p < kPartitions; ++p) {
      for (uint64_t i = 0; i < per_partition; ++i) kafka().Produce("t", HashIn(p, i), NowMs());
    }
    kafka().Flush();
  }
};

TEST_F(MissingTopicTest, Issue26_ReadyFailsNamingTheTopicUntilItIsCreated) {
  LogCapture logs;
  auto node = StartNode("a");
  ASSERT_TRUE(node);
  const std::string problem =
      "kafka.topic \"" + topic_ + "\" does not exist on kafka.brokers \"" + Broker().bootstrap() + "\"";
  EXPECT_TRUE(logs.Contains("\"level\":\"error\"", Json(problem)));
  // Past wait_assign with nothing assigned, which alone would be "ready: no partitions assigned".
  ASSERT_TRUE(WaitFor([&] { return node->partitions().SettledOnce(); }, 10s));
  EXPECT_TRUE(node->partitions().CheckReadiness().ready);
  const testing::HttpResult ready = HttpGet(node->http_port(), "/ready");
  EXPECT_EQ(ready.status, 503);
  EXPECT_THAT(ready.body, HasSubstr(problem));
  EXPECT_FALSE(logs.Contains("joined the consumer group")) << "nothing to join a group for yet";
  EXPECT_FALSE(Broker().PartitionCount(topic_).ok()) << "the node's checks created the topic";

  const auto created = std::chrono::steady_clock::now();
  ASSERT_TRUE(Broker().CreateTopic(topic_, kPartitions).ok());
  EXPECT_TRUE(WaitFor([&] { return HttpGet(node->http_port(), "/ready").status == 200; }, 60s))
      << HttpGet(node->http_port(), "/ready").body;
  std::cerr << "realkafka: ready " << SecondsSince(created) << " s after the topic was created\n";
  EXPECT_TRUE(AllReady(*node, kPartitions));
  EXPECT_TRUE(logs.Contains("joined the consumer group", "\"partitions\":4"));
  EXPECT_TRUE(logs.Contains("kafka.topic is usable now"));
  ProduceEach(5);
  EXPECT_TRUE(WaitFor([&] { return Streams(*node, "t", all_) == 4u * 5; }, 30s));
}

TEST_F(MissingTopicTest, Issue26_CreateTopicCreatesItWithTheNodesPartitionsAndDeletePolicy) {
  LogCapture logs;
  const auto started = std::chrono::steady_clock::now();
  auto node = StartNode("a", [](config::Config& c) {
    c.kafka.create_topic = true;
    c.kafka.create_topic_retention = 3h;
  });
  ASSERT_TRUE(node);
  EXPECT_TRUE(logs.Contains("created kafka.topic", "\"partitions\":4"));
  EXPECT_TRUE(logs.Contains("topic checked", "\"cleanup_policy\":\"delete\""));
  Result<int32_t> partitions = Broker().PartitionCount(topic_);
  ASSERT_TRUE(partitions.ok()) << partitions.status().ToString();
  EXPECT_EQ(*partitions, kPartitions);
  Result<std::map<std::string, std::pair<std::string, bool>>> configs = Broker().TopicConfigs(topic_);
  ASSERT_TRUE(configs.ok()) << configs.status().ToString();
  // Set on the topic: the two limitsd sets; everything else is the broker's.
  EXPECT_EQ((*configs)["cleanup.policy"], std::make_pair(std::string("delete"), true));
  EXPECT_EQ((*configs)["retention.ms"], std::make_pair(std::string("10800000"), true));
  std::vector<std::string> set_on_topic;
  for (const auto& [name, value] : *configs) {
    if (value.second) set_on_topic.push_back(name);
  }
  EXPECT_THAT(set_on_topic, ::testing::ElementsAre("cleanup.policy", "retention.ms"));

  EXPECT_TRUE(WaitFor([&] { return HttpGet(node->http_port(), "/ready").status == 200; }, 60s))
      << HttpGet(node->http_port(), "/ready").body;
  std::cerr << "realkafka: a node with kafka.create_topic ready " << SecondsSince(started) << " s after its start\n";
  EXPECT_TRUE(AllReady(*node, kPartitions));
  ProduceEach(5);
  EXPECT_TRUE(WaitFor([&] { return Streams(*node, "t", all_) == 4u * 5; }, 30s));

  // Another node of the zone finds it there: nothing to create.
  LogCapture second_logs;
  auto b = StartNode("b", [](config::Config& c) { c.kafka.create_topic = true; });
  ASSERT_TRUE(b);
  EXPECT_FALSE(second_logs.Contains("created kafka.topic"));
  EXPECT_TRUE(second_logs.Contains("topic checked"));
}

// Two nodes of a zone started together both create it: one CreateTopics wins, the other's
// "already exists" (or a metadata answer that lists it by then) is no error.
TEST_F(MissingTopicTest, Issue26_NodesCreatingTheTopicAtOnceBothStart) {
  LogCapture logs;
  std::unique_ptr<Node> a, b;
  std::thread other([&] { b = StartNode("b", [](config::Config& c) { c.kafka.create_topic = true; }); });
  a = StartNode("a", [](config::Config& c) { c.kafka.create_topic = true; });
  other.join();
  ASSERT_TRUE(a);
  ASSERT_TRUE(b);
  Result<int32_t> partitions = Broker().PartitionCount(topic_);
  ASSERT_TRUE(partitions.ok()) << partitions.status().ToString();
  EXPECT_EQ(*partitions, kPartitions);
  EXPECT_EQ(logs.Count("created kafka.topic (kafka.create_topic)"), 1u);
  std::cerr << "realkafka: the other node " << (logs.Count("kafka.topic already exists") > 0
                                                      ? "got TOPIC_ALREADY_EXISTS"
                                                      : "found the topic in the metadata")
            << "\n";
  EXPECT_TRUE(WaitFor(
      [&] {
        return ReadyPartitions(*a).size() + ReadyPartitions(*b).size() == static_cast<size_t>(kPartitions) &&
               HttpGet(a->http_port(), "/ready").status == 200 && HttpGet(b->http_port(), "/ready").status == 200;
      },
      60s));
}

// A topic of another partition count on a real broker: the binary exits 1 naming both.
TEST_F(MissingTopicTest, Issue26_ATopicWithAnotherPartitionCountIsRefused) {
  ASSERT_TRUE(Broker().CreateTopic(topic_, 2).ok());
  const config::Config c = NodeConfig("a");
  testing::RunResult r = testing::RunProgram(
      {LIMITSD, "--set", "kafka.brokers=" + c.kafka.brokers, "--set", "kafka.topic=" + c.kafka.topic, "--set",
       "kafka.num_partitions=" + std::to_string(kPartitions), "--set", "store.path=" + c.store.path, "--set",
       "server.http_listen=127.0.0.1:0", "--set", "server.grpc_listen=127.0.0.1:0"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr(Json("kafka.topic \"" + topic_ + "\" has 2 partitions on kafka.brokers \"" +
                                    c.kafka.brokers + "\", but kafka.num_partitions is 4")));
}

}  // namespace
}  // namespace limits::realkafka
