// MockBrokerProcess: librdkafka's mock cluster in a process of its own (the mock_broker
// program), for tests that SIGKILL limitsd: the broker, its records and its consumer groups
// outlive every node process, as a real broker does (the mock limitsd embeds dies with it).
// The broker's stdin is a pipe this object holds, so it also ends when the test process dies.
// Not thread-safe; one owner.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>

#include "common/result.h"

namespace limits::testing {

class MockBrokerProcess {
 public:
  // Starts `binary` (build/tests/mock_broker) with the topic created with `partitions`, and
  // waits (up to 30 s, scaled) for the bootstrap address it prints.
  static Result<std::unique_ptr<MockBrokerProcess>> Start(const std::string& binary, const std::string& topic,
                                                          int32_t partitions);
  ~MockBrokerProcess();  // SIGTERM, then waits for the end
  MockBrokerProcess(const MockBrokerProcess&) = delete;
  MockBrokerProcess& operator=(const MockBrokerProcess&) = delete;

  const std::string& bootstrap() const { return bootstrap_; }

 private:
  MockBrokerProcess(pid_t pid, int stdin_fd, std::string bootstrap)
      : pid_(pid), stdin_fd_(stdin_fd), bootstrap_(std::move(bootstrap)) {}

  pid_t pid_;
  int stdin_fd_;
  std::string bootstrap_;
};

}  // namespace limits::testing
