// limitsctl compact: manual compaction through the node's TTL filter.
#include "command.h"
#include "output.h"
#include "storage/column_families.h"

namespace limits::ctl {
namespace {

uint64_t SstBytes(storage::Db& db, std::optional<int32_t> partition) {
  uint64_t total = 0;
  for (const auto& s : db.Stats()) {
    if (!partition || s.name == storage::PartitionCfName(*partition)) total += s.sst_bytes;
  }
  return total;
}

int Run(Context& ctx, const Args& args) {
  std::optional<int32_t> only;
  if (auto p = args.Flag("partition")) {
    only = ParsePartition(*p);
    if (!only) return UsageError(ctx, "compact", "--partition " + *p + ": expected a partition number");
  }
  Result<OpenDb> db = OpenForWrite(ctx, "compact");
  if (!db.ok()) return Fail(ctx, db.status());
  // Memtables first, so every row passes through the filter.
  if (Status s = (*db)->FlushMemtables(); !s.ok()) return Fail(ctx, s);
  const uint64_t before = SstBytes(**db, only);
  if (Status s = (*db)->Compact(only); !s.ok()) return Fail(ctx, s);
  const uint64_t after = SstBytes(**db, only);
  const uint64_t dropped = (*db)->TtlDropped();
  if (ctx.json) {
    Json json(ctx.out);
    json.BeginObject().Field("bytes_before", before).Field("bytes_after", after).Field("expired_rows_dropped", dropped).EndObject();
  } else {
    std::fprintf(ctx.out, "compacted %s: %s -> %s; %llu expired rows dropped\n",
                 only ? storage::PartitionCfName(*only).c_str() : "all partitions", FormatBytes(before).c_str(),
                 FormatBytes(after).c_str(), static_cast<unsigned long long>(dropped));
  }
  return kExitOk;
}

}  // namespace

extern const Command kCompactCommand{
    .name = "compact",
    .synopsis = "compact [--partition P]",
    .summary = "full compaction with the node's TTL filter; prints bytes before/after",
    .help = "Rows last seen before --now minus the active window are dropped, as the node's compactions do.\n",
    .flags = {"partition"},
    .writes = true,
    .run = Run,
};

}  // namespace limits::ctl
