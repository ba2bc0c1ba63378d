#include "node/check_config.h"

#include <sys/stat.h>

#include <vector>

#include "config/load_config.h"
#include "kafka/property_check.h"
#include "limits/usage/usage_store.h"
#include "node/node.h"
#include "storage/codec.h"

namespace limits {
namespace {

static_assert(config::kMaxLimitsNameBytes == storage::kMaxTenantLength, "config and storage disagree on tenant names");
static_assert(config::kMaxLimitsNameBytes == kMaxPolicyLength, "config and the store disagree on policy names");

void Add(std::vector<std::string>* problems, const Status& s) {
  if (!s.ok()) problems->push_back(s.message());
}

}  // namespace

Status CheckConfig(const config::Config& c) {
  std::vector<std::string> problems;
  bool properties_ok = true;
  for (const auto& [table, properties] : {std::pair{"kafka.properties", &c.kafka.properties},
                                          std::pair{"kafka.consumer_properties", &c.kafka.consumer_properties},
                                          std::pair{"kafka.producer_properties", &c.kafka.producer_properties}}) {
    const Status s = kafka::ValidateProperties(*properties, table);
    Add(&problems, s);
    properties_ok = properties_ok && s.ok();
  }
  // Clients are only worth building from properties that each pass on their own; each gets
  // what the node gives it (the shared table where it applies, then its own).
  if (properties_ok) {
    Status kafka_ok = CheckKafkaProperties(c.kafka);
    Add(&problems, kafka_ok);
    if (kafka_ok.ok()) {
      Result<kafka::Properties> consumer =
          kafka::ClientProperties(kafka::Client::kConsumer, c.kafka.properties, c.kafka.consumer_properties);
      Result<kafka::Properties> producer =
          kafka::ClientProperties(kafka::Client::kProducer, c.kafka.properties, c.kafka.producer_properties);
      Add(&problems, kafka::CheckClientConfigs(*consumer, *producer, c.kafka.consumer_group, c.node.instance_id));
    }
  }
  if (!c.limits.overrides_file.empty()) {
    // Missing files are allowed (an optional ConfigMap may appear later; the node warns).
    Result<std::map<std::string, TenantOverrides>> o =
        config::LoadOverridesFiles(config::OverridesFiles(c.limits.overrides_file), c.limits.overrides_format);
    if (!o.ok()) problems.push_back("limits.overrides_file: " + o.status().message());
  }
  struct stat st {};
  if (stat(c.store.path.c_str(), &st) == 0 && !S_ISDIR(st.st_mode)) {
    problems.push_back("store.path: " + c.store.path + " exists and is not a directory");
  }
  if (problems.empty()) return Status::OK();
  std::string joined;
  for (const std::string& p : problems) joined += (joined.empty() ? "" : "\n") + p;
  return Status::InvalidArgument(joined);
}

}  // namespace limits
