// RealKafka: a real Apache Kafka broker (single-node KRaft, started by scripts/kafka-dev.sh in
// a fresh directory) for the realkafka tests and for benchmarks, plus the Admin API calls they
// need (librdkafka's C Admin API: create topics with configs, delete records).
// Start() costs one JVM start (~8 s here); share one instance per test binary. The broker is
// stopped by the destructor, or by the script's watchdog when this process dies.
// Thread-safe: the admin calls may run concurrently.
#pragma once

#include <librdkafka/rdkafka.h>

#include <map>
#include <memory>
#include <string>

#include "common/result.h"

namespace limits::testing {

class RealKafka {
 public:
  // Fetches the jars if needed (Maven) and starts the broker; fails with the script's error.
  // With `sasl_ssl` it also listens SASL_SSL (kafka-dev.sh start --sasl-ssl); a non-empty
  // `kafka_version` runs that Kafka instead of the pom's (LIMITSD_KAFKA_VERSION).
  static Result<std::unique_ptr<RealKafka>> Start(bool sasl_ssl = false, const std::string& kafka_version = "");
  ~RealKafka();
  RealKafka(const RealKafka&) = delete;
  RealKafka& operator=(const RealKafka&) = delete;

  const std::string& bootstrap() const { return bootstrap_; }
  // The broker's directory: server.properties, server.log.
  const std::string& dir() const { return dir_; }
  // With sasl_ssl: the SASL_SSL listener and the CA of its certificate. Users: limitsd with
  // plain-secret (PLAIN) and scram-secret (SCRAM-SHA-256 and -512).
  std::string sasl_bootstrap() const;
  std::string ca_file() const { return dir_ + "/tls/ca.pem"; }

  // Creates `topic` with `partitions` (replication 1) and topic-level `configs`
  // (e.g. cleanup.policy, retention.ms); returns once every partition has a leader.
  Status CreateTopic(const std::string& topic, int32_t partitions, const std::map<std::string, std::string>& configs = {});
  // DeleteRecords: moves the log start offset of `partition` up to `before_offset`.
  Status DeleteRecords(const std::string& topic, int32_t partition, int64_t before_offset);
  // The partition's log start and end offsets.
  Result<std::pair<int64_t, int64_t>> Watermarks(const std::string& topic, int32_t partition);
  // The topic's partition count from the metadata; NotFound when the broker does not list it.
  Result<int32_t> PartitionCount(const std::string& topic);
  // The topic's configuration as DescribeConfigs reports it: name -> value, with whether it is
  // set on the topic itself (false: the broker's configuration or Kafka's default).
  Result<std::map<std::string, std::pair<std::string, bool>>> TopicConfigs(const std::string& topic);

 private:
  RealKafka(std::string dir, std::string bootstrap, rd_kafka_t* admin);
  // Waits for one admin result event of `type` on `queue`; its error, or OK.
  static Status AwaitEvent(rd_kafka_queue_t* queue, rd_kafka_event_type_t type, rd_kafka_event_t** out);

  std::string dir_;
  std::string bootstrap_;
  rd_kafka_t* admin_;  // owned; a producer handle used only for admin requests and metadata
};

// A unique name for a test's topic ("<prefix>-<pid>-<n>").
std::string UniqueTopic(const std::string& prefix);

}  // namespace limits::testing
