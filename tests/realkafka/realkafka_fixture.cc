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
    Result<std::unique_ptr<testing::RealKafka>> k = testing::RealKafka::Start();
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
  ASSERT_TRUE(Broker().CreateTopic(topic_, kPartitions, topic_configs_).ok()) << topic_;
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

LimitsdProcess::LimitsdProcess(const config::Config& c, const std::string& log_path) : log_path_(log_path) {
  std::vector<std::string> args = {LIMITSD,
                                   "--set", "kafka.brokers=" + c.kafka.brokers,
                                   "--set", "kafka.topic=" + c.kafka.topic,
                                   "--set", "kafka.consumer_group=" + c.kafka.consumer_group,
                                   "--set", "kafka.num_partitions=" + std::to_string(c.kafka.num_partitions),
                                   "--set", "store.path=" + c.store.path,
                                   "--set", "node.zone=" + c.node.zone,
                                   "--set", "node.instance_id=" + c.node.instance_id,
                                   "--set", std::string("kafka.static_membership=") +
                                                (c.kafka.static_membership ? "true" : "false"),
                                   "--set", "server.http_listen=127.0.0.1:0",
                                   "--set", "server.grpc_listen=127.0.0.1:0",
                                   "--set", "windows.wait_assign=2s"};
  for (const auto& [k, v] : c.kafka.properties) {
    args.push_back("--set");
    args.push_back("kafka.properties." + k + "=" + v);
  }
  pid_ = fork();
  if (pid_ == 0) {
    const int fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, STDERR_FILENO);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
}

LimitsdProcess::~LimitsdProcess() { Kill(SIGKILL); }

void LimitsdProcess::Kill(int sig) {
  if (pid_ <= 0) return;
  kill(pid_, sig);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

std::string LimitsdProcess::Log() const {
  std::ifstream in(log_path_);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int LimitsdProcess::HttpPort() const {
  std::smatch m;
  const std::string log = Log();
  static const std::regex re("\"component\":\"http\",\"msg\":\"listening\".*\"port\":([0-9]+)");
  return std::regex_search(log, m, re) ? std::stoi(m[1]) : 0;
}

bool LimitsdProcess::ReadyWith(size_t n) const {
  const int port = HttpPort();
  return port > 0 &&
         testing::HttpGet(port, "/ready").body.find("ready: " + std::to_string(n) + " partitions") != std::string::npos;
}

std::set<int32_t> LimitsdProcess::ReadyPartitions() const {
  std::set<int32_t> out;
  const int port = HttpPort();
  if (port == 0) return out;
  const std::string body = testing::HttpGet(port, "/partitions").body;
  static const std::regex re("\"partition\":\\s*([0-9]+),\\s*\"state\":\\s*\"ready\"");
  for (auto it = std::sregex_iterator(body.begin(), body.end(), re); it != std::sregex_iterator(); ++it) {
    out.insert(std::stoi((*it)[1]));
  }
  return out;
}

}  // namespace limits::realkafka
