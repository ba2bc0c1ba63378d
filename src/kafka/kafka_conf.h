// librdkafka configuration: our defaults for each role, then the operator's
// [kafka.properties] verbatim on top (so any default can be overridden).
#pragma once

#include <librdkafka/rdkafkacpp.h>

#include <map>
#include <memory>
#include <string>

#include "common/result.h"

namespace limits::kafka {

using Properties = std::map<std::string, std::string>;

// Builds a global Conf from `defaults` overlaid with `properties`; an invalid property is an
// InvalidArgument naming it as "kafka.properties.<name>".
Result<std::unique_ptr<RdKafka::Conf>> MakeConf(const Properties& defaults, const Properties& properties);

// The group consumer: cooperative-sticky, offsets committed by us after each flush, fetch
// sizes tuned for replay throughput.
Properties ConsumerDefaults(const std::string& brokers, const std::string& group, const std::string& client_id);
// The producer of accepted streams: batched, compressed (the mock cluster keeps only 5 MiB
// per partition; compression is also what a real cluster wants for these small records).
Properties ProducerDefaults(const std::string& brokers, const std::string& client_id);

// librdkafka's error as our Status.
Status FromKafka(RdKafka::ErrorCode code, const std::string& context);

}  // namespace limits::kafka
