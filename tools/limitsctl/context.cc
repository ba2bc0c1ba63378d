#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "command.h"
#include "storage/column_families.h"

namespace limits::ctl {

OpenDb::~OpenDb() {
  db_.reset();
  if (!scratch_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(scratch_, ec);
  }
}

namespace {

storage::DbOptions BaseOptions(const Context& ctx, const Clock* clock) {
  storage::DbOptions o;
  o.clock = clock;
  o.path = ctx.db_path;
  // Small budgets: the tool must not compete with the node for memory.
  o.block_cache_bytes = 32ull << 20;
  o.write_buffer_bytes = 16ull << 20;
  o.active_window_s = ctx.active_window_s;
  return o;
}

}  // namespace

Result<OpenDb> OpenForRead(const Context& ctx) {
  if (!std::filesystem::exists(ctx.db_path)) return Status::NotFound("no database at " + ctx.db_path);
  const char* tmp = std::getenv("TMPDIR");
  std::string scratch = std::string(tmp && *tmp ? tmp : "/tmp") + "/limitsctl-XXXXXX";
  if (mkdtemp(scratch.data()) == nullptr) return Status::IOError("cannot create a scratch directory " + scratch);
  auto clock = std::make_unique<FixedClock>(ctx.now_ms);
  storage::DbOptions o = BaseOptions(ctx, clock.get());
  o.secondary = true;
  o.secondary_path = scratch;
  Result<std::unique_ptr<storage::Db>> db = storage::Db::Open(o);
  if (!db.ok()) {
    std::error_code ec;
    std::filesystem::remove_all(scratch, ec);
    return db.status();
  }
  return OpenDb(std::move(clock), std::move(*db), scratch);
}

Result<OpenDb> OpenForWrite(const Context& ctx, std::string_view command) {
  if (!std::filesystem::exists(ctx.db_path)) return Status::NotFound("no database at " + ctx.db_path);
  auto clock = std::make_unique<FixedClock>(ctx.now_ms);
  storage::DbOptions o = BaseOptions(ctx, clock.get());
  Result<std::unique_ptr<storage::Db>> db = storage::Db::Open(o);
  if (!db.ok()) {
    if (storage::Db::IsLockedError(db.status())) {
      return Status::FailedPrecondition("the database at " + ctx.db_path +
                                        " is in use: a running node holds its lock. Stop the node before `" +
                                        std::string(command) + "` (read commands work while it runs)");
    }
    return db.status();
  }
  return OpenDb(std::move(clock), std::move(*db), "");
}

std::optional<int32_t> ParsePartition(std::string_view text) {
  if (auto p = storage::ParsePartitionCfName(text)) return p;
  if (text.empty() || text.size() > 5) return std::nullopt;
  int32_t p = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    p = p * 10 + (c - '0');
  }
  return p;
}

int Fail(const Context& ctx, const Status& status) {
  std::fprintf(ctx.err, "limitsctl: %s\n", status.message().c_str());
  return kExitFailed;
}

int UsageError(const Context& ctx, std::string_view command, const std::string& message) {
  std::fprintf(ctx.err, "limitsctl %.*s: %s\nSee: limitsctl %.*s --help\n", static_cast<int>(command.size()),
               command.data(), message.c_str(), static_cast<int>(command.size()), command.data());
  return kExitUsage;
}

}  // namespace limits::ctl
