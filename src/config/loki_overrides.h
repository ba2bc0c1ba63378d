// Loki's runtime-config YAML as an overrides file, so one ConfigMap serves Loki and limitsd:
//   overrides:
//     <tenant>:
//       max_global_streams_per_user: N
//       ingestion_rate_mb: x
//       ingestion_burst_size_mb: y
//       policy_override_limits:
//         <policy>: {max_global_streams_per_user: N, ingestion_rate_mb: x,
//                    ingestion_burst_size_mb: y, inherit_limits: true}
// Every other key (Loki's many other limits, `configs`, `multi_kv_config`, ...) is ignored.
// The only yaml-cpp user. Pure functions; thread-safe.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "limits/decision/tenant_limits.h"

namespace limits::config {

// The tenants' overrides; an InvalidArgument names each problem's key and line
// ("overrides.t.ingestion_rate_mb: expected a number, got a string \"x\" (runtime.yaml:4)").
// A policy without max_global_streams_per_user (nor inherit_limits) counts its streams in the
// tenant's bucket, as in Loki.
Result<std::map<std::string, TenantOverrides>> ParseLokiOverrides(std::string_view yaml, const std::string& source_name);

// Several runtime-config files as Loki's runtime_config.file lists them, merged as dskit's
// runtimeconfig manager merges them: from left to right, maps merged key by key at every
// depth (a tenant in two files gets the fields of both, the later file's where both set one),
// anything else (a number, a list) replaced whole; a map in one file where another has a
// scalar fails the load. Each file is checked on its own first, so errors name its lines.
struct NamedText {
  std::string name;  // the path, for messages
  std::string text;
};
Result<std::map<std::string, TenantOverrides>> ParseMergedLokiOverrides(const std::vector<NamedText>& files);

// What limitsd takes from Loki's main configuration file: limits_config (the limits of every
// tenant without an override, as the keys it sets) and runtime_config's file list (Loki's
// -runtime-config.file, comma-separated) with its reload period.
struct LokiMainConfig {
  TenantOverrides limits_config;
  std::vector<std::string> runtime_config_files;
};
Result<LokiMainConfig> ParseLokiMainConfig(std::string_view yaml, const std::string& source_name);

}  // namespace limits::config
