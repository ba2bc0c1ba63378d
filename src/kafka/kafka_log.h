// librdkafka's log lines and error events as limitsd's own log lines (JSON or logfmt), instead
// of librdkafka's "%3|...|FAIL|..." lines on stderr that JSON log pipelines drop.
// Set on every handle we create: the clients (through MakeConf) and the mock cluster's owner.
// The callbacks are plain functions: librdkafka calls them from its own threads at any time,
// including during rd_kafka_destroy(); they hold no state and are safe from any thread.
#pragma once

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <optional>
#include <string>

namespace limits::kafka {

// Installs the log and error callbacks on a C configuration (before rd_kafka_new()).
void RouteLogs(rd_kafka_conf_t* conf);

// The last authentication or TLS failure any of the process's clients met talking to a broker
// (wrong SASL credentials or mechanism, a certificate that does not verify): librdkafka keeps
// retrying such a connection and, with nothing assigned, the node would look healthy.
struct BrokerAuthFailure {
  std::string reason;
  std::chrono::steady_clock::time_point at;
};
// The failure, when one happened within `recent` (librdkafka retries at least every 10 s
// while it lasts, so an older one is over).
std::optional<BrokerAuthFailure> RecentBrokerAuthFailure(std::chrono::seconds recent = std::chrono::seconds(30));
// The configuration keys an operator checks for it.
inline constexpr char kBrokerAuthKeys[] =
    "kafka.properties: security.protocol, sasl.mechanism, sasl.username, sasl.password, ssl.ca.location";

}  // namespace limits::kafka
