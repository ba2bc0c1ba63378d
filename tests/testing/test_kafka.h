// TestKafka: a mock Kafka cluster for integration tests, with a producer that writes records
// exactly as the tests need them (timestamps, headers, raw bytes) and fault injection.
// The same producer and node configuration also serve a topic on a real broker (RealKafka).
#pragma once

#include <librdkafka/rdkafkacpp.h>

#include <memory>
#include <optional>
#include <string>

#include "config/config.h"
#include "kafka/mock_cluster.h"

namespace limits::testing {

inline constexpr char kTopic[] = "ingest-limits-metadata";

class TestKafka {
 public:
  explicit TestKafka(int32_t partitions);
  // A topic that already exists on the brokers at `bootstrap` (no mock cluster).
  TestKafka(const std::string& bootstrap, const std::string& topic, int32_t partitions);
  ~TestKafka();

  const std::string& bootstrap() const { return bootstrap_; }
  const std::string& topic() const { return topic_; }
  // nullptr on a real broker.
  rd_kafka_mock_cluster_t* mock() { return cluster_ ? cluster_->handle() : nullptr; }
  int32_t partitions() const { return partitions_; }

  // A StreamMetadataRecord as a node of `zone` (and `instance`, when given) would produce it.
  void Produce(const std::string& tenant, uint64_t hash, int64_t timestamp_ms, const std::string& zone = "zone-x",
               std::optional<std::string> instance = std::nullopt, uint64_t bytes = 100,
               const std::string& policy = "");
  // Arbitrary bytes as a record value.
  void ProduceRaw(int32_t partition, const std::string& value, int64_t timestamp_ms);
  // Waits until everything produced is in the cluster.
  void Flush();
  // The partition's end offset (next offset to be written).
  int64_t EndOffset(int32_t partition);

  // A node configuration against this cluster (and topic): fast group timings for the mock, loopback
  // ports picked by the kernel, the database under `dir`.
  config::Config NodeConfig(const std::string& dir, const std::string& zone, const std::string& instance) const;

 private:
  void CreateProducer();

  int32_t partitions_;
  std::string topic_ = kTopic;
  std::string bootstrap_;
  std::unique_ptr<kafka::MockCluster> cluster_;
  std::unique_ptr<RdKafka::Producer> producer_;
};

}  // namespace limits::testing
