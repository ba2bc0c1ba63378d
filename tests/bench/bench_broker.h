// BenchBroker: the Kafka the bench runs on, in a process of its own as a real broker is —
// librdkafka's mock cluster (build/tests/testing/mock_broker) or a real Apache Kafka broker
// (scripts/kafka-dev.sh through testing::RealKafka) — with the topic created.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>

#include "common/result.h"

namespace limits::bench {

class BenchBroker {
 public:
  virtual ~BenchBroker() = default;
  virtual const std::string& bootstrap() const = 0;
  // "mock" or "kafka".
  virtual std::string name() const = 0;
  // The broker's process (the mock's, or Kafka's JVM), for its CPU time; -1 when unknown.
  virtual pid_t pid() const = 0;
};

// `dir` holds the broker's output.
Result<std::unique_ptr<BenchBroker>> StartMockBroker(const std::string& mock_broker, const std::string& topic,
                                                     int partitions, const std::string& dir);
Result<std::unique_ptr<BenchBroker>> StartRealKafka(const std::string& topic, int partitions);

}  // namespace limits::bench
