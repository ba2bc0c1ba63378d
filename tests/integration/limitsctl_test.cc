// limitsctl end to end: each command as a process, on a database built by the storage
// library; golden output for one small database; beside a live writer; refusal of write
// commands on a locked database; verify catching corruption.
// LIMITSD_UPDATE_GOLDEN=1 rewrites the golden files from the current output.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "limits/usage/usage_store.h"
#include "storage/codec.h"
#include "storage/db.h"
#include "testing/fake_clock.h"
#include "testing/subprocess.h"
#include "testing/temp_dir.h"
#include "testing/wait_for.h"

namespace limits {
namespace {

using ::testing::HasSubstr;
using testing::RunProgram;
using testing::RunResult;

constexpr int64_t kNowMs = 1'764'000'000'000;  // 2025-11-24T16:00:00Z
const std::string kNow = std::to_string(kNowMs / 1000);

// A small database: two partitions, tenants with and without a policy, one stream expired.
void BuildDatabase(const std::string& path) {
  testing::FakeClock clock(kNowMs - 3000'000);  // the records are an hour old... mostly
  storage::DbOptions o;
  o.path = path;
  o.clock = &clock;
  auto db = storage::Db::Open(o);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  UsageStoreOptions so;
  so.num_partitions = 4;
  so.clock = &clock;
  auto store = UsageStore::Open(**db, so);
  ASSERT_TRUE(store.ok());
  const int64_t t = clock.NowMillis();
  std::vector<Record> p1 = {
      {.tenant = "tenant-a", .stream_hash = 1, .bytes = 1000, .policy = "", .timestamp_ms = t, .offset = 0},
      {.tenant = "tenant-a", .stream_hash = 5, .bytes = 2000, .policy = "gold", .timestamp_ms = t, .offset = 1},
      {.tenant = "tenant-a", .stream_hash = 1, .bytes = 500, .policy = "", .timestamp_ms = t + 60'000, .offset = 2},
      {.tenant = "tenant-b", .stream_hash = 9, .bytes = 10, .policy = "", .timestamp_ms = t - 5000'000, .offset = 3},
  };
  ASSERT_TRUE((*store)->Apply(1, p1, 4).ok());
  std::vector<Record> p2 = {
      {.tenant = "tenant-a", .stream_hash = 2, .bytes = 300, .policy = "", .timestamp_ms = t - 4000'000, .offset = 0},
      {.tenant = "tenant-b", .stream_hash = 6, .bytes = 40, .policy = "", .timestamp_ms = t, .offset = 1},
  };
  ASSERT_TRUE((*store)->Apply(2, p2, 10).ok());
  ASSERT_TRUE((*db)->PutPartitionMeta(2, {.revoked_at_ms = kNowMs - 60'000, .evict_after_ms = kNowMs + 540'000}).ok());
}

class LimitsctlTest : public ::testing::Test {
 protected:
  void SetUp() override { BuildDatabase(db_); }

  RunResult Ctl(std::vector<std::string> args, const std::string& db = "") {
    std::vector<std::string> argv = {LIMITSCTL, "--db", db.empty() ? db_ : db};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProgram(argv);
  }

  static void ExpectGolden(const std::string& name, const std::string& actual) {
    const std::string path = std::string(GOLDEN_DIR) + "/" + name;
    if (std::getenv("LIMITSD_UPDATE_GOLDEN")) {
      std::ofstream(path) << actual;
      return;
    }
    std::ifstream in(path);
    ASSERT_TRUE(in) << "missing golden file " << path << " (run with LIMITSD_UPDATE_GOLDEN=1)";
    std::stringstream expected;
    expected << in.rdbuf();
    EXPECT_EQ(actual, expected.str()) << "golden " << name;
  }

  testing::TempDir dir_;
  std::string db_ = dir_.Sub("db");
};

TEST_F(LimitsctlTest, ReadCommandsMatchTheirGoldenOutput) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"partitions.txt", {"--now", kNow, "partitions"}},
      {"partitions.json", {"--now", kNow, "--json", "partitions"}},
      {"tenants.txt", {"--now", kNow, "tenants"}},
      {"tenants.json", {"--now", kNow, "tenants", "--json"}},
      {"tenants_p2.txt", {"--now", kNow, "tenants", "--partition", "2"}},
      {"streams.txt", {"--now", kNow, "streams", "--tenant", "tenant-a"}},
      {"streams.json", {"--now", kNow, "--json", "streams", "--tenant", "tenant-a", "--limit", "2"}},
      {"checkpoint.txt", {"checkpoint", "--partition", "p00001"}},
      {"checkpoint.json", {"--json", "checkpoint", "--partition", "1"}},
      {"verify.txt", {"--now", kNow, "verify"}},
  };
  for (const auto& [golden, args] : cases) {
    RunResult r = Ctl(args);
    EXPECT_EQ(r.exit_code, 0) << golden << ": " << r.err;
    ExpectGolden(golden, r.out);
  }
}

// Every option, global or a command's, also as --option=value: the same output either way.
TEST_F(LimitsctlTest, OptionsTakeBothForms) {
  const std::vector<std::pair<std::vector<std::string>, std::vector<std::string>>> cases = {
      {{"--now", kNow, "streams", "--tenant", "tenant-a", "--partition", "1", "--limit", "1"},
       {std::string("--now=") + kNow, "streams", "--tenant=tenant-a", "--partition=1", "--limit=1"}},
      {{"--active-window", "1m", "--now", kNow, "tenants"}, {"--active-window=1m", std::string("--now=") + kNow, "tenants"}},
      {{"checkpoint", "--partition", "p00001"}, {"checkpoint", "--partition=p00001"}},
  };
  for (const auto& [spaced, joined] : cases) {
    RunResult a = Ctl(spaced);
    std::vector<std::string> argv = {LIMITSCTL, "--db=" + db_};
    argv.insert(argv.end(), joined.begin(), joined.end());
    RunResult b = RunProgram(argv);
    EXPECT_EQ(a.exit_code, 0) << a.err;
    EXPECT_EQ(b.exit_code, 0) << b.err;
    EXPECT_EQ(a.out, b.out);
    EXPECT_FALSE(b.out.empty());
  }
  const std::string cfg = dir_.Sub("limitsd.toml");
  std::ofstream(cfg) << "[store]\npath = \"" << db_ << "\"\n";
  RunResult by_config = RunProgram({LIMITSCTL, "--config=" + cfg, "--json", "partitions"});
  EXPECT_EQ(by_config.exit_code, 0) << by_config.err;
  EXPECT_THAT(by_config.out, HasSubstr("\"partition\": 2,"));
  RunResult switch_value = Ctl({"--json=yes", "partitions"});
  EXPECT_EQ(switch_value.exit_code, 2);
  EXPECT_THAT(switch_value.err, HasSubstr("--json takes no value"));
  EXPECT_EQ(Ctl({"tenants", "--partition="}).exit_code, 2);  // an empty partition is no partition
}

TEST_F(LimitsctlTest, StatsListsEveryColumnFamily) {
  RunResult r = Ctl({"stats"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("meta"));
  EXPECT_THAT(r.out, HasSubstr("p00001"));
  EXPECT_THAT(r.out, HasSubstr("p00002"));
  RunResult j = Ctl({"stats", "--json"});
  EXPECT_THAT(j.out, HasSubstr("\"name\": \"p00002\""));
  EXPECT_THAT(j.out, HasSubstr("\"estimated_keys\": 2"));
}

TEST_F(LimitsctlTest, HelpAndUsageErrors) {
  EXPECT_EQ(RunProgram({LIMITSCTL, "--help"}).exit_code, 0);
  RunResult help = RunProgram({LIMITSCTL, "streams", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_THAT(help.out, HasSubstr("streams --tenant T [--partition P] [--limit N]"));
  EXPECT_THAT(RunProgram({LIMITSCTL, "compact", "--help"}).out, HasSubstr("refuses to run while a node holds"));
  EXPECT_EQ(RunProgram({LIMITSCTL}).exit_code, 2);
  EXPECT_EQ(Ctl({"frobnicate"}).exit_code, 2);
  RunResult no_tenant = Ctl({"streams"});
  EXPECT_EQ(no_tenant.exit_code, 2);
  EXPECT_THAT(no_tenant.err, HasSubstr("--tenant is required"));
  EXPECT_EQ(Ctl({"tenants", "--bogus", "1"}).exit_code, 2);
  EXPECT_EQ(Ctl({"tenants", "--partition", "x"}).exit_code, 2);
  EXPECT_EQ(Ctl({"drop-partition"}).exit_code, 2);
  EXPECT_EQ(Ctl({"--now", "yesterday", "tenants"}).exit_code, 2);
  RunResult missing = Ctl({"partitions"}, dir_.Sub("nope"));
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_THAT(missing.err, HasSubstr("no database at"));
  RunResult no_cp = Ctl({"checkpoint", "--partition", "3"});
  EXPECT_EQ(no_cp.exit_code, 1);
  EXPECT_THAT(no_cp.err, HasSubstr("p00003 has no checkpoint"));
}

TEST_F(LimitsctlTest, ConfigSuppliesPathAndWindows) {
  const std::string cfg = dir_.Sub("limitsd.toml");
  std::ofstream(cfg) << "[store]\npath = \"" << db_ << "\"\n[windows]\nactive = \"1m\"\nrate = \"1m\"\n";
  RunResult r = RunProgram({LIMITSCTL, "--config", cfg, "--now", kNow, "tenants", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // With a one-minute window nothing written 49 minutes before --now is active.
  EXPECT_THAT(r.out, HasSubstr("\"active_streams\": 0"));
  EXPECT_THAT(r.out, Not(HasSubstr("\"active_streams\": 1")));
}

TEST_F(LimitsctlTest, WriteCommandsOnAStoppedNode) {
  RunResult compact = Ctl({"--now", kNow, "compact"});
  ASSERT_EQ(compact.exit_code, 0) << compact.err;
  EXPECT_THAT(compact.out, HasSubstr("compacted all partitions"));
  EXPECT_THAT(compact.out, HasSubstr("expired rows dropped"));
  // Every stream is outside the window a day later.
  RunResult evict = Ctl({"--now", std::to_string(kNowMs / 1000 + 86400), "evict-expired"});
  ASSERT_EQ(evict.exit_code, 0) << evict.err;
  EXPECT_THAT(evict.out, HasSubstr("evicted"));
  RunResult tenants = Ctl({"tenants", "--json"});
  EXPECT_THAT(tenants.out, HasSubstr("\"tenants\": []"));
  RunResult drop = Ctl({"drop-partition", "2"});
  ASSERT_EQ(drop.exit_code, 0) << drop.err;
  EXPECT_THAT(drop.out, HasSubstr("dropped p00002"));
  RunResult parts = Ctl({"partitions"});
  EXPECT_THAT(parts.out, Not(HasSubstr("p00002")));
  EXPECT_THAT(parts.out, HasSubstr("p00001"));
  EXPECT_EQ(Ctl({"drop-partition", "2"}).exit_code, 1);  // nothing left to drop
  EXPECT_EQ(Ctl({"--now", kNow, "verify"}).exit_code, 0);
}

TEST_F(LimitsctlTest, VerifyCatchesACorruptRowAndAMissingCheckpoint) {
  {
    storage::DbOptions o;
    o.path = db_;
    auto db = storage::Db::Open(o);
    ASSERT_TRUE(db.ok());
    storage::WriteBatch batch(**db);
    batch.PutRow(1, storage::EncodeStreamKey("tenant-a", 77), "\x07garbage-row");
    ASSERT_TRUE((*db)->Write(batch).ok());
    ASSERT_TRUE((*db)->CreatePartition(3).ok());
    storage::WriteBatch orphan(**db);
    orphan.PutRow(3, storage::EncodeStreamKey("tenant-a", 3), "x");  // data with no checkpoint
    ASSERT_TRUE((*db)->Write(orphan).ok());
    ASSERT_TRUE((*db)->CreatePartition(2).ok());  // empty, no checkpoint: a partition being created, fine
  }
  RunResult r = Ctl({"--now", kNow, "verify"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.out, HasSubstr("problem: p00001: row 0x0874656e616e742d61000000000000004d: stream row has unknown tag 7"));
  EXPECT_THAT(r.out, HasSubstr("problem: p00003: column family without a checkpoint"));
  EXPECT_THAT(r.out, HasSubstr("verify: 3 problem(s)"));  // p00003's row is also undecodable
  RunResult j = Ctl({"--now", kNow, "--json", "verify"});
  EXPECT_EQ(j.exit_code, 1);
  EXPECT_THAT(j.out, HasSubstr("\"ok\": false"));
}

TEST_F(LimitsctlTest, VerifyCatchesACheckpointWithoutData) {
  {
    storage::DbOptions o;
    o.path = db_;
    auto db = storage::Db::Open(o);
    ASSERT_TRUE(db.ok());
    storage::WriteBatch batch(**db);
    batch.PutCheckpoint(7, {.next_offset = 5, .newest_record_ms = 0});
    ASSERT_TRUE((*db)->Write(batch).ok());
  }
  RunResult r = Ctl({"--now", kNow, "verify"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.out, HasSubstr("p00007: checkpoint (next offset 5) without its column family"));
}

// A node (here: a writer process with the same storage code) holds the database.
class LiveWriter {
 public:
  explicit LiveWriter(const std::string& path) {
    int fds[2];
    EXPECT_EQ(pipe(fds), 0);
    pid_ = fork();
    if (pid_ == 0) {
      dup2(fds[1], STDOUT_FILENO);
      close(fds[0]);
      close(fds[1]);
      execl(CRASH_CHILD, CRASH_CHILD, path.c_str(), "1", "live", static_cast<char*>(nullptr));
      _exit(127);
    }
    close(fds[1]);
    char buf[8] = {};
    ready_ = read(fds[0], buf, sizeof buf - 1) > 0;
    close(fds[0]);
  }
  ~LiveWriter() {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  bool ready() const { return ready_; }

 private:
  pid_t pid_ = -1;
  bool ready_ = false;
};

TEST_F(LimitsctlTest, ReadsBesideALiveWriterAndRefusesWrites) {
  const std::string live = dir_.Sub("live");
  LiveWriter writer(live);
  ASSERT_TRUE(writer.ready());
  // The writer keeps writing; each read sees a consistent, growing view.
  uint64_t streams = 0;
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        RunResult r = Ctl({"tenants", "--json"}, live);
        EXPECT_EQ(r.exit_code, 0) << r.err;
        streams = r.out.find("\"tenant\": \"t0\"") != std::string::npos ? 1 : 0;
        return streams > 0;
      },
      std::chrono::seconds(20)));
  RunResult parts = Ctl({"partitions"}, live);
  EXPECT_EQ(parts.exit_code, 0) << parts.err;
  EXPECT_THAT(parts.out, HasSubstr("p00000"));
  for (const std::vector<std::string>& read : std::vector<std::vector<std::string>>{
           {"stats"}, {"streams", "--tenant", "t1", "--limit", "3"}}) {
    RunResult r = Ctl(read, live);
    EXPECT_EQ(r.exit_code, 0) << read[0] << ": " << r.err;
  }
  for (const std::vector<std::string>& write : std::vector<std::vector<std::string>>{
           {"compact"}, {"drop-partition", "0"}, {"evict-expired"}}) {
    RunResult r = Ctl(write, live);
    EXPECT_EQ(r.exit_code, 1) << write[0];
    EXPECT_THAT(r.err, HasSubstr("a running node holds its lock. Stop the node before `" + write[0] + "`"));
  }
}

}  // namespace
}  // namespace limits
