#include "limits/decision/limits_checker.h"

#include <algorithm>
#include <map>
#include <optional>

#include "common/log.h"
#include "limits/decision/admission.h"

namespace limits {
namespace {
constexpr double kMiB = 1024.0 * 1024.0;

// The policy an accepted stream's record carries: the name as sent, or none when the node
// does not keep it (over-long, not UTF-8) — no consumer would keep it either.
std::string ProducedPolicy(std::string_view policy) {
  return CheckPolicyName(policy) == PolicyNameCheck::kKept ? std::string(policy) : std::string();
}

// The rate buckets one request draws from, as Loki's distributor does since #22435: a stream
// whose policy has a rate of its own (set, or the tenant's with inherit_limits) takes its
// bytes from that policy's bucket alone, every other stream from the tenant's. The request
// is taken whole or not at all.
class RateDraw {
 public:
  // `share`: of each rate, this node's static share (partitions served over all).
  RateDraw(std::string_view tenant, const TenantLimits& limits, double share) : tenant_(tenant), limits_(limits), share_(share) {
    buckets_.push_back({.key = std::string(tenant),
                        .whole_rate = limits.ingestion_rate_mb * kMiB,
                        .rate = limits.ingestion_rate_mb * kMiB * share,
                        .burst = limits.ingestion_burst_size_mb * kMiB});
  }

  // The bucket of a stream of `policy`; policies are looked up only when the tenant has any.
  size_t BucketOf(std::string_view policy) {
    if (limits_.policy_override_limits.empty() || policy.empty()) return 0;
    for (size_t i = 1; i < buckets_.size(); ++i) {
      if (buckets_[i].policy == policy) return i;
    }
    const std::optional<double> rate = limits_.PolicyRateMb(policy);
    if (!rate) return 0;
    // The NUL keeps a policy's key apart from every tenant's (tenant ids hold no NUL).
    std::string key = tenant_;
    key.push_back('\0');
    key.append(policy);
    buckets_.push_back({.key = std::move(key),
                        .policy = std::string(policy),
                        .whole_rate = *rate * kMiB,
                        .rate = *rate * kMiB * share_,
                        .burst = limits_.PolicyBurstMb(policy) * kMiB});
    return buckets_.size() - 1;
  }
  void Add(size_t bucket, double bytes) { buckets_[bucket].bytes += bytes; }
  // Each bucket's share as the zone says (demand-weighted), not the static one; its bytes count
  // towards this node's demand there.
  void ShareInZone(zone::ZoneAgent& agent) {
    for (Bucket& b : buckets_) {
      if (b.bytes == 0 || b.whole_rate <= 0) continue;
      b.rate = b.whole_rate * agent.RateShareOf({tenant_, b.policy}, b.whole_rate, b.bytes);
    }
  }
  // Takes the request's bytes from every bucket, or from none: the bucket that had too few when
  // it did not.
  std::optional<size_t> Take(RateLimiter& rates, int64_t now_ms) {
    for (size_t i = 0; i < buckets_.size(); ++i) {
      const Bucket& b = buckets_[i];
      // A rate of 0 is no limit (a share of 0 is not: the burst only).
      if (b.bytes == 0 || b.whole_rate <= 0 || rates.TryTake(b.key, b.bytes, b.rate, b.burst, now_ms)) continue;
      for (size_t j = 0; j < i; ++j) rates.Refund(buckets_[j].key, buckets_[j].bytes, buckets_[j].burst);
      return i;
    }
    return std::nullopt;
  }
  // One line per tenant and minute saying why a request was refused for its rate: the bucket,
  // its rate and burst, this node's share of the rate, what the request asked.
  void Explain(size_t bucket, std::string_view tenant, size_t streams) const {
    const Bucket& b = buckets_[bucket];
    auto line = log::Info("limits", "streams refused: the tenant's ingestion rate is used up on this node");
    line.Kv("tenant", tenant).Kv("policy", b.policy).Kv("rate_bytes", b.whole_rate).Kv("burst_bytes", b.burst);
    line.Kv("share", b.rate / b.whole_rate).Kv("streams", streams).Kv("bytes", b.bytes);
  }
  // Gives back `bytes` of a stream that was taken for and then not ingested.
  void Refund(size_t bucket, double bytes) { buckets_[bucket].refund += bytes; }
  void SettleRefunds(RateLimiter& rates) {
    for (Bucket& b : buckets_) {
      if (b.refund > 0) rates.Refund(b.key, b.refund, b.burst);
      b.refund = 0;
    }
  }

