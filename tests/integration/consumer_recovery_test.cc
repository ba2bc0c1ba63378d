// Issue 24 item 6: a fatal or stuck consumer is a dead node. On librdkafka's mock cluster:
// a static member fenced (FENCED_INSTANCE_ID in a Heartbeat, in its first SyncGroup, in
// every JoinGroup) and fetches that fail while ListOffsets answers (a stall). The node
// re-creates its consumer and serves again, or gives up and fails /live with the reason.
// A partition of another topic needs a real coordinator: tests/realkafka/topic_change_test.cc.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <mutex>
#include <string>
#include <vector>

#include "common/log.h"
#include "limits/decision/reason.h"
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
using testing::Generations;
using testing::HttpGet;
using testing::WaitFor;

constexpr int32_t kPartitions = 4;
// librdkafka's mock has no names for its ApiKeys (MOCK-KAFKA.md).
constexpr int16_t kFetch = 1;
constexpr int16_t kJoinGroup = 11;
constexpr int16_t kHeartbeat = 12;
constexpr int16_t kSyncGroup = 14;

int64_t NowMs() { return Clock::System().NowMillis(); }

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

class ConsumerRecoveryTest : public ::testing::Test {
 protected:
  std::unique_ptr<Node> Start(const std::function<void(config::Config&)>& tweak = nullptr) {
    config::Config c = kafka_.NodeConfig(dir_.Sub("a"), "zone-a", "a");
    if (tweak) tweak(c);
    Result<std::unique_ptr<Node>> node = Node::Start(c);
    EXPECT_TRUE(node.ok()) << node.status().ToString();
    return node.ok() ? std::move(*node) : nullptr;
  }

  void ProduceRound(uint64_t first, uint64_t n) {
    for (uint64_t i = first; i < first + n; ++i) kafka_.Produce("t", i, NowMs());
    kafka_.Flush();
  }

  uint64_t Streams(Node& node) { return node.store().UsageOf("t", all_).active_streams; }

  // Every stream of every partition is checked: none answers reason 1 (not served).
  static bool Served(Node& node) {
    std::vector<StreamUpdate> streams;
    for (uint64_t i = 0; i < 8; ++i) streams.push_back({.stream_hash = i, .bytes = 1, .policy = ""});
    std::vector<Rejection> rejected;
    if (!node.checker().ExceedsLimits("t", streams, &rejected).ok()) return false;
    for (const Rejection& r : rejected) {
      if (r.reason == kReasonFailed) return false;
    }
    return true;
  }

  static std::string Metrics(Node& node) { return HttpGet(node.http_port(), "/metrics").body; }

  LogCapture logs_;
  testing::TempDir dir_;
  testing::TestKafka kafka_{kPartitions};
  const PartitionSet all_ = PartitionSet::All(kPartitions);
};

