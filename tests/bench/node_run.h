// NodeRun: one start of build/bin/limitsd as a child process on a data directory, timed until
// every partition is ready. Figures come from the node's JSON log lines (partitions assigned,
// assignment planned, all assigned partitions ready, loaded usage from disk), from GET /ready
// on its HTTP port, and from /proc/PID/status (VmRSS, VmHWM).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "child.h"
#include "common/result.h"

namespace limits::bench {

struct NodeFigures {
  double start_to_ready_s = 0;       // fork -> /ready 200 with every partition
  double start_to_assigned_s = 0;    // fork -> first "partitions assigned" (includes the group join)
  double assigned_to_lookups_s = 0;  // -> last "assignment planned" (every offset look-up done)
  double lookups_to_ready_s = 0;     // -> "all assigned partitions ready" (the replay)
  double assigned_to_ready_s = 0;
  int64_t replayed = 0;              // records_to_replay summed over the plans
  int64_t gave_up = 0;               // look-ups given up
  double store_open_s = 0;           // "loaded usage from disk"
  int64_t streams_loaded = 0;
  int64_t rss_ready = 0;             // bytes, when ready
  int64_t rss_peak = 0;              // VmHWM when ready
  int64_t rss_settled = 0;           // VmRSS 3 s after ready: the node's steady state after its start
  double replay_rate() const { return lookups_to_ready_s > 0 ? static_cast<double>(replayed) / lookups_to_ready_s : 0; }
};

class NodeRun {
 public:
  // Starts limitsd with `sets` (--set key=value each); the log goes to `log_path`.
  NodeRun(const std::string& limitsd, const std::vector<std::string>& sets, const std::string& log_path);
  // Waits until ready with `partitions` partitions, then takes the figures.
  Result<NodeFigures> WaitReady(int partitions);
  int GrpcPort() const { return Port("rpc"); }
  int HttpPort() const { return Port("http"); }
  Child& child() { return *child_; }

 private:
  int Port(const std::string& component) const;
  NodeFigures FromLog(const std::string& log) const;

  std::unique_ptr<Child> child_;
};

}  // namespace limits::bench
