// limitsctl drop-partition: drops one partition's data the way the node evicts it.
#include "command.h"
#include "output.h"
#include "storage/column_families.h"

namespace limits::ctl {
namespace {

int Run(Context& ctx, const Args& args) {
  const std::optional<int32_t> p = ParsePartition(args.positional[0]);
  if (!p) return UsageError(ctx, "drop-partition", args.positional[0] + ": expected a partition number");
  Result<OpenDb> db = OpenForWrite(ctx, "drop-partition");
  if (!db.ok()) return Fail(ctx, db.status());
  auto cp = (*db)->ReadCheckpoint(*p);
  if (!(*db)->HasPartition(*p) && cp.ok() && !cp->has_value()) {
    return Fail(ctx, Status::NotFound(storage::PartitionCfName(*p) + " is not on disk"));
  }
  if (Status s = (*db)->DropPartition(*p); !s.ok()) return Fail(ctx, s);
  if (ctx.json) {
    Json json(ctx.out);
    json.BeginObject().Field("dropped", *p).EndObject();
  } else {
    std::fprintf(ctx.out, "dropped %s (checkpoint first, then its column family)\n", storage::PartitionCfName(*p).c_str());
  }
  return kExitOk;
}

}  // namespace

extern const Command kDropPartitionCommand{
    .name = "drop-partition",
    .synopsis = "drop-partition P",
    .summary = "drop a partition's checkpoint and data (the node replays it when next assigned)",
    .help = "Deletes the checkpoint and revocation record (synced), then drops the column family: the\n"
            "same order as the node's eviction, so a crash in between never leaves a checkpoint without\n"
            "its data.\n",
    .flags = {},
    .positional = 1,
    .writes = true,
    .run = Run,
};

}  // namespace limits::ctl
