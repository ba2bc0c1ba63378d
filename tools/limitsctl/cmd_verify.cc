// limitsctl verify: checks that the database is one the node can trust, precisely.
#include <set>
#include <tuple>

#include "command.h"
#include "limits/usage/usage_store.h"
#include "output.h"
#include "storage/codec.h"
#include "storage/column_families.h"

namespace limits::ctl {
namespace {

constexpr size_t kMaxRowsListed = 20;  // per partition; the rest are counted

int Run(Context& ctx, const Args&) {
  std::vector<std::string> problems;
  Result<OpenDb> db = OpenForRead(ctx);
  if (!db.ok()) {  // an unknown format version or a foreign column family ends here
    problems.push_back("cannot open: " + db.status().message());
  }
  uint64_t rows = 0, active_rows = 0;
  std::vector<int32_t> partitions;
  if (db.ok()) {
    partitions = (*db)->ListPartitions();
    auto checkpoints = (*db)->ReadCheckpoints();
    auto metas = (*db)->ReadPartitionMetas();
    if (!checkpoints.ok()) problems.push_back(checkpoints.status().message());
    if (!metas.ok()) problems.push_back(metas.status().message());
    const std::set<int32_t> on_disk(partitions.begin(), partitions.end());
    if (checkpoints.ok()) {
      for (int32_t p : partitions) {
        if (checkpoints->count(p)) continue;
        // An empty column family without a checkpoint is a partition just created for a replay
        // whose starting checkpoint is about to be written: nothing is uncovered.
        bool has_rows = false;
        (void)(*db)->ScanPartition(p, "", [&](std::string_view, std::string_view) { return has_rows = true, false; });
        if (has_rows) {
          problems.push_back(storage::PartitionCfName(p) +
                             ": column family without a checkpoint (its rows are covered by no offset)");
        }
      }
      for (const auto& [p, cp] : *checkpoints) {
        if (!on_disk.count(p)) {
          problems.push_back(storage::PartitionCfName(p) + ": checkpoint (next offset " +
                             std::to_string(cp.next_offset) + ") without its column family");
        }
      }
    }
    if (metas.ok()) {
      for (const auto& [p, m] : *metas) {
        if (!on_disk.count(p)) problems.push_back(storage::PartitionCfName(p) + ": revocation record without its column family");
      }
    }

    // Every row decodes; count what the node would load, by (partition, tenant, policy).
    std::map<std::tuple<int32_t, std::string, std::string>, uint64_t> expected;
    storage::StreamRow row;
    for (int32_t p : partitions) {
      size_t bad = 0;
      Status s = (*db)->ScanPartition(p, "", [&](std::string_view key, std::string_view value) {
        ++rows;
        std::string_view tenant;
        uint64_t hash;
        std::string problem;
        if (!storage::DecodeStreamKey(key, &tenant, &hash)) problem = "malformed key";
        else if (Status d = storage::DecodeStreamRow(value, &row); !d.ok()) problem = d.message();
        if (!problem.empty()) {
          if (bad++ < kMaxRowsListed) problems.push_back(storage::PartitionCfName(p) + ": row " + Printable(key) + ": " + problem);
          return true;
        }
        if (static_cast<int64_t>(row.last_seen_s) >= ctx.active_cutoff_s()) {
          ++active_rows;
          ++expected[{p, std::string(tenant), row.policy}];
        }
        return true;
      });
      if (!s.ok()) problems.push_back(storage::PartitionCfName(p) + ": scan failed: " + s.message());
      if (bad > kMaxRowsListed) {
        problems.push_back(storage::PartitionCfName(p) + ": ... and " + std::to_string(bad - kMaxRowsListed) +
                           " more undecodable rows");
      }
    }

    // The counts the node would rebuild from these rows must be the rows' counts.
    if (problems.empty()) {
      FixedClock clock(ctx.now_ms);
      UsageStoreOptions so;
      so.num_partitions = std::max<int32_t>(ctx.num_partitions, partitions.empty() ? 1 : partitions.back() + 1);
      so.windows = Windows{.active_s = ctx.active_window_s, .rate_s = ctx.rate_window_s, .bucket_s = ctx.rate_window_s,
                           .produce_interval_s = 60};
      so.clock = &clock;
      so.read_only = true;
      auto store = UsageStore::Open(**db, so);
      if (!store.ok()) {
        problems.push_back("the node could not load this database: " + store.status().message());
      } else {
        std::map<std::tuple<int32_t, std::string, std::string>, uint64_t> rebuilt;
        for (int32_t p : partitions) {
          std::set<std::pair<std::string, std::string>> groups;
          (*store)->ForEachStream(p, [&](std::string_view t, uint64_t, std::string_view policy, const StreamEntry&) {
            groups.insert({std::string(t), std::string(policy)});
          });
          for (const auto& [t, policy] : groups) rebuilt[{p, t, policy}] = (*store)->ActiveStreams(p, t, policy);
        }
        for (const auto& [k, n] : expected) {
          const uint64_t got = rebuilt.count(k) ? rebuilt[k] : 0;
          if (got != n) {
            problems.push_back(storage::PartitionCfName(std::get<0>(k)) + ": tenant \"" + std::get<1>(k) +
                               "\" policy \"" + std::get<2>(k) + "\": " + std::to_string(n) +
                               " active rows but the node would count " + std::to_string(got));
          }
        }
        for (const auto& [k, n] : rebuilt) {
          if (n > 0 && !expected.count(k)) {
            problems.push_back(storage::PartitionCfName(std::get<0>(k)) + ": tenant \"" + std::get<1>(k) +
                               "\": the node would count " + std::to_string(n) + " streams no row supports");
          }
        }
      }
    }
  }

  if (ctx.json) {
    Json json(ctx.out);
    json.BeginObject().Field("ok", problems.empty()).Field("partitions", partitions.size()).Field("rows", rows)
        .Field("active_rows", active_rows).Key("problems").BeginArray();
    for (const auto& p : problems) json.String(p);
    json.EndArray().EndObject();
  } else {
    for (const auto& p : problems) std::fprintf(ctx.out, "problem: %s\n", Escaped(p).c_str());
    if (problems.empty()) {
      std::fprintf(ctx.out, "verify: OK: %zu partitions, %llu rows (%llu active), every partition checkpointed, counts agree\n",
                   partitions.size(), static_cast<unsigned long long>(rows), static_cast<unsigned long long>(active_rows));
    } else {
      std::fprintf(ctx.out, "verify: %zu problem(s)\n", problems.size());
    }
  }
  return problems.empty() ? kExitOk : kExitFailed;
}

}  // namespace

extern const Command kVerifyCommand{
    .name = "verify",
    .synopsis = "verify",
    .summary = "check every row decodes, checkpoints match column families, and the node's counts match",
    .help = "Checks: the format version is known; every row's key and value decode; every partition column\n"
            "family has a checkpoint and every checkpoint (and revocation record) its column family; and\n"
            "the active-stream counts the node rebuilds at start-up equal the counts of the rows.\n"
            "Lists each problem and exits 1 when there is any.\n",
    .flags = {},
    .run = Run,
};

}  // namespace limits::ctl
