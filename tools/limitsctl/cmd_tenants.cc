// limitsctl tenants: per tenant, active and total streams, by ingestion policy.
#include "command.h"
#include "output.h"
#include "storage/codec.h"

namespace limits::ctl {
namespace {

struct Counts {
  uint64_t active = 0, total = 0;
};

int Run(Context& ctx, const Args& args) {
  std::optional<int32_t> only;
  if (auto p = args.Flag("partition")) {
    only = ParsePartition(*p);
    if (!only) return UsageError(ctx, "tenants", "--partition " + *p + ": expected a partition number");
  }
  Result<OpenDb> db = OpenForRead(ctx);
  if (!db.ok()) return Fail(ctx, db.status());
  std::map<std::string, std::pair<Counts, std::map<std::string, Counts>>> tenants;
  uint64_t undecodable = 0;
  storage::StreamRow row;
  for (int32_t p : (*db)->ListPartitions()) {
    if (only && *only != p) continue;
    Status s = (*db)->ScanPartition(p, "", [&](std::string_view key, std::string_view value) {
      std::string_view tenant;
      uint64_t hash;
      if (!storage::DecodeStreamKey(key, &tenant, &hash) || !storage::DecodeStreamRow(value, &row).ok()) {
        ++undecodable;
        return true;
      }
      auto& [all, by_policy] = tenants[std::string(tenant)];
      Counts& policy = by_policy[row.policy];
      const bool active = static_cast<int64_t>(row.last_seen_s) >= ctx.active_cutoff_s();
      ++all.total;
      ++policy.total;
      all.active += active;
      policy.active += active;
      return true;
    });
    if (!s.ok()) return Fail(ctx, s);
  }
  if (ctx.json) {
    Json json(ctx.out);
    json.BeginObject().Key("tenants").BeginArray();
    for (const auto& [tenant, c] : tenants) {
      json.BeginObject().Field("tenant", tenant).Field("active_streams", c.first.active).Field("total_streams", c.first.total);
      json.Key("policies").BeginObject();
      for (const auto& [policy, pc] : c.second) {
        json.Key(policy).BeginObject().Field("active_streams", pc.active).Field("total_streams", pc.total).EndObject();
      }
      json.EndObject().EndObject();
    }
    json.EndArray().Field("undecodable_rows", undecodable).EndObject();
    return kExitOk;
  }
  Table table({"TENANT", "ACTIVE", "TOTAL", "BY POLICY (active/total)"});
  for (const auto& [tenant, c] : tenants) {
    std::string policies;
    for (const auto& [policy, pc] : c.second) {
      if (!policies.empty()) policies += " ";
      policies += (policy.empty() ? "(none)" : policy) + "=" + std::to_string(pc.active) + "/" + std::to_string(pc.total);
    }
    table.Row({tenant, std::to_string(c.first.active), std::to_string(c.first.total), policies});
  }
  table.Print(ctx.out);
  if (undecodable > 0) std::fprintf(ctx.out, "%llu undecodable rows skipped; run `limitsctl verify`\n",
                                    static_cast<unsigned long long>(undecodable));
  return kExitOk;
}

}  // namespace

extern const Command kTenantsCommand{
    .name = "tenants",
    .synopsis = "tenants [--partition P]",
    .summary = "per tenant: active and total streams, by ingestion policy",
    .help = "A stream is active when last seen within the active window before --now. TOTAL also counts\n"
            "streams outside the window that eviction has not removed yet.\n",
    .flags = {"partition"},
    .run = Run,
};

}  // namespace limits::ctl
