// CheckConfig: what --check-config verifies beyond the file's own rules (load_config.h), so
// "valid" means the node will start on it: librdkafka accepts the Kafka properties and none
// of them is one the node sets itself; the overrides file, when present, parses; the store
// path can be a directory. Reads files, creates librdkafka clients without connecting;
// no network. main() runs it before --check-config says "valid" and before a node starts.
#pragma once

#include "common/status.h"
#include "config/config.h"

namespace limits {

// Every problem at once, one per line, each naming its config key.
Status CheckConfig(const config::Config& config);

}  // namespace limits
