// limitsctl's commands: one file per command (cmd_<name>.cc), each a Command entry.
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"
#include "config/config.h"
#include "storage/db.h"

namespace limits::ctl {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitUsage = 2;

// What every command gets: the database, the output mode, and the time and windows that
// decide which streams are active (from --now / --config / defaults).
struct Context {
  std::string db_path;
  bool json = false;
  int64_t now_ms = 0;
  uint32_t active_window_s = 7200;
  uint32_t rate_window_s = 300;
  int32_t num_partitions = 0;  // from --config; 0: derived from what is on disk
  const config::Config* config = nullptr;  // --config, when given (loadgen takes Kafka and gRPC from it)
  FILE* out = stdout;
  FILE* err = stderr;

  int64_t now_s() const { return now_ms / 1000; }
  int64_t active_cutoff_s() const { return now_s() - active_window_s; }
};

// A clock fixed at --now, so what a command judges active is what it reports.
class FixedClock final : public Clock {
 public:
  explicit FixedClock(int64_t ms) : ms_(ms) {}
  int64_t NowMillis() const override { return ms_; }

 private:
  int64_t ms_;
};

// A command's own options (--name value) and positional arguments.
struct Args {
  std::map<std::string, std::string> flags;
  std::vector<std::string> positional;

  std::optional<std::string> Flag(const std::string& name) const {
    auto it = flags.find(name);
    if (it == flags.end()) return std::nullopt;
    return it->second;
  }
};

struct Command {
  std::string_view name;
  std::string_view synopsis;  // "streams --tenant T [--partition P] [--limit N]"
  std::string_view summary;   // one line, for the command list
  std::string_view help;      // the rest of `limitsctl <command> --help`
  std::vector<std::string_view> flags;  // options taking a value
  size_t positional = 0;                // how many positional arguments it requires
  bool writes = false;                  // needs the node stopped
  bool opens_db = true;                 // false: works on a live node's Kafka and gRPC, not its database
  int (*run)(Context& ctx, const Args& args) = nullptr;
};

// All commands, in the order `--help` lists them.
const std::vector<const Command*>& Commands();

// An open database, removed scratch directory included, when it goes out of scope.
class OpenDb {
 public:
  OpenDb(std::unique_ptr<Clock> clock, std::unique_ptr<storage::Db> db, std::string scratch)
      : clock_(std::move(clock)), db_(std::move(db)), scratch_(std::move(scratch)) {}
  ~OpenDb();
  OpenDb(OpenDb&& other) noexcept
      : clock_(std::move(other.clock_)), db_(std::move(other.db_)), scratch_(std::exchange(other.scratch_, {})) {}
  OpenDb& operator=(OpenDb&&) = delete;
  storage::Db& operator*() { return *db_; }
  storage::Db* operator->() { return db_.get(); }
  const Clock& clock() const { return *clock_; }

 private:
  std::unique_ptr<Clock> clock_;  // the TTL filter's "now" (--now); outlives db_
  std::unique_ptr<storage::Db> db_;
  std::string scratch_;
};

// Read commands open a RocksDB secondary instance: safe beside a running node (which holds
// the lock) and on a stopped node's database alike.
Result<OpenDb> OpenForRead(const Context& ctx);
// Write commands open the database as its only writer; fail clearly while a node holds it.
Result<OpenDb> OpenForWrite(const Context& ctx, std::string_view command);

// "17" or "p00017".
std::optional<int32_t> ParsePartition(std::string_view text);
// Prints "limitsctl: <message>" to stderr and returns the exit code.
int Fail(const Context& ctx, const Status& status);
int UsageError(const Context& ctx, std::string_view command, const std::string& message);

// A decoded row, for the commands that read rows.
struct RowView {
  int32_t partition;
  std::string_view key;
  std::string_view tenant;
  uint64_t hash;
};

}  // namespace limits::ctl
