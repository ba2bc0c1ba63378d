#include "node/check_config.h"

#include <sys/stat.h>

#include <vector>

#include "config/load_config.h"
#include "kafka/property_check.h"
#include "limits/usage_store.h"
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
  const Status properties = kafka::ValidateProperties(c.kafka.properties, "kafka.properties");
  Add(&problems, properties);
  // Clients are only worth building from properties that each pass on their own.
  if (properties.ok()) {
    Add(&problems, kafka::CheckClientConfigs(c.kafka.properties, c.kafka.properties, c.kafka.consumer_group,
                                             c.node.instance_id, "kafka.properties"));
  }
  if (!c.limits.overrides_file.empty()) {
    struct stat st {};
    // Missing is allowed (an optional ConfigMap may appear later; the node warns).
    if (stat(c.limits.overrides_file.c_str(), &st) == 0) {
      Result<std::map<std::string, TenantOverrides>> o =
          config::LoadOverridesFile(c.limits.overrides_file, c.limits.overrides_format);
      if (!o.ok()) problems.push_back("limits.overrides_file: " + o.status().message());
    }
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
