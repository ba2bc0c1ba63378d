// Node: one limitsd process — builds its parts in dependency order from the configuration,
// starts them, and stops them in the reverse order (Loki's service.go).
//   start: metrics registry -> the embedded mock Kafka, or the topic check (and its thread)
//          -> RocksDB -> usage store -> partition manager -> limits (+ overrides file) ->
//          offset source -> producer -> lifecycler -> consumer -> evictor -> gRPC (+ health)
//          -> [ring membership: JOINING, ACTIVE] -> HTTP
//   stop:  [topic check's thread] -> [ring: LEAVING, removed] -> gRPC (health NOT_SERVING,
//          no new checks) -> HTTP -> overrides reloader -> evictor -> consumer (finish the
//          batch, persist, leave the group) -> lifecycler -> producer (flush) -> store (flush)
//          -> RocksDB -> topic check -> mock -> registry
#pragma once

#include <memory>
#include <string>

#include "common/clock.h"
#include "common/result.h"
#include "config/config.h"
#include <prometheus/registry.h>

#include "http/http_server.h"
#include "kafka/consumer.h"
#include "kafka/kafka_offset_source.h"
#include "kafka/mock_cluster.h"
#include "kafka/producer.h"
#include "kafka/topic_check.h"
#include "limits/decision/limits_checker.h"
#include "limits/decision/limits_provider.h"
#include "limits/decision/rate_limiter.h"
#include "limits/lifecycle/evictor.h"
#include "limits/lifecycle/partition_lifecycler.h"
#include "limits/lifecycle/partition_manager.h"
#include "limits/usage/usage_store.h"
#include "node/metrics_collector.h"
#include "node/tenant_series.h"
#include "node/overrides_reloader.h"
#include "ring/kv_client.h"
#include "ring/lifecycler.h"
#include "node/node_zone.h"
#include "rpc/grpc_server.h"
#include "rpc/ingest_limits_service.h"
#include "storage/db.h"

namespace limits {

// Knobs that are not configuration: timings tests (and benchmarks) adjust.
struct NodeOptions {
  // How long consumed records may wait before they are applied (Consumer::Options).
  std::chrono::milliseconds apply_interval{50};
  // How often a replay's progress is logged (Consumer::Options).
  std::chrono::milliseconds progress_interval{5000};
  // First timeout of each offset look-up call (LookupOptions::timeout and probe_timeout).
  std::chrono::milliseconds lookup_timeout{5000};
  // The topic check (kafka/topic_check.h): each request's timeout, how often it is repeated
  // while the brokers cannot be reached or the topic is missing or unusable, and while all is
  // well (a topic deleted or repartitioned later).
  std::chrono::milliseconds topic_check_timeout{5000};
  std::chrono::milliseconds topic_retry_interval{5000};
  std::chrono::milliseconds topic_ok_interval{30'000};
};

class Node {
 public:
  // Starts every part; on failure stops what started and returns why.
  static Result<std::unique_ptr<Node>> Start(const config::Config& config, const Clock& clock = Clock::System(),
                                             NodeOptions options = {});
  ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  // Graceful stop; idempotent.
  void Stop();
  // SIGHUP: reload limits.overrides_file (a failure keeps the limits in force).
  Status ReloadOverrides();

  UsageStore& store() { return *store_; }
  PartitionManager& partitions() { return *partitions_; }
  kafka::StreamProducer& producer() { return *producer_; }
  kafka::Consumer& consumer() { return *consumer_; }
  PartitionLifecycler& lifecycler() { return *lifecycler_; }
  kafka::KafkaOffsetSource& offset_source() { return *offsets_; }
  Evictor& evictor() { return *evictor_; }
  LimitsChecker& checker() { return *checker_; }
  prometheus::Registry& registry() { return *registry_; }
  const config::Config& config() const { return config_; }
  // The brokers in use: the configured ones, or the embedded mock cluster's.
  const std::string& brokers() const { return brokers_; }
  // This process's tag in the records it produces (record_filter.h).
  const std::string& run_tag() const { return run_tag_; }
  int http_port() const { return http_ ? http_->port() : 0; }
  int operator_http_port() const { return operator_http_ ? operator_http_->port() : 0; }
  int grpc_port() const { return grpc_ ? grpc_->port() : 0; }
  // This instance's ring membership; nullptr when [ring] store is "".
  ring::Lifecycler* ring() { return ring_.get(); }
  // The zone's shared limits; nullptr without [zone] enabled.
  NodeZone* zone() { return zone_.get(); }

 private:
  Node(const config::Config& config, const Clock& clock, NodeOptions options)
      : config_(config), clock_(clock), options_(options) {}
  Status StartParts();
  Status StartRing();
  Status AdoptTopic();
  http::Response Ready() const;
  http::Response Live() const;

  const config::Config config_;
  const Clock& clock_;
  const NodeOptions options_;
  std::string brokers_;
  std::string run_tag_;  // this process in the records it produces (record_filter.h)
  bool stopped_ = false;
  // Created first, destroyed last: metric families reference it.
  std::shared_ptr<prometheus::Registry> registry_ = std::make_shared<prometheus::Registry>();
  std::unique_ptr<kafka::MockCluster> embedded_;
  std::unique_ptr<kafka::TopicCheck> topic_;  // null with the embedded cluster (it creates the topic)
  std::unique_ptr<storage::Db> db_;
  std::unique_ptr<UsageStore> store_;
  std::unique_ptr<PartitionManager> partitions_;
  std::unique_ptr<LimitsProvider> limits_;
  std::unique_ptr<OverridesReloader> reloader_;
  std::unique_ptr<RateLimiter> rates_;
  std::unique_ptr<kafka::KafkaOffsetSource> offsets_;
  std::unique_ptr<kafka::StreamProducer> producer_;
  std::unique_ptr<PartitionLifecycler> lifecycler_;
  std::unique_ptr<kafka::Consumer> consumer_;
  std::unique_ptr<Evictor> evictor_;
  std::unique_ptr<NodeZone> zone_;  // null without [zone] enabled
  std::unique_ptr<LimitsChecker> checker_;
  std::unique_ptr<rpc::IngestLimitsService> service_;
  std::unique_ptr<rpc::GrpcServer> grpc_;
  std::unique_ptr<ring::KvClient> ring_kv_;
  std::unique_ptr<ring::Lifecycler> ring_;
  std::unique_ptr<NodeCollector> collector_;
  std::unique_ptr<TenantSeries> tenant_series_;
  std::unique_ptr<http::HttpServer> http_;
  std::unique_ptr<http::HttpServer> operator_http_;  // null: the operator documents are on http_
};

// What LoadConfig cannot check: the librdkafka properties of every client (names, values, and
// which client each belongs to). Node::Start fails the same way; main() exits 2 on it.
Status CheckKafkaProperties(const config::KafkaConfig& kafka);

// The store's windows, in its unit (seconds), from the configuration.
Windows WindowsOf(const config::WindowsConfig& w);

}  // namespace limits
