// The two brokers of the bench (see bench_broker.h).
#include "bench_broker.h"

#include <signal.h>

#include <chrono>
#include <thread>

#include "child.h"
#include "testing/real_kafka.h"

namespace limits::bench {
namespace {

class MockBroker : public BenchBroker {
 public:
  MockBroker(std::unique_ptr<Child> child, std::string bootstrap)
      : child_(std::move(child)), bootstrap_(std::move(bootstrap)) {}
  ~MockBroker() override { child_->Kill(SIGTERM); }
  const std::string& bootstrap() const override { return bootstrap_; }
  std::string name() const override { return "mock"; }
  pid_t pid() const override { return child_->pid(); }

 private:
  std::unique_ptr<Child> child_;
  std::string bootstrap_;
};

class RealBroker : public BenchBroker {
 public:
  explicit RealBroker(std::unique_ptr<testing::RealKafka> kafka) : kafka_(std::move(kafka)) {}
  const std::string& bootstrap() const override { return kafka_->bootstrap(); }
  std::string name() const override { return "kafka"; }
  pid_t pid() const override {  // scripts/kafka-dev.sh execs the JVM under the pid it writes
    const std::string pid = ReadFile(kafka_->dir() + "/pid");
    return pid.empty() ? -1 : static_cast<pid_t>(std::stol(pid));
  }

 private:
  std::unique_ptr<testing::RealKafka> kafka_;
};

}  // namespace

Result<std::unique_ptr<BenchBroker>> StartMockBroker(const std::string& mock_broker, const std::string& topic,
                                                     int partitions, const std::string& dir) {
  auto child = std::make_unique<Child>(
      std::vector<std::string>{mock_broker, "--topic", topic, "--partitions", std::to_string(partitions)},
      dir + "/mock_broker.out");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    const std::string out = child->Output();
    const size_t at = out.find("bootstrap ");
    const size_t eol = out.find('\n', at);
    if (at != std::string::npos && eol != std::string::npos) {
      return std::unique_ptr<BenchBroker>(std::make_unique<MockBroker>(std::move(child), out.substr(at + 10, eol - at - 10)));
    }
    if (!child->Running()) return Status::Unavailable("mock_broker exited: " + out);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return Status::Unavailable("mock_broker printed no bootstrap within 30 s");
}

Result<std::unique_ptr<BenchBroker>> StartRealKafka(const std::string& topic, int partitions) {
  ASSIGN_OR_RETURN(std::unique_ptr<testing::RealKafka> kafka, testing::RealKafka::Start());
  RETURN_IF_ERROR(kafka->CreateTopic(topic, partitions));
  return std::unique_ptr<BenchBroker>(std::make_unique<RealBroker>(std::move(kafka)));
}

}  // namespace limits::bench
