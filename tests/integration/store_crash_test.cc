// Crash consistency: a child process applies batches (and synchronous updates) in a loop and
// is killed with SIGKILL at random moments — by the parent, or by its own hook right between
// building a batch and writing it. After every kill the parent reopens the database and
// checks that each partition's rows are exactly what its checkpoint covers.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <thread>

#include "crash_workload.h"
#include "storage/codec.h"
#include "storage/db.h"
#include "testing/fake_clock.h"
#include "testing/temp_dir.h"

namespace limits {
namespace {

struct Child {
  pid_t pid = -1;
  int stdout_fd = -1;
};

Child Spawn(const std::string& db, uint64_t seed) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    close(fds[1]);
    const std::string seed_arg = std::to_string(seed);
    execl(CRASH_CHILD, CRASH_CHILD, db.c_str(), seed_arg.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(fds[1]);
  return {pid, fds[0]};
}

// Checks the raw database the way the node will find it: every checkpoint has its column
// family, and its rows are exactly the model of the records below the checkpoint.
void VerifyAgreement(const std::string& path, int round, int* checked) {
  testing::FakeClock clock(crash::kNowMs);
  storage::DbOptions o;
  o.path = path;
  o.clock = &clock;
  auto db = storage::Db::Open(o);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto checkpoints = (*db)->ReadCheckpoints();
  ASSERT_TRUE(checkpoints.ok()) << checkpoints.status().ToString();
  for (const auto& [p, cp] : *checkpoints) {
    ASSERT_TRUE((*db)->HasPartition(p)) << "round " << round << ": checkpoint of p" << p << " without its data";
    std::map<std::pair<std::string, uint64_t>, crash::ExpectedRow> rows;
    Status s = (*db)->ScanPartition(p, "", [&](std::string_view k, std::string_view v) {
      std::string_view tenant;
      uint64_t hash;
      storage::StreamRow row;
      EXPECT_TRUE(storage::DecodeStreamKey(k, &tenant, &hash));
      EXPECT_TRUE(storage::DecodeStreamRow(v, &row).ok());
      if (tenant == "sync") return true;  // synchronous updates: not covered by checkpoints
      uint64_t bytes = 0;
      for (uint64_t b : row.rate_bytes) bytes += b;
      rows[{std::string(tenant), hash}] = {row.policy, row.last_seen_s, bytes};
      return true;
    });
    ASSERT_TRUE(s.ok()) << s.ToString();
    ASSERT_EQ(rows, crash::Model(p, cp.next_offset))
        << "round " << round << ": p" << p << " rows disagree with checkpoint " << cp.next_offset;
    ++*checked;
  }
}

TEST(StoreCrashTest, CheckpointAndDataAgreeAfterSigkillAtAnyMoment) {
  testing::TempDir dir;
  const std::string path = dir.Sub("db");
  std::mt19937_64 rng(20261202);
  constexpr int kRounds = 40;
  int checked = 0;
  int64_t max_offset_seen = 0;
  for (int round = 0; round < kRounds; ++round) {
    Child child = Spawn(path, rng());
    ASSERT_GT(child.pid, 0);
    char buf[16] = {};
    // Wait for "ready" (the child opened the DB) or for its exit (killed during recovery).
    const ssize_t got = read(child.stdout_fd, buf, sizeof buf - 1);
    close(child.stdout_fd);
    if (got > 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20 + rng() % 250));  // the kill moment, not a sync
      kill(child.pid, SIGKILL);
    }
    int status = 0;
    ASSERT_EQ(waitpid(child.pid, &status, 0), child.pid);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
        << "round " << round << ": the child ended on its own (status " << status << ")";
    VerifyAgreement(path, round, &checked);
    if (HasFatalFailure()) return;
    testing::FakeClock clock(crash::kNowMs);
    storage::DbOptions o;
    o.path = path;
    o.clock = &clock;
    auto db = storage::Db::Open(o);
    ASSERT_TRUE(db.ok());
    auto checkpoints = (*db)->ReadCheckpoints();
    ASSERT_TRUE(checkpoints.ok());
    for (const auto& [p, cp] : *checkpoints) max_offset_seen = std::max(max_offset_seen, cp.next_offset);
  }
  std::printf("rounds %d, checkpoints verified %d, largest checkpoint %lld\n", kRounds, checked,
              static_cast<long long>(max_offset_seen));
  EXPECT_GT(checked, kRounds);          // most rounds leave several partitions to check
  EXPECT_GT(max_offset_seen, 1000);     // and real progress was made between kills
}

}  // namespace
}  // namespace limits