// The outage: librdkafka raises a fatal error when a static member is fenced (here
// its Heartbeat answered FENCED_INSTANCE_ID). The node treats its partitions as lost,
// re-creates the consumer, gets them back, and serves and consumes again.
TEST_F(ConsumerRecoveryTest, AFencedConsumerIsRecreatedAndServesAgain) {
  ProduceRound(0, 40);
  auto node = Start();
  ASSERT_TRUE(node);
  ASSERT_TRUE(WaitFor([&] { return AllReady(*node, kPartitions) && Streams(*node) == 40; }, 60s));
  const auto before = Generations(*node);
  rd_kafka_mock_push_request_errors(kafka_.mock(), kHeartbeat, 1, RD_KAFKA_RESP_ERR_FENCED_INSTANCE_ID);
  ASSERT_TRUE(WaitFor([&] { return node->consumer().stats().restarts_fatal.load() == 1; }, 20s));
  EXPECT_TRUE(logs_.Contains("fatal consumer error", "FENCED_INSTANCE_ID"));
  const auto recovered_at = std::chrono::steady_clock::now();
  // The mock's coordinator waits for the fenced member's session (6 s) before it rebalances.
  ASSERT_TRUE(WaitFor([&] { return AllReady(*node, kPartitions) && Generations(*node) != before; }, 60s));
  std::printf("fenced consumer: serving again %.1f s after the restart\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - recovered_at).count());
  EXPECT_TRUE(Served(*node));
  EXPECT_EQ(Streams(*node), 40u);  // what was consumed survived the loss
  ProduceRound(40, 20);            // and consuming goes on
  ASSERT_TRUE(WaitFor([&] { return Streams(*node) == 60; }, 30s));
  EXPECT_EQ(HttpGet(node->http_port(), "/live").status, 200);
  const std::string metrics = Metrics(*node);
  EXPECT_THAT(metrics, HasSubstr("limitsd_consumer_restarts_total{reason=\"fatal\"} 1"));
  EXPECT_THAT(metrics, HasSubstr("limitsd_consumer_failed 0"));
}

// Fenced in its very first SyncGroup: librdkafka 2.0.2 aborts the process when such a client
// (JoinGroup answered, no SyncGroup yet) is destroyed or closed. The node leaves that client
// alone and recovers with a new one.
TEST_F(ConsumerRecoveryTest, FencedInItsFirstSyncGroupTheClientIsLeftAndANewOneServes) {
  ProduceRound(0, 8);
  rd_kafka_mock_push_request_errors(kafka_.mock(), kSyncGroup, 1, RD_KAFKA_RESP_ERR_FENCED_INSTANCE_ID);
  auto node = Start();
  ASSERT_TRUE(node);
  ASSERT_TRUE(WaitFor([&] { return node->consumer().stats().restarts_fatal.load() == 1; }, 30s));
  EXPECT_TRUE(logs_.Contains("group join did not complete", "process's exit"));
  ASSERT_TRUE(WaitFor([&] { return AllReady(*node, kPartitions) && Streams(*node) == 8; }, 60s));
  EXPECT_TRUE(Served(*node));
}

// A fatal error that comes back after every restart (here: every JoinGroup fenced, as a
// genuine duplicate instance id would) exhausts kafka.max_consumer_restarts: /live and
// /ready answer 503 with the reason within seconds.
TEST_F(ConsumerRecoveryTest, RepeatedFatalErrorsFailLiveWithTheReason) {
  rd_kafka_mock_push_request_errors(kafka_.mock(), kJoinGroup, 10, RD_KAFKA_RESP_ERR_FENCED_INSTANCE_ID,
                                    RD_KAFKA_RESP_ERR_FENCED_INSTANCE_ID, RD_KAFKA_RESP_ERR_FENCED_INSTANCE_ID,
                                    RD_KAFKA_RESP_ERR_FENCED_INSTANCE_ID, RD_KAFKA_RESP_ERR_FENCED_INSTANCE_ID,
                                    RD_KAFKA_RESP_ERR_FENCED_INSTANCE_ID, RD_KAFKA_RESP_ERR_FENCED_INSTANCE_ID,
                                    RD_KAFKA_RESP_ERR_FENCED_INSTANCE_ID, RD_KAFKA_RESP_ERR_FENCED_INSTANCE_ID,
                                    RD_KAFKA_RESP_ERR_FENCED_INSTANCE_ID);
  const auto started = std::chrono::steady_clock::now();
  auto node = Start([](config::Config& c) { c.kafka.max_consumer_restarts = 2; });
  ASSERT_TRUE(node);
  ASSERT_TRUE(WaitFor([&] { return HttpGet(node->http_port(), "/live").status == 503; }, 20s));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::printf("three fenced JoinGroups: /live 503 %.1f s after the start\n", seconds);
  const testing::HttpResult live = HttpGet(node->http_port(), "/live");
  EXPECT_THAT(live.body, HasSubstr("consumer failed"));
  EXPECT_THAT(live.body, HasSubstr("FENCED_INSTANCE_ID"));
  EXPECT_THAT(live.body, HasSubstr("already restarted 2 times"));
  const testing::HttpResult ready = HttpGet(node->http_port(), "/ready");
  EXPECT_EQ(ready.status, 503);
  EXPECT_THAT(ready.body, HasSubstr("consumer failed"));
  EXPECT_EQ(node->consumer().stats().restarts_fatal.load(), 2u);
  const std::string metrics = Metrics(*node);
  EXPECT_THAT(metrics, HasSubstr("limitsd_consumer_failed 1"));
  EXPECT_THAT(metrics, HasSubstr("limitsd_consumer_restarts_total{reason=\"fatal\"} 2"));
  EXPECT_TRUE(logs_.Contains("GIVING UP"));
  rd_kafka_mock_clear_request_errors(kafka_.mock(), kJoinGroup);
  node->Stop();  // stops cleanly without a consumer
}

// Fetches fail while ListOffsets answers: the partitions' positions stop while records
// arrive beyond them — a stuck consumer. It is re-created after kafka.stall_timeout; once
// fetches work again the node consumes on. The same stall right after (max one restart
// here) gives up: /live 503.
TEST_F(ConsumerRecoveryTest, AStallRecreatesTheConsumerAndARepeatedStallFailsLive) {
  ProduceRound(0, 20);
  auto node = Start([](config::Config& c) {
    c.kafka.stall_timeout = 2s;
    c.kafka.max_consumer_restarts = 1;
  });
  ASSERT_TRUE(node);
  ASSERT_TRUE(WaitFor([&] { return AllReady(*node, kPartitions) && Streams(*node) == 20; }, 60s));
  std::vector<rd_kafka_resp_err_t> errors(100'000, RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION);
  rd_kafka_mock_push_request_errors_array(kafka_.mock(), kFetch, errors.size(), errors.data());
  ProduceRound(20, 20);
  ASSERT_TRUE(WaitFor([&] { return node->consumer().stats().restarts_stalled.load() == 1; }, 20s));
  EXPECT_TRUE(logs_.Contains("consumption stalled", "no progress while the broker has records beyond the position"));
  EXPECT_LT(Streams(*node), 40u);
  rd_kafka_mock_clear_request_errors(kafka_.mock(), kFetch);
  ASSERT_TRUE(WaitFor([&] { return AllReady(*node, kPartitions) && Streams(*node) == 40; }, 60s));
  EXPECT_TRUE(Served(*node));
  EXPECT_EQ(HttpGet(node->http_port(), "/live").status, 200);

  rd_kafka_mock_push_request_errors_array(kafka_.mock(), kFetch, errors.size(), errors.data());
  ProduceRound(40, 20);
  const auto stalled_from = std::chrono::steady_clock::now();
  ASSERT_TRUE(WaitFor([&] { return HttpGet(node->http_port(), "/live").status == 503; }, 20s));
  std::printf("a second stall (stall_timeout 2 s): /live 503 %.1f s after the records arrived\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - stalled_from).count());
  EXPECT_THAT(HttpGet(node->http_port(), "/live").body, HasSubstr("stalled"));
  EXPECT_EQ(node->consumer().stats().restarts_stalled.load(), 1u);
  EXPECT_THAT(Metrics(*node), HasSubstr("limitsd_consumer_restarts_total{reason=\"stalled\"} 1"));
  rd_kafka_mock_clear_request_errors(kafka_.mock(), kFetch);
}

}  // namespace
}  // namespace limits
