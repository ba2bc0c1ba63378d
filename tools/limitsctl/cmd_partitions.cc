// limitsctl partitions: what the node holds on disk, per partition.
#include <set>

#include "command.h"
#include "output.h"
#include "storage/column_families.h"

namespace limits::ctl {
namespace {

int Run(Context& ctx, const Args&) {
  Result<OpenDb> db = OpenForRead(ctx);
  if (!db.ok()) return Fail(ctx, db.status());
  auto checkpoints = (*db)->ReadCheckpoints();
  if (!checkpoints.ok()) return Fail(ctx, checkpoints.status());
  auto metas = (*db)->ReadPartitionMetas();
  if (!metas.ok()) return Fail(ctx, metas.status());
  std::map<std::string, storage::CfStats> stats;
  for (auto& s : (*db)->Stats()) stats[s.name] = s;

  std::set<int32_t> partitions;
  for (int32_t p : (*db)->ListPartitions()) partitions.insert(p);
  for (const auto& [p, cp] : *checkpoints) partitions.insert(p);
  for (const auto& [p, m] : *metas) partitions.insert(p);

  Table table({"PARTITION", "STATE", "CHECKPOINT", "NEWEST RECORD", "REVOKED AT", "EVICT AFTER", "STREAMS (EST)",
               "DISK"});
  Json json(ctx.out);
  if (ctx.json) json.BeginObject().Key("partitions").BeginArray();
  for (int32_t p : partitions) {
    const std::string name = storage::PartitionCfName(p);
    const bool has_data = (*db)->HasPartition(p);
    auto cp = checkpoints->find(p);
    auto meta = metas->find(p);
    const storage::CfStats s = has_data ? stats[name] : storage::CfStats{};
    const char* state = !has_data ? "no data" : meta != metas->end() ? "revoked" : "held";
    if (ctx.json) {
      json.BeginObject().Field("partition", p).Field("state", std::string(state));
      json.Key("checkpoint");
      if (cp == checkpoints->end()) json.Null();
      else json.BeginObject().Field("next_offset", cp->second.next_offset).Field("newest_record_ms", cp->second.newest_record_ms).EndObject();
      json.Key("revoked_at_ms");
      meta == metas->end() ? json.Null() : json.Int(meta->second.revoked_at_ms);
      json.Key("evict_after_ms");
      meta == metas->end() ? json.Null() : json.Int(meta->second.evict_after_ms);
      json.Field("estimated_streams", s.estimated_keys).Field("disk_bytes", s.sst_bytes).EndObject();
    } else {
      table.Row({name, state, cp == checkpoints->end() ? "-" : std::to_string(cp->second.next_offset),
                 cp == checkpoints->end() ? "-" : FormatUnixMillis(cp->second.newest_record_ms),
                 meta == metas->end() ? "-" : FormatUnixMillis(meta->second.revoked_at_ms),
                 meta == metas->end() ? "-" : FormatUnixMillis(meta->second.evict_after_ms),
                 std::to_string(s.estimated_keys), FormatBytes(s.sst_bytes)});
    }
  }
  if (ctx.json) json.EndArray().EndObject();
  else table.Print(ctx.out);
  return kExitOk;
}

}  // namespace

extern const Command kPartitionsCommand{
    .name = "partitions",
    .synopsis = "partitions",
    .summary = "each partition on disk: checkpoint, newest record, revocation, streams, disk bytes",
    .help = "STATE is \"held\" (assigned, or not yet revoked), \"revoked\" (its data is dropped at EVICT\n"
            "AFTER unless assigned again) or \"no data\" (a checkpoint without its column family).\n"
            "CHECKPOINT is the next offset to consume; STREAMS is RocksDB's estimate.\n",
    .flags = {},
    .run = Run,
};

}  // namespace limits::ctl
