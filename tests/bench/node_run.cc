// NodeRun (see node_run.h).
#include "node_run.h"

#include <chrono>
#include <ctime>
#include <regex>
#include <thread>

#include "testing/http_client.h"
#include "testing/node_log.h"

namespace limits::bench {
namespace {

int64_t ParseTs(const std::string& iso) {  // "2026-12-02T16:02:22.633Z" -> unix ms
  std::tm tm{};
  strptime(iso.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  return static_cast<int64_t>(timegm(&tm)) * 1000 + std::stoi(iso.substr(20, 3));
}

// The unix ms of every line whose msg is `msg`, in log order.
std::vector<int64_t> Times(const std::string& log, const std::string& msg) {
  std::vector<int64_t> out;
  const std::regex re("\"ts\":\"([^\"]+)\"[^\\n]*\"msg\":\"" + msg + "\"");
  for (auto it = std::sregex_iterator(log.begin(), log.end(), re); it != std::sregex_iterator(); ++it) {
    out.push_back(ParseTs((*it)[1]));
  }
  return out;
}

// The sum of a numeric field over every line with `msg`.
double Sum(const std::string& log, const std::string& msg, const std::string& key) {
  double sum = 0;
  const std::regex re("\"msg\":\"" + msg + "\"[^\\n]*\"" + key + "\":([0-9.e+-]+)");
  for (auto it = std::sregex_iterator(log.begin(), log.end(), re); it != std::sregex_iterator(); ++it) {
    sum += std::stod((*it)[1]);
  }
  return sum;
}

double Seconds(int64_t from_ms, int64_t to_ms) { return static_cast<double>(to_ms - from_ms) / 1000; }

}  // namespace

NodeRun::NodeRun(const std::string& limitsd, const std::vector<std::string>& sets, const std::string& log_path) {
  std::vector<std::string> argv = {limitsd};
  for (const auto& s : sets) argv.insert(argv.end(), {"--set", s});
  child_ = std::make_unique<Child>(argv, log_path);
}

int NodeRun::Port(const std::string& component) const {
  return testing::ListeningPortFromLog(child_->Output(), component);
}

Result<NodeFigures> NodeRun::WaitReady(int partitions) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::string want = testing::ReadyWithPartitions(static_cast<size_t>(partitions));
  for (;;) {
    if (!child_->Running()) return Status::Unavailable("limitsd exited:\n" + child_->Output());
    const int port = HttpPort();
    if (port > 0) {
      testing::HttpResult r = testing::HttpRequest(port, "GET", "/ready", std::chrono::seconds(2));
      if (r.status == 200 && r.body.find(want) != std::string::npos) break;
    }
    if (std::chrono::steady_clock::now() - t0 > std::chrono::minutes(15)) {
      return Status::Unavailable("limitsd not ready after 15 minutes (log: see the bench directory)");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the polling period
  }
  const int64_t ready_ms = WallMs();
  NodeFigures f;
  f.rss_ready = ProcStatusBytes(child_->pid(), "VmRSS");
  f.rss_peak = ProcStatusBytes(child_->pid(), "VmHWM");
  // The "all assigned partitions ready" line follows /ready by at most a poll of the consumer.
  for (int i = 0; i < 100 && Times(child_->Output(), "all assigned partitions ready").empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const std::string log = child_->Output();
  const int64_t start = child_->started_wall_ms();
  f.start_to_ready_s = Seconds(start, ready_ms);
  const std::vector<int64_t> assigned = Times(log, "partitions assigned");
  const std::vector<int64_t> planned = Times(log, "assignment planned");
  const std::vector<int64_t> ready = Times(log, "all assigned partitions ready");
  if (!assigned.empty()) {
    f.start_to_assigned_s = Seconds(start, assigned.front());
    if (!planned.empty()) f.assigned_to_lookups_s = Seconds(assigned.front(), planned.back());
    if (!ready.empty()) f.assigned_to_ready_s = Seconds(assigned.front(), ready.front());
  }
  if (!planned.empty() && !ready.empty()) f.lookups_to_ready_s = Seconds(planned.back(), ready.front());
  f.replayed = static_cast<int64_t>(Sum(log, "assignment planned", "records_to_replay"));
  f.gave_up = static_cast<int64_t>(Sum(log, "assignment planned", "gave_up"));
  f.store_open_s = Sum(log, "loaded usage from disk", "seconds");
  f.streams_loaded = static_cast<int64_t>(Sum(log, "loaded usage from disk", "streams"));
  return f;
}

}  // namespace limits::bench
