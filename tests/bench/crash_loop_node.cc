// The crash loop's view of limitsd (see crash_loop_node.h).
#include "crash_loop_node.h"

#include <signal.h>

#include <regex>
#include <thread>

#include "testing/http_client.h"
#include "testing/node_log.h"
#include "testing/subprocess.h"

namespace limits::bench {
namespace {

using Steady = std::chrono::steady_clock;

// The last `n` lines of `s`.
std::string Tail(const std::string& s, int n) {
  size_t start = s.size();
  if (start > 0 && s[start - 1] == '\n') --start;  // the final line break ends the last line
  for (int i = 0; i < n && start > 0; ++i) {
    const size_t nl = s.rfind('\n', start - 1);
    start = nl == std::string::npos ? 0 : nl;
  }
  return s.substr(start > 0 ? start + 1 : 0);
}

}  // namespace

Status StartNode(const std::string& limitsd, const std::vector<std::string>& sets, int32_t partitions,
                 std::chrono::milliseconds timeout, const std::string& log, NodeProcess* node) {
  std::vector<std::string> argv = {limitsd};
  for (const auto& s : sets) argv.insert(argv.end(), {"--set", s});
  node->log = log;
  node->http = node->grpc = 0;
  node->child = std::make_unique<Child>(argv, log);
  const std::string want = testing::ReadyWithPartitions(static_cast<size_t>(partitions));
  const auto deadline = Steady::now() + timeout;
  while (Steady::now() < deadline) {
    if (!node->child->Running()) {
      return Status::Unavailable("limitsd exited (" + std::to_string(node->child->Wait()) + "); the end of " + log +
                                 ":\n" + Tail(node->child->Output(), 5));
    }
    const std::string out = node->child->Output();
    node->http = testing::ListeningPortFromLog(out, "http");
    node->grpc = testing::ListeningPortFromLog(out, "rpc");
    if (node->http > 0 && node->grpc > 0) {
      const testing::HttpResult r = testing::HttpRequest(node->http, "GET", "/ready", std::chrono::seconds(1));
      if (r.status == 200 && r.body.find(want) != std::string::npos) return Status::OK();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the polling period
  }
  return Status::Unavailable("limitsd did not serve all " + std::to_string(partitions) + " partitions within " +
                             std::to_string(timeout.count() / 1000) + " s; the end of " + log + ":\n" +
                             Tail(node->child->Output(), 5));
}

bool StopNode(NodeProcess* node, std::chrono::milliseconds timeout) {
  kill(node->child->pid(), SIGTERM);
  const auto deadline = Steady::now() + timeout;
  while (node->child->Running()) {
    if (Steady::now() > deadline) {
      node->child->Kill(SIGKILL);
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the polling period
  }
  return true;
}

int64_t CountedStreams(int http_port, const std::string& tenant) {
  const testing::HttpResult r =
      testing::HttpRequest(http_port, "GET", "/ingest-limits/usage/" + tenant, std::chrono::seconds(5));
  static const std::regex re("\"streams_total\":\\s*([0-9]+)");
  std::smatch m;
  return r.status == 200 && std::regex_search(r.body, m, re) ? std::stoll(m[1]) : -1;
}

Result<std::unordered_set<uint64_t>> HeldStreams(const std::string& limitsctl, const std::string& db,
                                                 const std::string& tenant) {
  const testing::RunResult r =
      testing::RunProgram({limitsctl, "--db", db, "--json", "streams", "--tenant", tenant, "--limit", "0"});
  if (r.exit_code != 0) return Status::Unavailable("limitsctl streams --tenant " + tenant + ": " + r.err);
  std::unordered_set<uint64_t> out;
  static const std::regex re("\"stream_hash\":\\s*([0-9]+),[^{}]*?\"active\":\\s*(true|false)");
  for (auto it = std::sregex_iterator(r.out.begin(), r.out.end(), re); it != std::sregex_iterator(); ++it) {
    if ((*it)[2] == "true") out.insert(std::stoull((*it)[1]));
  }
  return out;
}

}  // namespace limits::bench
