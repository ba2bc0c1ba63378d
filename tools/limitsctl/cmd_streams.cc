// limitsctl streams: one tenant's stream rows, decoded.
#include <charconv>
#include <cinttypes>

#include "command.h"
#include "limits/usage/rate_ring.h"
#include "output.h"
#include "storage/codec.h"
#include "storage/column_families.h"

namespace limits::ctl {
namespace {

struct Rate {
  uint64_t window_bytes = 0;
  double bytes_per_s = 0;  // over the populated buckets of the rate window, as the node answers
};

Rate RateOf(const storage::StreamRow& row, const Context& ctx) {
  Rate r;
  if (row.bucket_s == 0 || row.rate_bytes.empty()) return r;
  const uint32_t n = std::max<uint32_t>(1, ctx.rate_window_s / row.bucket_s);
  // As the node holds it: a ring whose newest bucket is the stream's last-seen one.
  std::vector<uint64_t> ring(n);
  BucketRing<uint64_t>::Load(ring.data(), n, row.bucket_s, row.last_seen_s, row.newest_bucket_s, row.rate_bytes.data(),
                             row.rate_bytes.size());
  const RateSum sum = BucketRing<uint64_t>::Sum(ring.data(), n, row.bucket_s, ctx.rate_window_s, row.last_seen_s, ctx.now_s());
  r.window_bytes = sum.bytes;
  if (sum.populated > 0) r.bytes_per_s = static_cast<double>(sum.bytes) / (sum.populated * row.bucket_s);
  return r;
}

int Run(Context& ctx, const Args& args) {
  const std::optional<std::string> tenant = args.Flag("tenant");
  if (!tenant || tenant->empty()) return UsageError(ctx, "streams", "--tenant is required");
  std::optional<int32_t> only;
  if (auto p = args.Flag("partition")) {
    only = ParsePartition(*p);
    if (!only) return UsageError(ctx, "streams", "--partition " + *p + ": expected a partition number");
  }
  uint64_t limit = 100;
  if (auto l = args.Flag("limit")) {
    auto [end, ec] = std::from_chars(l->data(), l->data() + l->size(), limit);
    if (ec != std::errc() || end != l->data() + l->size()) return UsageError(ctx, "streams", "--limit " + *l + ": expected a number");
  }
  Result<OpenDb> db = OpenForRead(ctx);
  if (!db.ok()) return Fail(ctx, db.status());

  Table table({"PARTITION", "STREAM HASH", "POLICY", "LAST SEEN", "LAST PRODUCED", "ACTIVE", "RATE B/S", "BUCKETS (newest first)"});
  Json json(ctx.out);
  if (ctx.json) json.BeginObject().Field("tenant", *tenant).Key("streams").BeginArray();
  uint64_t shown = 0, matched = 0;
  const std::string prefix = storage::TenantPrefix(*tenant);
  storage::StreamRow row;
  for (int32_t p : (*db)->ListPartitions()) {
    if (only && *only != p) continue;
    Status s = (*db)->ScanPartition(p, prefix, [&](std::string_view key, std::string_view value) {
      std::string_view t;
      uint64_t hash = 0;
      if (!storage::DecodeStreamKey(key, &t, &hash)) return true;
      ++matched;
      if (limit != 0 && shown >= limit) return true;
      ++shown;
      const Status decoded = storage::DecodeStreamRow(value, &row);
      char hash_text[24];
      std::snprintf(hash_text, sizeof hash_text, "0x%016" PRIx64, hash);
      if (!decoded.ok()) {
        if (ctx.json) {
          json.BeginObject().Field("partition", p).Field("stream_hash", hash).Field("error", decoded.message()).EndObject();
        } else {
          table.Row({storage::PartitionCfName(p), hash_text, "?", "undecodable: " + decoded.message(), "", "", "", ""});
        }
        return true;
      }
      const bool active = static_cast<int64_t>(row.last_seen_s) >= ctx.active_cutoff_s();
      const Rate rate = RateOf(row, ctx);
      if (ctx.json) {
        json.BeginObject().Field("partition", p).Field("stream_hash", hash).Field("policy", row.policy)
            .Field("last_seen_s", row.last_seen_s).Field("last_produced_s", row.last_produced_s).Field("active", active)
            .Field("rate_bytes_per_s", rate.bytes_per_s).Field("rate_window_bytes", rate.window_bytes)
            .Field("bucket_s", row.bucket_s).Field("newest_bucket_s", row.newest_bucket_s);
        json.Key("buckets").BeginArray();
        for (uint64_t b : row.rate_bytes) json.Uint(b);
        json.EndArray().EndObject();
      } else {
        std::string buckets;
        for (uint64_t b : row.rate_bytes) {
          if (!buckets.empty()) buckets.push_back(',');
          buckets.append(std::to_string(b));
        }
        char rate_text[32];
        std::snprintf(rate_text, sizeof rate_text, "%.1f", rate.bytes_per_s);
        table.Row({storage::PartitionCfName(p), hash_text, row.policy.empty() ? "-" : row.policy,
                   FormatUnixSeconds(row.last_seen_s), FormatUnixSeconds(row.last_produced_s), active ? "yes" : "no",
                   rate_text, "[" + buckets + "]"});
      }
      return true;
    });
    if (!s.ok()) return Fail(ctx, s);
  }
  if (ctx.json) {
    json.EndArray().Field("matched", matched).EndObject();
  } else {
    table.Print(ctx.out);
    if (shown < matched) std::fprintf(ctx.out, "(%llu of %llu rows shown; --limit 0 shows all)\n",
                                      static_cast<unsigned long long>(shown), static_cast<unsigned long long>(matched));
  }
  return kExitOk;
}

}  // namespace

extern const Command kStreamsCommand{
    .name = "streams",
    .synopsis = "streams --tenant T [--partition P] [--limit N]",
    .summary = "a tenant's stream rows, decoded (hash, policy, last seen, last produced, rate)",
    .help = "Shows at most --limit rows (default 100; 0 = all). RATE is bytes/s over the populated buckets\n"
            "of the rate window (windows.rate of --config, default 5m) before --now, as UpdateRates answers.\n",
    .flags = {"tenant", "partition", "limit"},
    .run = Run,
};

}  // namespace limits::ctl
