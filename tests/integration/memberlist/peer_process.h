// Test processes for the memberlist interop test: a child with its stderr in a log file, its
// stdout readable line by line and its stdin held open (the Go peer exits when it closes);
// plus readers of the Go peer's text views and of limitsd's /memberlist page.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace limits::testing {

class ChildProcess {
 public:
  ChildProcess(const std::vector<std::string>& argv, const std::string& log_path);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // The next line of stdout, "" when none arrives within the timeout.
  std::string ReadLine(std::chrono::milliseconds timeout);
  void Signal(int sig);
  // Waits for the exit; the exit code, 128 + signal when killed, -1 on timeout.
  int Wait(std::chrono::milliseconds timeout);
  bool running() const { return pid_ > 0; }
  std::string Log() const;

 private:
  pid_t pid_ = -1;
  int out_ = -1;
  int in_ = -1;
  std::string log_path_;
  std::string buffered_;
};

// One ring entry as a reader sees it.
struct RingEntry {
  std::string state;
  int64_t timestamp = 0;
  int64_t registered_timestamp = 0;
  int tokens = 0;
  std::string zone;
  std::string addr;
};
std::string ToString(const RingEntry& e);

struct PeerMember {
  std::string state;
  uint64_t incarnation = 0;
  std::string addr;
};

// The Go peer's /ring and /members (empty maps when it does not answer).
std::map<std::string, RingEntry> PeerRing(int http_port);
std::map<std::string, PeerMember> PeerMembers(int http_port);
// limitsd's /memberlist: the ring of `key`, and the members' states.
std::map<std::string, RingEntry> LimitsdRing(int http_port, const std::string& key);
std::map<std::string, std::string> LimitsdMembers(int http_port);

}  // namespace limits::testing
