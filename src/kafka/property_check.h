// Checks of operator-supplied librdkafka properties, so --check-config refuses what the node
// would then fail or misbehave on. Works over any properties table ([kafka.properties],
// [kafka.consumer_properties], [kafka.producer_properties]); `table` names it in messages.
// Pure functions over their arguments (no network); thread-safe.
#pragma once

#include <string>

#include "common/status.h"
#include "kafka/kafka_conf.h"

namespace limits::kafka {

// Every property librdkafka knows with a value it accepts (Conf::set), and none the node sets
// itself (bootstrap.servers, group.id, partition.assignment.strategy, enable.auto.commit,
// ...): each of those names the config key that sets it, or why the node owns it.
// All problems at once, one per line: `kafka.properties."group.id": ...`.
Status ValidateProperties(const Properties& properties, const std::string& table);

// Builds the group consumer's and the producer's configuration as the node does (its
// defaults, then each client's properties — ClientProperties() — no brokers) and creates
// each client without connecting, which runs librdkafka's checks across properties (SSL
// files, SASL settings, idempotence and acks, ...).
Status CheckClientConfigs(const Properties& consumer_properties, const Properties& producer_properties,
                          const std::string& group, const std::string& client_id);

}  // namespace limits::kafka
