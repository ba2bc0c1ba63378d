// CheckTopic: refuses a topic limitsd cannot replay correctly, before the node touches it.
// A compacted topic (cleanup.policy contains "compact") keeps only the newest record per key,
// and records are keyed by tenant: a replay would see one stream per tenant and partition,
// silently under-counting every limit. The node needs cleanup.policy=delete.
// Reads the topic's configuration with DescribeConfigs, sent to a broker of the cluster's
// metadata. A broker that cannot answer (librdkafka's mock cluster, a missing DescribeConfigs
// permission, a topic not created yet, a time-out) leaves the topic unchecked: logged, not
// fatal, as the consumer reports such problems itself. Blocking; call once at start-up.
#pragma once

#include <chrono>
#include <string>

#include "common/status.h"
#include "kafka/kafka_conf.h"

namespace limits::kafka {

struct TopicCheckOptions {
  std::string brokers;
  std::string topic;
  std::string client_id;
  Properties properties;  // [kafka.properties]: only connection and security settings apply
  std::chrono::milliseconds timeout{5000};
};

// FailedPrecondition naming kafka.topic and its cleanup.policy when the topic is compacted;
// OK otherwise (including "could not check", which is logged).
Status CheckTopic(const TopicCheckOptions& options);

}  // namespace limits::kafka
