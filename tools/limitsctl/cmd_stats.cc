// limitsctl stats: RocksDB's figures per column family.
#include "command.h"
#include "output.h"

namespace limits::ctl {
namespace {

int Run(Context& ctx, const Args&) {
  Result<OpenDb> db = OpenForRead(ctx);
  if (!db.ok()) return Fail(ctx, db.status());
  const std::vector<storage::CfStats> stats = (*db)->Stats();
  if (ctx.json) {
    Json json(ctx.out);
    json.BeginObject().Key("column_families").BeginArray();
    for (const auto& s : stats) {
      json.BeginObject().Field("name", s.name).Field("estimated_keys", s.estimated_keys).Field("sst_files", s.sst_files)
          .Field("sst_bytes", s.sst_bytes).Field("memtable_bytes", s.memtable_bytes)
          .Field("pending_compaction_bytes", s.pending_compaction_bytes).Key("files_per_level").BeginArray();
      for (int n : s.files_per_level) json.Int(n);
      json.EndArray().EndObject();
    }
    json.EndArray().EndObject();
    return kExitOk;
  }
  Table table({"COLUMN FAMILY", "KEYS (EST)", "SST FILES", "SST BYTES", "LEVELS", "MEMTABLE", "PENDING COMPACTION"});
  uint64_t keys = 0, files = 0, bytes = 0;
  for (const auto& s : stats) {
    std::string levels;
    for (size_t l = 0; l < s.files_per_level.size(); ++l) {
      if (s.files_per_level[l] > 0) levels += (levels.empty() ? "L" : " L") + std::to_string(l) + ":" + std::to_string(s.files_per_level[l]);
    }
    table.Row({s.name, std::to_string(s.estimated_keys), std::to_string(s.sst_files), FormatBytes(s.sst_bytes),
               levels.empty() ? "-" : levels, FormatBytes(s.memtable_bytes), FormatBytes(s.pending_compaction_bytes)});
    keys += s.estimated_keys;
    files += s.sst_files;
    bytes += s.sst_bytes;
  }
  table.Row({"total", std::to_string(keys), std::to_string(files), FormatBytes(bytes), "", "", ""});
  table.Print(ctx.out);
  return kExitOk;
}

}  // namespace

extern const Command kStatsCommand{
    .name = "stats",
    .synopsis = "stats",
    .summary = "RocksDB figures per column family: keys, SST files and bytes, levels, pending compaction",
    .help = "KEYS is RocksDB's estimate. A running node's unflushed writes show as MEMTABLE.\n",
    .flags = {},
    .run = Run,
};

}  // namespace limits::ctl
