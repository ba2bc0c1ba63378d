// Per-tenant limits as configured: the global figures a tenant may use across the whole
// cluster (Loki's names and defaults), and the per-policy overrides Loki reads from
// policy_override_limits. How a global figure maps onto the partitions a node serves is
// admission.h's business, not this file's.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace limits {

inline constexpr uint64_t kDefaultMaxGlobalStreamsPerUser = 5000;
inline constexpr double kDefaultIngestionRateMb = 4.0;
inline constexpr double kDefaultIngestionBurstSizeMb = 6.0;

// One ingestion policy's overrides (Loki's policy_override_limits.<policy>). An unset field
// is not overridden, unless inherit_limits: then it takes the tenant's value (Loki #23751).
struct PolicyLimits {
  std::optional<uint64_t> max_global_streams_per_user = std::nullopt;
  std::optional<double> ingestion_rate_mb = std::nullopt;
  std::optional<double> ingestion_burst_size_mb = std::nullopt;
  bool inherit_limits = false;

  friend bool operator==(const PolicyLimits&, const PolicyLimits&) = default;
};

struct TenantLimits {
  // Active streams the tenant may have across all partitions; 0 = unlimited (as in Loki).
  uint64_t max_global_streams_per_user = kDefaultMaxGlobalStreamsPerUser;
  // Sustained ingestion rate, in MiB/s (Loki's unit: 1 "MB" = 2^20 bytes).
  double ingestion_rate_mb = kDefaultIngestionRateMb;
  // Burst on top of the rate, in MiB.
  double ingestion_burst_size_mb = kDefaultIngestionBurstSizeMb;
  // Ingestion policy name -> its overrides.
  std::map<std::string, PolicyLimits> policy_override_limits;

  // Loki's PolicyMaxGlobalStreamsPerUser: a value when the policy's streams count in a
  // bucket of their own with that limit (0 = unlimited); nullopt: in the tenant's bucket.
  std::optional<uint64_t> PolicyMaxStreams(std::string_view policy) const {
    const PolicyLimits* p = Policy(policy);
    if (p == nullptr) return std::nullopt;
    if (p->max_global_streams_per_user) return p->max_global_streams_per_user;
    if (p->inherit_limits) return max_global_streams_per_user;
    return std::nullopt;
  }
  // Loki's PolicyIngestionRateBytes (in MiB/s): a value when the policy's bytes are taken
  // from a rate bucket of their own, not the tenant's.
  std::optional<double> PolicyRateMb(std::string_view policy) const {
    const PolicyLimits* p = Policy(policy);
    if (p == nullptr) return std::nullopt;
    if (p->ingestion_rate_mb) return p->ingestion_rate_mb;
    if (p->inherit_limits) return ingestion_rate_mb;
    return std::nullopt;
  }
  // The burst of a policy's own rate bucket: its own, else the tenant's (as Loki's
  // distributor falls back when PolicyIngestionBurstSizeBytes reports none).
  double PolicyBurstMb(std::string_view policy) const {
    const PolicyLimits* p = Policy(policy);
    return p != nullptr && p->ingestion_burst_size_mb ? *p->ingestion_burst_size_mb : ingestion_burst_size_mb;
  }

  friend bool operator==(const TenantLimits&, const TenantLimits&) = default;

 private:
  const PolicyLimits* Policy(std::string_view policy) const {
    if (policy.empty()) return nullptr;
    auto it = policy_override_limits.find(std::string(policy));
    return it == policy_override_limits.end() ? nullptr : &it->second;
  }
};

// A tenant's overrides: any subset of TenantLimits. policy_override_limits merges into the
// defaults' policy by policy, a named policy's entry replacing the default's whole, as Loki
// decodes a tenant's YAML on top of limits_config.
struct TenantOverrides {
  std::optional<uint64_t> max_global_streams_per_user;
  std::optional<double> ingestion_rate_mb;
  std::optional<double> ingestion_burst_size_mb;
  std::optional<std::map<std::string, PolicyLimits>> policy_override_limits;

  friend bool operator==(const TenantOverrides&, const TenantOverrides&) = default;
};

inline TenantLimits ApplyOverrides(TenantLimits limits, const TenantOverrides& o) {
  if (o.max_global_streams_per_user) limits.max_global_streams_per_user = *o.max_global_streams_per_user;
  if (o.ingestion_rate_mb) limits.ingestion_rate_mb = *o.ingestion_rate_mb;
  if (o.ingestion_burst_size_mb) limits.ingestion_burst_size_mb = *o.ingestion_burst_size_mb;
  if (o.policy_override_limits) {
    for (const auto& [name, policy] : *o.policy_override_limits) limits.policy_override_limits[name] = policy;
  }
  return limits;
}

}  // namespace limits
