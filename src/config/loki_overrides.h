// Loki's runtime-config YAML as an overrides file, so one ConfigMap serves Loki and limitsd:
//   overrides:
//     <tenant>:
//       max_global_streams_per_user: N
//       ingestion_rate_mb: x
//       ingestion_burst_size_mb: y
//       policy_override_limits:
//         <policy>: {max_global_streams_per_user: N}
// Every other key (Loki's many other limits, `configs`, `multi_kv_config`, ...) is ignored.
// The only yaml-cpp user. Pure functions; thread-safe.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "common/result.h"
#include "limits/tenant_limits.h"

namespace limits::config {

// The tenants' overrides; an InvalidArgument names each problem's key and line
// ("overrides.t.ingestion_rate_mb: expected a number, got a string \"x\" (runtime.yaml:4)").
// A policy without max_global_streams_per_user keeps the tenant's limit (as in Loki).
Result<std::map<std::string, TenantOverrides>> ParseLokiOverrides(std::string_view yaml, const std::string& source_name);

}  // namespace limits::config
