// Child: a program run by the bench in its own process (the mock broker, limitsd, loadgen,
// the gRPC load client), its stdout and stderr in a file, its stdin a pipe the bench holds
// (so a child that watches stdin, like mock_broker, ends when the bench dies). A child is also
// SIGKILLed when the thread that started it ends (PR_SET_PDEATHSIG): start children from the
// main thread.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace limits::bench {

class Child {
 public:
  Child(const std::vector<std::string>& argv, const std::string& output_path);
  ~Child();  // SIGKILLs a child still running
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  pid_t pid() const { return pid_; }
  // Sends `sig` and waits for the end; the wait status.
  int Kill(int sig);
  // Waits for the end; the exit code (-1 when killed by a signal).
  int Wait();
  bool Running();
  std::string Output() const;
  // wall-clock ms at fork (to compare with the node's log timestamps) and steady seconds.
  int64_t started_wall_ms() const { return started_wall_ms_; }

 private:
  std::string output_path_;
  pid_t pid_ = -1;
  int stdin_fd_ = -1;
  std::optional<int> status_;
  int64_t started_wall_ms_ = 0;
};

std::string ReadFile(const std::string& path);
// "VmRSS" / "VmHWM" of /proc/PID/status in bytes (0 when unreadable).
int64_t ProcStatusBytes(pid_t pid, const std::string& field);
// User + system CPU seconds the process has used (/proc/PID/stat); -1 when unreadable.
double ProcCpuSeconds(pid_t pid);
int64_t WallMs();

}  // namespace limits::bench
