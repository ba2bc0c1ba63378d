// MockCluster: librdkafka's built-in mock Kafka cluster, in this process, with the topic
// created up front (any metadata request would otherwise auto-create it with 4 partitions).
// The node's embedded default when no brokers are configured, and the tests' broker.
// Speaks the Kafka protocol on loopback TCP: any client can use bootstrap().
#pragma once

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <memory>
#include <string>

#include "common/result.h"

namespace limits::kafka {

class MockCluster {
 public:
  static Result<std::unique_ptr<MockCluster>> Start(const std::string& topic, int32_t partitions, int brokers = 3);
  ~MockCluster();
  MockCluster(const MockCluster&) = delete;
  MockCluster& operator=(const MockCluster&) = delete;

  const std::string& bootstrap() const { return bootstrap_; }
  // For fault injection in tests (rd_kafka_mock_push_request_errors, broker down, ...).
  rd_kafka_mock_cluster_t* handle() { return cluster_; }

 private:
  MockCluster(rd_kafka_t* owner, rd_kafka_mock_cluster_t* cluster);
  rd_kafka_t* owner_;                 // the handle that owns the cluster; destroyed after it
  rd_kafka_mock_cluster_t* cluster_;
  std::string bootstrap_;
};

}  // namespace limits::kafka
