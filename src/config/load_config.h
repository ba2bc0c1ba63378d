// Loading and validating the TOML configuration; the only user of toml11.
// Every error names the key ("windows.rate: ...") and, where it came from a file, the line.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "config/config.h"

namespace limits::config {

// Reads `path` (empty: defaults only), applies each "--set key=value" in order, fills the
// derived defaults (instance_id, consumer_group) and validates. All problems are reported
// at once, one per line, in the InvalidArgument message.
Result<Config> LoadConfig(const std::string& path, const std::vector<std::string>& sets = {});
// Same, from text; `source_name` is used in messages.
Result<Config> ParseConfig(std::string_view toml, const std::string& source_name,
                           const std::vector<std::string>& sets = {});

// The overrides file: [tenants."<tenant>"] tables holding any subset of limits.defaults' keys,
// or Loki's runtime-config YAML (loki_overrides.h). `format` is limits.overrides_format:
// "" picks by the extension (.yaml/.yml: Loki's YAML), "toml" or "loki" force one.
Result<std::map<std::string, TenantOverrides>> LoadOverridesFile(const std::string& path,
                                                                 const std::string& format = "");
Result<std::map<std::string, TenantOverrides>> ParseOverrides(std::string_view toml, const std::string& source_name);
// True when LoadOverridesFile reads `path` as Loki's YAML.
bool IsLokiOverrides(const std::string& path, const std::string& format);

// This machine's hostname, the default node.instance_id.
std::string Hostname();

}  // namespace limits::config
