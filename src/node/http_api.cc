#include "node/http_api.h"

#include <set>

#include "common/json.h"
#include "limits/decision/admission.h"
#include "storage/column_families.h"

namespace limits {
namespace {

constexpr char kUsagePrefix[] = "/ingest-limits/usage/";

http::Response Json(int status, std::string body) { return {status, "application/json", std::move(body)}; }

http::Response Error(int status, const std::string& message) {
  JsonWriter w(false);
  w.BeginObject().Field("error", message).EndObject();
  return Json(status, w.Take());
}

bool IsGet(const http::Request& r) { return r.method == "GET" || r.method == "HEAD"; }

}  // namespace

http::Response UsageResponse(const http::Request& request, UsageStore& store, PartitionManager& partitions,
                             zone::ZoneAgent* agent, LimitsProvider* limits) {
  if (!IsGet(request)) return Error(405, "use GET");
  const std::string tenant = request.path.substr(sizeof(kUsagePrefix) - 1);
  if (tenant.empty() || tenant.find('/') != std::string::npos || tenant.size() > kMaxTenantLength) {
    return Error(400, "invalid tenant");
  }
  const TenantUsage usage = store.UsageOf(tenant, *partitions.Serving());
  JsonWriter w;
  w.BeginObject().Field("tenant", tenant).Field("streams_total", usage.active_streams);
  w.Key("streams_by_policy").BeginObject();
  for (const auto& [policy, n] : usage.active_by_policy) w.Field(policy, n);
  w.EndObject();
  w.Field("rate", static_cast<double>(usage.rate_window_bytes) / store.windows().rate_s);
  if (agent != nullptr && limits != nullptr) {
    const std::shared_ptr<const LimitsProvider::Snapshot> snapshot = limits->Current();
    w.Key("zone").BeginArray();
    ForEachStreamBucket(snapshot->For(tenant), [&](std::optional<std::string_view> policy, uint64_t limit) {
      const zone::BucketKey key{tenant, std::string(policy.value_or(""))};
      const zone::ZoneAgent::BucketView v = agent->Describe(key, limit);
      w.BeginObject().Field("policy", key.policy).Field("limit", limit).Field("home", v.home).Field("state", v.state);
      if (v.headroom) w.Field("headroom", *v.headroom);
      if (std::string_view(v.state) == "cold") w.Field("floors", v.floor_room);
      if (const std::optional<zone::ZoneAgent::LedgerView> l = agent->LedgerOf(key)) {
        w.Key("ledger").BeginObject().Field("counted", l->counted).Field("held", l->held).Field("free", l->free);
        w.Field("learning", l->learning).Field("rooms_open", l->rooms_open).EndObject();
      }
      w.EndObject();
    });
    w.EndArray();
    // The rate buckets (the tenant's, and each policy's with a rate of its own): the share of
    // the rate this node refills at (null when no request asked it here lately), and on the
    // home, the shares its members may refill at in all.
    const TenantLimits& tl = snapshot->For(tenant);
    std::vector<std::string> rate_policies{""};
    for (const auto& [policy, pl] : tl.policy_override_limits) {
      if (tl.PolicyRateMb(policy)) rate_policies.push_back(policy);
    }
    w.Key("zone_rates").BeginArray();
    for (const std::string& policy : rate_policies) {
      const zone::ZoneAgent::RateView v = agent->DescribeRate({tenant, policy});
      w.BeginObject().Field("policy", policy).Field("home", v.home).Key("share");
      v.share ? w.Double(*v.share) : w.Null();
      if (v.zone_held) w.Field("zone_held", *v.zone_held);
      w.EndObject();
    }
    w.EndArray();
  }
  w.EndObject();
  return Json(200, w.Take());
}

http::Response PartitionsResponse(const http::Request& request, UsageStore& store, PartitionManager& partitions,
                                  storage::Db& db) {
  if (!IsGet(request)) return Error(405, "use GET");
  std::map<int32_t, PartitionInfo> assigned;
  for (const PartitionInfo& info : partitions.Snapshot()) assigned[info.partition] = info;
  std::map<int32_t, storage::PartitionMeta> revoked;
  if (auto r = store.Revoked(); r.ok()) revoked = *r;
  std::map<std::string, uint64_t> disk;
  for (const storage::CfStats& s : db.Stats()) disk[s.name] = s.sst_bytes;
  std::set<int32_t> all;
  for (int32_t p : store.Partitions()) all.insert(p);
  for (const auto& [p, info] : assigned) all.insert(p);

  JsonWriter w;
  w.BeginObject().Key("partitions").BeginArray();
  for (int32_t p : all) {
    auto a = assigned.find(p);
    auto r = revoked.find(p);
    w.BeginObject().Field("partition", p);
    w.Field("state", a != assigned.end() ? std::string(PartitionStateName(a->second.state))
                                          : r != revoked.end() ? "revoked" : "held");
    w.Key("assigned_at_ms");
    a != assigned.end() ? w.Int(a->second.assigned_at_ms) : w.Null();
    w.Key("checkpoint");
    if (std::optional<storage::Checkpoint> cp = store.CheckpointOf(p)) {
      w.BeginObject().Field("next_offset", cp->next_offset).Field("newest_record_ms", cp->newest_record_ms).EndObject();
    } else {
      w.Null();
    }
    // The log's end when the partition was assigned: where its replay stops. The checkpoint
    // passes it as soon as records produced since are consumed, so the name says "at
    // assignment" (it read as the log's current end, "below the checkpoint").
    w.Key("end_offset_at_assignment");
    a != assigned.end() && a->second.end_offset >= 0 ? w.Int(a->second.end_offset) : w.Null();
    w.Field("lookup_failed", a != assigned.end() && a->second.lookup_failed);
    w.Key("replay");
    if (a != assigned.end() && a->second.replay.started_ms != 0) {
      const ReplayProgress& rp = a->second.replay;
      w.BeginObject()
          .Field("start_offset", rp.start_offset)
          .Field("target_offset", rp.target_offset)
          .Field("current_offset", rp.current_offset)
          .Field("remaining", rp.remaining())
          .Field("records_per_s", rp.records_per_s)
          .Key("eta_s");
      rp.eta_s >= 0 ? w.Double(rp.eta_s) : w.Null();
      w.Field("started_ms", rp.started_ms).Key("finished_ms");
      rp.finished_ms != 0 ? w.Int(rp.finished_ms) : w.Null();
      w.EndObject();
    } else {
      w.Null();
    }
    w.Key("revoked_at_ms");
    r != revoked.end() ? w.Int(r->second.revoked_at_ms) : w.Null();
    w.Key("evict_after_ms");
    r != revoked.end() ? w.Int(r->second.evict_after_ms) : w.Null();
    w.Field("streams", store.StreamsIn(p));
    w.Field("disk_bytes", disk.count(storage::PartitionCfName(p)) ? disk[storage::PartitionCfName(p)] : uint64_t{0});
    w.EndObject();
  }
  w.EndArray().EndObject();
  return Json(200, w.Take());
}

}  // namespace limits
