// limitsd: enforces per-tenant stream limits; see README.md.
//   limitsd --config FILE [--set key=value]...   run the node
//   limitsd --check-config FILE [--set ...]      validate and exit 0 (valid) or 2
//   limitsd --version | --help
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "common/log.h"
#include "config/load_config.h"
#include "node/check_config.h"
#include "node/node.h"

using namespace limits;

namespace {

constexpr char kHelp[] =
    "limitsd - per-tenant stream limits for a multi-tenant log pipeline, rebuilt from Kafka.\n\n"
    "Usage:\n"
    "  limitsd --config FILE [--set key=value]...   run the node\n"
    "  limitsd --check-config FILE [--set ...]      validate the configuration: exit 0 or 2\n"
    "  limitsd --version\n\n"
    "Options:\n"
    "  --config FILE       TOML configuration (deploy/limitsd.example.toml documents every key);\n"
    "                      without it, the built-in defaults\n"
    "  --set key=value     override one key, e.g. --set kafka.brokers=kafka:9092\n"
    "                      --set node.instance_id=$(POD_NAME); repeatable, applied in order\n"
    "  --check-config FILE load and validate, print the problems, exit 0 (valid) or 2\n\n"
    "With kafka.brokers empty the node starts an embedded mock Kafka cluster.\n"
    "SIGTERM/SIGINT stop it gracefully.\n";

}  // namespace

int main(int argc, char** argv) {
  std::string config_path;
  bool check_only = false;
  std::vector<std::string> sets;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto next = [&](const char* flag) -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "limitsd: %s needs a value\n", flag);
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--help" || arg == "-h") {
      std::fputs(kHelp, stdout);
      return 0;
    } else if (arg == "--version") {
      std::printf("limitsd %s\n", LIMITSD_VERSION);
      return 0;
    } else if (arg == "--config") {
      config_path = next("--config");
    } else if (arg == "--check-config") {
      config_path = next("--check-config");
      check_only = true;
    } else if (arg == "--set") {
      sets.push_back(next("--set"));
    } else if (arg.rfind("--set=", 0) == 0) {
      sets.push_back(arg.substr(6));
    } else {
      std::fprintf(stderr, "limitsd: unknown argument \"%s\"; see limitsd --help\n", arg.c_str());
      return 2;
    }
  }

  Result<config::Config> cfg = config::LoadConfig(config_path, sets);
  if (!cfg.ok()) {
    std::fprintf(stderr, "limitsd: invalid configuration%s%s:\n%s\n", config_path.empty() ? "" : " in ",
                 config_path.c_str(), cfg.status().message().c_str());
    return 2;
  }
  // What the file's rules cannot see: librdkafka's verdict, the overrides file, the store path.
  if (Status s = CheckConfig(*cfg); !s.ok()) {
    std::fprintf(stderr, "limitsd: invalid configuration%s%s:\n%s\n", config_path.empty() ? "" : " in ",
                 config_path.c_str(), s.message().c_str());
    return 2;
  }
  if (check_only) {
    std::printf("%s: valid\n", config_path.c_str());
    return 0;
  }
  log::Level level = log::Level::kInfo;
  log::Format format = log::Format::kJson;
  log::ParseLevel(cfg->log.level, &level);
  log::ParseFormat(cfg->log.format, &format);
  log::Configure(level, format);

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