 private:
  struct Bucket {
    std::string key = {};     // the RateLimiter's: the tenant, or tenant NUL policy
    std::string policy = {};  // "" for the tenant's
    double whole_rate = 0;    // bytes/s for the tenant (0: unlimited)
    double rate = 0;          // what this node refills at: its share of it
    double burst = 0;
    double bytes = 0;
    double refund = 0;
  };
  std::string tenant_;
  const TenantLimits& limits_;
  double share_;
  std::vector<Bucket> buckets_;
};
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
  if (options_.zone != nullptr) {
    auto& refused = prometheus::BuildCounter()
                        .Name("limitsd_zone_streams_refused_total")
                        .Help("Streams the zone's limits refused (reason 2), by the bucket's state on this node: hot "
                              "(its headroom spent and none to be had), cold (its partition's floor full and no turn "
                              "to hot), unknown (no lease from the bucket's home).")
                        .Register(registry);
    for (const char* state : {"hot", "cold", "unknown"}) zone_refused_[state] = &refused.Add({{"state", state}});
    auto& calls = prometheus::BuildCounter()
                      .Name("limitsd_zone_request_calls_total")
                      .Help("Calls to a bucket's home a request waited for: turn_hot (a cold floor full), acquire (hot "
                            "headroom spent), refresh (no lease).")
                      .Register(registry);
    for (const char* call : {"turn_hot", "acquire", "refresh"}) zone_calls_[call] = &calls.Add({{"call", call}});
  }
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
                                    std::vector<Rejection>* rejected, Wait wait, Deadline deadline) {
  rejected->clear();
  RETURN_IF_ERROR(Validate(tenant));
  // More than a slice is checked slice by slice, each committed before the next: never from
  // a thread that must not wait (a later slice could not give up cleanly).
  if (wait == Wait::kNever && streams.size() > options_.slice_streams) {
    return Status::WouldBlock("a request larger than a slice runs on a handler thread");
  }
  if (wait == Wait::kNever && zoned()) return Status::WouldBlock("a zone's check may call a peer");
  // A failed store has left the group, so nothing is served: say why, not reason 1 for all.
  if (Status health = store_.health(); !health.ok()) return Status::Unavailable(health.message());
  const std::shared_ptr<const PartitionSet> serving = partitions_.Serving();
  std::vector<StreamUpdate> served;
  served.reserve(streams.size());
  for (const StreamUpdate& s : streams) {
    const auto p = static_cast<int32_t>(s.stream_hash % static_cast<uint64_t>(options_.num_partitions));
    if (!serving->Contains(p)) {
      // Pending, replaying or not owned: cannot be checked here, so never silently accepted.
      rejected->push_back({s.stream_hash, kReasonFailed});
      continue;
    }
    served.push_back(s);
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
  std::optional<RateDraw> draw;  // with enforce_rate only
  std::vector<uint32_t> bucket_of;  // each served stream's rate bucket
  if (options_.enforce_rate) {
    draw.emplace(tenant, limits, share);
    bucket_of.reserve(served.size());
    for (const StreamUpdate& s : served) {
      bucket_of.push_back(static_cast<uint32_t>(draw->BucketOf(s.policy)));
      draw->Add(bucket_of.back(), static_cast<double>(s.bytes));
    }
    if (options_.zone != nullptr && options_.zone->Shared()) draw->ShareInZone(*options_.zone);
  }
  if (const std::optional<size_t> short_of = draw ? draw->Take(rates_, clock_.NowMillis()) : std::nullopt) {
    if (rate_notices_.Allow(tenant, clock_.NowMillis())) draw->Explain(*short_of, tenant, served.size());
    count_unserved();
    for (const StreamUpdate& s : served) rejected->push_back({s.stream_hash, kReasonRateLimited});
    rejected_[kReasonRateLimited]->Increment(static_cast<double>(served.size()));
    return Status::OK();
  }

  double accepted_bytes = 0;
  size_t max_streams = 0, tenants_full = 0;
  const std::string tenant_name(tenant);
  UpdateCondResult result;
  const std::span<const StreamUpdate> all(served);
  for (size_t begin = 0; begin < served.size(); begin += options_.slice_streams) {
    const std::span<const StreamUpdate> slice =
        all.subspan(begin, std::min(options_.slice_streams, served.size() - begin));
    Status st = AdmitSlice(tenant, limits, *serving, slice, &result, wait, deadline);
    if (!st.ok()) {
      if (draw) {
        // The slices before this one have settled their streams; this one and the rest took
        // bytes and ingested nothing.
        for (size_t i = begin; i < served.size(); ++i) draw->Refund(bucket_of[i], static_cast<double>(served[i].bytes));
        draw->SettleRefunds(rates_);
      }
      if (st.IsWouldBlock()) return st;  // only ever the first slice: nothing changed
      count_unserved();
      if (st.IsInvalidArgument()) return st;
      return st.code() == StatusCode::kFailedPrecondition ? Status::Unavailable(st.message()) : st;
    }
    for (size_t i = 0; i < slice.size(); ++i) {
      const size_t at = begin + i;  // in served
      auto refund = [&] {
        if (draw) draw->Refund(bucket_of[at], static_cast<double>(slice[i].bytes));
      };
      switch (result.verdicts[i]) {
        case Verdict::kAccepted:
          accepted_bytes += static_cast<double>(slice[i].bytes);
          break;
        case Verdict::kMaxStreams:
          rejected->push_back({slice[i].stream_hash, kReasonMaxStreams});
          refund();
          ++max_streams;
          break;
        case Verdict::kTenantsFull:
          // Shown by Loki as a stream-limit rejection, which it is: the node cannot keep count.
          rejected->push_back({slice[i].stream_hash, kReasonMaxStreams});
          refund();
          ++tenants_full;
          break;
        case Verdict::kNotServed:
          rejected->push_back({slice[i].stream_hash, kReasonFailed});
          refund();
          break;
      }
    }
    for (uint32_t i : result.to_produce) {
      sink_.Produce(tenant_name, slice[i].stream_hash, slice[i].bytes, ProducedPolicy(slice[i].policy));
    }
  }
  if (draw) draw->SettleRefunds(rates_);
  count_unserved();
  rejected_[kReasonMaxStreams]->Increment(static_cast<double>(max_streams));
  tenants_full_->Increment(static_cast<double>(tenants_full));
  ingested_bytes_.Add(tenant, accepted_bytes);
  return Status::OK();
}

Status LimitsChecker::AdmitSlice(std::string_view tenant, const TenantLimits& limits, const PartitionSet& serving,
                                 std::span<const StreamUpdate> slice, UpdateCondResult* result, Wait wait,
                                 Deadline deadline) {
  if (options_.zone != nullptr && options_.zone->Shared()) {
    return AdmitInZone(tenant, limits, serving, slice, result, wait, deadline);
  }
  // The tenant's limits as this node's share of them, counted afresh for each slice.
  Admission admission(limits, serving.Count(), static_cast<uint32_t>(store_.num_partitions()));
  return store_.UpdateCond(tenant, slice, admission, serving, result, wait);
}

Status LimitsChecker::AdmitInZone(std::string_view tenant, const TenantLimits& limits, const PartitionSet& serving,
                                  std::span<const StreamUpdate> slice, UpdateCondResult* result, Wait wait,
                                  Deadline deadline) {
  zone::ZoneAgent& agent = *options_.zone;
  PolicyBuckets buckets;
  std::vector<std::pair<zone::BucketKey, uint64_t>> keys;
  ForEachStreamBucket(limits, [&](std::optional<std::string_view> policy, uint64_t limit) {
    if (policy) buckets.Add(std::string(*policy));
    keys.push_back({{std::string(tenant), std::string(policy.value_or(""))}, limit});
  });
  std::vector<zone::ZoneBucket> states = agent.States(keys);
  zone::ZoneQuota quota(buckets, states);
  RETURN_IF_ERROR(store_.UpdateCond(tenant, slice, quota, serving, result, wait));
  std::vector<zone::BucketKey> triggered;
  for (size_t b : quota.Triggered()) triggered.push_back(keys[b].first);
  agent.AskToTurnHot(triggered);

  // Streams a bucket refused (no headroom left, a full floor, no lease): one synchronous
  // exchange with each such bucket's home, then those streams once more. Only near a limit,
  // at a bucket's turn to hot, or on a node that has not heard from the home yet.
  std::vector<uint32_t> again;
  std::map<size_t, uint64_t> refused;  // bucket -> streams
  for (uint32_t i = 0; i < slice.size(); ++i) {
    if (result->verdicts[i] != Verdict::kMaxStreams) continue;
    again.push_back(i);
    ++refused[quota.BucketOf(slice[i].policy)];
  }
  if (again.empty()) return Status::OK();
  bool changed = false;
  // The streams whose calls did not end in time stay refused: the caller still gets an answer.
  const Deadline calls_until = agent.CallsDeadline(deadline);
  for (const auto& [b, streams] : refused) {
    const zone::BucketKey& key = keys[b].first;
    switch (states[b].mode) {
      case zone::ZoneBucket::Mode::kCold:
        zone_calls_["turn_hot"]->Increment();
        changed |= agent.TurnHot(key, streams, calls_until);
        break;
      case zone::ZoneBucket::Mode::kHot:
        if (agent.KnownFull(key)) break;  // the zone is at its limit: no call
        zone_calls_["acquire"]->Increment();
        changed |= agent.Acquire(key, streams, calls_until);
        break;
      case zone::ZoneBucket::Mode::kUnknown:
        zone_calls_["refresh"]->Increment();
        changed |= agent.Refresh(key, calls_until);
        break;
      case zone::ZoneBucket::Mode::kUnlimited: break;
    }
  }
  // Says why the streams still refused were (a line per tenant and minute, and a count).
  auto explain = [&] {
    std::map<size_t, uint64_t> still;
    for (uint32_t i : again) {
      if (result->verdicts[i] == Verdict::kMaxStreams) ++still[quota.BucketOf(slice[i].policy)];
    }
    for (const auto& [b, n] : still) {
      const zone::ZoneAgent::BucketView v = agent.Describe(keys[b].first, keys[b].second);
      if (auto it = zone_refused_.find(v.state); it != zone_refused_.end()) it->second->Increment(static_cast<double>(n));
      if (!zone_notices_.Allow(tenant, clock_.NowMillis())) continue;
      auto line = log::Info("zone", "streams refused: the zone's bucket is at its limit or out of reach");
      line.Kv("tenant", tenant).Kv("policy", keys[b].first.policy).Kv("limit", keys[b].second).Kv("streams", n);
      line.Kv("state", v.state).Kv("home", v.home);
      if (v.headroom) line.Kv("headroom", *v.headroom);
      if (const std::optional<zone::ZoneAgent::LedgerView> l = agent.LedgerOf(keys[b].first)) {
        line.Kv("zone_counted", l->counted).Kv("zone_held", l->held).Kv("zone_free", l->free);
      }
    }
  };
  if (!changed) {  // the home is out of reach or has nothing: they stay refused
    explain();
    return Status::OK();
  }
  std::vector<StreamUpdate> retry;
  retry.reserve(again.size());
  for (uint32_t i : again) retry.push_back(slice[i]);
  zone::ZoneQuota second(buckets, agent.States(keys));
  UpdateCondResult more;
  if (Status st = store_.UpdateCond(tenant, retry, second, serving, &more, wait); !st.ok()) {
    return Status::OK();  // the first pass stands: those streams stay refused
  }
  for (size_t j = 0; j < again.size(); ++j) result->verdicts[again[j]] = more.verdicts[j];
  for (uint32_t j : more.to_produce) result->to_produce.push_back(again[j]);
  for (const UpdateCondResult::Admitted& a : more.admitted) result->admitted.push_back({again[a.index], a.policy});
  std::sort(result->to_produce.begin(), result->to_produce.end());
  explain();
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
