// limitsctl evict-expired: deletes the rows outside the active window.
#include "command.h"
#include "output.h"
#include "storage/codec.h"
#include "storage/column_families.h"

namespace limits::ctl {
namespace {

constexpr size_t kBatchRows = 10000;

int Run(Context& ctx, const Args&) {
  Result<OpenDb> db = OpenForWrite(ctx, "evict-expired");
  if (!db.ok()) return Fail(ctx, db.status());
  std::map<int32_t, uint64_t> evicted;
  uint64_t total = 0;
  for (int32_t p : (*db)->ListPartitions()) {
    std::vector<std::string> keys;
    Status s = (*db)->ScanPartition(p, "", [&](std::string_view key, std::string_view value) {
      std::optional<uint32_t> last_seen = storage::PeekLastSeen(value);
      if (last_seen && static_cast<int64_t>(*last_seen) < ctx.active_cutoff_s()) keys.emplace_back(key);
      return true;  // undecodable rows are left for `verify` to report
    });
    if (!s.ok()) return Fail(ctx, s);
    for (size_t i = 0; i < keys.size(); i += kBatchRows) {
      storage::WriteBatch batch(**db);
      for (size_t j = i; j < std::min(keys.size(), i + kBatchRows); ++j) batch.DeleteRow(p, keys[j]);
      if (Status w = (*db)->Write(batch); !w.ok()) return Fail(ctx, w);
    }
    if (!keys.empty()) evicted[p] = keys.size();
    total += keys.size();
  }
  if (ctx.json) {
    Json json(ctx.out);
    json.BeginObject().Field("cutoff_s", ctx.active_cutoff_s()).Field("evicted", total).Key("by_partition").BeginObject();
    for (const auto& [p, n] : evicted) json.Field(storage::PartitionCfName(p), n);
    json.EndObject().EndObject();
  } else {
    for (const auto& [p, n] : evicted) {
      std::fprintf(ctx.out, "%s: %llu\n", storage::PartitionCfName(p).c_str(), static_cast<unsigned long long>(n));
    }
    std::fprintf(ctx.out, "evicted %llu streams last seen before %s\n", static_cast<unsigned long long>(total),
                 FormatUnixSeconds(ctx.active_cutoff_s()).c_str());
  }
  return kExitOk;
}

}  // namespace

extern const Command kEvictExpiredCommand{
    .name = "evict-expired",
    .synopsis = "evict-expired [--now T]",
    .summary = "delete stream rows last seen before --now minus the active window",
    .help = "The node evicts on its own schedule (windows.eviction_interval); this is the same cut for a\n"
            "stopped node's database. Undecodable rows are kept (see verify).\n",
    .flags = {},
    .writes = true,
    .run = Run,
};

}  // namespace limits::ctl
