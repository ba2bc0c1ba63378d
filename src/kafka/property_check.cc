#include "kafka/property_check.h"

#include <memory>
#include <string_view>
#include <utility>
#include <vector>

namespace limits::kafka {
namespace {

// What the node sets itself, and what to do instead.
constexpr std::pair<std::string_view, std::string_view> kOwned[] = {
    {"bootstrap.servers", "set by the node from kafka.brokers; set kafka.brokers instead"},
    {"metadata.broker.list", "set by the node from kafka.brokers; set kafka.brokers instead"},
    {"group.id", "set by the node from kafka.consumer_group; set kafka.consumer_group instead"},
    {"group.instance.id",
     "set by the node from node.instance_id while kafka.static_membership = true (the default); set those "
     "instead"},
    {"partition.assignment.strategy",
     "set by the node: cooperative-sticky, which its rebalance callback requires (an eager strategy leaves "
     "the node consuming nothing)"},
    {"enable.auto.commit", "set by the node: it commits the offsets its checkpoints cover, after each flush"},
    {"enable.auto.offset.store", "set by the node: it stores the offsets its checkpoints cover itself"},
    {"auto.offset.reset", "set by the node: replay starts from the earliest record when an offset is gone"},
    {"enable.partition.eof",
     "set by the node: the end-of-log event completes a replay whose last offsets hold no record (transaction "
     "markers, compaction); without it such a partition would replay forever"},
    {"transactional.id", "the node's producer is not transactional"},
};

std::string Key(const std::string& table, const std::string& name) { return table + ".\"" + name + "\""; }

Status Join(const std::vector<std::string>& problems) {
  if (problems.empty()) return Status::OK();
  std::string joined;
  for (const std::string& p : problems) joined += (joined.empty() ? "" : "\n") + p;
  return Status::InvalidArgument(joined);
}

// Creates a client of `role` from `conf` and destroys it; the error librdkafka gives, if any.
std::string TryCreate(RdKafka::Conf* conf, bool consumer) {
  std::string err;
  if (consumer) {
    std::unique_ptr<RdKafka::KafkaConsumer> c(RdKafka::KafkaConsumer::create(conf, err));
    if (c) c->close();
    return c ? "" : err;
  }
  std::unique_ptr<RdKafka::Producer> p(RdKafka::Producer::create(conf, err));
  return p ? "" : err;
}

}  // namespace

Status ValidateProperties(const Properties& properties, const std::string& table) {
  std::vector<std::string> problems;
  std::unique_ptr<RdKafka::Conf> conf(RdKafka::Conf::create(RdKafka::Conf::CONF_GLOBAL));
  for (const auto& [name, value] : properties) {
    bool owned = false;
    for (const auto& [owned_name, why] : kOwned) {
      if (name == owned_name) {
        problems.push_back(Key(table, name) + ": " + std::string(why));
        owned = true;
      }
    }
    if (owned) continue;
    std::string err;
    if (conf->set(name, value, err) != RdKafka::Conf::CONF_OK) problems.push_back(Key(table, name) + ": " + err);
  }
  return Join(problems);
}

Status CheckClientConfigs(const Properties& consumer_properties, const Properties& producer_properties,
                          const std::string& group, const std::string& client_id) {
  std::vector<std::string> problems;
  for (const bool consumer : {true, false}) {
    Properties defaults = consumer ? ConsumerDefaults("", group, client_id) : ProducerDefaults("", client_id);
    defaults.erase("bootstrap.servers");  // never connect: this only checks the configuration
    // The check's own client would log "no bootstrap.servers" and the like; quiet unless asked.
    defaults.emplace("log_level", "0");
    const Properties& properties = consumer ? consumer_properties : producer_properties;
    Result<std::unique_ptr<RdKafka::Conf>> conf = MakeConf(defaults, properties);
    if (!conf.ok()) {
      problems.push_back(conf.status().message());
      continue;
    }
    const std::string err = TryCreate(conf->get(), consumer);
    if (!err.empty()) {
      // Appended piece by piece: GCC 12 warns falsely (-Wrestrict) about one long a + b + c.
      std::string problem = "kafka.properties, kafka.";
      problem.append(consumer ? "consumer" : "producer").append("_properties: librdkafka refuses the ");
      problem.append(consumer ? "consumer" : "producer").append(" configuration: ").append(err);
      problems.push_back(std::move(problem));
    }
  }
  return Join(problems);
}

}  // namespace limits::kafka
