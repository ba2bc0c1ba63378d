// limitsctl checkpoint: one partition's raw checkpoint, decoded.
#include "command.h"
#include "output.h"
#include "storage/column_families.h"

namespace limits::ctl {
namespace {

int Run(Context& ctx, const Args& args) {
  const std::optional<std::string> flag = args.Flag("partition");
  if (!flag) return UsageError(ctx, "checkpoint", "--partition is required");
  const std::optional<int32_t> p = ParsePartition(*flag);
  if (!p) return UsageError(ctx, "checkpoint", "--partition " + *flag + ": expected a partition number");
  Result<OpenDb> db = OpenForRead(ctx);
  if (!db.ok()) return Fail(ctx, db.status());
  auto raw = (*db)->ReadRawCheckpoint(*p);
  if (!raw.ok()) return Fail(ctx, raw.status());
  if (!raw->has_value()) {
    return Fail(ctx, Status::NotFound(storage::PartitionCfName(*p) + " has no checkpoint"));
  }
  const std::string key = storage::CheckpointKey(*p);
  Result<storage::Checkpoint> cp = storage::DecodeCheckpoint(**raw);
  if (ctx.json) {
    Json json(ctx.out);
    json.BeginObject().Field("partition", *p).Field("key", Hex(key)).Field("value", Hex(**raw));
    if (cp.ok()) json.Field("version", 1).Field("next_offset", cp->next_offset).Field("newest_record_ms", cp->newest_record_ms);
    else json.Field("error", cp.status().message());
    json.EndObject();
  } else {
    std::fprintf(ctx.out, "partition         %s\nkey (meta)        %s\nvalue             %s\n",
                 storage::PartitionCfName(*p).c_str(), Printable(key).c_str(), Hex(**raw).c_str());
    if (cp.ok()) {
      std::fprintf(ctx.out, "version           1\nnext offset       %lld\nnewest record     %s (%lld ms)\n",
                   static_cast<long long>(cp->next_offset), FormatUnixMillis(cp->newest_record_ms).c_str(),
                   static_cast<long long>(cp->newest_record_ms));
    } else {
      std::fprintf(ctx.out, "undecodable       %s\n", cp.status().message().c_str());
    }
  }
  return cp.ok() ? kExitOk : kExitFailed;
}

}  // namespace

extern const Command kCheckpointCommand{
    .name = "checkpoint",
    .synopsis = "checkpoint --partition P",
    .summary = "one partition's checkpoint: raw bytes and decoded",
    .help = "The checkpoint is the next Kafka offset the partition's rows cover, and the newest applied\n"
            "record's time. Exit 1 when absent or undecodable.\n",
    .flags = {"partition"},
    .run = Run,
};

}  // namespace limits::ctl
