// librdkafka's log lines and error events as limitsd's own log lines (JSON or logfmt), instead
// of librdkafka's "%3|...|FAIL|..." lines on stderr that JSON log pipelines drop.
// Set on every handle we create: the clients (through MakeConf) and the mock cluster's owner.
// The callbacks are plain functions: librdkafka calls them from its own threads at any time,
// including during rd_kafka_destroy(); they hold no state and are safe from any thread.
#pragma once

#include <librdkafka/rdkafka.h>

namespace limits::kafka {

// Installs the log and error callbacks on a C configuration (before rd_kafka_new()).
void RouteLogs(rd_kafka_conf_t* conf);

}  // namespace limits::kafka
