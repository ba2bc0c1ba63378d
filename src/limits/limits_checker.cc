#include "limits/limits_checker.h"

#include "common/log.h"

namespace limits {
namespace {
constexpr double kMiB = 1024.0 * 1024.0;

// The policy an accepted stream's record carries: the name as sent, or none when the node
// does not keep it (over-long, not UTF-8) — no consumer would keep it either.
std::string ProducedPolicy(std::string_view policy) {
  return CheckPolicyName(policy) == PolicyNameCheck::kKept ? std::string(policy) : std::string();
}
}  // namespace

LimitsChecker::LimitsChecker(UsageStore& store, PartitionManager& partitions, LimitsProvider& limits,
                             RateLimiter& rates, StreamSink& sink, const Clock& clock, prometheus::Registry& registry,
                             Options options)
    : store_(store),
      partitions_(partitions),
      limits_(limits),
      rates_(rates),
      sink_(sink),
      clock_(clock),
      options_(options),
      rejected_family_(prometheus::BuildCounter()
                           .Name("limitsd_streams_rejected_total")
                           .Help("Streams ExceedsLimits returned, by reason (failed, max_streams, rate_limited, "
                                 "tenants_full: a new tenant the node has no room for, sent as max_streams).")
                           .Register(registry)) {
  auto& discarded = prometheus::BuildCounter()
                        .Name("loki_ingest_limits_streams_discarded_total")
                        .Help("Total number of times streams were discarded.")
                        .Register(registry);
  for (int32_t p = 0; p < options_.num_partitions; ++p) {
    streams_discarded_.push_back(&discarded.Add({{"partition", std::to_string(p)}}));
  }
  rejected_[kReasonFailed] = &rejected_family_.Add({{"reason", "failed"}});
  rejected_[kReasonMaxStreams] = &rejected_family_.Add({{"reason", "max_streams"}});
  rejected_[kReasonRateLimited] = &rejected_family_.Add({{"reason", "rate_limited"}});
  tenants_full_ = &rejected_family_.Add({{"reason", "tenants_full"}});
}

Status LimitsChecker::Validate(std::string_view tenant) const {
  // Loki's tenant ids are 1 to 150 bytes of [a-zA-Z0-9!-_.*'()] (dskit's ValidTenantID,
  // checked where a push enters Loki): these errors are for clients that are not Loki.
  if (tenant.empty()) return Status::InvalidArgument("tenant is required");
  if (tenant.size() > kMaxTenantLength) {
    return Status::InvalidArgument("tenant is longer than " + std::to_string(kMaxTenantLength) + " bytes");
  }
  return Status::OK();
}

Status LimitsChecker::ExceedsLimits(std::string_view tenant, std::span<const StreamUpdate> streams,
                                    std::vector<Rejection>* rejected, Wait wait) {
  rejected->clear();
  RETURN_IF_ERROR(Validate(tenant));
  // More than a slice is checked slice by slice, each committed before the next: never from
  // a thread that must not wait (a later slice could not give up cleanly).
  if (wait == Wait::kNever && streams.size() > options_.slice_streams) {
    return Status::WouldBlock("a request larger than a slice runs on a handler thread");
  }
  // A failed store has left the group, so nothing is served: say why, not reason 1 for all.
  if (Status health = store_.health(); !health.ok()) return Status::Unavailable(health.message());
  const std::shared_ptr<const PartitionSet> serving = partitions_.Serving();
  std::vector<StreamUpdate> served;
  served.reserve(streams.size());
  double bytes = 0;
  for (const StreamUpdate& s : streams) {
    const auto p = static_cast<int32_t>(s.stream_hash % static_cast<uint64_t>(options_.num_partitions));
    if (!serving->Contains(p)) {
      // Pending, replaying or not owned: cannot be checked here, so never silently accepted.
      rejected->push_back({s.stream_hash, kReasonFailed});
      continue;
    }
    served.push_back(s);
    bytes += static_cast<double>(s.bytes);
  }
  // Counted once the answer stands: a call that would wait is run again from the start.
  const size_t unserved = rejected->size();
  auto count_unserved = [&] {
    for (size_t i = 0; i < unserved; ++i) {
      const uint64_t p = (*rejected)[i].stream_hash % static_cast<uint64_t>(options_.num_partitions);
      streams_discarded_[p]->Increment();
    }
    rejected_[kReasonFailed]->Increment(static_cast<double>(unserved));
  };
  if (served.empty()) {
    count_unserved();
    return Status::OK();
  }

  const std::shared_ptr<const LimitsProvider::Snapshot> snapshot = limits_.Current();
  const TenantLimits& limits = snapshot->For(tenant);
  const double share = static_cast<double>(serving->Count()) / options_.num_partitions;
  const double rate = limits.ingestion_rate_mb * kMiB * share;
  const double burst = limits.ingestion_burst_size_mb * kMiB;
  if (options_.enforce_rate && !rates_.TryTake(tenant, bytes, rate, burst, clock_.NowMillis())) {
    count_unserved();
    for (const StreamUpdate& s : served) rejected->push_back({s.stream_hash, kReasonRateLimited});
    rejected_[kReasonRateLimited]->Increment(static_cast<double>(served.size()));
    return Status::OK();
  }

  double accepted_bytes = 0, refund = 0;
  size_t max_streams = 0, tenants_full = 0;
  const std::string tenant_name(tenant);
  UpdateCondResult result;
  const std::span<const StreamUpdate> all(served);
  for (size_t begin = 0; begin < served.size(); begin += options_.slice_streams) {
    const std::span<const StreamUpdate> slice =
        all.subspan(begin, std::min(options_.slice_streams, served.size() - begin));
    Status st = store_.UpdateCond(tenant, slice, limits, *serving, &result, wait);
    if (!st.ok()) {
      if (options_.enforce_rate) rates_.Refund(tenant, bytes - accepted_bytes, burst);
      if (st.IsWouldBlock()) return st;  // only ever the first slice: nothing changed
      count_unserved();
      if (st.IsInvalidArgument()) return st;
      return st.code() == StatusCode::kFailedPrecondition ? Status::Unavailable(st.message()) : st;
    }
    for (size_t i = 0; i < slice.size(); ++i) {
      switch (result.verdicts[i]) {
        case Verdict::kAccepted:
          accepted_bytes += static_cast<double>(slice[i].bytes);
          break;
        case Verdict::kMaxStreams:
          rejected->push_back({slice[i].stream_hash, kReasonMaxStreams});
          refund += static_cast<double>(slice[i].bytes);
          ++max_streams;
          break;
        case Verdict::kTenantsFull:
          // Shown by Loki as a stream-limit rejection, which it is: the node cannot keep count.
          rejected->push_back({slice[i].stream_hash, kReasonMaxStreams});
          refund += static_cast<double>(slice[i].bytes);
          ++tenants_full;
          break;
        case Verdict::kNotServed:
          rejected->push_back({slice[i].stream_hash, kReasonFailed});
          refund += static_cast<double>(slice[i].bytes);
          break;
      }
    }
    for (uint32_t i : result.to_produce) {
      sink_.Produce(tenant_name, slice[i].stream_hash, slice[i].bytes, ProducedPolicy(slice[i].policy));
    }
  }
  if (refund > 0 && options_.enforce_rate) rates_.Refund(tenant, refund, burst);
  count_unserved();
  rejected_[kReasonMaxStreams]->Increment(static_cast<double>(max_streams));
  tenants_full_->Increment(static_cast<double>(tenants_full));
  ingested_bytes_.Add(tenant, accepted_bytes);
  return Status::OK();
}

Status LimitsChecker::UpdateRates(std::string_view tenant, std::span<const StreamUpdate> streams,
                                  std::vector<UsageStore::StreamRate>* rates) {
  rates->clear();
  RETURN_IF_ERROR(Validate(tenant));
  if (Status health = store_.health(); !health.ok()) return Status::Unavailable(health.message());
  Status st = store_.UpdateRates(tenant, streams, *partitions_.Serving(), rates);
  if (!st.ok() && st.code() == StatusCode::kFailedPrecondition) return Status::Unavailable(st.message());
  return st;
}

}  // namespace limits
