// node_restart_bench: how long a node takes to be ready on a topic holding N records —
// a cold start (empty disk: replay the window), a restart after a graceful stop, and a
// restart after SIGKILL (both: replay only what follows the checkpoint on disk).
// Runs build/bin/limitsd as a child process against a mock cluster in this process, and
// prints, per run: seconds to /ready with all partitions, store-open seconds, records
// replayed and replay seconds (first assignment to last partition ready), from the node's logs.
// Usage: node_restart_bench [--records N] [--streams S] [--limitsd PATH] [--set key=value]...
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>
#include <thread>

#include "testing/http_client.h"
#include "testing/test_kafka.h"

using namespace limits;
using Steady = std::chrono::steady_clock;

namespace {

constexpr int32_t kPartitions = 64;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int64_t ParseTs(const std::string& iso) {  // "2026-12-02T16:02:22.633Z" -> ms
  std::tm tm{};
  strptime(iso.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  return static_cast<int64_t>(timegm(&tm)) * 1000 + std::stoi(iso.substr(20, 3));
}

struct Run {
  double ready_s = 0, open_s = 0, replay_s = 0, lookup_s = 0;
  int64_t replayed = 0;
};

class Child {
 public:
  Child(const std::string& limitsd, const std::vector<std::string>& sets, const std::string& log) : log_(log) {
    pid_ = fork();
    if (pid_ == 0) {
      const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd < 0 || dup2(fd, STDERR_FILENO) < 0) _exit(126);
      std::vector<std::string> args = {limitsd};
      for (const auto& s : sets) args.insert(args.end(), {"--set", s});
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
  }
  void Signal(int sig) {
    kill(pid_, sig);
    waitpid(pid_, nullptr, 0);
  }
  std::string Log() const { return ReadFile(log_); }
  int Port() const {
    std::smatch m;
    const std::string log = Log();
    static const std::regex re("\"component\":\"http\",\"msg\":\"listening\".*\"port\":([0-9]+)");
    return std::regex_search(log, m, re) ? std::stoi(m[1]) : 0;
  }

 private:
  std::string log_;
  pid_t pid_;
};

Run Measure(const std::string& limitsd, const std::vector<std::string>& sets, const std::string& log, int stop_signal) {
  Run run;
  const auto t0 = Steady::now();
  Child child(limitsd, sets, log);
  for (;;) {
    const int port = child.Port();
    if (port > 0 && testing::HttpGet(port, "/ready").body.find("ready: 64 partitions") != std::string::npos) break;
    if (Steady::now() - t0 > std::chrono::minutes(10)) {
      std::fprintf(stderr, "not ready after 10 minutes\n%s\n", child.Log().c_str());
      std::exit(1);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // a benchmark's polling period
  }
  run.ready_s = std::chrono::duration<double>(Steady::now() - t0).count();
  // Let the node persist what it replayed (flush interval 1 s) before it is stopped.
  std::this_thread::sleep_for(std::chrono::seconds(3));
  const std::string text = child.Log();
  child.Signal(stop_signal);
  std::smatch m;
  if (std::regex_search(text, m, std::regex("\"msg\":\"loaded usage from disk\".*\"seconds\":([0-9.e+-]+)"))) {
    run.open_s = std::stod(m[1]);
  }
  std::map<int, int64_t> plans;
  static const std::regex plan_re("\"component\":\"lifecycle\".*?\"partition\":([0-9]+).*?\"to_replay\":([0-9]+)");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), plan_re); it != std::sregex_iterator(); ++it) {
    plans.emplace(std::stoi((*it)[1]), std::stoll((*it)[2]));
  }
  for (const auto& [p, n] : plans) run.replayed += n;
  static const std::regex ts_re("\"ts\":\"([^\"]+)\"[^\\n]*\"msg\":\"(partitions assigned|partition ready: replay complete|partition ready: nothing to replay)\"");
  int64_t first = 0, last = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), ts_re); it != std::sregex_iterator(); ++it) {
    const int64_t ts = ParseTs((*it)[1]);
    if (first == 0 && (*it)[2] == "partitions assigned") first = ts;
    if ((*it)[2] != "partitions assigned") last = std::max(last, ts);
  }
  run.replay_s = first && last ? static_cast<double>(last - first) / 1000 : 0;
  static const std::regex plan_ts_re("\"ts\":\"([^\"]+)\",\"level\":\"info\",\"component\":\"lifecycle\"");
  int64_t last_plan = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), plan_ts_re); it != std::sregex_iterator(); ++it) {
    last_plan = std::max(last_plan, ParseTs((*it)[1]));
  }
  run.lookup_s = first && last_plan ? static_cast<double>(last_plan - first) / 1000 : 0;
  return run;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t records = 1'000'000;
  uint64_t streams = 100'000;
  std::string limitsd = LIMITSD;
  std::vector<std::string> extra_sets;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--set")) extra_sets.push_back(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--records")) records = std::stoll(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--streams")) streams = std::stoull(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--limitsd")) limitsd = argv[i + 1];
  }
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  testing::TestKafka kafka(kPartitions);
  const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch()).count();
  std::mt19937_64 rng(1);
  const auto tp = Steady::now();
  for (int64_t i = 0; i < records; ++i) {
    // Spread over the last 30 minutes, oldest first, as a topic fills up.
    const int64_t ts = now - 1'800'000 + i * 1'800'000 / records;
    kafka.Produce("tenant-" + std::to_string(rng() % 50), rng() % streams, ts, "zone-b", std::nullopt, 1000 + rng() % 4000);
  }
  kafka.Flush();
  int64_t retained = 0;
  for (int32_t p = 0; p < kPartitions; ++p) retained += kafka.EndOffset(p);
  std::printf("node_restart_bench: %lld records over %llu streams in %d partitions (produced in %.1f s; %lld retained)\n",
              static_cast<long long>(records), static_cast<unsigned long long>(streams), kPartitions,
              std::chrono::duration<double>(Steady::now() - tp).count(), static_cast<long long>(retained));

  const std::string dir = std::filesystem::temp_directory_path().string() + "/node_restart_bench";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::vector<std::string> sets = {"kafka.brokers=" + kafka.bootstrap(),
                                         "store.path=" + dir + "/db",
                                         "node.instance_id=bench",
                                         "server.http_listen=127.0.0.1:0",
                                         "server.grpc_listen=127.0.0.1:0",
                                         "kafka.properties.session.timeout.ms=6000",
                                         "kafka.properties.heartbeat.interval.ms=500"};
  sets.insert(sets.end(), extra_sets.begin(), extra_sets.end());
  auto print = [](const char* what, const Run& r) {
    std::printf("  %-24s ready in %6.2f s | store open %5.2f s | offset look-ups %5.2f s | replayed %8lld records in %6.2f s\n",
                what, r.ready_s, r.open_s, r.lookup_s, static_cast<long long>(r.replayed), r.replay_s);
  };
  print("cold start (empty disk)", Measure(limitsd, sets, dir + "/cold.log", SIGTERM));
  print("restart after SIGTERM", Measure(limitsd, sets, dir + "/graceful.log", SIGKILL));
  print("restart after SIGKILL", Measure(limitsd, sets, dir + "/killed.log", SIGTERM));
  std::filesystem::remove_all(dir);
  return 0;
}
