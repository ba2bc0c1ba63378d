// Node: one limitsd process — builds its parts in dependency order from the configuration,
// starts them, and stops them in the reverse order (Loki's service.go).
//   start: [embedded mock Kafka] -> RocksDB -> usage store -> partition manager -> offset
//          source -> producer -> lifecycler -> consumer -> evictor -> HTTP
//   stop:  HTTP -> evictor -> consumer (finish the batch, persist, leave the group) ->
//          lifecycler -> producer (flush) -> store (flush) -> RocksDB -> mock
#pragma once

#include <memory>
#include <string>

#include "common/clock.h"
#include "common/result.h"
#include "config/config.h"
#include "http/http_server.h"
#include "kafka/consumer.h"
#include "kafka/kafka_offset_source.h"
#include "kafka/mock_cluster.h"
#include "kafka/producer.h"
#include "limits/evictor.h"
#include "limits/partition_lifecycler.h"
#include "limits/partition_manager.h"
#include "limits/usage_store.h"
#include "storage/db.h"

namespace limits {

class Node {
 public:
  // Starts every part; on failure stops what started and returns why.
  static Result<std::unique_ptr<Node>> Start(const config::Config& config, const Clock& clock = Clock::System());
  ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  // Graceful stop; idempotent.
  void Stop();

  UsageStore& store() { return *store_; }
  PartitionManager& partitions() { return *partitions_; }
  kafka::StreamProducer& producer() { return *producer_; }
  kafka::Consumer& consumer() { return *consumer_; }
  PartitionLifecycler& lifecycler() { return *lifecycler_; }
  Evictor& evictor() { return *evictor_; }
  const config::Config& config() const { return config_; }
  // The brokers in use: the configured ones, or the embedded mock cluster's.
  const std::string& brokers() const { return brokers_; }
  int http_port() const { return http_ ? http_->port() : 0; }

 private:
  Node(const config::Config& config, const Clock& clock) : config_(config), clock_(clock) {}
  Status StartParts();
  http::Response Ready() const;

  const config::Config config_;
  const Clock& clock_;
  std::string brokers_;
  bool stopped_ = false;
  std::unique_ptr<kafka::MockCluster> embedded_;
  std::unique_ptr<storage::Db> db_;
  std::unique_ptr<UsageStore> store_;
  std::unique_ptr<PartitionManager> partitions_;
  std::unique_ptr<kafka::KafkaOffsetSource> offsets_;
  std::unique_ptr<kafka::StreamProducer> producer_;
  std::unique_ptr<PartitionLifecycler> lifecycler_;
  std::unique_ptr<kafka::Consumer> consumer_;
  std::unique_ptr<Evictor> evictor_;
  std::unique_ptr<http::HttpServer> http_;
};

// The store's windows, in its unit (seconds), from the configuration.
Windows WindowsOf(const config::WindowsConfig& w);

}  // namespace limits
