// Stopping a limitsd process at any moment of its start-up exits cleanly (issue 8, item 14):
// librdkafka 2.0.2 aborts (rd_kafka_sticky_assignor_state_destroy) when a consumer is closed
// between its JoinGroup answer and its first SyncGroup, so the node lets a join in flight
// finish first. 50 SIGTERMs at random moments in the first 5 s, on the embedded mock cluster
// (whose first join completes ~3 s after start).
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <librdkafka/rdkafkacpp.h>

#include <atomic>
#include <chrono>
#include <map>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "testing/temp_dir.h"
#include "testing/test_kafka.h"
#include "testing/wait_for.h"

namespace limits {
namespace {

using namespace std::chrono_literals;

struct Outcome {
  int delay_ms = 0;
  int status = 0;
  double stop_seconds = 0;
  std::string log;
};

Outcome StartAndStop(const std::string& dir, int delay_ms, const std::string& brokers, const std::string& group) {
  const std::string log_path = dir + "/limitsd.log";
  std::vector<std::string> args = {LIMITSD,         "--set", "store.path=" + dir + "/db",
                                   "--set",         "server.http_listen=127.0.0.1:0",
                                   "--set",         "server.grpc_listen=127.0.0.1:0",
                                   "--set",         "kafka.num_partitions=8",
                                   "--set",         "kafka.brokers=" + brokers,
                                   "--set",         "kafka.consumer_group=" + group,
                                   "--set",         "kafka.properties.session.timeout.ms=6000",
                                   "--set",         "kafka.properties.heartbeat.interval.ms=500",
                                   "--set",         "node.instance_id=" + dir.substr(dir.rfind('/') + 1)};
  const pid_t pid = fork();
  if (pid == 0) {
    const int fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, STDERR_FILENO);
    dup2(fd, STDOUT_FILENO);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  Outcome out;
  out.delay_ms = delay_ms;
  std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));  // the moment under test, not a wait
  const auto stopped_at = std::chrono::steady_clock::now();
  kill(pid, SIGTERM);
  bool exited = testing::WaitFor([&] { return waitpid(pid, &out.status, WNOHANG) == pid; }, 60s);
  if (!exited) {
    kill(pid, SIGKILL);
    waitpid(pid, &out.status, 0);
  }
  out.stop_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - stopped_at).count();
  std::ifstream in(log_path);
  std::stringstream ss;
  ss << in.rdbuf();
  out.log = ss.str();
  return out;
}

// A member that is already in the group, so every start of a node is a rebalance with a
// second member: the join the node is stopped in may be anywhere in its rounds.
class ResidentMember {
 public:
  ResidentMember(const std::string& brokers, const std::string& group) {
    std::unique_ptr<RdKafka::Conf> conf(RdKafka::Conf::create(RdKafka::Conf::CONF_GLOBAL));
    std::string err;
    for (const auto& [k, v] : std::map<std::string, std::string>{{"bootstrap.servers", brokers},
                                                                 {"group.id", group},
                                                                 {"partition.assignment.strategy", "cooperative-sticky"},
                                                                 {"session.timeout.ms", "6000"},
                                                                 {"heartbeat.interval.ms", "500"}}) {
      conf->set(k, v, err);
    }
    consumer_.reset(RdKafka::KafkaConsumer::create(conf.get(), err));
    consumer_->subscribe({testing::kTopic});
    thread_ = std::thread([this] {
      while (!stop_) delete consumer_->consume(50);
    });
  }
  ~ResidentMember() {
    stop_ = true;
    thread_.join();
    consumer_->close();
  }

 private:
  std::unique_ptr<RdKafka::KafkaConsumer> consumer_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

TEST(ShutdownTest, Item14_SigtermAtFiftyRandomMomentsOfTheFirstFiveSecondsNeverAborts) {
  testing::TempDir dir;
  testing::TestKafka kafka(8);
  constexpr int kRuns = 50, kParallel = 4;
  auto group = [](int w) { return std::string("g").append(std::to_string(w)); };
  std::vector<std::unique_ptr<ResidentMember>> residents;
  for (int w = 0; w < kParallel; ++w) residents.push_back(std::make_unique<ResidentMember>(kafka.bootstrap(), group(w)));
  std::mt19937 rng(std::random_device{}());
  std::uniform_int_distribution<int> moment(0, 5000);
  std::vector<Outcome> outcomes(kRuns);
  std::vector<int> delays(kRuns);
  for (int& d : delays) d = moment(rng);
  std::vector<std::thread> workers;
  for (int w = 0; w < kParallel; ++w) {
    workers.emplace_back([&, w] {
      for (int i = w; i < kRuns; i += kParallel) {
        outcomes[i] = StartAndStop(dir.Sub(std::string("run").append(std::to_string(i))), delays[i], kafka.bootstrap(),
                                   group(w));
      }
    });
  }
  for (auto& t : workers) t.join();
  int aborted = 0;
  double slowest = 0;
  for (const Outcome& o : outcomes) {
    // SIGTERM's default action (before main() takes the signal over, in the first
    // milliseconds of the process) is a clean end too: nothing has started.
    const bool clean = (WIFEXITED(o.status) && WEXITSTATUS(o.status) == 0) ||
                       (WIFSIGNALED(o.status) && WTERMSIG(o.status) == SIGTERM);
    if (!clean) {
      ++aborted;
      ADD_FAILURE() << "SIGTERM after " << o.delay_ms << " ms: "
                    << (WIFSIGNALED(o.status) ? "killed by signal " + std::to_string(WTERMSIG(o.status))
                                              : "exit " + std::to_string(WEXITSTATUS(o.status)))
                    << "\n" << o.log.substr(o.log.size() > 3000 ? o.log.size() - 3000 : 0);
    }
    slowest = std::max(slowest, o.stop_seconds);
  }
  std::printf("item 14: %d SIGTERMs in the first 5 s: %d aborted; slowest stop %.2f s\n", kRuns, aborted, slowest);
  EXPECT_EQ(aborted, 0);
}

}  // namespace
}  // namespace limits
