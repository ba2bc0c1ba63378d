// librdkafka configuration: our defaults for each role, then the operator's properties on top
// (so any default can be overridden): [kafka.properties] shared by the clients librdkafka
// applies each to, [kafka.consumer_properties] / [kafka.producer_properties] for one client.
#pragma once

#include <librdkafka/rdkafkacpp.h>

#include <map>
#include <memory>
#include <string>

#include "common/result.h"

namespace limits::kafka {

using Properties = std::map<std::string, std::string>;

// Builds a global Conf from `defaults` overlaid with `properties`; an invalid property is an
// InvalidArgument naming it as "kafka.properties.<name>". librdkafka's log lines and error
// events go to our log (kafka_log.h).
Result<std::unique_ptr<RdKafka::Conf>> MakeConf(const Properties& defaults, const Properties& properties);

enum class Client { kConsumer, kProducer };

// Which clients librdkafka applies a property to, from its own property table
// (rd_kafka_conf_properties_show); kUnknown for a name it does not list.
enum class PropertyScope { kUnknown, kBoth, kConsumer, kProducer };
PropertyScope ScopeOf(const std::string& name);

// The properties one client is given: the `shared` ([kafka.properties]) entries librdkafka
// applies to it — a consumer-only property never reaches the producer, where librdkafka would
// log a CONFWARN at every start — then its own section (`own`) over them. Every entry is
// checked by librdkafka; an InvalidArgument names the section and the key. An entry of the
// client's own section that only the other client uses is an error: it would be ignored.
Result<Properties> ClientProperties(Client client, const Properties& shared, const Properties& own);

// The group consumer: cooperative-sticky, offsets committed by us after each flush, fetch
// sizes tuned for replay throughput.
Properties ConsumerDefaults(const std::string& brokers, const std::string& group, const std::string& client_id);
// The producer of accepted streams: batched, compressed (the mock cluster keeps only 5 MiB
// per partition; compression is also what a real cluster wants for these small records).
Properties ProducerDefaults(const std::string& brokers, const std::string& client_id);

// librdkafka's error as our Status.
Status FromKafka(RdKafka::ErrorCode code, const std::string& context);

}  // namespace limits::kafka
