// LimitsdProcess: the real limitsd binary as a child process on a configuration, for what
// needs a process boundary (SIGKILL, a crash, an exit status). Its stdout and stderr (the
// JSON log) go to a file; HTTP and gRPC listen on kernel-picked loopback ports.
#pragma once

#include <sys/types.h>

#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "config/config.h"
#include "testing/node_log.h"

namespace limits::testing {

class LimitsdProcess {
 public:
  // `binary` is the limitsd executable; `extra` more --set assignments ("key=value").
  LimitsdProcess(const std::string& binary, const config::Config& c, const std::string& log_path,
                 const std::vector<std::string>& extra = {});
  ~LimitsdProcess();
  LimitsdProcess(const LimitsdProcess&) = delete;
  LimitsdProcess& operator=(const LimitsdProcess&) = delete;

  // Sends `sig` and waits for the process to end.
  void Kill(int sig);
  // The wait status once the process has ended by itself; nullopt while it runs.
  std::optional<int> Exited();
  std::string Log() const;
  // The HTTP and gRPC ports, from the "listening" log lines; 0 until they are written.
  int HttpPort() const { return ListeningPort("http"); }
  int GrpcPort() const { return ListeningPort("rpc"); }
  // Ready with `n` partitions (not merely "nothing assigned yet").
  bool ReadyWith(size_t n) const;
  // Assigned partitions in state ready, from GET /partitions.
  std::set<int32_t> ReadyPartitions() const;
  // Partitions planned and records to replay, from the lifecycle's summary lines.
  std::pair<int64_t, int64_t> Planned() const { return PlannedFromLog(Log()); }

 private:
  int ListeningPort(const std::string& component) const;

  std::string log_path_;
  pid_t pid_ = -1;
  std::optional<int> status_;
};

}  // namespace limits::testing
