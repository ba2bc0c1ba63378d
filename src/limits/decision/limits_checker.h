// LimitsChecker: the serving logic behind the IngestLimits API, free of gRPC types.
//   ExceedsLimits  streams of partitions not ready here: reason 1 (failed), counted per
//                  partition — never silently accepted; then the tenant's rate (token bucket,
//                  node share) for the request's bytes: reason 3 for all when exhausted; then
//                  the stream limits (UsageStore::UpdateCond against this node's pool share, or
//                  the zone's buckets with a ring, which near a limit may wait for one exchange
//                  with a bucket's home): reason 2. Accepted streams due
//                  for producing go to the StreamSink without waiting for Kafka. Nothing a
//                  client sends per stream fails the call (a policy name the node does not
//                  keep counts under no policy); a large request runs in slices.
//   UpdateRates    UsageStore::UpdateRates over the ready partitions.
// Thread-safe; no global lock (per-partition and per-tenant-stripe locks only).
#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/registry.h>

#include <cstdint>
#include <map>
#include <span>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/deadline.h"
#include "common/notice_limiter.h"
#include "limits/decision/limits_provider.h"
#include "limits/decision/rate_limiter.h"
#include "limits/decision/reason.h"
#include "limits/decision/stream_sink.h"
#include "limits/lifecycle/partition_manager.h"
#include "limits/usage/tenant_counters.h"
#include "limits/usage/usage_store.h"
#include "limits/zone/zone_agent.h"

namespace limits {

struct Rejection {
  uint64_t stream_hash = 0;
  Reason reason = kReasonUnknown;
};

class LimitsChecker {
 public:
  struct Options {
    int32_t num_partitions = 64;
    // A request is checked this many streams at a time (each slice's admission is exact; a
    // request of millions of streams does not hold its tenant's partitions for its whole
    // check). Larger requests never run on a thread that must not wait.
    size_t slice_streams = 10'000;
    // Reject a tenant's push beyond its ingestion rate and burst (reason 3). Off by default,
    // as in Loki, whose distributors rate-limit earlier in the push.
    bool enforce_rate = false;
    // With a ring: the zone's shared stream limits (zone/zone_agent.h) instead of this node's
    // static pool share. Must outlive the checker.
    zone::ZoneAgent* zone = nullptr;
  };

  // All references must outlive the checker.
  LimitsChecker(UsageStore& store, PartitionManager& partitions, LimitsProvider& limits, RateLimiter& rates,
                StreamSink& sink, const Clock& clock, prometheus::Registry& registry, Options options);

  // kInvalidArgument for a tenant Loki never sends (empty, over 255 bytes); kUnavailable /
  // kInternal when the store fails. With Wait::kNever, kWouldBlock when a lock is busy (or
  // the request is larger than a slice, or limits are the zone's): nothing was changed or
  // counted. A zone's calls to peers for it end in time for `deadline`, the caller's.
  Status ExceedsLimits(std::string_view tenant, std::span<const StreamUpdate> streams, std::vector<Rejection>* rejected,
                       Wait wait = Wait::kMay, Deadline deadline = kNoDeadline);
  Status UpdateRates(std::string_view tenant, std::span<const StreamUpdate> streams,
                     std::vector<UsageStore::StreamRate>* rates);
  // kInvalidArgument for a tenant Loki never sends (empty, over 255 bytes): checked by both
  // calls, and by the service before a request's first slice (a request may hold none).
  Status Validate(std::string_view tenant) const;
  // Whether limits are the zone's: a check near a limit may then wait for a call to a peer,
  // so it must not run on a thread that must not wait.
  bool zoned() const { return options_.zone != nullptr; }
  // Streams checked and committed at a time (Options::slice_streams).
  size_t slice_streams() const { return options_.slice_streams; }
  // Ready partitions -> assignment time (unix ns).
  std::map<int32_t, int64_t> AssignedPartitions() const { return partitions_.ReadyAssignedAtNanos(); }

  // loki_ingest_limits_tenant_ingested_bytes_total{tenant}, exposed by the node's collector.
  TenantCounters& ingested_bytes() { return ingested_bytes_; }

 private:
  // One slice's stream limits: against this node's pool share, or the zone's buckets.
  Status AdmitSlice(std::string_view tenant, const TenantLimits& limits, const PartitionSet& serving,
                    std::span<const StreamUpdate> slice, UpdateCondResult* result, Wait wait, Deadline deadline);
  Status AdmitInZone(std::string_view tenant, const TenantLimits& limits, const PartitionSet& serving,
                     std::span<const StreamUpdate> slice, UpdateCondResult* result, Wait wait, Deadline deadline);

  UsageStore& store_;
  PartitionManager& partitions_;
  LimitsProvider& limits_;
  RateLimiter& rates_;
  StreamSink& sink_;
  const Clock& clock_;
  const Options options_;
  std::vector<prometheus::Counter*> streams_discarded_;  // per partition
  prometheus::Family<prometheus::Counter>& rejected_family_;
  std::map<Reason, prometheus::Counter*> rejected_;
  prometheus::Counter* tenants_full_ = nullptr;  // sent as max streams
  TenantCounters ingested_bytes_;
  // With a zone: streams it refused, by the bucket's state here; the calls a request waited
  // for, by kind; a sampled line per tenant saying why.
  std::map<std::string, prometheus::Counter*> zone_refused_;
  std::map<std::string, prometheus::Counter*> zone_calls_;
  NoticeLimiter zone_notices_;
  NoticeLimiter rate_notices_;  // a line per tenant and minute saying why its rate refused a request
};

}  // namespace limits
