// limitsctl: inspect, verify and compact a limitsd node's database, in limitsd's terms, and
// generate load against a node (loadgen). Read commands work beside a running node (RocksDB
// secondary instance); write commands refuse to run while a node holds the database.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <optional>

#include "command.h"
#include "common/flag_cursor.h"
#include "common/log.h"
#include "config/load_config.h"
#include "config/units.h"

using namespace limits;
using namespace limits::ctl;

namespace {

constexpr char kUsage[] =
    "Usage: limitsctl [--db PATH | --config FILE] [--json] [--now TIME] [--active-window DUR]\n"
    "                 <command> [options]\n";

constexpr char kGlobalHelp[] =
    "Global options (anywhere on the line; every option also as --option=value):\n"
    "  --db PATH             the node's database directory (store.path; default \"data\")\n"
    "  --config FILE         take store.path, windows.active, windows.rate and kafka.num_partitions\n"
    "                        from the node's configuration (loadgen: its topic, brokers, librdkafka\n"
    "                        properties and gRPC address)\n"
    "  --json                machine-readable output (read commands; loadgen: one object per line)\n"
    "  --now TIME            judge the active window at TIME: unix seconds or 2026-12-02T15:04:05Z\n"
    "                        (default: now)\n"
    "  --active-window DUR   the active window, e.g. 2h (default: windows.active, else 2h)\n"
    "  --help                this text; `limitsctl <command> --help` for a command\n"
    "Exit codes: 0 ok, 1 failed (verify: problems found), 2 usage error.\n";

void PrintHelp(FILE* out) {
  std::fprintf(out, "limitsctl - inspect, verify and compact a limitsd node's database; load a node.\n\n%s\nCommands:\n",
               kUsage);
  for (const Command* c : Commands()) {
    std::fprintf(out, "  %-16.*s %.*s%s\n", static_cast<int>(c->name.size()), c->name.data(),
                 static_cast<int>(c->summary.size()), c->summary.data(), c->writes ? " [node stopped]" : "");
  }
  std::fprintf(out, "\n%s", kGlobalHelp);
}

void PrintCommandHelp(const Command& c, FILE* out) {
  std::fprintf(out, "Usage: limitsctl [global options] %.*s\n\n%.*s\n%.*s\n%s\n%s", static_cast<int>(c.synopsis.size()),
               c.synopsis.data(), static_cast<int>(c.summary.size()), c.summary.data(), static_cast<int>(c.help.size()),
               c.help.data(),
               !c.opens_db ? ""
               : c.writes  ? "Needs exclusive access: refuses to run while a node holds the database.\n"
                           : "Safe while the node runs (reads through a RocksDB secondary instance).\n",
               kGlobalHelp);
}

// Unix seconds, or RFC 3339 in UTC ("2026-12-02T15:04:05Z").
bool ParseTime(const std::string& text, int64_t* out_ms) {
  char* end = nullptr;
  const long long secs = std::strtoll(text.c_str(), &end, 10);
  if (!text.empty() && end == text.c_str() + text.size()) {
    *out_ms = secs * 1000;
    return true;
  }
  std::tm tm{};
  const char* rest = strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (rest == nullptr || std::strcmp(rest, "Z") != 0) return false;
  *out_ms = static_cast<int64_t>(timegm(&tm)) * 1000;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  log::Configure(log::Level::kWarn, log::Format::kLogfmt);
  Context ctx;
  ctx.now_ms = Clock::System().NowMillis();
  std::string db_flag, config_path, now_flag, window_flag;
  const Command* command = nullptr;
  Args args;
  bool help = false;
  FlagCursor cursor(argc, argv);
  while (cursor.Next()) {
    const std::string& arg = cursor.arg();
    if (arg == "--help" || arg == "-h" || arg == "--json") {
      if (cursor.has_inline_value()) {
        std::fprintf(stderr, "limitsctl: %s takes no value\n%s", arg.c_str(), kUsage);
        return kExitUsage;
      }
      (arg == "--json" ? ctx.json : help) = true;
    } else if (arg == "--db" || arg == "--config" || arg == "--now" || arg == "--active-window") {
      std::string* target = arg == "--db" ? &db_flag : arg == "--config" ? &config_path : arg == "--now" ? &now_flag : &window_flag;
      std::optional<std::string> value = cursor.Value();
      if (!value) {
        std::fprintf(stderr, "limitsctl: %s needs a value\n%s", arg.c_str(), kUsage);
        return kExitUsage;
      }
      *target = std::move(*value);
    } else if (cursor.is_flag()) {
      const std::string name = arg.substr(2);
      if (command == nullptr ||
          std::find(command->flags.begin(), command->flags.end(), name) == command->flags.end()) {
        if (command) return UsageError(ctx, command->name, "unknown option " + arg);
        std::fprintf(stderr, "limitsctl: unknown option %s\n%s", arg.c_str(), kUsage);
        return kExitUsage;
      }
      std::optional<std::string> value = cursor.Value();
      if (!value) return UsageError(ctx, command->name, arg + " needs a value");
      args.flags[name] = std::move(*value);
    } else if (command == nullptr) {
      for (const Command* c : Commands()) {
        if (c->name == arg) command = c;
      }
      if (command == nullptr) {
        std::fprintf(stderr, "limitsctl: unknown command \"%s\"; see limitsctl --help\n", arg.c_str());
        return kExitUsage;
      }
    } else {
      args.positional.push_back(arg);
    }
  }
  if (help) {
    if (command) PrintCommandHelp(*command, stdout);
    else PrintHelp(stdout);
    return kExitOk;
  }
  if (command == nullptr) {
    std::fprintf(stderr, "limitsctl: no command given\n%sSee: limitsctl --help\n", kUsage);
    return kExitUsage;
  }
  if (args.positional.size() != command->positional) {
    return UsageError(ctx, command->name, "expected " + std::to_string(command->positional) +
                                              " argument(s), got " + std::to_string(args.positional.size()));
  }

  ctx.db_path = config::kDefaultStorePath;
  std::optional<config::Config> loaded;
  if (!config_path.empty()) {
    Result<config::Config> cfg = config::LoadConfig(config_path);
    if (!cfg.ok()) return Fail(ctx, cfg.status());
    ctx.config = &loaded.emplace(*cfg);
    ctx.db_path = cfg->store.path;
    ctx.active_window_s = static_cast<uint32_t>(cfg->windows.active.count() / 1000);
    ctx.rate_window_s = static_cast<uint32_t>(cfg->windows.rate.count() / 1000);
    ctx.num_partitions = cfg->kafka.num_partitions;
  }
  if (!db_flag.empty()) ctx.db_path = db_flag;
  if (!now_flag.empty() && !ParseTime(now_flag, &ctx.now_ms)) {
    std::fprintf(stderr, "limitsctl: --now %s: expected unix seconds or 2026-12-02T15:04:05Z\n", now_flag.c_str());
    return kExitUsage;
  }
  if (!window_flag.empty()) {
    Result<std::chrono::milliseconds> d = config::ParseDuration(window_flag);
    // At most what the store's 32-bit seconds hold, as the node's windows.active (config.h).
    if (!d.ok() || d->count() < 1000 || d->count() % 1000 != 0 || *d > config::kMaxDuration) {
      std::fprintf(stderr, "limitsctl: --active-window %s: expected whole seconds up to %s, e.g. 2h\n",
                   window_flag.c_str(), config::FormatDuration(config::kMaxDuration).c_str());
      return kExitUsage;
    }
    ctx.active_window_s = static_cast<uint32_t>(d->count() / 1000);
  }
  return command->run(ctx, args);
}
