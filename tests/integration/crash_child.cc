// The crash test's child: applies the deterministic workload to a database forever, while a
// second thread makes synchronous updates, until the parent (or its own write hook) kills it
// with SIGKILL. See store_crash_test.cc.
#include <csignal>
#include <cstdio>
#include <chrono>
#include <random>
#include <string>
#include <thread>

#include "crash_workload.h"
#include "limits/decision/admission.h"
#include "storage/db.h"
#include "testing/fake_clock.h"

using namespace limits;

int main(int argc, char** argv) {
  // "live": a steady writer for tests of tools beside a running node (no self-kill, no drops).
  if (argc != 3 && !(argc == 4 && std::string(argv[3]) == "live")) {
    std::fprintf(stderr, "usage: crash_child DB_PATH SEED [live]\n");
    return 2;
  }
  const bool live = argc == 4;
  testing::FakeClock clock(crash::kNowMs);
  storage::DbOptions o;
  o.path = argv[1];
  o.block_cache_bytes = 8 << 20;
  o.write_buffer_bytes = 4 << 20;
  o.clock = &clock;
  auto db = storage::Db::Open(o);
  if (!db.ok()) {
    std::fprintf(stderr, "open: %s\n", db.status().ToString().c_str());
    return 1;
  }
  UsageStoreOptions so;
  so.num_partitions = crash::kPartitions;
  so.windows = Windows{.active_s = 3600, .rate_s = 300, .bucket_s = 60, .produce_interval_s = 60};
  so.clock = &clock;
  auto store = UsageStore::Open(**db, so);
  if (!store.ok()) {
    std::fprintf(stderr, "open store: %s\n", store.status().ToString().c_str());
    return 1;
  }
  std::mt19937_64 rng(std::stoull(argv[2]));
  // Die exactly between building a batch and writing it, now and then.
  const uint64_t kill_one_in = 20 + rng() % 60;
  std::mt19937_64 hook_rng(rng());
  if (!live) {
    (*db)->SetBeforeWriteHookForTest([&] {
      if (hook_rng() % kill_one_in == 0) std::raise(SIGKILL);
    });
  }

  std::vector<int64_t> next(crash::kPartitions, 0);
  for (int32_t p = 0; p < crash::kPartitions; ++p) {
    // Data without a checkpoint (a drop cut short) cannot be trusted: drop it, as the node does.
    if ((*db)->HasPartition(p) && !(*store)->CheckpointOf(p)) (void)(*store)->DropPartition(p);
    if (auto cp = (*store)->CheckpointOf(p)) next[static_cast<size_t>(p)] = cp->next_offset;
  }
  std::printf("ready\n");
  std::fflush(stdout);

  // Seeded here: the main loop below draws from rng while the thread starts (a TSAN report).
  std::thread sync([&, srng = std::mt19937_64(rng())]() mutable {
    TenantLimits limits;
    limits.max_global_streams_per_user = 100;
    const PartitionSet all = PartitionSet::All(crash::kPartitions);
    for (;;) {
      std::vector<StreamUpdate> u;
      for (int i = 0; i < 8; ++i) u.push_back({.stream_hash = srng() % 400, .bytes = 5, .policy = ""});
      UpdateCondResult out;
      Admission quota(limits, all.Count(), static_cast<uint32_t>(crash::kPartitions));
      (void)(*store)->UpdateCond("sync", u, quota, all, &out);
      if (live) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  });

  for (;;) {
    const auto p = static_cast<int32_t>(rng() % crash::kPartitions);
    int64_t& n = next[static_cast<size_t>(p)];
    if (!live && rng() % 150 == 0) {
      if (!(*store)->DropPartition(p).ok()) return 1;
      n = 0;
      continue;
    }
    std::vector<Record> batch;
    const int64_t count = 1 + static_cast<int64_t>(rng() % 400);
    for (int64_t i = 0; i < count; ++i) batch.push_back(crash::RecordAt(p, n + i));
    Status s = rng() % 3 == 0 ? (*store)->ApplyBuffered(p, batch, n + count) : (*store)->Apply(p, batch, n + count);
    if (!s.ok()) {
      std::fprintf(stderr, "apply: %s\n", s.ToString().c_str());
      return 1;
    }
    n += count;
    if (live) std::this_thread::sleep_for(std::chrono::milliseconds(2));  // a steady trickle, not a flood
  }
}
