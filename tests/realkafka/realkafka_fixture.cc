#include "realkafka/realkafka_fixture.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>

#include "testing/http_client.h"
#include "testing/subprocess.h"

namespace limits::realkafka {
namespace {

using namespace std::chrono_literals;

testing::RealKafka* broker = nullptr;

class BrokerEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    Result<std::unique_ptr<testing::RealKafka>> k = testing::RealKafka::Start(/*sasl_ssl=*/true);
    ASSERT_TRUE(k.ok()) << k.status().ToString();
    broker_ = std::move(*k);
    broker = broker_.get();
    std::cerr << "realkafka: broker at " << broker->bootstrap() << " (" << broker->dir() << ")\n";
  }
  void TearDown() override {
    broker = nullptr;
    broker_.reset();
  }

 private:
  std::unique_ptr<testing::RealKafka> broker_;
};

// Registered before main() runs (gtest_main's main then runs every test).
::testing::Environment* const environment = ::testing::AddGlobalTestEnvironment(new BrokerEnvironment);

}  // namespace

testing::RealKafka& Broker() {
  if (broker == nullptr) throw std::runtime_error("the realkafka broker did not start (see the environment's failure)");
  return *broker;
}

int64_t NowMs() { return Clock::System().NowMillis(); }

uint64_t HashIn(int32_t partition, uint64_t n) { return n * kPartitions + static_cast<uint64_t>(partition); }

std::map<int32_t, int64_t> CheckpointsOnDisk(const std::string& db) {
  std::map<int32_t, int64_t> out;
  const testing::RunResult r = testing::RunProgram({LIMITSCTL, "--db", db, "--json", "partitions"});
  static const std::regex re("\"partition\":\\s*([0-9]+),[^{}]*?\"checkpoint\":\\s*\\{\\s*\"next_offset\":\\s*([0-9]+)");
  for (auto it = std::sregex_iterator(r.out.begin(), r.out.end(), re); it != std::sregex_iterator(); ++it) {
    out[std::stoi((*it)[1])] = std::stoll((*it)[2]);
  }
  return out;
}

void RealKafkaTest::SetUp() {
  topic_ = testing::UniqueTopic(::testing::UnitTest::GetInstance()->current_test_info()->name());
  if (create_topic_) {
    ASSERT_TRUE(Broker().CreateTopic(topic_, kPartitions, topic_configs_).ok()) << topic_;
  }
  kafka_ = std::make_unique<testing::TestKafka>(Broker().bootstrap(), topic_, kPartitions);
}

config::Config RealKafkaTest::NodeConfig(const std::string& name, const std::string& zone) const {
  config::Config c = kafka_->NodeConfig(dir_.Sub(name), zone, name);
  c.kafka.consumer_group = topic_ + "-" + zone;
  // A real coordinator rebalances as soon as members rejoin: members notice through their
  // heartbeat, so it is short; a member that vanished is expired after the session timeout.
  c.kafka.properties = {{"session.timeout.ms", "6000"},
                        {"heartbeat.interval.ms", "300"},
                        {"reconnect.backoff.max.ms", "500"},
                        {"topic.metadata.refresh.interval.ms", "1000"}};
  return c;
}

std::unique_ptr<Node> RealKafkaTest::Start(const std::string& name, const std::string& zone,
                                           const std::function<void(config::Config&)>& tweak) {
  config::Config c = NodeConfig(name, zone);
  if (tweak) tweak(c);
  Result<std::unique_ptr<Node>> node = Node::Start(c);
  EXPECT_TRUE(node.ok()) << node.status().ToString();
  return node.ok() ? std::move(*node) : nullptr;
}

uint64_t RealKafkaTest::Streams(Node& node, const std::string& tenant, const PartitionSet& partitions) {
  return node.store().UsageOf(tenant, partitions).active_streams;
}

}  // namespace limits::realkafka
