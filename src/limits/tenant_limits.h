// Per-tenant limits as configured: the global figures a tenant may use across the whole
// cluster (Loki's names and defaults). How a global figure maps onto the partitions a node
// serves is admission.h's business, not this file's.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace limits {

inline constexpr uint64_t kDefaultMaxGlobalStreamsPerUser = 5000;
inline constexpr double kDefaultIngestionRateMb = 4.0;
inline constexpr double kDefaultIngestionBurstSizeMb = 6.0;

struct TenantLimits {
  // Active streams the tenant may have across all partitions; 0 = unlimited (as in Loki).
  uint64_t max_global_streams_per_user = kDefaultMaxGlobalStreamsPerUser;
  // Sustained ingestion rate, in MiB/s (Loki's unit: 1 "MB" = 2^20 bytes).
  double ingestion_rate_mb = kDefaultIngestionRateMb;
  // Burst on top of the rate, in MiB.
  double ingestion_burst_size_mb = kDefaultIngestionBurstSizeMb;
  // Ingestion policy name -> max global streams for streams of that policy. A stream whose
  // policy is listed counts only against that figure; all others count against
  // max_global_streams_per_user. 0 = unlimited.
  std::map<std::string, uint64_t> policy_max_streams;

  friend bool operator==(const TenantLimits&, const TenantLimits&) = default;
};

// A tenant's overrides: any subset of TenantLimits. A set policy_max_streams replaces the
// default table rather than merging with it, as Loki's per-tenant overrides do.
struct TenantOverrides {
  std::optional<uint64_t> max_global_streams_per_user;
  std::optional<double> ingestion_rate_mb;
  std::optional<double> ingestion_burst_size_mb;
  std::optional<std::map<std::string, uint64_t>> policy_max_streams;

  friend bool operator==(const TenantOverrides&, const TenantOverrides&) = default;
};

inline TenantLimits ApplyOverrides(TenantLimits limits, const TenantOverrides& o) {
  if (o.max_global_streams_per_user) limits.max_global_streams_per_user = *o.max_global_streams_per_user;
  if (o.ingestion_rate_mb) limits.ingestion_rate_mb = *o.ingestion_rate_mb;
  if (o.ingestion_burst_size_mb) limits.ingestion_burst_size_mb = *o.ingestion_burst_size_mb;
  if (o.policy_max_streams) limits.policy_max_streams = *o.policy_max_streams;
  return limits;
}

}  // namespace limits
