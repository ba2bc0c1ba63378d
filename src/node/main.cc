// limitsd: enforces per-tenant stream limits; see README.md.
//   limitsd --config FILE [--set key=value]...   run the node
//   limitsd --check-config FILE [--set ...]      validate and exit 0 (valid) or 2
//   limitsd --version | --help
// Every flag also takes the --flag=value form (as manifests write it).
#include <absl/synchronization/mutex.h>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "common/flag_cursor.h"
#include "common/log.h"
#include "config/load_config.h"
#include "node/check_config.h"
#include "node/library_logs.h"
#include "node/node.h"

using namespace limits;

namespace {

constexpr char kHelp[] =
    "limitsd - per-tenant stream limits for a multi-tenant log pipeline, rebuilt from Kafka.\n\n"
    "Usage:\n"
    "  limitsd --config FILE [--set key=value]...   run the node\n"
    "  limitsd --check-config FILE [--set ...]      validate the configuration: exit 0 or 2\n"
    "  limitsd --version\n\n"
    "Options (each also as --option=value):\n"
    "  --config FILE       TOML configuration (deploy/limitsd.example.toml documents every key);\n"
    "                      without it, the built-in defaults\n"
    "  --set key=value     override one key, e.g. --set kafka.brokers=kafka:9092\n"
    "                      --set node.instance_id=$(POD_NAME); repeatable, applied in order\n"
    "  --check-config [FILE]\n"
    "                      load and validate, print the problems, exit 0 (valid) or 2. Without\n"
    "                      FILE it checks what the rest of the line configures: append it to a\n"
    "                      container's arguments to check exactly what the pod would run\n\n"
    "With kafka.brokers empty the node starts an embedded mock Kafka cluster.\n"
    "SIGTERM/SIGINT stop it gracefully.\n";

int Usage(const std::string& problem) {
  std::fprintf(stderr, "limitsd: %s; see limitsd --help\n", problem.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string config_path;
  std::string check_path;
  bool check_only = false;
  std::vector<std::string> sets;
  FlagCursor args(argc, argv);
  while (args.Next()) {
    const std::string& flag = args.arg();
    if (flag == "--help" || flag == "-h" || flag == "--version") {
      if (args.has_inline_value()) return Usage(flag + " takes no value");
      if (flag == "--version") std::printf("limitsd %s\n", LIMITSD_VERSION);
      else std::fputs(kHelp, stdout);
      return 0;
    } else if (flag == "--config" || flag == "--set") {
      std::optional<std::string> value = args.Value();
      if (!value) return Usage(flag + " needs a value");
      if (flag == "--set") sets.push_back(std::move(*value));
      else config_path = std::move(*value);
    } else if (flag == "--check-config") {
      check_only = true;
      if (std::optional<std::string> value = args.OptionalValue()) check_path = std::move(*value);
    } else {
      return Usage("unknown argument \"" + args.arg() + "\"");
    }
  }
  if (!check_path.empty()) {
    if (!config_path.empty() && config_path != check_path) {
      return Usage("--config " + config_path + " and --check-config " + check_path + " name different files");
    }
    config_path = check_path;
  }

  Result<config::Config> cfg = config::LoadConfig(config_path, sets);
  // Then what the file's rules cannot see: librdkafka's verdict on every client's properties,
  // the overrides file, the store path.
  Status valid = cfg.ok() ? CheckConfig(*cfg) : cfg.status();
  if (!valid.ok()) {
    std::fprintf(stderr, "limitsd: invalid configuration%s%s:\n%s\n", config_path.empty() ? "" : " in ",
                 config_path.c_str(), valid.message().c_str());
    return 2;
  }
  if (check_only) {
    // What the node would be, so a manifest's check shows the zone's identity, not just "valid".
    std::printf("%s: valid\nzone=%s consumer_group=%s instance_id=%s brokers=%s store.path=%s\n",
                config_path.empty() ? "built-in defaults" : config_path.c_str(), cfg->node.zone.c_str(),
                cfg->kafka.consumer_group.c_str(), cfg->node.instance_id.c_str(),
                cfg->kafka.brokers.empty() ? "embedded" : cfg->kafka.brokers.c_str(),
                cfg->store.path.c_str());
    return 0;
  }
  log::Level level = log::Level::kInfo;
  log::Format format = log::Format::kJson;
  log::ParseLevel(cfg->log.level, &level);
  log::ParseFormat(cfg->log.format, &format);
  log::Configure(level, format);
  RouteLibraryLogs();
  // Debian's abseil checks every absl::Mutex acquisition (gRPC's) for lock-order cycles, a
  // debugging aid that cost ~1.5 % of the node's samples serving ExceedsLimits.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);

  // Signals are taken synchronously by this thread; every other thread inherits the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  Result<std::unique_ptr<Node>> node = Node::Start(*cfg);
  if (!node.ok()) {
    log::Error("node", "start failed").Kv("error", node.status().ToString());
    return 1;
  }
  for (;;) {
    int sig = 0;
    if (sigwait(&signals, &sig) != 0) continue;
    if (sig == SIGHUP) {
      Status s = (*node)->ReloadOverrides();
      if (!s.ok() && s.code() == StatusCode::kFailedPrecondition) log::Info("node", "SIGHUP: " + s.message());
      continue;
    }
    log::Info("node", "signal received; stopping").Kv("signal", strsignal(sig));
    break;
  }
  (*node)->Stop();
  return 0;
}
