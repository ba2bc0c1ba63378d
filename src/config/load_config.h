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
// The paths of a comma-separated list (limits.overrides_file, Loki's runtime_config.file, as
// dskit's StringSliceCSV splits it: empty items dropped).
std::vector<std::string> OverridesFiles(std::string_view csv);
// Every file of the list that exists (a missing one is skipped: an optional ConfigMap may
// appear later), parsed and, when there are several, merged as Loki merges runtime config.
// `present` gets the files read.
Result<std::map<std::string, TenantOverrides>> LoadOverridesFiles(const std::vector<std::string>& paths,
                                                                  const std::string& format,
                                                                  std::vector<std::string>* present = nullptr);
// Reads limits.loki_config_file, when set, into `c`: limits_config becomes the defaults (an
// error names a key [limits.defaults] sets too), and runtime_config.file the overrides files
// when limits.overrides_file is empty. LoadConfig calls it.
Status ApplyLokiMainConfig(Config* c);

// This machine's hostname, the default node.instance_id.
std::string Hostname();

}  // namespace limits::config
